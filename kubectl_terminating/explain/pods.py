"""Why a Pod stays Terminating: one small explainer per cause (DESIGN.md, "Pods").

The kubelet of the pod's node must kill the containers, tear the volumes down and then delete
the pod with grace period 0; finalizers must be removed by their controllers. Each explainer
looks for one way this chain breaks and proves it with what the API shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from kubectl_terminating.explain.common import (
    Explainer,
    as_dict,
    as_list,
    base_finding,
    grace_period_blocker,
    meta,
    run_explainers,
    text,
)
from kubectl_terminating.explain.finalizers import finalizer_blockers
from kubectl_terminating.explain.webhooks import (
    labels_of,
    matching_webhooks,
    unverified_webhooks,
    webhook_blockers,
)
from kubectl_terminating.model import (
    CONTAINERS_RUNNING,
    CSI_DRIVER_MISSING,
    GRACE_PERIOD,
    JSON,
    NAMESPACE_TERMINATING,
    NODE_MISSING,
    NODE_NOT_READY,
    UNKNOWN,
    VOLUME_ATTACHMENT,
    VOLUMES_NOT_RECLAIMED,
    Blocker,
    Evidence,
    Finding,
    ObjectRef,
    Remedy,
)
from kubectl_terminating.resources import PODS
from kubectl_terminating.timeutil import human_duration, seconds_since
from kubectl_terminating.view import ClusterView, ReadFailed

# A node Lease not renewed for this long means its kubelet stopped. 40s is the node lifecycle
# controller's --node-monitor-grace-period default (50s since Kubernetes 1.32); the kubelet
# renews every 10s, so 40s is four missed renewals. A longer leaseDurationSeconds wins.
NODE_LEASE_GRACE_SECONDS = 40
NODE_LEASE_NAMESPACE = "kube-node-lease"
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
CONTAINER_STATES = ("running", "terminated", "waiting")
# Blockers that give context but are not a cause of their own.
CONTEXT_TYPES = frozenset({GRACE_PERIOD, NAMESPACE_TERMINATING})
# kubelet event reasons (pkg/kubelet/events) about volume set-up and teardown; some drivers and
# older releases spell the unmount one "FailedUnmount".
VOLUME_EVENT_REASONS = frozenset(
    {"FailedUnMount", "FailedUnmount", "FailedDetachVolume", "FailedMount", "FailedUnmapDevice"}
)
KUBELET_VOLUMES_LOG = "Pod is terminated, but some volumes have not been cleaned up"


def _spec(obj: JSON) -> JSON:
    return as_dict(obj.get("spec"))


def _status(obj: JSON) -> JSON:
    return as_dict(obj.get("status"))


def _duration(seconds: int | None) -> str:
    return human_duration(seconds) if seconds is not None else "?"


def _unique(items: Iterable[Remedy]) -> tuple[Remedy, ...]:
    """Remedies in order, each command once (several hints can suggest the same step)."""
    seen: set[str] = set()
    out: list[Remedy] = []
    for item in items:
        key = item.command or item.description
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


def _few(names: list[str], noun: str) -> str:
    """`app`, `app, sidecar` or `3 containers`: short enough for a summary column."""
    if len(names) <= 2:
        return ", ".join(names)
    return f"{len(names)} {noun}s"


# -- containers (wide output) ------------------------------------------------------------------


def container_state(status: JSON) -> JSON:
    """One container status as the wide output shows it."""
    state = as_dict(status.get("state"))
    name = next((s for s in CONTAINER_STATES if isinstance(state.get(s), dict)), "unknown")
    detail = as_dict(state.get(name))
    exit_code = detail.get("exitCode")
    return {
        "name": text(status.get("name")),
        "state": name,
        "reason": text(detail.get("reason")) or None,
        "exitCode": exit_code if isinstance(exit_code, int) else None,
        "startedAt": text(detail.get("startedAt")) or None,
        "finishedAt": text(detail.get("finishedAt")) or None,
    }


def container_states(pod: JSON) -> list[JSON]:
    """Init, regular and ephemeral container states; declared containers with no status are
    `unknown` (the kubelet never reported them)."""
    status = _status(pod)
    reported = [
        container_state(as_dict(s))
        for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
        for s in as_list(status.get(key))
    ]
    known = {c["name"] for c in reported}
    for container in as_list(_spec(pod).get("containers")):
        name = text(as_dict(container).get("name"))
        if name and name not in known:
            reported.append(container_state({"name": name}))
    return reported


def _running(finding: Finding) -> list[str]:
    return [c["name"] for c in finding.containers if c.get("state") == "running"]


# -- events ------------------------------------------------------------------------------------


def event_time(event: JSON) -> str:
    series = as_dict(event.get("series"))
    for value in (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
    ):
        if text(value):
            return text(value)
    return ""


def event_evidence(event: JSON) -> Evidence:
    reason, message = text(event.get("reason")), text(event.get("message"))
    clipped = message if len(message) <= 200 else message[:197] + "..."
    m = meta(event)
    count = event.get("count")
    return Evidence(
        f"event {reason}: {clipped}",
        ObjectRef("Event", text(m.get("name")), text(m.get("namespace")) or None, "v1"),
        {
            "reason": reason,
            "message": message,
            "count": count if isinstance(count, int) else None,
            "lastTimestamp": event_time(event) or None,
        },
    )


def newest_event(
    events: list[JSON], reasons: Iterable[str] = (), phrases: Iterable[str] = ()
) -> JSON | None:
    """The newest event with one of reasons, or whose message contains one of phrases."""
    reasons, phrases = set(reasons), [p.lower() for p in phrases]
    found = [
        e
        for e in events
        if text(e.get("reason")) in reasons
        or any(p in text(e.get("message")).lower() for p in phrases)
    ]
    return max(found, key=event_time) if found else None


# -- the node ----------------------------------------------------------------------------------


def _condition(node: JSON, kind: str) -> JSON | None:
    for condition in as_list(_status(node).get("conditions")):
        if as_dict(condition).get("type") == kind:
            return as_dict(condition)
    return None


def _node_ref(name: str) -> ObjectRef:
    return ObjectRef("Node", name, api_version="v1")


@dataclass(frozen=True)
class NodeProblem:
    summary: str
    evidence: Evidence


def _why_not_ready(condition: JSON) -> str:
    reason = text(condition.get("reason"))
    if reason == "NodeStatusUnknown":
        return "kubelet stopped posting"
    return reason or text(condition.get("status")) or "no reason given"


def ready_problem(name: str, node: JSON, now: datetime) -> NodeProblem | None:
    """The Ready condition is not True (False, Unknown, or never reported)."""
    ready = _condition(node, "Ready")
    if ready is None:
        return NodeProblem(
            f"node {name} has never reported Ready",
            Evidence(f"Node {name} has no Ready condition", _node_ref(name), {"Ready": None}),
        )
    if ready.get("status") == "True":
        return None
    since = text(ready.get("lastTransitionTime"))
    age = seconds_since(since, now)
    for_how_long = f" for {human_duration(age)}" if age is not None else ""
    return NodeProblem(
        f"node {name} NotReady{for_how_long} ({_why_not_ready(ready)})",
        Evidence(
            f"Node {name} Ready={text(ready.get('status'))} since {since or '?'}: "
            f"{text(ready.get('message')) or text(ready.get('reason'))}",
            _node_ref(name),
            {
                "Ready": text(ready.get("status")) or None,
                "reason": text(ready.get("reason")) or None,
                "message": text(ready.get("message")) or None,
                "lastTransitionTime": since or None,
                "lastHeartbeatTime": text(ready.get("lastHeartbeatTime")) or None,
            },
        ),
    )


def lease_problem(name: str, lease: JSON | None, now: datetime) -> NodeProblem | None:
    """The node's heartbeat Lease has not been renewed for longer than the grace."""
    spec = _spec(lease or {})
    renewed = text(spec.get("renewTime"))
    age = seconds_since(renewed, now)
    duration = spec.get("leaseDurationSeconds")
    limit = max(duration if isinstance(duration, int) else 0, NODE_LEASE_GRACE_SECONDS)
    if age is None or age <= limit:
        return None  # no lease (or no renewTime) proves nothing either way
    return NodeProblem(
        f"node {name} lease not renewed for {human_duration(age)}",
        Evidence(
            f"Lease {NODE_LEASE_NAMESPACE}/{name} last renewed {renewed}, {age}s ago "
            f"(stale after {limit}s: the node lifecycle controller's default grace is 40s)",
            ObjectRef("Lease", name, NODE_LEASE_NAMESPACE, "coordination.k8s.io/v1"),
            {"renewTime": renewed, "secondsSinceRenew": age, "staleAfterSeconds": limit},
        ),
    )


