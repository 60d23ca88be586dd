"""Finalizer blockers for any object: who owns each finalizer, is that owner alive, what to do.

Owners come from knowledge.py; whether an owner is alive comes only from evidence in the API
(a leader-election Lease renewed recently, a webhook or APIService of its group with a working
backend). Without evidence the answer is "unknown", never a guess.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import TypeVar

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    CERTAIN,
    FINALIZER,
    LIKELY,
    OWNER_DEPENDENTS,
    PROTECTION_IN_USE,
)
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.explain.events import event_evidence, event_time, events_about
from kubectl_terminating.explain.knowledge import FinalizerOwner, lookup
from kubectl_terminating.explain.leader import lease_holder, workload
from kubectl_terminating.explain.owner_workload import workload_state
from kubectl_terminating.explain.webhooks import ready_endpoints, slices_ready
from kubectl_terminating.model import (
    FINALIZER_ON,
    JSON,
    Blocker,
    Evidence,
    ObjectRef,
    Remedy,
    Subject,
)
from kubectl_terminating.resources import PODS, PVCS, PVS, Resource
from kubectl_terminating.timeutil import human_duration, seconds_since
from kubectl_terminating.view import ClusterView, ReadFailed, may, undated

T = TypeVar("T")

RUNNING = "running"
NOT_RUNNING = "not running"
UNKNOWN_STATE = "unknown"

# A leader renews every few seconds; several missed lease durations mean no leader.
LEASE_GRACE_FACTOR = 3
MIN_STALE_SECONDS = 60
MAX_LISTED = 10  # dependents / pods named one by one in evidence


@dataclass(frozen=True)
class Liveness:
    state: str  # RUNNING, NOT_RUNNING or UNKNOWN_STATE
    evidence: tuple[Evidence, ...] = ()
    leases: tuple[JSON, ...] = ()  # the fresh leader-election Leases that show it runs
    remedy: Remedy | None = None  # what the owner's state calls for (its workload scaled to 0)


@dataclass(frozen=True)
class Backend:
    """Whether a Service can answer calls: up, down, or None when it cannot be told."""

    up: bool | None
    evidence: Evidence


# -- small readers ---------------------------------------------------------------------------


def object_ref(obj: JSON, resource: Resource) -> ObjectRef:
    """A reference from the resource type: metadata-only lists carry no usable kind."""
    m = meta(obj)
    return ObjectRef(
        kind=resource.kind,
        name=text(m.get("name")),
        namespace=text(m.get("namespace")) or None,
        api_version=resource.api_version,
    )


def try_read(read: Callable[[], T]) -> tuple[T | None, Evidence | None]:
    """A read whose failure must not hide the blocker it supports: the failure becomes evidence."""
    try:
        return read(), None
    except ReadFailed as failed:
        return None, Evidence(f"{failed}", fields={"readFailed": failed.what}, failed_read=True)


def kubectl_target(obj: JSON, resource: Resource) -> str:
    m = meta(obj)
    namespace = text(m.get("namespace"))
    where = f" -n {shlex.quote(namespace)}" if namespace and resource.namespaced else ""
    return f"{resource.qualified} {shlex.quote(text(m.get('name')))}{where}"


def remove_finalizer_command(obj: JSON, resource: Resource, finalizer: str, index: int) -> str:
    """JSON patch that removes exactly this finalizer; the test op fails if the list changed."""
    path = f"/metadata/finalizers/{index}"
    patch = json.dumps(
        [{"op": "test", "path": path, "value": finalizer}, {"op": "remove", "path": path}],
        separators=(",", ":"),
    )
    return f"kubectl patch {kubectl_target(obj, resource)} --type=json -p {shlex.quote(patch)}"


def short_owner(owner: FinalizerOwner | None) -> str:
    return owner.owner.split(" (")[0] if owner else "unknown"


def owner_phrase(owner: FinalizerOwner | None, state: str) -> str:
    """`owner: cert-manager, running` for a one-line summary."""
    if state != UNKNOWN_STATE:
        return f"owner: {short_owner(owner)}, {state}"
    return f"owner: {short_owner(owner)}" + (", state unknown" if owner else "")


# -- is the owner alive? ---------------------------------------------------------------------


def service_backend(namespace: str, name: str, view: ClusterView) -> Backend:
    """A Service with at least one ready endpoint is up; a missing or empty one is down."""
    ref = ObjectRef("Service", name, namespace, "v1")
    try:
        service = reads.service(view, namespace, name)
    except ReadFailed as failed:
        ready = slices_ready(namespace, name, view, failed)  # the slices stand on their own
        fields = {"service": f"{namespace}/{name}", "readyEndpoints": ready}
        said = f"service {namespace}/{name} has {ready} ready endpoints (its EndpointSlices)"
        return Backend(ready > 0, Evidence(said, ref, fields))
    if service is None:
        return Backend(False, Evidence(f"service {namespace}/{name} does not exist", ref))
    if text(as_dict(service.get("spec")).get("type")) == "ExternalName":
        return Backend(
            None, Evidence(f"service {namespace}/{name} points outside the cluster", ref)
        )
    ready = ready_endpoints(reads.endpoint_slices(view, namespace, name))
    fields = {"service": f"{namespace}/{name}", "readyEndpoints": ready}
    if ready == 0:
        return Backend(
            False, Evidence(f"service {namespace}/{name} has no ready endpoints", ref, fields)
        )
    return Backend(
        True, Evidence(f"service {namespace}/{name} has {ready} ready endpoints", ref, fields)
    )


def lease_state(lease: JSON, view: ClusterView) -> tuple[bool, Evidence]:
    """(fresh, evidence) for a leader-election Lease."""
    spec = as_dict(lease.get("spec"))
    m = meta(lease)
    age = seconds_since(spec.get("renewTime"), view.now)
    duration = spec.get("leaseDurationSeconds")
    limit = max(
        LEASE_GRACE_FACTOR * duration if isinstance(duration, int) else 0, MIN_STALE_SECONDS
    )
    holder = text(spec.get("holderIdentity"))
    fresh = bool(holder) and age is not None and age <= limit
    where = f"{text(m.get('namespace'))}/{text(m.get('name'))}"
    if fresh:
        message = f"leader-election lease renewed {human_duration(age)} ago by {holder}"
    elif not holder:
        message = "leader-election lease has no holder: the leader released it"
    else:
        message = f"leader-election lease not renewed for {human_duration(age)}: no leader"
    ref = ObjectRef("Lease", text(m.get("name")), text(m.get("namespace")) or None)
    fields = {
        "lease": where,
        "holder": holder,
        "renewTime": spec.get("renewTime"),
        "ageSeconds": age,
    }
    return fresh, Evidence(message, ref, fields)


def lease_liveness(patterns: Sequence[str], view: ClusterView) -> Liveness:
    """Fresh if any Lease whose name matches is fresh; stale if all that match are stale."""
    if not patterns:
        return Liveness(UNKNOWN_STATE)
    leases, failure = try_read(lambda: reads.leases(view))
    if failure is not None:
        return Liveness(UNKNOWN_STATE, (failure,))
    states = [
        (lease, *lease_state(lease, view))
        for lease in leases or []
        if any(fnmatchcase(text(meta(lease).get("name")), p) for p in patterns)
    ]
    if not states:
        return Liveness(UNKNOWN_STATE)
    alive = [(lease, e) for lease, fresh, e in states if fresh]
    if alive:
        return Liveness(RUNNING, tuple(e for _, e in alive), tuple(lease for lease, _ in alive))
    return Liveness(NOT_RUNNING, tuple(e for _, _, e in states))


def _is_kubernetes_domain(domain: str) -> bool:
    return domain.endswith(("k8s.io", "kubernetes.io")) or "." not in domain


def owner_domains(finalizer: str, resource: Resource) -> tuple[str, ...]:
    """DNS names an unknown owner is likely to use: the object's group, the finalizer's domain."""
    prefix = finalizer.split("/", 1)[0]
    candidates = (resource.group, prefix)
    return tuple(d for d in dict.fromkeys(candidates) if d and not _is_kubernetes_domain(d))


def lease_patterns(
    owner: FinalizerOwner | None, finalizer: str, resource: Resource
) -> tuple[str, ...]:
    if owner is not None and owner.lease_names:
        group0 = resource.group.split(".")[0]
        return tuple(p.replace("{group0}", group0) for p in owner.lease_names)
    if owner is not None and owner.built_in:
        return ()
    # controller-runtime's scaffold names its lease `<hash>.<domain>`
    return tuple(p for d in owner_domains(finalizer, resource) for p in (d, f"*.{d}"))


def _group_backends(group: str, plural: str, view: ClusterView) -> list[tuple[str, str]]:
    """Services that serve this group: admission webhooks and the CRD's conversion webhook.
    Either read alone is enough to look; ReadFailed only when neither could be made."""
    found: list[tuple[str, str]] = []
    configs, no_configs = try_read(lambda: reads.webhook_configurations_each(view)[0])
    for config in configs or []:
        for hook in list_of(config.get("webhooks")):
            rules = list_of(as_dict(hook).get("rules"))
            if any(group in list_of(as_dict(rule).get("apiGroups")) for rule in rules):
                found.append(webhook_service(as_dict(hook).get("clientConfig")))
    crds = reads.crds(view) if no_configs is not None else try_read(lambda: reads.crds(view))[0]
    for crd in crds or []:
        spec = as_dict(crd.get("spec"))
        if (
            text(spec.get("group")) == group
            and text(as_dict(spec.get("names")).get("plural")) == plural
        ):
            webhook = as_dict(as_dict(spec.get("conversion")).get("webhook"))
            found.append(webhook_service(webhook.get("clientConfig")))
    return [s for s in dict.fromkeys(found) if all(s)]


def webhook_service(client_config: object) -> tuple[str, str]:
    service = as_dict(as_dict(client_config).get("service"))
    return text(service.get("namespace")), text(service.get("name"))


def apiservice_backend(apiservice: JSON) -> Backend:
    """An aggregated API's availability as the kube-aggregator last saw it."""
    name = text(meta(apiservice).get("name"))
    conditions = map(as_dict, list_of(as_dict(apiservice.get("status")).get("conditions")))
    available = next((c for c in conditions if c.get("type") == "Available"), {})
    status = text(available.get("status")) or "Unknown"
    return Backend(
        True if status == "True" else None if status == "Unknown" else False,
        Evidence(
            f"APIService {name} Available={status} {text(available.get('reason'))}".rstrip(),
            ObjectRef("APIService", name, None, "apiregistration.k8s.io/v1"),
            {"available": status, "reason": available.get("reason")},
        ),
    )


