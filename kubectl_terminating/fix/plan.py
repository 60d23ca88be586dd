"""The fix planner: a pure function from findings (what `--explain` knows) to a plan."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from kubectl_terminating.causes import (
    APISERVICE_UNAVAILABLE,
    CERTAIN,
    FINALIZER,
    NAMESPACE_FINALIZER,
    NODE_MISSING,
    NODE_NOT_READY,
    NOT_AUTOMATED,
    WEBHOOK,
    cause_of,
)
from kubectl_terminating.explain.finalizers import lease_patterns
from kubectl_terminating.explain.knowledge import FinalizerOwner, lookup
from kubectl_terminating.fix.gone import installed_names
from kubectl_terminating.model import FINALIZER_ON, JSON, Blocker, Finding
from kubectl_terminating.resources import (
    APISERVICES,
    DAEMONSETS,
    DEPLOYMENTS,
    LEASES,
    MUTATING_WEBHOOKS,
    NAMESPACES,
    NODES,
    PODS,
    SERVICES,
    STATEFULSETS,
    VALIDATING_WEBHOOKS,
    VOLUME_ATTACHMENTS,
    Resource,
)

# Actions: stable names in `-o json`.
FORCE_DELETE_POD = "force-delete-pod"
TAINT_OUT_OF_SERVICE = "taint-out-of-service"
DELETE_APISERVICE = "delete-apiservice"
DELETE_WEBHOOK_CONFIGURATION = "delete-webhook-configuration"
REMOVE_FINALIZER = "remove-finalizer"
FINALIZE_NAMESPACE = "finalize-namespace"  # a spec finalizer, through /finalize

# Checks: what observe.py reads and what must hold.
ABSENT = "absent"  # GET answers 404
GONE_OR_TERMINATING = "gone-or-terminating"  # 404, or metadata.deletionTimestamp set
NONE_NAMED = "none-named"  # a list has no item whose `field` matches one of `patterns`
NOT_READY = "not-ready"  # a Node whose Ready condition is not True
# no leader-election Lease whose name matches `patterns` was renewed within STALE_LEASE_FACTOR
# times its duration: one left behind (helm uninstall keeps cert-manager's in kube-system)
# shows when its leader last ran, not that one runs
NO_LIVE_LEASE = "no-live-lease"
STALE_LEASE_FACTOR = 10
MIN_STALE_LEASE_SECONDS = 900

OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
WORKLOAD_TYPES = {r.kind: r for r in (DEPLOYMENTS, STATEFULSETS, DAEMONSETS)}
KUBERNETES_FINALIZER = "kubernetes"

Resolver = Callable[[str, str], Resource | None]  # (apiVersion, kind) -> resource type

KNOWN: tuple[Resource, ...] = (
    PODS,
    NAMESPACES,
    NODES,
    SERVICES,
    APISERVICES,
    VALIDATING_WEBHOOKS,
    MUTATING_WEBHOOKS,
)


def known_resource(api_version: str, kind: str) -> Resource | None:
    return next((r for r in KNOWN if r.api_version == api_version and r.kind == kind), None)


@dataclass(frozen=True)
class Target:
    """An object a remedy writes to (or the stuck object a section is about)."""

    kind: str
    api_version: str
    name: str
    namespace: str | None
    path: str  # its API path
    uid: str = ""  # as the diagnosis saw it; "" when not known

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    def to_json(self) -> JSON:
        return {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "namespace": self.namespace,
            "name": self.name,
            "path": self.path,
        }


def target_of(resource: Resource, name: str, namespace: str | None = None, uid: str = "") -> Target:
    ns = namespace if resource.namespaced else None
    return Target(resource.kind, resource.api_version, name, ns, resource.path(ns, name), uid)


@dataclass(frozen=True)
class Check:
    """A fact a remedy rests on: read at plan time, and again right before the write."""

    description: str
    kind: str  # ABSENT, GONE_OR_TERMINATING, NONE_NAMED, NO_LIVE_LEASE, NOT_READY
    path: str
    field: str = ""  # NONE_NAMED, NO_LIVE_LEASE: the item field compared (dotted)
    patterns: tuple[str, ...] = ()  # ...: fnmatch patterns no (live) item may match

    def to_json(self) -> JSON:
        out: JSON = {"check": self.kind, "description": self.description, "read": self.path}
        if self.field:
            out["field"], out["patterns"] = self.field, list(self.patterns)
        return out


def absent(resource: Resource, name: str, namespace: str | None = None) -> Check:
    where = f"{namespace}/" if namespace else ""
    return Check(
        f"{resource.kind} {where}{name} does not exist", ABSENT, resource.path(namespace, name)
    )


def namespace_gone(name: str) -> Check:
    return Check(
        f"Namespace {name} is gone or terminating (nothing can be created in it)",
        GONE_OR_TERMINATING,
        NAMESPACES.path(None, name),
    )


def no_live_lease(patterns: Sequence[str], owner: str) -> Check:
    return Check(
        f"no leader-election Lease of {owner} renewed in the last {STALE_LEASE_FACTOR} lease "
        "durations, in any namespace",
        NO_LIVE_LEASE,
        LEASES.path(),
        "metadata.name",
        tuple(patterns),
    )


def none_named(resource: Resource, patterns: Sequence[str], what: str = "") -> Check:
    return Check(
        what or f"no {resource.kind} named {' or '.join(patterns)} in any namespace",
        NONE_NAMED,
        resource.path(),
        "metadata.name",
        tuple(patterns),
    )


@dataclass(frozen=True)
class Proposal:
    """One write the evidence allows, for the stuck object `subject`."""

    action: str
    target: Target
    subject: Target
    blocker: Blocker
    checks: tuple[Check, ...]
    finalizer: str = ""  # REMOVE_FINALIZER, FINALIZE_NAMESPACE

    @property
    def key(self) -> tuple[str, str, str]:
        return self.action, self.target.path, self.finalizer

    def describe(self) -> str:
        verbs = {
            FORCE_DELETE_POD: f"force delete {self.target}",
            TAINT_OUT_OF_SERVICE: f"taint {self.target} {OUT_OF_SERVICE_TAINT}:NoExecute",
            DELETE_APISERVICE: f"delete {self.target}",
            DELETE_WEBHOOK_CONFIGURATION: f"delete {self.target}",
            REMOVE_FINALIZER: f"remove finalizer {self.finalizer} from {self.target}",
            FINALIZE_NAMESPACE: f"remove spec finalizer {self.finalizer} from {self.target} "
            "(/finalize)",
        }
        return verbs[self.action]


@dataclass(frozen=True)
class Refusal:
    """A blocker left to a human: why, and (in the blocker) its printed remedies."""

    subject: Target
    blocker: Blocker
    reason: str
    target: Target | None = None


Step = Proposal | Refusal


@dataclass(frozen=True)
class Shared:
    """A step already listed under an earlier object (one APIService stalls every namespace)."""

    what: str
    first: Target  # the object it is listed under


@dataclass
class Section:
    """The steps for one stuck object, in the order they would be carried out."""

    subject: Target
    steps: list[Step] = field(default_factory=list)
    shared: list[Shared] = field(default_factory=list)


def step_key(step: Step) -> tuple[str, ...]:
    """Equal for the same step on several objects: the same write, or the same refusal of a
    cluster-wide cause (an APIService, a webhook); other refusals are each object's own."""
    if isinstance(step, Proposal):
        return step.key
    own = "" if cause_of(step.blocker.type).cluster_wide else step.subject.path
    return "refused", own, step.blocker.type, step.blocker.summary, step.reason