@dataclass(frozen=True)
class NodeCheck:
    """What is known of the pod's node: missing, unhealthy (with why), healthy, or unreadable."""

    name: str
    node: JSON | None = None
    unreadable: str = ""
    problem: NodeProblem | None = None

    @property
    def missing(self) -> bool:
        return bool(self.name) and not self.unreadable and self.node is None

    @property
    def unhealthy(self) -> bool:
        return self.missing or self.problem is not None

    def unknown_evidence(self) -> list[Evidence]:
        """Said on blockers that assume a healthy node when its health could not be read."""
        if not self.unreadable:
            return []
        return [
            Evidence(
                f"health of node {self.name} not checked ({self.unreadable}); if it is down, "
                "that is the cause instead",
                _node_ref(self.name),
            )
        ]


# -- the reads the explainers share ------------------------------------------------------------


class PodFacts:
    """The pod and the reads several explainers share, made once and only when needed.

    A shared read that fails becomes a warning on the finding and an "unknown" answer, so one
    missing permission costs one piece of evidence, not every check after it.
    """

    def __init__(self, pod: JSON, view: ClusterView, finding: Finding) -> None:
        self.pod = pod
        self.view = view
        self.finding = finding

    @property
    def namespace(self) -> str:
        return self.finding.namespace or ""

    @property
    def name(self) -> str:
        return self.finding.name

    @property
    def uid(self) -> str:
        return self.finding.uid or "<pod uid>"

    @property
    def node_name(self) -> str:
        return self.finding.node or ""

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef("Pod", self.name, self.namespace or None, "v1")

    @property
    def overdue(self) -> int | None:
        return self.finding.overdue_seconds

    def warn(self, failed: ReadFailed) -> None:
        if str(failed) not in self.finding.warnings:
            self.finding.warnings.append(str(failed))

    @property
    def kubelet_pending(self) -> bool:
        """The pod's kubelet still has to confirm the deletion. Once it has (or after a forced
        delete) deletionGracePeriodSeconds is 0 and only finalizers can hold the pod."""
        grace = meta(self.pod).get("deletionGracePeriodSeconds")
        return bool(self.node_name) and grace != 0

    @property
    def kubelet_overdue(self) -> bool:
        """Past the deadline, the kubelet's work not done, and no known node problem."""
        return (
            self.kubelet_pending
            and self.overdue is not None
            and self.overdue > 0
            and not self.node.unhealthy
        )

    @cached_property
    def node(self) -> NodeCheck:
        name = self.node_name
        if not name:
            return NodeCheck("")
        try:
            node = self.view.node(name)
        except ReadFailed as failed:
            self.warn(failed)
            return NodeCheck(name, unreadable=failed.reason)
        if node is None:
            return NodeCheck(name)
        problem = ready_problem(name, node, self.view.now)
        if problem is None:
            try:
                problem = lease_problem(name, self.view.node_lease(name), self.view.now)
            except ReadFailed as failed:
                self.warn(failed)  # Ready=True stands on its own
        return NodeCheck(name, node, problem=problem)

    @cached_property
    def events(self) -> list[JSON]:
        if not self.finding.uid:
            return []  # events are matched by uid; without one any match would be wrong
        try:
            return [as_dict(e) for e in self.view.events_for(self.namespace, self.finding.uid)]
        except ReadFailed as failed:
            self.warn(failed)
            return []

    def on_node(self, what: str) -> str:
        return f"on node {self.node_name or '?'}: {what}"

    def kubelet_log(self, why: str = "read the kubelet's log for the pod") -> Remedy:
        return Remedy(self.on_node(why), f"journalctl -u kubelet --since -1h | grep {self.uid}")

    def force_delete(self, when: str) -> Remedy:
        return Remedy(
            "force delete the pod object",
            f"kubectl delete pod -n {self.namespace} {self.name} --grace-period=0 --force",
            destructive=True,
            when=when,
        )