def _aggregated(group: str, view: ClusterView) -> list[Backend]:
    return [
        apiservice_backend(a)
        for a in reads.apiservices(view)
        if text(as_dict(a.get("spec")).get("group")) == group
        and as_dict(a.get("spec")).get("service")
    ]


def _services(resource: Resource, view: ClusterView) -> list[Backend]:
    return [
        service_backend(ns, name, view)
        for ns, name in _group_backends(resource.group, resource.plural, view)
    ]


def _backends(resource: Resource, view: ClusterView) -> list[Backend]:
    """Each read stands on what it has: a kind missing from a file (or forbidden) costs its own
    backends, not the others'. Raises only when none of them could be read."""
    found, _ = reads.each(
        lambda: _services(resource, view), lambda: _aggregated(resource.group, view)
    )
    return found


def backend_liveness(resource: Resource, view: ClusterView) -> Liveness:
    """Webhook, conversion or aggregated-API backends of the object's group: the operator
    usually serves them, so one that answers shows it runs and none answering that it does not."""
    if _is_kubernetes_domain(resource.group):
        return Liveness(UNKNOWN_STATE)
    backends, failure = try_read(lambda: _backends(resource, view))
    if failure is not None:
        return Liveness(UNKNOWN_STATE, (failure,))
    known = [b for b in backends or [] if b.up is not None]
    if not known:
        return Liveness(UNKNOWN_STATE)
    if any(b.up for b in known):
        note = Evidence(f"a backend of {resource.group} answers (usually the same operator)")
        return Liveness(RUNNING, (note, *(b.evidence for b in known if b.up)))
    return Liveness(NOT_RUNNING, tuple(b.evidence for b in known))


