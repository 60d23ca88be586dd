"""The judges: each asks the explainers' own checks about the cluster as it will be after the
deletion (afterview.AfterView) and turns what changes into predictions typed by causes.TABLE.

Pure over the views: no HTTP here, so unit fixtures (StaticView) drive every judge.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import TypeVar

from kubectl_terminating.causes import (
    APISERVICE_UNAVAILABLE,
    CERTAIN,
    CONFIDENCES,
    CONVERSION_WEBHOOK,
    CSI_DRIVER_MISSING,
    FINALIZER,
    LIKELY,
    NODE_MISSING,
    NODE_NOT_READY,
    OWNER_DEPENDENTS,
    POSSIBLE,
    WEBHOOK,
    cause_of,
    stronger,
    weaker,
)
from kubectl_terminating.explain.finalizers import (
    NOT_RUNNING,
    RUNNING,
    Held,
    Liveness,
    apiservice_backend,
    finalizer_blocker,
    kubectl_target,
    list_instances,
    owner_liveness,
    pvc_protection_blocker,
    service_backend,
    short_owner,
)
from kubectl_terminating.explain.knowledge import FinalizerOwner, lookup
from kubectl_terminating.explain.leader import (
    BY_NODE,
    holder_survives,
    lease_holder,
    pod_names,
    pod_ref,
    workload,
    workload_pods,
)
from kubectl_terminating.explain.namespace_content import conversion_blocker, conversion_service
from kubectl_terminating.explain.namespace_facts import KUBERNETES_FINALIZER
from kubectl_terminating.explain.namespace_finalizers import foreign_spec_finalizer_blocker
from kubectl_terminating.explain.node_health import node_check
from kubectl_terminating.explain.pod_facts import PodFacts
from kubectl_terminating.explain.pod_volumes import trace_volume
from kubectl_terminating.explain.webhooks import (
    labels_of,
    matching_webhooks,
    unverified_webhooks,
    webhook_blockers,
)
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy
from kubectl_terminating.preflight.afterview import POD_TEARDOWN, AfterView, registers_plugins
from kubectl_terminating.preflight.doomed import Doomed, Doomed1, key_of
from kubectl_terminating.preflight.report import Prediction
from kubectl_terminating.resources import (
    APISERVICES,
    CRDS,
    CSI_NODES,
    NAMESPACES,
    PODS,
    Resource,
    as_dict,
    list_of,
    meta,
    text,
)
from kubectl_terminating.view import ClusterView, ReadFailed, Selectors

T = TypeVar("T")
NAMESPACE_DELETER = "namespace"  # the namespace controller deletes the content
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
# Handled by Kubernetes itself, or by a judge of their own (pvc-protection below, the CRD's
# cleanup through its objects, foregroundDeletion through --cascade).
SKIPPED_FINALIZERS = frozenset(
    {
        "foregroundDeletion",
        "orphan",
        "customresourcecleanup.apiextensions.k8s.io",
        "kubernetes.io/pv-protection",
    }
)
PVC_PROTECTION = "kubernetes.io/pvc-protection"


@dataclass
class Situation:
    """What the judges share: the cluster now, after, what goes, and how it is deleted."""

    view: ClusterView
    after: AfterView
    doomed: Doomed
    deleter: str  # NAMESPACE_DELETER, "kubectl" or "helm"
    cascade: str = "background"
    # KEP-5080 (beta, on by default in 1.33, GA in 1.34): pods are deleted first
    ordered_namespace_deletion: bool = True
    unchecked: list[str] = field(default_factory=list)
    # each finalizer whose owner is shown to run after the deletion, and why (the report's
    # survivingOwners): a clear verdict rests on these
    survivors: dict[tuple[str, str], Survivor] = field(default_factory=dict)
    _liveness: dict[tuple[str, str, str, bool], Liveness] = field(default_factory=dict)
    _proofs: dict[tuple[str, str, str], Proof] = field(default_factory=dict)

    @cached_property
    def during(self) -> AfterView:
        """The cluster while the kubelets tear the doomed pods down: what protection
        finalizers keep (claims, volumes) is still there (afterview.PROTECTED)."""
        return AfterView(self.view, self.doomed, POD_TEARDOWN)

    def liveness(
        self, owner: FinalizerOwner | None, finalizer: str, resource: Resource
    ) -> tuple[Liveness, Liveness]:
        """The finalizer owner's liveness now and after (memoised per finalizer and type)."""
        out = []
        for after in (False, True):
            key = (finalizer, resource.group, resource.plural, after)
            if key not in self._liveness:
                view: ClusterView = self.after if after else self.view
                self._liveness[key] = owner_liveness(owner, finalizer, resource, view)
            out.append(self._liveness[key])
        return out[0], out[1]

    def proof(self, owner: FinalizerOwner | None, held: Held, after: Liveness) -> Proof:
        """Whether the owner runs after the deletion (memoised per finalizer and type)."""
        key = (held.finalizer, held.resource.group, held.resource.plural)
        if key not in self._proofs:
            self._proofs[key] = survival(self, owner, after)
        return self._proofs[key]

    def survived(
        self,
        item: Doomed1,
        held: Held,
        owner: FinalizerOwner | None,
        why: str,
        evidence: tuple[Evidence, ...],
    ) -> None:
        """Note a finalizer on item whose owner is shown to run after the deletion."""
        key = (held.finalizer, short_owner(owner) if owner else "")
        found = self.survivors.get(key)
        if found is None:
            self.survivors[key] = Survivor(held.finalizer, owner, why, evidence, ref(item))
        else:
            found.objects += 1

    def pod_doomed(self, pod: JSON) -> bool:
        m = meta(pod)
        return self.doomed.has_pod(text(m.get("namespace")), text(m.get("name")))

    def read(self, load: Callable[[], T]) -> T | None:
        """load(), or None with the failed read noted as a check not made."""
        try:
            return load()
        except ReadFailed as failed:
            self.unchecked.append(str(failed))
            return None

    def why_gone(self, evidence: tuple[Evidence, ...]) -> list[Evidence]:
        """Of the after view's changes, those behind the given evidence."""
        gone = self.after.gone()
        keys = (
            (e.object.kind, e.object.namespace or "", e.object.name)
            for e in evidence
            if e.object is not None
        )
        found: list[Evidence] = []
        for key in keys:
            if key in gone and all(e is not gone[key] for e in found):
                found.append(gone[key])
        return found

    def first_in_namespace(self, obj: JSON, causes: list[Evidence]) -> bool:
        """Certain: the namespace controller deletes obj's namespace with ordered deletion, and
        every cause of the owner's going is in that same namespace (its pods go first)."""
        namespace = text(meta(obj).get("namespace"))
        return (
            self.deleter == NAMESPACE_DELETER
            and self.ordered_namespace_deletion
            and namespace in self.doomed.namespaces
            and bool(causes)
            and all(c.object is not None and c.object.namespace == namespace for c in causes)
        )