PodExplainer = Callable[[PodFacts], list[Blocker]]


# -- finalizers, namespace, webhooks -----------------------------------------------------------


def explain_finalizers(facts: PodFacts) -> list[Blocker]:
    if not facts.finding.finalizers:
        return []
    return finalizer_blockers(facts.pod, PODS, facts.view)


def explain_namespace(facts: PodFacts) -> list[Blocker]:
    """Context: the pod's namespace is being deleted too."""
    namespace = facts.view.namespace(facts.namespace) if facts.namespace else None
    if namespace is None:
        return []
    phase = text(_status(namespace).get("phase"))
    since = text(meta(namespace).get("deletionTimestamp"))
    if phase != "Terminating" and not since:
        return []
    name = facts.namespace
    return [
        Blocker(
            NAMESPACE_TERMINATING,
            f"namespace {name} is terminating too",
            (
                Evidence(
                    f"Namespace {name} is Terminating since {since or '?'}",
                    ObjectRef("Namespace", name, api_version="v1"),
                    {"phase": phase or None, "deletionTimestamp": since or None},
                ),
            ),
            (Remedy("see why the namespace is stuck", f"kubectl terminating ns {name} --explain"),),
        )
    ]


def pending_writes(facts: PodFacts) -> tuple[str, ...]:
    """The writes deletion still needs: finalizer removal (UPDATE) and the kubelet's final
    delete with grace period 0 (DELETE)."""
    writes = ("UPDATE",) if facts.finding.finalizers else ()
    return writes + (("DELETE",) if facts.kubelet_pending else ())


def explain_webhooks(facts: PodFacts) -> list[Blocker]:
    writes = pending_writes(facts)
    if not writes:
        return []
    return webhook_blockers(PODS, writes, facts.namespace, facts.view, labels=labels_of(facts.pod))


# -- node missing / not ready ------------------------------------------------------------------