def workload_liveness(owner: FinalizerOwner, view: ClusterView) -> Liveness:
    """A user's entry names the owner's workload: its state is the evidence (owner_workload)."""
    named = owner.workload
    if named is None or not owner.knowledge_file:
        return Liveness(UNKNOWN_STATE)
    found, failure = try_read(lambda: workload_state(named, short_owner(owner), view))
    if found is None:
        return Liveness(UNKNOWN_STATE, (failure,) if failure else ())
    state = RUNNING if found.runs else NOT_RUNNING
    return Liveness(state, (found.evidence,), remedy=found.remedy)


def owner_liveness(
    owner: FinalizerOwner | None, finalizer: str, resource: Resource, view: ClusterView
) -> Liveness:
    if owner is not None and owner.in_apiserver:
        return Liveness(RUNNING, (Evidence("run by kube-apiserver, which answered this read"),))
    by_workload = workload_liveness(owner, view) if owner is not None else Liveness(UNKNOWN_STATE)
    if by_workload.state != UNKNOWN_STATE:
        return by_workload
    by_lease = lease_liveness(lease_patterns(owner, finalizer, resource), view)
    by_lease = replace(by_lease, evidence=by_workload.evidence + by_lease.evidence)
    if by_lease.state != UNKNOWN_STATE:
        return by_lease
    by_backend = backend_liveness(resource, view)
    if by_backend.state != UNKNOWN_STATE:
        return Liveness(by_backend.state, by_lease.evidence + by_backend.evidence)
    unknown = Evidence(
        "no leader-election Lease, webhook or APIService of it found: cannot tell if it runs"
    )
    return Liveness(UNKNOWN_STATE, (*by_lease.evidence, *by_backend.evidence, unknown))


# -- may the running owner act? --------------------------------------------------------------

# Removing a finalizer is an update or a patch of the object (controllers use either).
RELEASE_VERBS = ("update", "patch")


@dataclass(frozen=True)
class Access:
    """Whether the running owner's ServiceAccount may release the object: `allowed` None when
    it could not be checked; `account` is `namespace/name`."""

    allowed: bool | None
    evidence: tuple[Evidence, ...] = ()
    account: str = ""


def _leader_account(
    lease: JSON, view: ClusterView, owner: FinalizerOwner | None
) -> tuple[str, str, Evidence] | None:
    """(namespace, ServiceAccount, how it was found) of the leader that holds the Lease: its
    pod (leader.lease_holder), when exactly one workload's pods can be it."""
    holder = lease_holder(lease, view, workload(owner.runs_as) if owner else None)
    if holder is None or not holder.pods:
        return None
    accounts = {
        (
            text(meta(p).get("namespace")),
            text(as_dict(p.get("spec")).get("serviceAccountName")) or "default",
        )
        for p in holder.pods
    }
    if len(accounts) != 1:
        return None  # several hostNetwork pods on its node, of different accounts
    (where, account), pod = next(iter(accounts)), holder.pods[0]
    name = text(meta(pod).get("name"))
    said = f"the leader, pod {where}/{name}, runs as ServiceAccount {where}/{account}"
    return where, account, Evidence(said, object_ref(pod, PODS), {"serviceAccount": account})


def _may_release(view: ClusterView, user: str, groups: tuple[str, ...], held: Held) -> list[str]:
    """The verbs of RELEASE_VERBS the user may use on the object. Asked for the whole
    namespace (or cluster) first: one answer then serves every object of the type there (a
    mass outage has thousands); only a refusal is asked again by name (resourceNames rules)."""
    attributes = {
        "group": held.resource.group,
        "version": held.resource.version,
        "resource": held.resource.plural,
        **({"namespace": held.namespace} if held.namespace else {}),
    }
    return [
        verb
        for verb in RELEASE_VERBS
        if may(view, user, groups, {**attributes, "verb": verb})
        or may(view, user, groups, {**attributes, "verb": verb, "name": held.name})
    ]


