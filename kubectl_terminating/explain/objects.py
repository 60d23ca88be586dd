"""`kubectl terminating all --explain`: explain a terminating object of any kind."""

from __future__ import annotations

from dataclasses import replace

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence as evidence_catalogue
from kubectl_terminating.causes import FINALIZER, LIKELY, POSSIBLE, UNKNOWN, cause_of
from kubectl_terminating.explain.common import (
    Facts,
    add_warning,
    as_dict,
    base_finding,
    grace_period,
    meta,
    ref_of,
    run_causes,
    text,
)
from kubectl_terminating.explain.finalizers import (
    MAX_LISTED,
    PVC_PROTECTION,
    Held,
    claim_names,
    finalizer_blockers,
    find_dependents,
    kubectl_target,
    try_read,
    unseen_user,
)
from kubectl_terminating.explain.namespaces import (
    conversion_blocker,
    crd_serves,
    explain_namespace,
    finalizers_of,
    raise_unknowns,
    stuck_pod_blockers,
)
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.explain.readings import object_events, reading_blockers
from kubectl_terminating.explain.webhooks import labels_of, webhook_blockers
from kubectl_terminating.model import JSON, Blocker, Evidence, FailedCheck, Finding, Remedy
from kubectl_terminating.resources import CRDS, Resource, metadata_only
from kubectl_terminating.view import ClusterView, in_memory


def is_custom(resource: Resource, view: ClusterView) -> bool:
    """Served by a CRD (the CRD list is read anyway, for conversion webhooks)."""
    crds, failure = try_read(lambda: reads.crds(view))
    return failure is None and any(
        crd_serves(c, resource.group, resource.plural) for c in crds or []
    )


def whole_object(obj: JSON, resource: Resource, view: ClusterView) -> tuple[JSON, str | None]:
    """`all` lists metadata only; spec and status (conditions, phase) need the full object.
    A custom resource's explainers read only its metadata (and the whole object themselves if
    ever): no read per object there, which keeps `all` with thousands of them cheap. A Secret
    has neither spec nor status, and its data is never read (resources.metadata_only)."""
    if "spec" in obj or "status" in obj or metadata_only(resource):
        return obj, None
    if is_custom(resource, view):
        return obj, None
    m = meta(obj)
    namespace = text(m.get("namespace")) or None
    whole, failure = try_read(lambda: view.get(resource, namespace, text(m.get("name"))))
    if failure is not None:
        return obj, failure.message
    return whole or obj, None


class ObjectFacts(Facts):
    """An object of any kind but pods and namespaces, with its resource type; detailed: the
    views that show evidence (`--explain`, `-o json`), where its dependents are looked up."""

    def __init__(
        self,
        obj: JSON,
        resource: Resource,
        view: ClusterView,
        finding: Finding,
        detailed: bool = True,
    ) -> None:
        super().__init__(obj, view, finding)
        self.resource = resource
        self.detailed = detailed


def finalizers(facts: ObjectFacts) -> list[Blocker]:
    return finalizer_blockers(facts.obj, facts.resource, facts.view)


def claim_users(facts: ObjectFacts) -> list[Blocker]:
    """A claim held by pvc-protection while the pods that use it are stuck themselves: their
    own main blockers, raised to the claim as a namespace raises its pods' (claim -> pod ->
    node), so the headline names what holds the pod, not only the pod."""
    if not facts.resource.is_core("persistentvolumeclaims"):
        return []
    if finalizers_cut(facts):  # pvc-protection, the claim's usual holder, is not ruled out
        facts.finding.unknowns.append(FINALIZERS_NOT_IN_FILE)
    elif PVC_PROTECTION not in facts.finding.finalizers:
        return []
    namespace, name = facts.finding.namespace or "", facts.finding.name
    pods, failure = try_read(lambda: reads.pods(facts.view, namespace))
    if failure is not None:
        return []  # the finalizer's blocker already says the pods could not be read
    stuck = [p for p in pods or [] if meta(p).get("deletionTimestamp") and name in claim_names(p)]
    if not stuck:  # pasted without spec: the terminating ones are its likely users
        stuck = [p for p in pods or [] if unseen_user(p)]
    stuck.sort(key=lambda p: text(meta(p).get("name")))
    explained = [explain_pod(p, facts.view) for p in stuck[:MAX_LISTED]]
    if facts.detailed:  # shown under the claim; `fix` plans their steps under the pods
        facts.finding.children = explained
    raise_unknowns(facts.finding, explained)
    return stuck_pod_blockers(namespace, explained)