def _node_missing(facts: PodFacts) -> Blocker:
    name = facts.node_name
    return Blocker(
        NODE_MISSING,
        f"node {name} no longer exists",
        (
            Evidence(
                f"spec.nodeName {name} names a Node that does not exist: no kubelet will ever "
                "confirm the deletion (the pod garbage collector, if running, removes such pods)",
                facts.ref,
                {"nodeName": name, "nodeExists": False},
            ),
        ),
        (
            Remedy(
                f"confirm node {name} is gone for good (not re-registering)",
                f"kubectl get node {name}",
            ),
            facts.force_delete(
                f"node {name} is gone and its machine will not come back with the pod's "
                "containers still running"
            ),
        ),
    )


def _has_out_of_service_taint(node: JSON | None) -> bool:
    return any(
        as_dict(t).get("key") == OUT_OF_SERVICE_TAINT
        for t in as_list(_spec(node or {}).get("taints"))
    )


def _node_not_ready(facts: PodFacts, problem: NodeProblem) -> Blocker:
    name = facts.node_name
    evidence = [problem.evidence]
    remedies = [
        Remedy("check the node and its recent events", f"kubectl describe node {name}"),
        Remedy(
            facts.on_node("check the kubelet, if the machine is reachable"),
            "systemctl status kubelet; journalctl -u kubelet --since -1h",
        ),
    ]
    if _has_out_of_service_taint(facts.node.node):
        evidence.append(
            Evidence(f"Node {name} already has the {OUT_OF_SERVICE_TAINT} taint", _node_ref(name))
        )
    else:
        remedies.append(
            Remedy(
                "mark the shut-down node out of service: its pods are then deleted and their "
                "volumes detached (safer than force deleting pods one by one)",
                f"kubectl taint nodes {name} {OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute",
                destructive=True,
                when=f"node {name} is shut down (not just unreachable); remove the taint once "
                "it is back",
            )
        )
    remedies.append(
        facts.force_delete(
            f"node {name} is known to be down; while it may still run, the containers could "
            "keep running and a replacement pod would run beside them"
        )
    )
    return Blocker(NODE_NOT_READY, problem.summary, tuple(evidence), tuple(remedies))


def explain_node(facts: PodFacts) -> list[Blocker]:
    if not facts.kubelet_pending:
        return []
    check = facts.node
    if check.missing:
        return [_node_missing(facts)]
    if check.problem is not None:
        return [_node_not_ready(facts, check.problem)]
    return []


# -- containers still running: hints from events (DESIGN.md's node-level symptom table) --------


@dataclass(frozen=True)
class Hint:
    short: str  # goes into the summary
    evidence: tuple[Evidence, ...]
    remedies: tuple[Remedy, ...]


RemedyBuilder = Callable[[PodFacts, JSON | None], tuple[Remedy, ...]]


def _list_containers(facts: PodFacts) -> Remedy:
    return Remedy(
        facts.on_node("list the pod's containers the runtime still has"),
        f"crictl ps -a --label io.kubernetes.pod.uid={facts.uid}",
    )


def _runtime_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        _list_containers(facts),
        Remedy(
            facts.on_node("read the container runtime's log"),
            "journalctl -u containerd -u docker --since -1h",
        ),
        Remedy(
            facts.on_node("restart the container runtime"),
            "systemctl restart containerd",
            destructive=True,
            when="the runtime is confirmed hung; drain the node first unless its containers "
            "survive a runtime restart (containerd, dockerd with live-restore)",
        ),
    )


def _disk_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        Remedy(
            facts.on_node("check the runtime's data disk"),
            "df -h /var/lib/containerd /var/lib/docker /var/lib/kubelet",
        ),
        Remedy(facts.on_node("free space, unused images first"), "crictl rmi --prune"),
    )


PATH_BEFORE_EPERM = re.compile(r"(/[^\s:\"']+)\S*:? operation not permitted")


def _immutable_remedies(facts: PodFacts, event: JSON | None) -> tuple[Remedy, ...]:
    found = PATH_BEFORE_EPERM.search(text((event or {}).get("message")))
    path = found.group(1) if found else "<path from the kubelet log>"
    return (
        Remedy(facts.on_node("look for the immutable attribute on the path"), f"lsattr -d {path}"),
        Remedy(
            facts.on_node("clear it so the runtime can remove the container's files"),
            f"chattr -i {path}",
            when="the path is inside the container's own filesystem",
        ),
    )


def _busy_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        Remedy(
            facts.on_node("find the processes whose mount namespace holds the pod's mounts"),
            f"grep {facts.uid} /proc/*/mountinfo",
        ),
        Remedy(facts.on_node("see what holds it (pid from the path above)"), "ps -f <pid>"),
    )


def _prestop_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        Remedy(
            "check the preStop hook: it failed or hung",
            f"kubectl get pod -n {facts.namespace} {facts.name} "
            "-o jsonpath='{.spec.containers[*].lifecycle.preStop}'",
        ),
    )