@dataclass
class Survivor:
    """A finalizer whose owner is shown to run after the deletion: why, and on how many
    doomed objects (the first one named)."""

    finalizer: str
    owner: FinalizerOwner | None
    why: str
    evidence: tuple[Evidence, ...]
    first: ObjectRef
    objects: int = 1

    def to_json(self) -> JSON:
        return {
            "finalizer": self.finalizer,
            "owner": self.owner.owner if self.owner else None,
            "why": self.why,
            "objects": self.objects,
            "object": self.first.to_json(),
            "evidence": [e.to_json() for e in self.evidence],
        }


@dataclass(frozen=True)
class Proof:
    """Whether a finalizer's owner runs after the deletion: True with the positive evidence
    (a Lease holder's pod, or a pod of its workload, that stays), False when the evidence says
    it goes (its workload, or a pod named or labelled as its workload's, is doomed), None when
    nothing shows either or the evidence conflicts."""

    survives: bool | None
    why: str
    evidence: tuple[Evidence, ...] = ()


def survival(s: Situation, owner: FinalizerOwner | None, after: Liveness) -> Proof:
    """Positive evidence that the owner runs after the deletion, never its absence: the pod
    holding a Lease that stays fresh (leader.lease_holder), found and not doomed; else the
    owner's workload (knowledge table `runs_as`) with pods outside the doomed set."""
    wanted = workload(owner.runs_as) if owner is not None else None
    unresolved: list[Evidence] = []
    for lease in after.leases:
        holder = lease_holder(lease, s.view, wanted)
        if holder is None:
            continue
        kept = holder_survives(holder, s.pod_doomed)
        if kept:
            stays = [p for p in holder.pods if not s.pod_doomed(p)]
            why = f"its leader, pod {pod_names(stays)[0]}, is not deleted"
            return Proof(True, why, (holder.evidence(),))
        unresolved.append(holder.evidence())
    if wanted is None:
        why = "its Lease's holder names no pod" if unresolved else "nothing shows where it runs"
        return Proof(None, why, tuple(unresolved))
    doomed = [d for d in s.doomed.objects if wanted.looks_like(d.obj, d.resource.kind)]
    going = tuple(
        Evidence(
            f"{d.resource.kind} {ref(d).namespace}/{ref(d).name}, of the owner's "
            f"workload ({wanted.name}), is deleted by this deletion",
            ref(d),
        )
        for d in doomed[:3]
    )
    staying = [
        p for p in s.read(lambda: workload_pods(s.view, wanted)) or [] if not s.pod_doomed(p)
    ]
    if staying and not doomed:
        why = f"its workload {wanted} has pod {pod_names(staying)[0]}, not deleted"
        return Proof(True, why, (Evidence(why, pod_ref(staying[0])),))
    if doomed and not staying:
        why = f"its workload ({wanted.name}) is deleted by this deletion"
        return Proof(False, why, (*unresolved, *going))
    if doomed:
        why = (
            f"its workload {wanted} has pods that stay, but pods of the same name or labels are "
            "deleted: which one leads cannot be told"
        )
        return Proof(None, why, (*unresolved, *going))
    why = f"no pod of its workload {wanted} was found"
    if unresolved:
        why = f"its Lease's holder names no pod and {why}"
    return Proof(None, why, tuple(unresolved))