def owner_access(
    held: Held, owner: FinalizerOwner | None, liveness: Liveness, view: ClusterView
) -> Access:
    """A SubjectAccessReview for the running owner's ServiceAccount: may it update or patch the
    object it must release? An owner that runs but lost its RBAC never finishes, and removing
    the finalizer then skips the cleanup it still means to do. Nothing is said where the view
    cannot ask (a file): the Lease alone is all a file shows; nor of Kubernetes' own
    controllers (their rights are the cluster's bootstrap policy, per controller)."""
    built_in = owner is not None and (owner.built_in or owner.in_apiserver)
    if built_in or not liveness.leases or getattr(view, "may", None) is None:
        return Access(None)
    try:
        # the first fresh Lease whose leader can be found (several installs may match)
        found = (_leader_account(lease, view, owner) for lease in liveness.leases)
        leader = next((account for account in found if account is not None), None)
        if leader is None:
            why = "its leader's pod was not found"
            return Access(
                None, (Evidence(f"whether the owner may update it: not checked ({why})"),)
            )
        namespace, account, how = leader
        groups = (
            "system:serviceaccounts",
            f"system:serviceaccounts:{namespace}",
            "system:authenticated",
        )
        user = f"system:serviceaccount:{namespace}:{account}"
        allowed = _may_release(view, user, groups, held)
    except ReadFailed as failed:
        return Access(None, (Evidence(f"whether the owner may update it: not checked ({failed})"),))
    who = f"{namespace}/{account}"
    target = f"{held.resource.qualified} {held.name}"
    fields = {"serviceAccount": who, "allowed": allowed, "asked": list(RELEASE_VERBS)}
    if allowed:
        said = f"ServiceAccount {who} may {' and '.join(allowed)} {target} (SubjectAccessReview)"
        return Access(True, (how, Evidence(said, held.ref, fields)), who)
    said = f"ServiceAccount {who} may neither update nor patch {target} (SubjectAccessReview)"
    return Access(False, (how, Evidence(said, held.ref, fields)), who)


def restore_rbac(held: Held, owner: FinalizerOwner | None, access: Access) -> Remedy:
    namespace, _, account = access.account.partition("/")
    where = f" -n {shlex.quote(held.namespace)}" if held.namespace else ""
    subject = shlex.quote(f"{held.resource.qualified}/{held.name}")
    return Remedy(
        f"restore the RBAC of ServiceAccount {access.account} (the Role/ClusterRole binding "
        f"that lets {short_owner(owner)} update {held.resource.qualified}): it then removes "
        "the finalizer itself",
        f"kubectl auth can-i update {subject}{where} "
        f"--as={shlex.quote(f'system:serviceaccount:{namespace}:{account}')}",
    )


# -- the generic finalizer blocker -----------------------------------------------------------


@dataclass(frozen=True)
class Held:
    """One finalizer on one object: what every explanation starts from."""

    obj: JSON
    resource: Resource
    finalizer: str
    index: int

    @property
    def ref(self) -> ObjectRef:
        return object_ref(self.obj, self.resource)

    @property
    def namespace(self) -> str:
        return text(meta(self.obj).get("namespace"))

    @property
    def name(self) -> str:
        return text(meta(self.obj).get("name"))

    def fact(self) -> Evidence:
        return Evidence(
            f"has finalizer {self.finalizer}",
            self.ref,
            {"finalizer": self.finalizer, "index": self.index},
            about=Subject(FINALIZER_ON, self.finalizer, holder=self.ref),
        )

    def remove(self, when: str, risk: str = "") -> Remedy:
        description = f"LAST RESORT: remove finalizer {self.finalizer} by hand"
        return Remedy(
            description + (f"; {risk}" if risk else ""),
            remove_finalizer_command(self.obj, self.resource, self.finalizer, self.index),
            destructive=True,
            when=when,
        )


def owner_evidence(held: Held, owner: FinalizerOwner | None) -> Evidence:
    if owner is None:
        domains = ", ".join(owner_domains(held.finalizer, held.resource)) or "none"
        return Evidence(
            f"no known owner for {held.finalizer}: the controller that added it must remove it",
            fields={"owner": None, "domains": domains},
        )
    return owner_fact(owner)


def owner_fact(owner: FinalizerOwner) -> Evidence:
    """Who removes the finalizer, what it waits for, how to tell it runs (knowledge.py)."""
    runs = f"; it runs as {owner.runs_as}" if owner.runs_as else ""
    return Evidence(
        f"removed by {owner.owner}, which waits for {owner.waits_for}{runs}",
        fields={
            "owner": owner.owner,
            "waitsFor": owner.waits_for,
            "strandsInfrastructure": owner.strands_infrastructure,
            "runsAs": owner.runs_as or None,
            "source": owner.source or None,
        },
    )


def owner_remedies(held: Held, owner: FinalizerOwner | None, state: str) -> list[Remedy]:
    steps: list[Remedy] = []
    # an owner inside kube-apiserver always "runs": its own remedy is the useful step; so is
    # that of an owner whose current releases never remove it, running or not
    if owner is not None and owner.removed_by_nobody_since:
        steps.append(Remedy(owner.remedy))
    elif state == RUNNING and not (owner and owner.in_apiserver):
        steps.append(Remedy("its owner runs but does not finish: read the owner's logs and events"))
    elif owner is not None:
        steps.append(Remedy(owner.remedy))
    else:
        steps.append(Remedy(f"find and restore the controller that added {held.finalizer}"))
    steps.append(
        Remedy(
            "see the object's events", f"kubectl describe {kubectl_target(held.obj, held.resource)}"
        )
    )
    return steps


def last_resort_when(owner: FinalizerOwner | None) -> str:
    if owner is not None and owner.removed_by_nobody_since:
        return (
            f"{owner.removed_by_nobody_since} or later runs (it never removes it), or the "
            "owner is gone for good"
        )
    if owner is None:
        return "the controller that added it is gone for good and what it guarded is cleaned up"
    if owner.strands_infrastructure:
        return f"{owner.owner} is gone for good and you cleaned up by hand: {owner.risk}"
    return f"{owner.owner} is gone for good or cannot finish"


def finalizer_confidence(
    evidence: Sequence[Evidence], where: str = "metadata.finalizers"
) -> tuple[str, str]:
    """A finalizer on the object is the API server's own word that it holds it (it deletes
    nothing while one is left); a read that would tell whether its owner runs, failed, leaves
    the blocker likely: the owner may be at work (`fix` acts only on certain)."""
    failed = next((e for e in evidence if e.failed_read), None)
    if failed is not None:
        return LIKELY, f"{where} names it; a liveness signal could not be read ({failed.message})"
    return CERTAIN, f"{where} names it"