def webhooks(facts: ObjectFacts) -> list[Blocker]:
    if not finalizers_of(facts.obj):
        return []  # nothing to UPDATE away
    namespace = text(meta(facts.obj).get("namespace")) or None
    labels = labels_of(facts.obj)
    uid = text(meta(facts.obj).get("uid"))
    return webhook_blockers(
        facts.resource, ["UPDATE"], namespace, facts.view, labels=labels, uid=uid
    )


def conversion(facts: ObjectFacts) -> list[Blocker]:
    resource = facts.resource
    crds = [facts.obj] if resource == CRDS else reads.crds(facts.view)
    serving = [
        c for c in crds if resource == CRDS or crd_serves(c, resource.group, resource.plural)
    ]
    found = (conversion_blocker(crd, facts.view) for crd in serving)
    return [b for b in found if b is not None]


def attach_dependents(facts: ObjectFacts) -> None:
    """Objects whose ownerReferences point at this one: once its last finalizer goes, the
    garbage collector deletes them (unless `orphan`). Removing a finalizer by hand decides
    their fate too, so they are evidence on each finalizer blocker, with the step that keeps
    them (foregroundDeletion already waits for them and lists them). Not a cause: it adds to
    the finalizer blockers the causes found."""
    finding = facts.finding
    skip = {"foregroundDeletion", "orphan"} & set(finding.finalizers)
    freed = any(cause_of(b.type).frees_dependents for b in finding.blockers)
    if not facts.detailed or skip or not freed:
        return
    found, _ = find_dependents(Held(facts.obj, facts.resource, "", 0), facts.view)
    if not found:
        return
    noun = "object names" if len(found) == 1 else "objects name"
    said = Evidence(
        f"{len(found)} {noun} it as owner (ownerReferences): the garbage collector deletes "
        "them once it is gone",
        fields={"dependents": len(found)},
    )
    keep = Remedy(
        "FIRST decide about its dependents: to keep them, remove their ownerReferences to it "
        "before its last finalizer goes; otherwise they are deleted with it"
    )
    listed = tuple(found[:MAX_LISTED])
    finding.blockers = [
        replace(b, evidence=(*b.evidence, said, *listed), remedy=(keep, *b.remedy))
        if cause_of(b.type).frees_dependents
        else b
        for b in finding.blockers
    ]


FINALIZERS_NOT_IN_FILE = "metadata.finalizers not in the file"


def finalizers_cut(facts: ObjectFacts) -> bool:
    """A file's object shown being deleted without finalizers: a live server would have removed
    it, so the paste cut them (absence in a paste is not absence in the cluster)."""
    deleted = bool(text(meta(facts.obj).get("deletionTimestamp")))
    return in_memory(facts.view) and deleted and not facts.finding.finalizers


def _likely_held(facts: ObjectFacts, fact: str) -> bool:
    """The fact of the file a catalogue holder names (usual_holders.*.likely_when)."""
    obj, name = facts.obj, facts.finding.name
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    if fact == "pod-uses-claim":
        pods, _ = try_read(lambda: reads.pods(facts.view, facts.finding.namespace or ""))
        return any(name in claim_names(p) for p in pods or [])
    if fact == "bound":
        return text(status.get("phase")) == "Bound" or bool(spec.get("claimRef"))
    if fact == "load-balancer":
        ingress = as_dict(status.get("loadBalancer")).get("ingress")
        return text(spec.get("type")) == "LoadBalancer" or bool(ingress)
    return False