def ref(item: Doomed1) -> ObjectRef:
    m = meta(item.obj)
    namespace = text(m.get("namespace")) if item.resource.namespaced else None
    return ObjectRef(item.resource.kind, text(m.get("name")), namespace, item.resource.api_version)


def delete_first(item: Doomed1, why: str) -> Remedy:
    return Remedy(
        f"delete {item.resource.kind} {ref(item).name} first and wait until it is gone ({why})",
        f"kubectl delete {kubectl_target(item.obj, item.resource)} --wait",
    )


def _finalizers(item: Doomed1) -> Iterator[tuple[int, str]]:
    for index, finalizer in enumerate(list_of(meta(item.obj).get("finalizers"))):
        if isinstance(finalizer, str) and finalizer:
            yield index, finalizer


# -- finalizers ------------------------------------------------------------------------------


def _owner_prediction(
    s: Situation, item: Doomed1, held: Held, owner: FinalizerOwner | None
) -> Prediction | None:
    before, after = s.liveness(owner, held.finalizer, held.resource)
    if after.state != RUNNING and before.state in (RUNNING, NOT_RUNNING):
        return _goes(s, item, held, owner, before, after)
    # it seems to run after (a fresh Lease, a backend that answers) or nothing shows whether it
    # runs: only positive evidence that it runs after the deletion makes no prediction
    proof = s.proof(owner, held, after)
    if proof.survives:
        s.survived(item, held, owner, proof.why, proof.evidence)
        return None
    who = short_owner(owner) if owner is not None else "its owner"
    if proof.survives is False:
        summary = f"{_owner(who)} is deleted by this deletion: {proof.why}"
    elif after.state == RUNNING:
        summary = f"{_owner(who)} seems to run after the deletion, but {proof.why}"
    else:
        summary = f"nothing shows whether {_owner(who)} runs"
    blocker = finalizer_blocker(held, s.after)
    return Prediction(
        FINALIZER,
        LIKELY if proof.survives is False else POSSIBLE,
        ref(item),
        f"finalizer {held.finalizer}: {summary}",
        (*blocker.evidence[:2], *after.evidence, *proof.evidence)
        if after.state == RUNNING or proof.evidence
        else blocker.evidence,
        (Remedy(f"make sure the controller that removes {held.finalizer} runs and stays"),),
        blocker.remedy,
    )


def _goes(
    s: Situation,
    item: Doomed1,
    held: Held,
    owner: FinalizerOwner | None,
    before: Liveness,
    after: Liveness,
) -> Prediction:
    """The owner will not run after the deletion: it runs now and goes with it, or it does not
    run now."""
    blocker = finalizer_blocker(held, s.after)
    who = short_owner(owner) if owner is not None else "its owner"
    if before.state == RUNNING:
        causes = s.why_gone(before.evidence + after.evidence)
        # a holder found among its node's hostNetwork pods is inferred, not named
        inferred = any(c.fields.get("holderFoundBy") == BY_NODE for c in causes)
        certain = s.first_in_namespace(item.obj, causes) and not inferred
        return Prediction(
            FINALIZER,
            no_surer(CERTAIN if certain else LIKELY, blocker),
            ref(item),
            f"finalizer {held.finalizer}: {_owner(who)} runs now and is deleted by this "
            "deletion" + (" before the object" if certain else ", racing the object"),
            # the finalizer and its owner, then the owner alive now and why it goes
            (*blocker.evidence[:2], *before.evidence, *causes),
            (
                delete_first(item, f"while {who} still runs to remove {held.finalizer}"),
                Remedy("then delete the rest (the owner last)"),
            ),
            blocker.remedy,
        )
    return Prediction(
        FINALIZER,
        no_surer(LIKELY, blocker),
        ref(item),
        f"finalizer {held.finalizer}: {_owner(who)} is not running",
        blocker.evidence,
        (Remedy(f"bring {who} back before the deletion, and let it remove {held.finalizer}"),),
        blocker.remedy,
    )


def no_surer(confidence: str, blocker: Blocker) -> str:
    """A prediction that rests on an explainer's blocker is no surer than that blocker's own
    witness (its confidence on the cluster as it will be)."""
    return weaker(confidence, blocker.confidence or POSSIBLE)


def _owner(who: str) -> str:
    return who if who == "its owner" else f"its owner ({who})"


def _pvc_prediction(s: Situation, item: Doomed1, held: Held) -> Prediction | None:
    blocker = pvc_protection_blocker(held, s.after)
    if blocker is None:
        return None
    return Prediction(
        blocker.type,
        no_surer(CERTAIN, blocker),
        ref(item),
        blocker.summary + ", a pod this deletion does not remove",
        blocker.evidence,
        (Remedy("delete the pods that use the claim first, or keep the claim"),),
        blocker.remedy,
    )