@dataclass(frozen=True)
class NodeSymptom:
    """One row of the symptom table: what shows in events (or node conditions) for a cause."""

    short: str
    cause: str
    remedies: RemedyBuilder
    reasons: frozenset[str] = frozenset()
    phrases: tuple[str, ...] = ()
    node_condition: str = ""  # a node condition that shows the same cause when True

    def hint(self, facts: PodFacts) -> Hint | None:
        event = newest_event(facts.events, self.reasons, self.phrases)
        condition = (
            _condition(facts.node.node or {}, self.node_condition) if self.node_condition else None
        )
        pressed = condition is not None and condition.get("status") == "True"
        if event is None and not pressed:
            return None
        evidence = [Evidence(f"likely cause: {self.cause}", facts.ref)]
        if event is not None:
            evidence.append(event_evidence(event))
        if pressed:
            evidence.append(
                Evidence(
                    f"Node {facts.node_name} has {self.node_condition}=True",
                    _node_ref(facts.node_name),
                    {
                        self.node_condition: "True",
                        "since": (condition or {}).get("lastTransitionTime"),
                    },
                )
            )
        return Hint(self.short, tuple(evidence), self.remedies(facts, event))


NODE_SYMPTOMS: tuple[NodeSymptom, ...] = (
    NodeSymptom(
        "runtime did not kill them",
        "the container runtime is hung or out of sync with the kubelet",
        _runtime_remedies,
        reasons=frozenset({"FailedKillPod", "ExceededGracePeriod"}),
        phrases=("DeadlineExceeded", "context deadline exceeded"),
    ),
    NodeSymptom(
        "node disk full",
        "the runtime's data disk is full, so it cannot remove containers",
        _disk_remedies,
        phrases=("no space left on device",),
        node_condition="DiskPressure",
    ),
    NodeSymptom(
        "immutable file",
        "a file with the immutable attribute stops the runtime removing the container",
        _immutable_remedies,
        phrases=("operation not permitted",),
    ),
    NodeSymptom(
        "mount busy",
        "a mount is held open, often by another process's mount namespace",
        _busy_remedies,
        phrases=("device or resource busy",),
    ),
    NodeSymptom(
        "preStop hook failed",
        "the preStop hook failed or hung",
        _prestop_remedies,
        reasons=frozenset({"FailedPreStopHook"}),
    ),
)


def _has_exec_post_start(pod: JSON) -> bool:
    return any(
        isinstance(as_dict(as_dict(as_dict(c).get("lifecycle")).get("postStart")).get("exec"), dict)
        for c in as_list(_spec(pod).get("containers"))
    )


def exec_hang_hint(facts: PodFacts) -> Hint | None:
    """hostPID/shareProcessNamespace + a postStart exec hook: an exec into a container that
    exited first can hang (docker), and the pod with it."""
    spec = _spec(facts.pod)
    shared = [k for k in ("hostPID", "shareProcessNamespace") if spec.get(k) is True]
    if not shared or not _has_exec_post_start(facts.pod):
        return None
    return Hint(
        "postStart exec hang",
        (
            Evidence(
                f"{' and '.join(shared)} with a postStart exec hook: an exec into a container "
                "that exited first can hang",
                facts.ref,
                dict.fromkeys(shared, True) | {"postStart": "exec"},
            ),
        ),
        (
            _list_containers(facts),
            Remedy(
                facts.on_node(
                    "stop the hung container in the runtime; the kubelet then "
                    "finishes deleting the pod"
                ),
                "crictl stop <container-id>",
            ),
        ),
    )


def runtime_hints(facts: PodFacts) -> list[Hint]:
    found = [symptom.hint(facts) for symptom in NODE_SYMPTOMS] + [exec_hang_hint(facts)]
    return [hint for hint in found if hint is not None]


def _running_evidence(facts: PodFacts, running: list[str]) -> Evidence:
    return Evidence(
        f"{', '.join(running)} still running {_duration(facts.overdue)} after the deadline "
        f"{facts.finding.deletion_timestamp}",
        facts.ref,
        {
            "running": running,
            "deletionTimestamp": facts.finding.deletion_timestamp,
            "overdueSeconds": facts.overdue,
            "nodeName": facts.node_name,
        },
    )


def explain_containers(facts: PodFacts) -> list[Blocker]:
    running = _running(facts.finding)
    if not running or not facts.kubelet_overdue:
        return []
    hints = runtime_hints(facts)
    summary = f"{_few(running, 'container')} still running {_duration(facts.overdue)} past deadline"
    if hints:
        summary += f" ({hints[0].short})"
    generic = (_list_containers(facts), facts.kubelet_log())
    first = Remedy(
        "read the pod's events",
        f"kubectl get events -n {facts.namespace} --field-selector involvedObject.uid={facts.uid}",
    )
    return [
        Blocker(
            CONTAINERS_RUNNING,
            summary,
            (
                _running_evidence(facts, running),
                *facts.node.unknown_evidence(),
                *(e for h in hints for e in h.evidence),
            ),
            _unique([first, *(r for h in hints for r in h.remedies), *generic]),
        )
    ]


# -- volumes not reclaimed ---------------------------------------------------------------------