# An owner's event on the object this recent shows its controller runs (controllers retry a
# failed finalization with back-off, at most every 1000 s in controller-runtime and client-go's
# default rate limiters): older, it only says what the controller last saw.
OWNER_EVENT_FRESH_SECONDS = 1000


def owner_event(owner: FinalizerOwner | None, held: Held, view: ClusterView) -> JSON | None:
    """The newest event on the object with a reason the owner's controller writes (knowledge
    `events`): its own word on why the finalizer stays. None when none (or unreadable)."""
    if owner is None or not owner.events:
        return None
    uid = text(meta(held.obj).get("uid"))
    found, failure = try_read(
        lambda: events_about(view, held.resource.kind, held.namespace, held.name, uid)
    )
    said = [e for e in found or [] if text(e.get("reason")) in owner.events]
    return None if failure is not None or not said else max(said, key=event_time)


def with_owner_event(
    liveness: Liveness, owner: FinalizerOwner | None, held: Held, view: ClusterView
) -> Liveness:
    """The owner's event as evidence; a fresh one proves the owner runs where nothing else
    could tell (DESIGN.md: a fresh event from the owner proves it runs)."""
    event = owner_event(owner, held, view)
    if event is None:
        return liveness
    age = seconds_since(event_time(event), view.now)
    # a file without capture time gives no age: its clock is its newest timestamp, often this
    # very event, so it proves nothing of now
    fresh = age is not None and age <= OWNER_EVENT_FRESH_SECONDS and not undated(view)
    said = (
        event_evidence(event),
        Evidence(
            f"{short_owner(owner)} wrote it"
            + (f" {human_duration(age)} ago: it runs" if fresh and age is not None else "")
            + "; its message says why the finalizer stays"
        ),
    )
    state = RUNNING if fresh and liveness.state == UNKNOWN_STATE else liveness.state
    return replace(liveness, state=state, evidence=(*liveness.evidence, *said))


def finalizer_blocker(
    held: Held,
    view: ClusterView,
    extra: Sequence[Evidence] = (),
    first: Sequence[Remedy] = (),
) -> Blocker:
    """extra: more evidence; first: steps that come before the owner's remedies."""
    owner = lookup(held.finalizer)
    liveness = owner_liveness(owner, held.finalizer, held.resource, view)
    liveness = with_owner_event(liveness, owner, held, view)
    access = owner_access(held, owner, liveness, view)
    phrase = owner_phrase(owner, liveness.state)
    remedies = [*first, *owner_remedies(held, owner, liveness.state)]
    when = last_resort_when(owner)
    if access.allowed is False:
        phrase += " but may not update it"
        remedies = [*first, restore_rbac(held, owner, access), *remedies[len(first) + 1 :]]
        when = (
            f"never while {short_owner(owner)} runs: restore its RBAC instead; only once it is "
            "gone for good and what it guarded is cleaned up"
        )
    if liveness.remedy is not None and owner is not None and not owner.removed_by_nobody_since:
        remedies[len(first)] = liveness.remedy  # what its workload's state calls for, precisely
    remedies.append(held.remove(when, owner.risk if owner else ""))
    evidence = (
        held.fact(),
        owner_evidence(held, owner),
        *liveness.evidence,
        *access.evidence,
        *extra,
    )
    confidence, basis = finalizer_confidence(evidence)
    return Blocker(
        FINALIZER,
        f"finalizer {held.finalizer} ({phrase})",
        tuple(evidence),
        tuple(remedies),
        confidence=confidence,
        basis=basis,
    )


# -- finalizers with their own explanation ---------------------------------------------------


def owner_uids(obj: JSON) -> set[str]:
    return {text(as_dict(ref).get("uid")) for ref in list_of(meta(obj).get("ownerReferences"))}


def blocks_owner(dependent: JSON, uid: str) -> bool:
    return any(
        text(as_dict(ref).get("uid")) == uid and as_dict(ref).get("blockOwnerDeletion") is True
        for ref in list_of(meta(dependent).get("ownerReferences"))
    )


def dependent_evidence(dependent: JSON, resource: Resource, uid: str) -> Evidence:
    m = meta(dependent)
    state = "terminating" if m.get("deletionTimestamp") else "not deleted yet"
    return Evidence(
        f"dependent {resource.qualified} {text(m.get('name'))} is {state}",
        object_ref(dependent, resource),
        {
            "blockOwnerDeletion": blocks_owner(dependent, uid),
            "deletionTimestamp": m.get("deletionTimestamp"),
            "finalizers": [f for f in list_of(m.get("finalizers")) if isinstance(f, str)],
        },
    )


CLUSTER_SCOPED_DEPENDENTS = "dependents of a cluster-scoped object are not listed by this tool"


def find_dependents(held: Held, view: ClusterView) -> tuple[list[Evidence], list[Evidence]]:
    """(dependents, what could not be checked) among the objects of obj's namespace."""
    if not held.namespace:
        return [], [Evidence(CLUSTER_SCOPED_DEPENDENTS)]
    listings, failure = try_read(lambda: view.namespace_content(held.namespace))
    if failure is not None:
        return [], [failure]
    uid = text(meta(held.obj).get("uid"))
    found = [
        dependent_evidence(item, listing.resource, uid)
        for listing in listings or []
        for item in listing.items
        if uid and uid in owner_uids(item)
    ]
    unlisted = [
        Evidence(f"could not list {listing.resource.qualified}: {listing.error}")
        for listing in listings or []
        if listing.error
    ]
    return found, unlisted