def finalizers_not_in_file(facts: ObjectFacts) -> Blocker:
    """A terminating object without finalizers cannot stay on a live server: the paste left
    them out. Say so, with what usually holds the kind (catalogue usual_holders)."""
    kind = facts.finding.kind
    holder = evidence_catalogue.usual_holder(kind)
    get = f"kubectl get {kubectl_target(facts.obj, facts.resource)} -o json"
    save = Remedy("save the whole object, its finalizers included", get)
    cut = Evidence(
        "metadata.finalizers is not in the file: a live server removes an object being deleted "
        "once it has no finalizer, so the paste left them out",
        ref_of(facts.obj, kind),
        {"finalizers": None},
    )
    if holder is None:
        return Blocker(
            FINALIZER,
            "finalizers not in the file (a terminating object has at least one)",
            (cut,),
            (save,),
            unchecked="metadata.finalizers (not in the file)",
            confidence=POSSIBLE,
            basis="a terminating object has a finalizer; the file does not show which",
        )
    likely = _likely_held(facts, holder.likely_when)
    return Blocker(
        FINALIZER,
        f"finalizer {holder.finalizer} likely (not in the file): it holds a {kind} while "
        f"{holder.holds_while}",
        (
            cut,
            Evidence(
                f"{holder.finalizer} holds a {kind} while {holder.holds_while}"
                + (": the file shows that" if likely else ": the file does not show whether"),
                fields={"finalizer": holder.finalizer, "shown": likely},
            ),
        ),
        (save,),
        confidence=LIKELY if likely else POSSIBLE,
        basis=f"what usually holds a {kind}"
        + (f", and the file shows {holder.holds_while}" if likely else ""),
    )


def readings(facts: ObjectFacts) -> list[Blocker]:
    """What the object's events say through the catalogue (a Service whose load balancer the
    cloud cannot delete), beside or instead of the finalizer a paste may leave out."""
    return reading_blockers(facts, object_events(facts), readers_looked=True)


def nothing_found(facts: ObjectFacts) -> list[Blocker]:
    """Last: no blocker found by the causes before it. Without finalizers an object goes at
    once; one that stays was read without them (a copy that left them out) or the API server
    is behind. Checks not made are said, never read as "none found"."""
    finding = facts.finding
    if finding.blockers:
        return []
    if finalizers_cut(facts):
        return [finalizers_not_in_file(facts)]
    evidence = [Evidence("metadata.finalizers is empty", fields={"finalizers": finding.finalizers})]
    if finding.warnings:
        evidence.append(Evidence("not checked: " + "; ".join(finding.warnings)))
    return [
        Blocker(
            UNKNOWN,
            "no finalizer or other blocker found: deletion should complete",
            tuple(evidence),
            (
                Remedy("list it again; if it stays, check the API server's logs"),
                Remedy(
                    "if this came from a file: save the whole object, its finalizers included",
                    f"kubectl get {kubectl_target(facts.obj, facts.resource)} -o json",
                ),
            ),
            # a copy may have left its finalizers out: not proven either way
            unchecked="; ".join(finding.warnings) or "finalizers as read (a copy may omit them)",
            confidence=POSSIBLE,
            basis="no finalizer seen",
        )
    ]


OBJECT_CAUSES = (
    grace_period,
    finalizers,
    claim_users,
    webhooks,
    conversion,
    readings,
    nothing_found,
)


def explain_object(
    obj: JSON, resource: Resource, view: ClusterView, detailed: bool = True
) -> Finding:
    """The explanation `all --explain` prints for one object of any kind (detailed: the views
    that show evidence; the table skips the look-up of dependents)."""
    if resource.is_core("pods"):
        return explain_pod(obj, view)
    whole, warning = whole_object(obj, resource, view)
    if resource.is_core("namespaces"):
        finding = explain_namespace(whole, view)
    else:
        finding = base_finding(whole, view, resource.kind, resource.api_version)
        facts = ObjectFacts(whole, resource, view, finding, detailed)
        run_causes(facts, OBJECT_CAUSES)
        attach_dependents(facts)
    if warning is not None:
        add_warning(finding, FailedCheck(warning))  # the whole object could not be read
    return finding