def judge_finalizers(s: Situation) -> list[Prediction]:
    """Each finalizer on a doomed object whose owner will not be there to remove it."""
    out: list[Prediction] = []
    for item in s.doomed.objects:
        for index, finalizer in _finalizers(item):
            if finalizer in SKIPPED_FINALIZERS:
                continue
            try:
                found = _judge_finalizer(s, item, Held(item.obj, item.resource, finalizer, index))
            except ReadFailed as failed:
                s.unchecked.append(str(failed))
                continue
            if found is not None:
                # on a Namespace itself --explain says namespace-finalizer (the row's on_namespace)
                on_namespace = cause_of(found.type).on_namespace if _is_namespace(item) else None
                out.append(replace(found, type=on_namespace) if on_namespace else found)
    return out + judge_namespace_finalizers(s)


def _is_namespace(item: Doomed1) -> bool:
    return (item.resource.group, item.resource.kind) == (NAMESPACES.group, NAMESPACES.kind)


def judge_namespace_finalizers(s: Situation) -> list[Prediction]:
    """A doomed namespace's own spec.finalizers beyond `kubernetes`: once the namespace
    controller has emptied it and removed `kubernetes`, only their owners can finish it (through
    /finalize). Judged as any finalizer's owner, typed as the namespace's (the FINALIZER row's
    on_namespace). Never certain, and only possible while the owner runs now: the namespace's
    deletionTimestamp is set before the namespace controller deletes any content, so an owner
    whose pods are deleted with it sees the deletion first and may remove its finalizer before
    they go (seen on the real control plane: an owner that removes it at once wins that race;
    one that waits for the content to go loses it). likely: the owner does not run now."""
    out: list[Prediction] = []
    for item in s.doomed.objects:
        if not _is_namespace(item):
            continue
        spec_finalizers = list_of(as_dict(item.obj.get("spec")).get("finalizers"))
        for index, finalizer in enumerate(spec_finalizers):
            if not isinstance(finalizer, str) or finalizer in ("", KUBERNETES_FINALIZER):
                continue
            held = Held(item.obj, item.resource, finalizer, index)
            try:
                found = _judge_finalizer(s, item, held)
                spec = foreign_spec_finalizer_blocker(item.obj, index, finalizer, s.after)
            except ReadFailed as failed:
                s.unchecked.append(str(failed))
                continue
            if found is None:
                continue
            fact = held.fact()
            runs_now = s.liveness(lookup(finalizer), finalizer, NAMESPACES)[0].state == RUNNING
            out.append(
                replace(
                    found,
                    type=cause_of(found.type).on_namespace or found.type,
                    confidence=weaker(found.confidence, POSSIBLE if runs_now else LIKELY),
                    summary=found.summary.replace("finalizer ", "spec finalizer ", 1),
                    evidence=tuple(spec.evidence[0] if e == fact else e for e in found.evidence),
                    prevent=(
                        Remedy(
                            f"keep the owner of spec finalizer {finalizer} running outside "
                            f"namespace {held.name} until the namespace is gone, or let it "
                            "remove the finalizer before the deletion"
                        ),
                    ),
                    remedy=spec.remedy,
                )
            )
    return out


def _judge_finalizer(s: Situation, item: Doomed1, held: Held) -> Prediction | None:
    if held.finalizer == PVC_PROTECTION:
        return _pvc_prediction(s, item, held)
    owner = lookup(held.finalizer)
    if owner is not None and (owner.in_apiserver or owner.built_in):
        # Kubernetes' own controllers: they run with the control plane
        s.survived(item, held, owner, f"part of Kubernetes: {owner.runs_as}", ())
        return None
    return _owner_prediction(s, item, held, owner)


# -- admission webhooks ----------------------------------------------------------------------


def _hook(blocker: Blocker) -> str:
    return str(blocker.evidence[0].fields.get("webhook", "")) if blocker.evidence else ""


def _webhook_predictions(
    s: Situation, resource: Resource, operation: str, namespace: str, labels: JSON | None
) -> list[tuple[Blocker, str, list[Evidence]]]:
    """(blocker after, confidence, causes) for each Fail webhook on operation whose backend
    is or will be down."""
    where = namespace or None
    try:
        after = webhook_blockers(resource, [operation], where, s.after, labels=labels)
        now = {_hook(b) for b in webhook_blockers(resource, [operation], where, s.view)}
        hooks = matching_webhooks(resource, [operation], where, s.after, labels=labels)
    except ReadFailed as failed:
        s.unchecked.append(str(failed))
        return []
    # a `url:` webhook's backend is outside the API: the deletion may meet it, unchecked
    s.unchecked.extend(e.message for e in unverified_webhooks(hooks, resource))
    found = []
    for blocker in after:
        causes = s.why_gone(blocker.evidence)
        if _hook(blocker) in now:
            found.append((blocker, no_surer(LIKELY, blocker), causes))
        else:
            ordered = (
                s.deleter == NAMESPACE_DELETER
                and s.ordered_namespace_deletion
                and all(c.object and c.object.namespace in s.doomed.namespaces for c in causes)
            )
            found.append((blocker, no_surer(CERTAIN if ordered else LIKELY, blocker), causes))
    return found