def step_text(step: Step) -> str:
    if isinstance(step, Proposal):
        return step.describe()
    return f"refused {step.blocker.type}: {step.blocker.summary}"


# -- proposals per blocker type --------------------------------------------------------------


def _force_delete(subject: Target, finding: Finding, blocker: Blocker) -> Iterator[Step]:
    node = finding.node or ""
    if not node or finding.kind != "Pod":
        yield Refusal(subject, blocker, "not a pod bound to a node")
        return
    checks = (
        absent(NODES, node),
        Check(
            f"no VolumeAttachment attaches a volume to node {node}",
            NONE_NAMED,
            VOLUME_ATTACHMENTS.path(),
            "spec.nodeName",
            (node,),
        ),
    )
    yield Proposal(FORCE_DELETE_POD, subject, subject, blocker, checks)


def _taint(
    subject: Target, finding: Finding, blocker: Blocker, node_down: Collection[str]
) -> Iterator[Step]:
    node = finding.node or ""
    if node not in node_down:
        yield Refusal(
            subject,
            blocker,
            f"node {node} is not proven down: the {OUT_OF_SERVICE_TAINT} taint is set only on "
            f"your word (--node-down {node}) once you know its machine is shut down",
        )
        return
    check = Check(f"Node {node} is not Ready", NOT_READY, NODES.path(None, node))
    yield Proposal(TAINT_OUT_OF_SERVICE, target_of(NODES, node), subject, blocker, (check,))