@dataclass
class VolumeTrace:
    """One pod volume followed PVC -> PV -> CSI driver -> node -> VolumeAttachment."""

    volume: str
    claim: str = ""
    pv: str = ""
    driver: str = ""
    handle: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    driver_problem: Evidence | None = None
    attachment: JSON | None = None
    attachment_problem: Evidence | None = None
    in_use: bool = False

    @property
    def unique_name(self) -> str:
        """The name the kubelet reports in node.status.volumesInUse."""
        return (
            f"kubernetes.io/csi/{self.driver}^{self.handle}" if self.driver and self.handle else ""
        )


def _claim_of(volume: JSON, pod_name: str) -> str:
    claim = text(as_dict(volume.get("persistentVolumeClaim")).get("claimName"))
    if claim:
        return claim
    # A generic ephemeral volume's PVC is named <pod>-<volume>.
    if isinstance(volume.get("ephemeral"), dict):
        return f"{pod_name}-{text(volume.get('name'))}"
    return ""


def _follow_claim(trace: VolumeTrace, facts: PodFacts) -> None:
    if not trace.claim:
        return
    pvc = facts.view.pvc(facts.namespace, trace.claim)
    claim_ref = ObjectRef("PersistentVolumeClaim", trace.claim, facts.namespace, "v1")
    if pvc is None:
        trace.evidence.append(Evidence(f"PVC {trace.claim} not found", claim_ref))
        return
    trace.pv = text(_spec(pvc).get("volumeName"))
    pv = facts.view.pv(trace.pv) if trace.pv else None
    if pv is None:
        trace.evidence.append(
            Evidence(
                f"PVC {trace.claim} is bound to no existing PV",
                claim_ref,
                {"volumeName": trace.pv or None},
            )
        )
        return
    csi = as_dict(_spec(pv).get("csi"))
    trace.driver, trace.handle = text(csi.get("driver")), text(csi.get("volumeHandle"))
    trace.evidence.append(
        Evidence(
            f"volume {trace.volume}: PVC {trace.claim} -> PV {trace.pv} -> "
            f"{'CSI driver ' + trace.driver if trace.driver else 'no CSI driver (in-tree)'}",
            ObjectRef("PersistentVolume", trace.pv, api_version="v1"),
            {
                "volume": trace.volume,
                "claim": trace.claim,
                "persistentVolume": trace.pv,
                "driver": trace.driver or None,
                "volumeHandle": trace.handle or None,
            },
        )
    )


def _check_driver(trace: VolumeTrace, facts: PodFacts) -> None:
    if not trace.driver:
        return
    driver = trace.driver
    if facts.view.csi_driver(driver) is None:
        trace.driver_problem = Evidence(
            f"CSIDriver {driver} does not exist: the driver was uninstalled (or never registered)",
            ObjectRef("CSIDriver", driver, api_version="storage.k8s.io/v1"),
            {"driver": driver, "csiDriverExists": False},
        )
        return
    csi_node = facts.view.csi_node(facts.node_name)
    registered = [
        text(as_dict(d).get("name")) for d in as_list(_spec(csi_node or {}).get("drivers"))
    ]
    if driver not in registered:
        trace.driver_problem = Evidence(
            f"driver {driver} is not registered on node {facts.node_name} (its node plugin is "
            "not running there)",
            ObjectRef("CSINode", facts.node_name, api_version="storage.k8s.io/v1"),
            {
                "driver": driver,
                "registeredDrivers": registered,
                "csiNodeExists": csi_node is not None,
            },
        )


def _check_in_use(trace: VolumeTrace, facts: PodFacts) -> None:
    unique = trace.unique_name
    if not unique or unique not in as_list(_status(facts.node.node or {}).get("volumesInUse")):
        return
    trace.in_use = True
    trace.evidence.append(
        Evidence(
            f"node {facts.node_name} still reports {unique} in status.volumesInUse",
            _node_ref(facts.node_name),
            {"volumesInUse": unique},
        )
    )


def _attachment_for(pv: str, node: str, attachments: list[JSON]) -> JSON | None:
    for attachment in map(as_dict, attachments):
        spec = _spec(attachment)
        source = as_dict(spec.get("source"))
        if source.get("persistentVolumeName") == pv and spec.get("nodeName") == node:
            return attachment
    return None


def _check_attachment(trace: VolumeTrace, facts: PodFacts) -> None:
    if not trace.pv:
        return
    attachment = _attachment_for(trace.pv, facts.node_name, facts.view.volume_attachments())
    if attachment is None:
        return
    trace.attachment = attachment
    name = text(meta(attachment).get("name"))
    status = _status(attachment)
    error = as_dict(status.get("detachError"))
    deleting = text(meta(attachment).get("deletionTimestamp"))
    fields = {
        "attacher": text(_spec(attachment).get("attacher")) or None,
        "attached": status.get("attached"),
        "detachError": text(error.get("message")) or None,
        "detachErrorTime": text(error.get("time")) or None,
        "deletionTimestamp": deleting or None,
    }
    ref = ObjectRef("VolumeAttachment", name, api_version="storage.k8s.io/v1")
    if error or deleting:
        trace.attachment_problem = Evidence(
            f"VolumeAttachment {name} of PV {trace.pv} to node {facts.node_name}: "
            + (f"detach failing: {text(error.get('message'))}" if error else "stuck deleting"),
            ref,
            fields,
        )
    else:
        trace.evidence.append(
            Evidence(
                f"VolumeAttachment {name} still attaches PV {trace.pv} to {facts.node_name}",
                ref,
                fields,
            )
        )