def _webhook_prediction(
    item_ref: ObjectRef, blocker: Blocker, confidence: str, causes: list[Evidence], why: str
) -> Prediction:
    config = blocker.evidence[0].object if blocker.evidence else None
    prevent = (
        Remedy(
            f"delete {config.kind} {config.name} first (or keep its backend until the end)",
            f"kubectl delete {config.kind.lower()} {shlex.quote(config.name)}",
        )
        if config is not None
        else Remedy("delete the webhook configuration first")
    )
    return Prediction(
        WEBHOOK,
        confidence,
        item_ref,
        f"{blocker.summary} ({why})",
        (*blocker.evidence, *causes),
        (prevent,),
        blocker.remedy,
    )


def judge_update_webhooks(s: Situation) -> list[Prediction]:
    """Removing a finalizer is an UPDATE: a Fail webhook on UPDATE of the kind with a dead or
    doomed backend keeps the finalizer on."""
    out = []
    for item in s.doomed.objects:
        if not any(f not in ("foregroundDeletion", "orphan") for _, f in _finalizers(item)):
            continue
        namespace = text(meta(item.obj).get("namespace"))
        labels = labels_of(item.obj)
        for blocker, confidence, causes in _webhook_predictions(
            s, item.resource, "UPDATE", namespace, labels
        ):
            why = "the UPDATE that removes its finalizers is rejected"
            out.append(_webhook_prediction(ref(item), blocker, confidence, causes, why))
    return out


def judge_delete_webhooks(s: Situation) -> list[Prediction]:
    """The namespace controller and the garbage collector DELETE what goes with the named
    objects: a Fail webhook on DELETE of such a type with a dead or doomed backend stops them."""
    groups: dict[tuple[Resource, str], Doomed1] = {}
    for item in s.doomed.objects:
        if item.why in ("namespace", "owner"):
            groups.setdefault((item.resource, text(meta(item.obj).get("namespace"))), item)
    out = []
    for (resource, namespace), item in sorted(groups.items(), key=lambda kv: str(kv[0])):
        target = (
            ObjectRef("Namespace", namespace, None, "v1")
            if namespace in s.doomed.namespaces
            else ref(item)
        )
        for blocker, confidence, causes in _webhook_predictions(
            s, resource, "DELETE", namespace, None
        ):
            why = f"the DELETE of {resource.qualified} in {namespace} is rejected"
            out.append(_webhook_prediction(target, blocker, confidence, causes, why))
    return out


# -- aggregated APIs -------------------------------------------------------------------------


def judge_apiservices(s: Situation) -> list[Prediction]:
    """Any unavailable APIService fails discovery for every namespace deletion; one whose
    Service is deleted with the namespace makes that namespace block itself."""
    if not s.doomed.namespaces:
        return []
    listed = s.read(lambda: (s.view.list(APISERVICES), s.after.list(APISERVICES)))
    if listed is None:
        return []
    now = {text(meta(a).get("name")): a for a in listed[0]}
    out = []
    for apiservice in listed[1]:
        name = text(meta(apiservice).get("name"))
        if not as_dict(as_dict(apiservice.get("spec")).get("service")):
            continue
        backend = apiservice_backend(apiservice)
        if backend.up is None:  # Available Unknown: discovery may fail, or may not
            s.unchecked.append(f"APIService {name}: availability unknown")
            continue
        if backend.up is not False:
            continue
        causes = s.why_gone((backend.evidence,))
        dead_now = apiservice_backend(now.get(name, apiservice)).up is False
        certain = not dead_now and s.ordered_namespace_deletion
        prevent = Remedy(
            f"delete APIService {name} before the namespace (or keep its backend running)",
            f"kubectl delete apiservice {shlex.quote(name)}",
        )
        for namespace in sorted(s.doomed.namespaces):
            out.append(
                Prediction(
                    APISERVICE_UNAVAILABLE,
                    CERTAIN if certain else LIKELY,
                    ObjectRef("Namespace", namespace, None, "v1"),
                    f"APIService {name} "
                    + ("is unavailable" if dead_now else "will be unavailable")
                    + ": discovery fails for every namespace deletion",
                    (backend.evidence, *causes),
                    (prevent,),
                    (
                        Remedy(
                            "see why it is unavailable",
                            f"kubectl get apiservice {shlex.quote(name)} -o yaml",
                        ),
                    ),
                )
            )
    return out


# -- conversion webhooks --------------------------------------------------------------------