def foreground_blocker(held: Held, view: ClusterView) -> Blocker | None:
    dependents, unchecked = find_dependents(held, view)
    if not dependents and not unchecked:
        return None  # nothing left to wait for: the garbage collector itself is behind
    summary = f"foregroundDeletion: {len(dependents)} dependents left"
    missing = None
    if not dependents:
        # only possible: the read that would show them is missing, so it ranks after the
        # blockers the evidence proves (model.blocker_rank) and says which read that is
        missing = unchecked[0].message if held.namespace else "cluster-scoped: not listed"
        summary = f"foregroundDeletion: dependents not checked ({missing})"
    more = len(dependents) - MAX_LISTED
    tail = [Evidence(f"and {more} more dependents")] if more > 0 else []
    where = f" -n {shlex.quote(held.namespace)}" if held.namespace else " -A"
    return Blocker(
        OWNER_DEPENDENTS,
        summary,
        (held.fact(), *dependents[:MAX_LISTED], *tail, *unchecked),
        (
            Remedy(
                "find out why each dependent is not deleted",
                f"kubectl terminating all{where} --explain",
            ),
            held.remove(
                "you no longer need to wait: the garbage collector then deletes the dependents "
                "in the background"
            ),
        ),
        unchecked=missing,
        # the garbage collector waits for dependents the listing shows are still there
        confidence=CERTAIN,
        basis="foregroundDeletion, and its dependents listed",
    )


PVC_PROTECTION = "kubernetes.io/pvc-protection"


def claim_names(pod: JSON) -> set[str]:
    """Claims a scheduled pod holds, as the pvc-protection controller counts them."""
    spec = as_dict(pod.get("spec"))
    if not text(spec.get("nodeName")):
        return set()
    m = meta(pod)
    shut_down = bool(m.get("deletionTimestamp")) and m.get("deletionGracePeriodSeconds") == 0
    names: set[str] = set()
    for volume in map(as_dict, list_of(spec.get("volumes"))):
        claim = text(as_dict(volume.get("persistentVolumeClaim")).get("claimName"))
        if claim:
            names.add(claim)
        elif "ephemeral" in volume and not shut_down:
            names.add(f"{text(m.get('name'))}-{text(volume.get('name'))}")
    return names


def pod_evidence(pod: JSON) -> Evidence:
    m = meta(pod)
    phase = text(as_dict(pod.get("status")).get("phase")) or "?"
    node = text(as_dict(pod.get("spec")).get("nodeName"))
    state = ", terminating" if m.get("deletionTimestamp") else ""
    return Evidence(
        f"pod {text(m.get('name'))} uses the claim (phase {phase}, node {node}{state})",
        object_ref(pod, PODS),
        {"phase": phase, "nodeName": node, "deletionTimestamp": m.get("deletionTimestamp")},
    )


def release_claim(held: Held, pods: list[JSON], what: str = "the claim") -> Remedy:
    names = " ".join(shlex.quote(text(meta(p).get("name"))) for p in pods)
    namespace = shlex.quote(held.namespace)
    if all(meta(p).get("deletionTimestamp") for p in pods):
        return Remedy(
            f"the pods using {what} are terminating themselves: find out what holds them",
            f"kubectl terminating pods -n {namespace} {names} --explain",
        )
    return Remedy(
        f"delete the pods that use {what} (or let them finish)",
        f"kubectl delete pod -n {namespace} {names}",
    )


def pvc_protection_blocker(held: Held, view: ClusterView) -> Blocker | None:
    everyone, failure = try_read(lambda: reads.pods(view, held.namespace))
    if failure is not None:
        return finalizer_blocker(held, view, [failure])
    pods = [p for p in everyone or [] if held.name in claim_names(p)]
    unknown = [text(meta(p).get("name")) for p in everyone or [] if "spec" not in p]
    if not pods and unknown:
        return _unseen_users(held, view, [p for p in everyone or [] if "spec" not in p])
    if not pods:
        return None  # unused: the controller should have removed it, explain it generically
    # the controller's rule (any scheduled pod naming the claim keeps it), as certain as a
    # webhook whose Service is gone: the pods that name it are listed
    return _in_use(
        held,
        pods,
        CERTAIN,
        "pods listed that name the claim: the pvc-protection controller keeps it",
    )


def unseen_user(pod: JSON) -> bool:
    """A terminating pod pasted without spec: the claims it uses are not in view, and it is
    what a pvc-protection finalizer beside it most likely waits for."""
    return "spec" not in pod and bool(meta(pod).get("deletionTimestamp"))


def _unseen_users(held: Held, view: ClusterView, unseen: list[JSON]) -> Blocker:
    """Pods pasted without spec: whether they use the claim is unknown. Those terminating are
    what the protection controller most likely waits for (a claim is deleted with the pods
    that use it, and they are what is left): named as its holders, likely; else the finalizer,
    with the check it lacks."""
    holding = [p for p in unseen if unseen_user(p)]
    unknown = [text(meta(p).get("name")) for p in unseen]
    said = f"pods {', '.join(unknown[:MAX_LISTED])} are in the file without spec"
    if holding:
        return _in_use(
            held,
            holding,
            LIKELY,
            "terminating pods beside the claim, their specs (the claim they use) not in view",
            [
                Evidence(
                    f"pod {text(meta(p).get('name'))} is terminating beside the claim; its "
                    "spec (the claims it uses) is not in view",
                    object_ref(p, PODS),
                    {"deletionTimestamp": meta(p).get("deletionTimestamp"), "spec": None},
                )
                for p in holding[:MAX_LISTED]
            ],
        )
    blocker = finalizer_blocker(
        held, view, [Evidence(f"{said}: whether they use the claim is unknown")]
    )
    return replace(blocker, unchecked=f"{said} (which pods use the claim)")