def trace_volume(facts: PodFacts, volume: JSON) -> VolumeTrace:
    name = text(volume.get("name"))
    trace = VolumeTrace(name, claim=_claim_of(volume, facts.name))
    trace.driver = text(as_dict(volume.get("csi")).get("driver"))  # inline CSI volume
    try:
        for step in (_follow_claim, _check_driver, _check_in_use, _check_attachment):
            step(trace, facts)
    except ReadFailed as failed:
        facts.warn(failed)  # keep what was found before the read that failed
    return trace


def _unmount_command(facts: PodFacts, traces: list[VolumeTrace]) -> str:
    if any(t.driver for t in traces):
        return f"umount /var/lib/kubelet/pods/{facts.uid}/volumes/kubernetes.io~csi/*/mount"
    return f"umount <mount point listed by: mount | grep {facts.uid}>"


def volume_remedies(facts: PodFacts, traces: list[VolumeTrace]) -> tuple[Remedy, ...]:
    """Restore the driver first, then look at and unmount on the node; the VolumeAttachment
    is deleted last, if ever (deleting it first can leave a disk attached to two nodes)."""
    node = facts.node_name
    steps: list[Remedy] = []
    broken = sorted({t.driver for t in traces if t.driver_problem is not None})
    if broken:
        steps.append(
            Remedy(
                f"restore CSI driver {', '.join(broken)} (reinstall it; its node plugin must "
                f"run on {node}); the kubelet then finishes the unmount itself",
                f"kubectl get pods -A -o wide --field-selector spec.nodeName={node}",
            )
        )
    steps += [
        Remedy(facts.on_node("see what is still mounted for the pod"), f"mount | grep {facts.uid}"),
        facts.kubelet_log(f"read why the kubelet waits ('{KUBELET_VOLUMES_LOG}')"),
    ]
    if newest_event(facts.events, phrases=("device or resource busy",)) is not None:
        steps += _busy_remedies(facts, None)
    steps.append(
        Remedy(
            facts.on_node("unmount what is left; the kubelet then removes the pod"),
            _unmount_command(facts, traces),
            destructive=True,
            when="the driver cannot be restored and no process holds the mount; this skips "
            "the driver's own cleanup",
        )
    )
    steps += [
        Remedy(
            f"delete VolumeAttachment {text(meta(t.attachment).get('name'))}",
            f"kubectl delete volumeattachment {text(meta(t.attachment).get('name'))}",
            destructive=True,
            when="last, only once the volume is unmounted on the node and the storage backend "
            "shows it detached: deleting it first can leave the disk attached to two nodes",
        )
        for t in traces
        if t.attachment is not None
    ]
    return _unique(steps)


def _url_webhooks(facts: PodFacts) -> list[Evidence]:
    """URL webhooks on the writes deletion needs: unverifiable, so only named when nothing
    more concrete was found."""
    writes = pending_writes(facts)
    try:
        hooks = matching_webhooks(PODS, writes, facts.namespace, facts.view) if writes else []
    except ReadFailed:
        return []  # already a warning from the webhook check
    return unverified_webhooks(hooks, PODS)


def _volume_events(facts: PodFacts) -> list[JSON]:
    found = [e for e in facts.events if text(e.get("reason")) in VOLUME_EVENT_REASONS]
    return sorted(found, key=event_time, reverse=True)


def _exited_evidence(facts: PodFacts) -> Evidence:
    phase = facts.finding.phase
    return Evidence(
        f"no container is running, yet the pod is still here {_duration(facts.overdue)} after "
        f"its deadline (phase {phase or '?'})",
        facts.ref,
        {
            "phase": phase,
            "containers": {c["name"]: c["state"] for c in facts.finding.containers},
            "overdueSeconds": facts.overdue,
            "nodeName": facts.node_name,
        },
    )