def _unverified_conversion(crd: JSON, s: Situation) -> str | None:
    """Why a converting CRD's webhook could not be judged: called by URL (outside the API), or
    a backend whose state is unknown (an ExternalName Service)."""
    spec = as_dict(crd.get("spec"))
    if as_dict(spec.get("conversion")).get("strategy") != "Webhook":
        return None
    if len(list_of(spec.get("versions"))) < 2:  # one version never converts
        return None
    name = text(meta(crd).get("name"))
    service = conversion_service(crd)
    if service is None:
        return f"conversion webhook of CRD {name} is called by URL: its backend was not checked"
    try:
        up = service_backend(*service, s.after).up
    except ReadFailed as failed:
        return str(failed)
    return (
        f"conversion webhook of CRD {name}: its backend's state is unknown" if up is None else None
    )


def judge_conversions(s: Situation) -> list[Prediction]:
    """Custom resources whose CRD converts through a webhook with a dead or doomed backend can
    be neither listed nor deleted at another version than the stored one."""
    first: dict[tuple[str, str], Doomed1] = {}
    for doomed in s.doomed.objects:
        if doomed.resource.kind != CRDS.kind:
            first.setdefault((doomed.resource.group, doomed.resource.plural), doomed)
    if not first:
        return []
    out: list[Prediction] = []
    for crd in s.read(lambda: s.view.list(CRDS)) or []:
        spec = as_dict(crd.get("spec"))
        key = (text(spec.get("group")), text(as_dict(spec.get("names")).get("plural")))
        item = first.get(key)
        if item is None:
            continue
        try:
            blocker = conversion_blocker(crd, s.after)
        except ReadFailed as failed:
            s.unchecked.append(str(failed))
            continue
        if blocker is None:
            unverified = _unverified_conversion(crd, s)
            if unverified:
                s.unchecked.append(unverified)
            continue
        namespace = text(meta(item.obj).get("namespace"))
        target = (
            ObjectRef("Namespace", namespace, None, "v1")
            if namespace in s.doomed.namespaces
            else ref(item)
        )
        # the API server calls it only between versions: one served version never converts
        versions = len(list_of(spec.get("versions")))
        name = text(meta(crd).get("name"))
        out.append(
            Prediction(
                CONVERSION_WEBHOOK,
                no_surer(LIKELY if versions > 1 else POSSIBLE, blocker),
                target,
                f"{blocker.summary}: its objects cannot be converted while they are deleted",
                (*blocker.evidence, *s.why_gone(blocker.evidence)),
                (
                    Remedy(
                        f"delete the objects of CRD {name} first, while its conversion webhook "
                        "runs",
                        f"kubectl delete {key[1]}.{key[0]} --all"
                        + (f" -n {shlex.quote(namespace)}" if namespace else "")
                        + " --wait",
                    ),
                ),
                blocker.remedy,
            )
        )
    return out


# -- pods on nodes that never answer ---------------------------------------------------------


def _tainted_out_of_service(node: JSON | None) -> bool:
    taints = list_of(as_dict((node or {}).get("spec")).get("taints"))
    return any(as_dict(t).get("key") == OUT_OF_SERVICE_TAINT for t in taints)


def _doomed_pods(s: Situation) -> list[tuple[Doomed1, JSON]]:
    """Doomed pods, whole (namespace content is metadata only)."""
    by_namespace: dict[str, list[Doomed1]] = {}
    for item in s.doomed.objects:
        if item.resource.group == "" and item.resource.kind == "Pod":
            by_namespace.setdefault(text(meta(item.obj).get("namespace")), []).append(item)
    found = []
    for namespace, items in sorted(by_namespace.items()):
        try:
            whole = {text(meta(p).get("name")): p for p in s.view.list(PODS, namespace)}
        except ReadFailed as failed:
            s.unchecked.append(str(failed))
            continue
        for item in items:
            pod = whole.get(ref(item).name)
            if pod is not None:
                found.append((item, pod))
    return found


def judge_pod_nodes(s: Situation) -> list[Prediction]:
    """A scheduled pod that is not finished waits for its kubelet to confirm the deletion: on
    a node that never answers it stays (PodGC collects it only with the out-of-service taint
    or once the Node object is gone)."""
    out = []
    for item, pod in _doomed_pods(s):
        node_name = text(as_dict(pod.get("spec")).get("nodeName"))
        phase = text(as_dict(pod.get("status")).get("phase"))
        if not node_name or phase in ("Succeeded", "Failed"):
            continue  # deleted at once: nothing to confirm
        check, warnings = node_check(s.view, node_name, pod)
        s.unchecked.extend(w for w in warnings if w not in s.unchecked)
        if check.missing:
            out.append(
                Prediction(
                    NODE_MISSING,
                    POSSIBLE,
                    ref(item),
                    f"node {node_name} no longer exists: no kubelet will confirm (PodGC "
                    "force-deletes such pods where it runs)",
                    (Evidence(f"node {node_name} does not exist", ObjectRef("Node", node_name)),),
                    (Remedy("none needed where PodGC runs; else force delete after the delete"),),
                    (
                        Remedy(
                            "force delete the pod (the node is gone)",
                            f"kubectl delete pod -n {shlex.quote(ref(item).namespace or '')} "
                            f"{shlex.quote(ref(item).name)} --grace-period=0 --force",
                            destructive=True,
                            when="the node is gone for good",
                        ),
                    ),
                )
            )
        elif check.problem is not None and not _tainted_out_of_service(check.node):
            taint = (
                f"kubectl taint node {shlex.quote(node_name)} "
                f"{OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute"
            )
            out.append(
                Prediction(
                    NODE_NOT_READY,
                    LIKELY,
                    ref(item),
                    f"{check.problem.summary}: its kubelet will not confirm the deletion",
                    (check.problem.evidence,),
                    (
                        Remedy(
                            f"mark node {node_name} out of service before the deletion, once "
                            "it is known to be off",
                            taint,
                            when="the node is shut down (its volumes can then be detached)",
                        ),
                    ),
                    (Remedy("bring the node's kubelet back"),),
                )
            )
    return out