def _in_use(
    held: Held, pods: list[JSON], confidence: str, basis: str, said: list[Evidence] | None = None
) -> Blocker:
    """The claim held by pods: `said` of them, or that they use it (their specs name it)."""
    first = text(meta(pods[0]).get("name"))
    more = f" (+{len(pods) - 1} more)" if len(pods) > 1 else ""
    if said is None:
        said = [pod_evidence(p) for p in pods[:MAX_LISTED]]
    return Blocker(
        PROTECTION_IN_USE,
        f"pvc-protection: claim in use by pod {first}{more}",
        (held.fact(), *said),
        (
            release_claim(held, pods),
            held.remove(
                "no pod uses the volume any more",
                "the volume may be released and deleted while a pod still uses it",
            ),
        ),
        confidence=confidence,
        basis=basis,
    )


def full_object(held: Held, read: Callable[[], JSON | None]) -> JSON:
    """Metadata-only lists carry no spec/status; read the whole object when it is needed."""
    if "status" in held.obj or "spec" in held.obj:
        return held.obj
    whole, _ = try_read(read)
    return whole or held.obj


def claim_evidence(namespace: str, name: str, view: ClusterView) -> Evidence:
    ref = ObjectRef("PersistentVolumeClaim", name, namespace, "v1")
    claim, failure = try_read(lambda: reads.pvc(view, namespace, name))
    if failure is not None:
        return failure
    if claim is None:
        return Evidence(
            f"claim {namespace}/{name} no longer exists: the persistentvolume controller should "
            "release the volume",
            ref,
        )
    state = "terminating" if meta(claim).get("deletionTimestamp") else "not deleted"
    return Evidence(
        f"claim {namespace}/{name} is {state}",
        ref,
        {"deletionTimestamp": meta(claim).get("deletionTimestamp")},
    )


def pv_protection_blocker(held: Held, view: ClusterView) -> Blocker | None:
    pv = full_object(held, lambda: reads.pv(view, held.name))
    if text(as_dict(pv.get("status")).get("phase")) != "Bound":
        return None
    claim_ref = as_dict(as_dict(pv.get("spec")).get("claimRef"))
    namespace, name = text(claim_ref.get("namespace")), text(claim_ref.get("name"))
    bound = Evidence(
        f"volume {held.name} is Bound to claim {namespace}/{name}",
        held.ref,
        {"phase": "Bound", "claim": f"{namespace}/{name}"},
    )
    return Blocker(
        PROTECTION_IN_USE,
        f"pv-protection: bound to claim {namespace}/{name}",
        (held.fact(), bound, claim_evidence(namespace, name, view)),
        (
            Remedy(
                "delete the claim bound to the volume first (and the pods using it)",
                f"kubectl delete {PVCS.qualified} -n {shlex.quote(namespace)} {shlex.quote(name)}",
            ),
            held.remove(
                "the claim is gone and the volume is no longer needed",
                "a bound claim may be left pointing at a volume that no longer exists",
            ),
        ),
        confidence=CERTAIN,
        basis="the volume is Bound: the pv-protection controller keeps it while it is",
    )


def crd_terminating_evidence(crd: JSON) -> list[Evidence]:
    return [
        Evidence(
            f"CRD condition Terminating: {text(c.get('reason'))}: {text(c.get('message'))}",
            fields={"reason": c.get("reason"), "message": c.get("message")},
        )
        for c in map(as_dict, list_of(as_dict(crd.get("status")).get("conditions")))
        if c.get("type") == "Terminating"
    ]


def list_instances(crd: JSON) -> Remedy:
    spec = as_dict(crd.get("spec"))
    plural = text(as_dict(spec.get("names")).get("plural"))
    return Remedy(
        "list the instances left; each is held by its own finalizers",
        f"kubectl get {plural}.{text(spec.get('group'))} -A",
    )


def crd_cleanup_blocker(held: Held, view: ClusterView) -> Blocker | None:
    crd = full_object(
        held, lambda: next((c for c in reads.crds(view) if meta(c).get("name") == held.name), None)
    )
    return finalizer_blocker(held, view, crd_terminating_evidence(crd), [list_instances(crd)])


# The vac-protection controller keeps its finalizer on a VolumeAttributesClass while a PV names
# it in spec.volumeAttributesClassName, or a PVC in spec.volumeAttributesClassName,
# status.currentVolumeAttributesClassName or status.modifyVolumeStatus.
# targetVolumeAttributesClassName (k8s.io/kubernetes pkg/controller/volume/vacprotection/
# vac_protection_controller.go isBeingUsed, and pkg/volume/util/finalizer.go, v1.36.3/v1.37.2).
VAC_PROTECTION = "kubernetes.io/vac-protection"


def vac_fields(obj: JSON) -> list[tuple[str, str]]:
    """(field, class) of every place a claim or volume names a VolumeAttributesClass."""
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    target = as_dict(status.get("modifyVolumeStatus")).get("targetVolumeAttributesClassName")
    named = [
        ("spec.volumeAttributesClassName", spec.get("volumeAttributesClassName")),
        ("status.currentVolumeAttributesClassName", status.get("currentVolumeAttributesClassName")),
        ("status.modifyVolumeStatus.targetVolumeAttributesClassName", target),
    ]
    return [(field, value) for field, value in named if isinstance(value, str) and value]