def _reclaim_blocker(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> Blocker:
    events = _volume_events(facts)
    in_use = [t.volume for t in traces if t.in_use]
    states = {c["state"] for c in facts.finding.containers}
    # "exited" only when the kubelet reported every container terminated
    done = "containers exited" if states == {"terminated"} else "no container running"
    if in_use:
        what = f"volume {in_use[0]}" if len(in_use) == 1 else f"{len(in_use)} volumes"
        summary = f"{done}; {what} still in use on {facts.node_name}"
    elif events:
        summary = f"{done}; volume teardown failing ({text(events[0].get('reason'))})"
    else:
        summary = f"{done}; kubelet has not finished volume teardown"
    evidence = [
        _exited_evidence(facts),
        *facts.node.unknown_evidence(),
        *(e for t in traces for e in t.evidence),
        *(event_evidence(e) for e in events[:3]),
        *([] if in_use or events else _url_webhooks(facts)),
    ]
    return Blocker(VOLUMES_NOT_RECLAIMED, summary, tuple(evidence), remedies)


def _driver_blockers(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> list[Blocker]:
    blockers: dict[str, Blocker] = {}
    for t in traces:
        if t.driver_problem is None or t.driver in blockers:
            continue
        gone = t.driver_problem.fields.get("csiDriverExists") is False
        where = "not installed" if gone else f"not running on {facts.node_name}"
        blockers[t.driver] = Blocker(
            CSI_DRIVER_MISSING,
            f"CSI driver {t.driver} {where}",
            (t.driver_problem, *t.evidence[:1]),
            remedies,
        )
    return list(blockers.values())


def _attachment_blockers(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> list[Blocker]:
    return [
        Blocker(
            VOLUME_ATTACHMENT,
            f"detach of {t.pv} from {facts.node_name} failing"
            if t.attachment_problem.fields.get("detachError")
            else f"VolumeAttachment of {t.pv} stuck deleting",
            (t.attachment_problem,),
            remedies,
        )
        for t in traces
        if t.attachment_problem is not None
    ]


def explain_volumes(facts: PodFacts) -> list[Blocker]:
    if _running(facts.finding) or not facts.kubelet_overdue:
        return []
    traces = [
        trace_volume(facts, as_dict(v))
        for v in as_list(_spec(facts.pod).get("volumes"))
        if _claim_of(as_dict(v), facts.name) or as_dict(as_dict(v).get("csi")).get("driver")
    ]
    remedies = volume_remedies(facts, traces)
    return [
        _reclaim_blocker(facts, traces, remedies),
        *_driver_blockers(facts, traces, remedies),
        *_attachment_blockers(facts, traces, remedies),
    ]


# -- nothing found -----------------------------------------------------------------------------


def _node_checked(facts: PodFacts) -> Evidence:
    check = facts.node
    if not check.name:
        return Evidence("the pod is not bound to a node", facts.ref, {"nodeName": None})
    if check.unreadable:
        return check.unknown_evidence()[0]
    if not facts.kubelet_pending:
        return Evidence(
            "the kubelet already confirmed the deletion (deletionGracePeriodSeconds is 0)",
            facts.ref,
        )
    return Evidence(f"node {check.name} is Ready and its lease is fresh", _node_ref(check.name))


def unknown_blocker(facts: PodFacts) -> Blocker:
    finding = facts.finding
    checked = [
        Evidence(
            f"checked: finalizers ({', '.join(finding.finalizers) or 'none'}), node, "
            f"containers ({len(_running(finding))} running), volumes, webhooks",
            facts.ref,
            {"finalizers": list(finding.finalizers), "overdueSeconds": facts.overdue},
        ),
        _node_checked(facts),
    ]
    if finding.warnings:
        checked.append(Evidence("not checked: " + "; ".join(finding.warnings)))
    return Blocker(
        UNKNOWN,
        f"{_duration(facts.overdue)} overdue; no known cause found",
        tuple(checked),
        (
            Remedy(
                "read the pod's state and events",
                f"kubectl describe pod -n {facts.namespace} {facts.name}",
            ),
            facts.kubelet_log(),
        ),
    )


def _needs_unknown(finding: Finding) -> bool:
    overdue = finding.overdue_seconds
    return (
        overdue is not None
        and overdue > 0
        and all(b.type in CONTEXT_TYPES for b in finding.blockers)
    )


# -- the pod explainer -------------------------------------------------------------------------

POD_EXPLAINERS: tuple[PodExplainer, ...] = (
    explain_finalizers,
    explain_node,
    explain_containers,
    explain_volumes,
    explain_webhooks,
    explain_namespace,
)


def _bound(explain: PodExplainer, facts: PodFacts) -> Explainer:
    return lambda _pod, _view: explain(facts)


def explain_pod(pod: JSON, view: ClusterView) -> Finding:
    """Everything known about why pod has not gone, each blocker with evidence and remedies."""
    pod = as_dict(pod)
    finding = base_finding(pod, view, "Pod", "v1")
    finding.node = text(_spec(pod).get("nodeName")) or None
    finding.phase = text(_status(pod).get("phase")) or None
    finding.containers = container_states(pod)
    grace = grace_period_blocker(pod, finding)
    if grace is not None:
        finding.blockers.append(grace)
    facts = PodFacts(pod, view, finding)
    run_explainers(finding, pod, view, [_bound(explain, facts) for explain in POD_EXPLAINERS])
    if _needs_unknown(finding):
        finding.blockers.append(unknown_blocker(facts))
        finding.sort_blockers()
    return finding


__all__ = ["container_states", "explain_pod"]