# -- CSI node plugins ------------------------------------------------------------------------


def judge_csi_plugins(s: Situation) -> list[Prediction]:
    """The deletion removes a CSI driver's node plugin (its DaemonSet's pod) from a node where
    pods use that driver's volumes: their teardown, in this deletion or later, needs the plugin
    (the kubelet unmounts through it), csi-driver-missing. The chain pod -> claim -> volume ->
    driver is followed at POD_TEARDOWN (claims and volumes outlive the pods); the node's
    CSINode there has lost the driver (afterview.REWRITES).

    How sure (DESIGN.md): never certain, no component has written anything yet, and the kubelet
    tears a consumer and the plugin deleted together down concurrently (a race its unmount
    usually loses: it waits for the consumer's containers to exit). likely: the consumer is
    deleted, the node's CSINode registers the driver now and every node plugin of it there
    (found by the registrar's convention, afterview.node_plugin_of) is deleted. possible: the
    CSINode does not show the driver registered now, or the consumer stays (it sticks only
    once deleted, while the plugin is gone)."""
    nodes = sorted(
        {
            text(as_dict(pod.get("spec")).get("nodeName"))
            for _, pod in _doomed_pods(s)
            if registers_plugins(pod)
        }
        - {""}
    )
    out: list[Prediction] = []
    for node in nodes:
        selector = Selectors(fields=f"spec.nodeName={node}")
        on_node = s.read(partial(s.view.list, PODS, None, selector)) or []
        for pod in on_node:
            phase = text(as_dict(pod.get("status")).get("phase"))
            if registers_plugins(pod) or phase in ("Succeeded", "Failed"):
                continue  # a plugin's own volumes; a finished pod has nothing mounted
            try:
                out += _csi_predictions(s, pod, node)
            except ReadFailed as failed:
                s.unchecked.append(str(failed))
    return out


def _csi_predictions(s: Situation, pod: JSON, node: str) -> list[Prediction]:
    facts = PodFacts(pod, s.during)
    m = meta(pod)
    namespace, name = text(m.get("namespace")), text(m.get("name"))
    doomed = s.doomed.has_pod(namespace, name)
    out = []
    for volume in list_of(as_dict(pod.get("spec")).get("volumes")):
        trace = trace_volume(facts, as_dict(volume))
        plugins = s.during.node_plugins(node, trace.driver) if trace.driver else []
        if trace.driver_problem is None or not plugins:
            continue
        if not all(s.doomed.has_pod(*_ns_name(p)) for p in plugins):
            continue  # a node plugin of the driver stays on the node
        registered_now = trace.driver in _registered(s.view, node)
        noted = s.during.gone().get(("CSINode", "", node))  # why the node lost the driver
        why = (noted,) if noted is not None else ()
        confidence = LIKELY if doomed and registered_now else POSSIBLE
        basis = (
            "the consumer is deleted with its driver's node plugin"
            if doomed
            else "the consumer stays: it sticks once deleted while the plugin is gone"
        )
        if not registered_now:
            basis = f"CSINode {node} does not show {trace.driver} registered now"
        pod_ref = ObjectRef("Pod", name, namespace, "v1")
        out.append(
            Prediction(
                CSI_DRIVER_MISSING,
                confidence,
                pod_ref,
                f"CSI driver {trace.driver}'s node plugin on {node} is deleted: the volume "
                f"{trace.volume} of this pod cannot be unmounted"
                + ("" if doomed else " once it is deleted")
                + f" ({basis})",
                (*trace.evidence[:1], trace.driver_problem, *why),
                (
                    Remedy(
                        f"delete the pods that use {trace.driver}'s volumes on {node} first and "
                        "wait until they are gone, while its node plugin still runs",
                        f"kubectl delete pod {shlex.quote(name)} -n {shlex.quote(namespace)} "
                        "--wait",
                    ),
                    Remedy("or keep the driver's node plugin (its DaemonSet) out of the deletion"),
                ),
                (
                    Remedy(
                        f"restore CSI driver {trace.driver}'s node plugin on {node}: the kubelet "
                        "then finishes the unmount by itself",
                        f"kubectl get pods -A -o wide --field-selector spec.nodeName={node}",
                    ),
                ),
            )
        )
    return out