def vac_protection_blocker(held: Held, view: ClusterView) -> Blocker | None:
    volumes, failed_pvs = try_read(lambda: reads.pvs(view))
    claims, failed_pvcs = try_read(lambda: reads.all_pvcs(view))
    failures = [f for f in (failed_pvs, failed_pvcs) if f is not None]
    if failures:
        return finalizer_blocker(held, view, failures)
    users: list[tuple[JSON, Resource, str]] = [
        (obj, resource, field)
        for resource, objects in ((PVS, volumes or []), (PVCS, claims or []))
        for obj in objects
        for field, value in vac_fields(obj)
        if value == held.name
    ]
    if not users:
        return None  # unused: the controller should have removed it, explain it generically
    first, resource, _ = users[0]
    where = "/".join(
        filter(None, (text(meta(first).get("namespace")), text(meta(first).get("name"))))
    )
    more = f" (+{len(users) - 1} more)" if len(users) > 1 else ""
    noun = "claim" if resource == PVCS else "volume"
    return Blocker(
        PROTECTION_IN_USE,
        f"vac-protection: class in use by {noun} {where}{more}",
        (
            held.fact(),
            *(
                Evidence(
                    f"{r.kind} {text(meta(o).get('name'))} names the class in {field}",
                    object_ref(o, r),
                    {field: held.name},
                )
                for o, r, field in users[:MAX_LISTED]
            ),
        ),
        (
            Remedy(
                "move the claims and volumes that name the class to another one (or delete "
                "them); the vac-protection controller then removes the finalizer",
                "kubectl get pvc -A -o custom-columns=NAMESPACE:.metadata.namespace,NAME:"
                ".metadata.name,VAC:.spec.volumeAttributesClassName,CURRENT:"
                ".status.currentVolumeAttributesClassName",
            ),
            held.remove(
                "no claim or volume names the class any more",
                "a volume still using the class loses the parameters it was modified with",
            ),
        ),
        confidence=CERTAIN,
        basis="claims or volumes listed that name the class: the vac-protection controller "
        "keeps it",
    )


# The podgroup-protection controller (GenericWorkload, beta and off by default in 1.37) keeps
# its finalizer on a PodGroup while a pod not Succeeded or Failed names it in
# spec.schedulingGroup.podGroupName (k8s.io/kubernetes pkg/controller/scheduling/
# podgroupprotection/podgroup_protection_controller.go and pkg/apis/scheduling/types.go,
# v1.37.2).
PODGROUP_PROTECTION = "scheduling.k8s.io/podgroup-protection"


def podgroup_protection_blocker(held: Held, view: ClusterView) -> Blocker | None:
    everyone, failure = try_read(lambda: reads.pods(view, held.namespace))
    if failure is not None:
        return finalizer_blocker(held, view, [failure])
    pods = [
        p
        for p in everyone or []
        if text(as_dict(as_dict(p.get("spec")).get("schedulingGroup")).get("podGroupName"))
        == held.name
        and text(as_dict(p.get("status")).get("phase")) not in ("Succeeded", "Failed")
    ]
    if not pods:
        return None
    first = text(meta(pods[0]).get("name"))
    more = f" (+{len(pods) - 1} more)" if len(pods) > 1 else ""
    return Blocker(
        PROTECTION_IN_USE,
        f"podgroup-protection: group in use by pod {first}{more}",
        (
            held.fact(),
            *(
                Evidence(
                    f"pod {text(meta(p).get('name'))} names the group in "
                    "spec.schedulingGroup.podGroupName and has not finished",
                    object_ref(p, PODS),
                    {"phase": as_dict(p.get("status")).get("phase")},
                )
                for p in pods[:MAX_LISTED]
            ),
        ),
        (
            release_claim(held, pods, "the group"),
            held.remove(
                "no unfinished pod names the group any more",
                "its pods lose the group the scheduler places them by",
            ),
        ),
        confidence=CERTAIN,
        basis="unfinished pods listed that name the group: the podgroup-protection controller "
        "keeps it",
    )


@dataclass(frozen=True)
class Structural:
    """A finalizer whose hold is read from the cluster's structure (dependents, the pods that
    use a claim, a CRD's instances), not from what a component says: the only ones explained
    by code of their own. Everything a component writes is catalogue data (docs/catalogue.md,
    where this list is documented; tests/unit/test_catalogue.py checks the two agree)."""

    finalizer: str
    explain: Callable[[Held, ClusterView], Blocker | None]
    waits_for: str


STRUCTURAL = (
    Structural("foregroundDeletion", foreground_blocker, "its dependents to be deleted first"),
    Structural(PVC_PROTECTION, pvc_protection_blocker, "no scheduled pod to use the claim"),
    Structural(
        "kubernetes.io/pv-protection", pv_protection_blocker, "the volume to be bound to no claim"
    ),
    Structural(
        "customresourcecleanup.apiextensions.k8s.io",
        crd_cleanup_blocker,
        "every instance of the CRD to be deleted",
    ),
    Structural(VAC_PROTECTION, vac_protection_blocker, "no claim or volume to name the class"),
    Structural(
        PODGROUP_PROTECTION, podgroup_protection_blocker, "no unfinished pod to name the group"
    ),
)
SPECIAL = {s.finalizer: s.explain for s in STRUCTURAL}


def explain_finalizer(held: Held, view: ClusterView) -> Blocker:
    special = SPECIAL.get(held.finalizer)
    blocker = special(held, view) if special else None
    return blocker or finalizer_blocker(held, view)


def finalizer_blockers(obj: JSON, resource: Resource, view: ClusterView) -> list[Blocker]:
    """One `finalizer` blocker per finalizer on obj (owner, whether the owner seems alive,
    remedies safest first); `owner-dependents` for foregroundDeletion with the dependents left;
    `protection-in-use` for pvc-/pv-/vac-/podgroup-protection while what they protect is in
    use."""
    return [
        explain_finalizer(Held(obj, resource, finalizer, index), view)
        for index, finalizer in enumerate(list_of(meta(obj).get("finalizers")))
        if isinstance(finalizer, str) and finalizer
    ]