def _backend_gone(namespace: str, name: str) -> tuple[Check, ...]:
    return absent(SERVICES, name, namespace), namespace_gone(namespace)


def _apiservice(subject: Target, blocker: Blocker) -> Iterator[Step]:
    api = next((s for s in blocker.subjects if s.kind == APISERVICES.kind), None)
    service = api.backend if api is not None else None
    if api is None or service is None:
        yield Refusal(subject, blocker, "the APIService names no backing Service")
        return
    checks = _backend_gone(service.namespace or "", service.name)
    yield Proposal(DELETE_APISERVICE, target_of(APISERVICES, api.name), subject, blocker, checks)


def _webhook(subject: Target, blocker: Blocker) -> Iterator[Step]:
    objects = [e.object for e in blocker.evidence if e.object is not None]
    types = {r.kind: r for r in (MUTATING_WEBHOOKS, VALIDATING_WEBHOOKS)}
    configs = [s for s in blocker.subjects if s.kind in types]
    services = [s for s in blocker.subjects if s.kind == SERVICES.kind]
    if objects and all(o.kind == "Pod" for o in objects):
        return  # a pod's blocker raised to its namespace: planned under the pod
    if not configs or not services:
        yield Refusal(subject, blocker, "the webhook's backing Service is not named")
        return
    service = services[0]
    if service.exists is not False:
        yield Refusal(
            subject,
            blocker,
            f"Service {service.namespace}/{service.name} exists: its operator is installed; "
            "restore its pods instead",
        )
        return
    checks = _backend_gone(service.namespace or "", service.name)
    for config in dict.fromkeys(configs):
        target = target_of(types[config.kind], config.name)
        yield Proposal(DELETE_WEBHOOK_CONFIGURATION, target, subject, blocker, checks)


def _owner_checks(finalizer: str, resource: Resource) -> tuple[tuple[Check, ...], str]:
    """The checks that prove the finalizer's owner gone, or () and why it cannot be proven."""
    if finalizer == KUBERNETES_FINALIZER:
        return (), "the namespace controller removes it once the content is gone"
    owner = lookup(finalizer)
    if owner is None:
        return (), f"owner of {finalizer} unknown: it cannot be proven gone"
    if owner.built_in or owner.in_apiserver:
        return (), f"owned by Kubernetes itself ({owner.owner}): restore it instead"
    if owner.knowledge_file:
        return _user_owner_checks(owner)
    names = installed_names(owner, resource.group)
    leases = lease_patterns(owner, finalizer, resource)
    if not names or not leases:
        return (), f"{owner.owner}: no known installation names to prove it gone"
    owner_name = owner.owner.split(" (")[0]
    return (
        no_live_lease(leases, owner_name),
        none_named(DEPLOYMENTS, names, f"no Deployment of {owner_name} in any namespace"),
        none_named(VALIDATING_WEBHOOKS, names, f"no validating webhook of {owner_name}"),
        none_named(MUTATING_WEBHOOKS, names, f"no mutating webhook of {owner_name}"),
    ), ""


def _user_owner_checks(owner: FinalizerOwner) -> tuple[tuple[Check, ...], str]:
    """A user's entry: its workload absent proves the owner gone, and only the entry itself
    can say that removing the finalizer is then safe (docs/knowledge.md)."""
    where = f"{owner.owner} (knowledge file {owner.knowledge_file})"
    if not owner.safe_to_remove_when_owner_gone:
        return (
            (),
            f"{where}: the entry does not say removal is safe (safe_to_remove_when_owner_gone)",
        )
    named = owner.workload
    if named is None or named.selector:
        return (), f"{where}: names no workload by kind and name: it cannot be proven gone"
    leases = (no_live_lease(owner.lease_names, owner.owner),) if owner.lease_names else ()
    return (absent(WORKLOAD_TYPES[named.kind], named.name, named.namespace), *leases), ""