def _ns_name(pod: JSON) -> tuple[str, str]:
    return text(meta(pod).get("namespace")), text(meta(pod).get("name"))


def _registered(view: ClusterView, node: str) -> list[str]:
    """The drivers node's CSINode registers now (none where it cannot be read)."""
    try:
        csinode = view.get(CSI_NODES, None, node)
    except ReadFailed:
        return []
    drivers = list_of(as_dict((csinode or {}).get("spec")).get("drivers"))
    return [text(as_dict(d).get("name")) for d in drivers]


# -- foreground cascade ----------------------------------------------------------------------


def judge_foreground(s: Situation, found: list[Prediction]) -> list[Prediction]:
    """With --cascade foreground a named object waits for its dependents: one predicted to
    block holds it (owner-dependents)."""
    if s.cascade != "foreground":
        return []
    by_object = {(str(p.object)): p for p in found}
    by_uid = {text(meta(d.obj).get("uid")): d for d in s.doomed.objects}
    out = []
    for item in s.doomed.objects:
        if item.why != "owner":
            continue
        blocked = by_object.get(str(ref(item)))
        if blocked is None:
            continue
        root = _root_of(item, by_uid)
        if root is None:
            continue
        out.append(
            Prediction(
                OWNER_DEPENDENTS,
                blocked.confidence,
                ref(root),
                f"foregroundDeletion waits for dependent {ref(item)}: {blocked.summary}",
                (
                    Evidence(f"dependent {ref(item)} is predicted to block", ref(item)),
                    *blocked.evidence,
                ),
                (Remedy("delete with --cascade=background, or first solve the dependent's"),),
                (
                    Remedy(
                        "find out why each dependent is not deleted",
                        f"kubectl terminating all -n {shlex.quote(ref(item).namespace or '')} "
                        "--explain",
                    ),
                ),
            )
        )
    return out


def _root_of(item: Doomed1, by_uid: dict[str, Doomed1]) -> Doomed1 | None:
    seen = set()
    current: Doomed1 | None = item
    while current is not None and current.why == "owner":
        key = key_of(current.resource, current.obj)
        if key in seen:
            return None
        seen.add(key)
        owners = [
            by_uid[uid]
            for uid in (
                text(as_dict(r).get("uid"))
                for r in list_of(meta(current.obj).get("ownerReferences"))
            )
            if uid in by_uid
        ]
        current = owners[0] if owners else None
    return current if current is not None and current.why == "named" else None


def judge_crds(s: Situation, found: list[Prediction]) -> list[Prediction]:
    """A CRD being deleted waits for every one of its objects (its
    customresourcecleanup finalizer): one predicted to stay holds the CRD too."""
    out = []
    for item in s.doomed.objects:
        if item.why != "named" or item.resource.kind != CRDS.kind:
            continue
        spec = as_dict(item.obj.get("spec"))
        group = text(spec.get("group"))
        kind = text(as_dict(spec.get("names")).get("kind"))
        held = [
            p
            for p in found
            if p.object.kind == kind and (p.object.api_version or "").startswith(f"{group}/")
        ]
        if not held:
            continue
        strongest = min(held, key=lambda p: CONFIDENCES.index(p.confidence))
        name = ref(item).name
        out.append(
            Prediction(
                FINALIZER,
                strongest.confidence,
                ref(item),
                f"finalizer customresourcecleanup.apiextensions.k8s.io: waits for {len(held)} "
                f"of its objects predicted to stay ({strongest.object}: {strongest.type})",
                (
                    Evidence(
                        f"CRD {name} is deleted only once all its objects are gone",
                        ref(item),
                        {"finalizer": "customresourcecleanup.apiextensions.k8s.io"},
                    ),
                    *(Evidence(f"{p.object}: {p.summary}", p.object) for p in held[:10]),
                ),
                strongest.prevent,
                (list_instances(item.obj),),
            )
        )
    return out


def judge(s: Situation) -> list[Prediction]:
    """Every judge, in turn; the strongest prediction per object and type."""
    found = [
        *judge_finalizers(s),
        *judge_update_webhooks(s),
        *judge_delete_webhooks(s),
        *judge_apiservices(s),
        *judge_conversions(s),
        *judge_pod_nodes(s),
        *judge_csi_plugins(s),
    ]
    found += judge_foreground(s, found)
    found += judge_crds(s, found)
    best: dict[tuple[str, str, str], Prediction] = {}
    for p in found:
        key = (str(p.object), p.type, p.summary)
        if key not in best or stronger(p.confidence, best[key].confidence) == p.confidence:
            best[key] = p
    return list(best.values())


__all__ = ["NAMESPACES", "Situation", "judge"]