def _finalizers(subject: Target, blocker: Blocker, resolve: Resolver) -> Iterator[Step]:
    held = [(s.holder, s) for s in blocker.subjects if s.kind == FINALIZER_ON and s.holder]
    if not held:
        yield Refusal(subject, blocker, "no finalizer named in the evidence")
        return
    in_spec = {s.name for _, s in held if s.spec}
    for ref, fact in held:
        finalizer = fact.name
        resource = resolve(ref.api_version or "", ref.kind)
        if resource is None:
            yield Refusal(subject, blocker, f"type of {ref} unknown to the API server")
            continue
        target = target_of(resource, ref.name, ref.namespace)
        checks, why = _owner_checks(finalizer, resource)
        if why:
            yield Refusal(subject, blocker, f"{finalizer}: {why}", target)
            continue
        action = FINALIZE_NAMESPACE if finalizer in in_spec else REMOVE_FINALIZER
        yield Proposal(action, target, subject, blocker, checks, finalizer)


@dataclass(frozen=True)
class Ask:
    """What a proposer is given: one blocker of one stuck object, and the user's word."""

    subject: Target
    finding: Finding
    blocker: Blocker
    node_down: Collection[str]
    resolve: Resolver


# The proposer of each type whose row in causes.py is PROPOSED (tests/unit/test_causes.py).
PROPOSERS: dict[str, Callable[[Ask], Iterator[Step]]] = {
    NODE_MISSING: lambda a: _force_delete(a.subject, a.finding, a.blocker),
    NODE_NOT_READY: lambda a: _taint(a.subject, a.finding, a.blocker, a.node_down),
    APISERVICE_UNAVAILABLE: lambda a: _apiservice(a.subject, a.blocker),
    WEBHOOK: lambda a: _webhook(a.subject, a.blocker),
    FINALIZER: lambda a: _finalizers(a.subject, a.blocker, a.resolve),
    NAMESPACE_FINALIZER: lambda a: _finalizers(a.subject, a.blocker, a.resolve),
}


def not_certain(blocker: Blocker) -> str | None:
    """Why `fix` writes nothing for the blocker whatever its type: it is not certain (DESIGN.md
    "How sure"). The one gate on proof; the proposers then only choose the write and the
    checks that must still hold right before it."""
    if blocker.confidence == CERTAIN:
        return None
    said = f": {blocker.basis}" if blocker.basis else ""
    confidence = blocker.confidence or "confidence not stated"
    return f"not certain ({confidence}{said}): fix acts only on certain blockers"


def steps_for(ask: Ask) -> Iterator[Step]:
    """The row of the blocker's type (causes.py) says: nothing, its proposer, or a refusal;
    a proposer is asked only for a certain blocker."""
    cause = cause_of(ask.blocker.type)
    if cause.context:
        return iter(())
    proposer = PROPOSERS.get(cause.type)
    if proposer is not None and cause.refusal is None:
        doubt = not_certain(ask.blocker)
        if doubt is not None:
            return iter((Refusal(ask.subject, ask.blocker, doubt),))
        return proposer(ask)
    reason = cause.refusal or NOT_AUTOMATED
    return iter((Refusal(ask.subject, ask.blocker, reason),))


def _raised_from_pods(finding: Finding, blocker: Blocker) -> bool:
    """A pod's blocker raised to its namespace: planned under the pod itself."""
    objects = [e.object for e in blocker.evidence if e.object is not None]
    return bool(finding.children) and bool(objects) and all(o.kind == "Pod" for o in objects)


def subject_of(finding: Finding, resolve: Resolver) -> Target:
    resource = resolve(finding.api_version, finding.kind)
    path = resource.path(finding.namespace, finding.name) if resource else ""
    return Target(
        finding.kind, finding.api_version, finding.name, finding.namespace, path, finding.uid
    )


def plan(
    findings: Sequence[Finding],
    node_down: Collection[str] = (),
    resolve: Resolver = known_resource,
) -> list[Section]:
    """Sections for every stuck object (namespaces' remaining pods after their namespace).

    A step several objects share (one APIService stalls every namespace) is listed once, under
    the first; the others refer to it.
    """
    sections: list[Section] = []
    seen: dict[tuple[str, ...], Target] = {}

    def visit(finding: Finding) -> None:
        if not finding.stuck:
            return
        subject = subject_of(finding, resolve)
        section = Section(subject)
        for blocker in finding.blockers:
            if _raised_from_pods(finding, blocker):
                continue
            for step in steps_for(Ask(subject, finding, blocker, node_down, resolve)):
                key = step_key(step)
                if key in seen:
                    shared = Shared(step_text(step), seen[key])
                    if shared not in section.shared:
                        section.shared.append(shared)
                    continue
                seen[key] = subject
                section.steps.append(step)
        sections.append(section)
        for child in finding.children:
            visit(child)

    for finding in findings:
        visit(finding)
    return sections
