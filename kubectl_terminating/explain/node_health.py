"""Is this node alive: what the node's status, its Lease, the node controller's taints, its
events and its pods' status say, combined into one answer (NodeCheck) that every pod on the node
shares. Out of the pod module: the node's health is a question of its own, asked once per node.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.catalogue.evidence import Reading, condition_said, read_status
from kubectl_terminating.causes import CERTAIN, CONFIDENCES, LIKELY
from kubectl_terminating.explain.common import as_dict, list_of, meta, spec_of, status_of, text
from kubectl_terminating.explain.events import event_evidence, event_time
from kubectl_terminating.model import JSON, Evidence, ObjectRef
from kubectl_terminating.reads import NODE_LEASE_NAMESPACE
from kubectl_terminating.timeutil import human_duration, seconds_since
from kubectl_terminating.view import ClusterView, ReadFailed

# A node Lease not renewed for this long means its kubelet stopped. 40s is the node lifecycle
# controller's --node-monitor-grace-period default (50s since Kubernetes 1.32); the kubelet
# renews every 10s, so 40s is four missed renewals. A longer leaseDurationSeconds wins.
NODE_LEASE_GRACE_SECONDS = 40


# -- the node ------------------------------------------------------------------------------------


def condition_of(node: JSON, kind: str) -> JSON | None:
    for condition in list_of(status_of(node).get("conditions")):
        if as_dict(condition).get("type") == kind:
            return as_dict(condition)
    return None


def node_ref(name: str) -> ObjectRef:
    return ObjectRef("Node", name, api_version="v1")


@dataclass(frozen=True)
class NodeProblem:
    summary: str
    evidence: Evidence
    # how sure it is that no kubelet acts on the node, and the witness (Blocker.confidence)
    confidence: str = LIKELY
    basis: str = ""
    more: tuple[Evidence, ...] = ()  # the other witnesses that agree


# the node lifecycle controller's reasons when the kubelet stopped posting status: the
# catalogue's node-status-unknown entry
STATUS_UNKNOWN = "node-status-unknown"


def _why_not_ready(condition: JSON) -> str:
    reason = text(condition.get("reason"))
    if reason in (catalogue.entry(STATUS_UNKNOWN).condition or {}).get("reasons", ()):
        return "kubelet stopped posting"
    return reason or text(condition.get("status")) or "no reason given"


def ready_problem(name: str, node: JSON, now: datetime) -> NodeProblem | None:
    """The Ready condition is not True (False, Unknown, or never reported)."""
    ready = condition_of(node, "Ready")
    if ready is None:
        return NodeProblem(
            f"node {name} has never reported Ready",
            Evidence(f"Node {name} has no Ready condition", node_ref(name), {"Ready": None}),
            basis="the Node has no Ready condition",
        )
    if ready.get("status") == "True":
        return None
    since = text(ready.get("lastTransitionTime"))
    age = seconds_since(since, now)
    for_how_long = f" for {human_duration(age)}" if age is not None else ""
    # Unknown: the node lifecycle controller's word that the kubelet stopped posting; False:
    # the kubelet's own, so it is alive and may still act on its pods
    unknown = ready.get("status") == "Unknown"
    return NodeProblem(
        f"node {name} NotReady{for_how_long} ({_why_not_ready(ready)})",
        Evidence(
            f"Node {name} Ready={text(ready.get('status'))} since {since or '?'}: "
            f"{text(ready.get('message')) or text(ready.get('reason'))}",
            node_ref(name),
            {
                "Ready": text(ready.get("status")) or None,
                "reason": text(ready.get("reason")) or None,
                "message": text(ready.get("message")) or None,
                "lastTransitionTime": since or None,
                "lastHeartbeatTime": text(ready.get("lastHeartbeatTime")) or None,
            },
        ),
        CERTAIN if unknown else LIKELY,
        "the node lifecycle controller marked Ready Unknown: the kubelet stopped posting"
        if unknown
        else f"the kubelet reports Ready={text(ready.get('status')) or '?'} (it may still act)",
    )


def lease_problem(name: str, lease: JSON | None, now: datetime) -> NodeProblem | None:
    """The node's heartbeat Lease has not been renewed for longer than the grace."""
    spec = spec_of(lease or {})
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
        CERTAIN,
        f"the node's Lease not renewed for {human_duration(age)}: the kubelet stopped",
    )


# What the kubelet writes into the Ready condition when the runtime, not the kubelet, fails:
# the catalogue's runtime-down entry (pkg/kubelet/runtime.go runtimeErrors, joined into the
# condition's message).
RUNTIME_DOWN = "runtime-down"


def runtime_down_message(node: JSON) -> str | None:
    """The Ready condition's message when it blames the container runtime."""
    ready = condition_of(node, "Ready") or {}
    message = text(ready.get("message"))
    if ready.get("status") == "True" or not condition_said(RUNTIME_DOWN, message):
        return None
    return message


def lease_renewed(name: str, lease: JSON | None, now: datetime) -> Evidence | None:
    """Evidence that the node's kubelet is alive: its Lease renewed within the grace."""
    renewed = text(spec_of(lease or {}).get("renewTime"))
    age = seconds_since(renewed, now)
    if lease is None or age is None or lease_problem(name, lease, now) is not None:
        return None
    return Evidence(
        f"Lease {NODE_LEASE_NAMESPACE}/{name} renewed {age}s ago: the kubelet is alive",
        ObjectRef("Lease", name, NODE_LEASE_NAMESPACE, "coordination.k8s.io/v1"),
        {"renewTime": renewed, "secondsSinceRenew": age},
    )


def node_status_unknown(node: JSON) -> str:
    """Why the Node's health cannot be read from it ("" when it can). A Node read from the API
    always has status (the kubelet's daemonEndpoints and nodeInfo at least): one without it is
    a paste (people paste a Node for its taints), and a status whose kubelet reported its
    version but that has no conditions was cut. Unknown, not "never reported Ready"."""
    status = node.get("status")
    if not isinstance(status, dict):
        return "the file has the Node without status"
    reported = text(as_dict(status.get("nodeInfo")).get("kubeletVersion"))
    if "conditions" not in status and reported:
        return "the file has the Node's status without conditions"
    return ""


# The node controller's taints of a node whose Ready condition is Unknown or False
# (pkg/controller/nodelifecycle: NoSchedule at once, NoExecute for eviction). Not
# not-ready:NoSchedule alone: the kubelet registers a new node with it, and only the node
# controller takes it off (a node of a cluster without that controller keeps it while Ready).
UNREACHABLE, NOT_READY = "node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"
# The node controller's reason on the pods of a node it found unresponsive (SetPodTerminationReason:
# "Node %v which was running pod %v is unresponsive"): the catalogue's node-lost entry.
NODE_LOST_ENTRY = "node-lost"
# The node's events that say NotReady (the catalogue's node-not-ready-event) and the one that
# takes it back: the kubelet's NodeReady (pkg/kubelet/events, listed as no blocker there).
NOT_READY_EVENT, NODE_READY = "node-not-ready-event", "NodeReady"


def taint_problem(name: str, node: JSON | None) -> NodeProblem | None:
    """The node controller's own taint that the node is unreachable or not ready."""
    keys = [
        text(as_dict(t).get("key"))
        for t in map(as_dict, list_of(spec_of(node or {}).get("taints")))
        if t.get("key") == UNREACHABLE
        or (t.get("key") == NOT_READY and t.get("effect") == "NoExecute")
    ]
    if not keys:
        return None
    return NodeProblem(
        f"node {name} {keys[0].rpartition('/')[2]} (tainted by the node controller)",
        Evidence(
            f"Node {name} has taint {keys[0]}: the node controller puts it on a node whose Ready "
            "condition is Unknown or False",
            node_ref(name),
            {"taints": keys},
        ),
        LIKELY,
        f"the node controller's taint {keys[0]}",
    )


def event_problem(name: str, events: list[JSON]) -> NodeProblem | None:
    """The newest of the node's NotReady / NodeReady events says NotReady."""
    not_ready = catalogue.entry(NOT_READY_EVENT).event_reasons
    said = [e for e in events if text(e.get("reason")) in {*not_ready, NODE_READY}]
    if not said:
        return None
    newest = max(said, key=event_time)
    reason = text(newest.get("reason"))
    if reason not in not_ready:
        return None
    return NodeProblem(
        f"node {name} NotReady (per its {reason} event)",
        event_evidence(newest),
        LIKELY,
        f"a {reason} event on the node, no {NODE_READY} after it",
    )


def node_lost(pod: JSON) -> Reading | None:
    """The pod's status as the catalogue's node-lost entry reads it (its node named), or None."""
    status = status_of(pod)
    reason, message = text(status.get("reason")), text(status.get("message"))
    reading = read_status(reason, message, "Pod") if reason else None
    return reading if reading is not None and reading.entry.key == NODE_LOST_ENTRY else None


def pod_lost(name: str, pod: JSON | None) -> NodeProblem | None:
    """The pod's own status: the node controller marked it NodeLost."""
    reading = node_lost(pod or {})
    if reading is None:
        return None
    reason, message = reading.reason, reading.message or f"Node {name} is unresponsive"
    return NodeProblem(
        f"node {name} unresponsive (the pod is marked {reason})",
        Evidence(
            f"status.reason {reason}: {message}",
            ObjectRef(
                "Pod", text(meta(pod or {}).get("name")), text(meta(pod or {}).get("namespace"))
            ),
            {"reason": reason, "message": message},
        ),
        LIKELY,
        f"the node controller marked the pod {reason}",
    )


def combined(problems: Sequence[NodeProblem | None]) -> NodeProblem | None:
    """The witnesses that speak, as one: the first's headline, all their evidence, as sure as
    the surest (each alone says the node is down)."""
    said = [p for p in problems if p is not None]
    if not said:
        return None
    first = min(said, key=lambda p: CONFIDENCES.index(p.confidence))
    rest = [p for p in said if p is not first]
    return NodeProblem(
        first.summary,
        first.evidence,
        first.confidence,
        "; ".join(p.basis for p in (first, *rest) if p.basis),
        (*first.more, *(e for p in rest for e in (p.evidence, *p.more))),
    )


def _node_events(view: ClusterView, name: str) -> list[JSON]:
    try:
        return reads.node_events(view, name)
    except ReadFailed:  # no events in the file, or not allowed: this witness stays silent
        return []


@dataclass(frozen=True)
class NodeCheck:
    """What is known of the pod's node: missing, unhealthy (with why), healthy, or unreadable."""

    name: str
    node: JSON | None = None
    unreadable: str = ""
    problem: NodeProblem | None = None
    # the kubelet renews its Lease but reports the runtime down: proof the runtime, not the
    # machine, is what fails (None when the node is not in that state)
    kubelet_alive: Evidence | None = None

    @property
    def missing(self) -> bool:
        return bool(self.name) and not self.unreadable and self.node is None

    @property
    def partial(self) -> bool:
        """The Node is in the file without the status its health is read from."""
        return self.node is not None and bool(self.unreadable)

    @property
    def unhealthy(self) -> bool:
        return self.missing or self.problem is not None

    @property
    def down(self) -> bool:
        """No kubelet acts on the node's pods: it is gone, or unhealthy with no sign of life."""
        return self.unhealthy and self.kubelet_alive is None

    def unknown_evidence(self) -> list[Evidence]:
        """Said on blockers that assume a healthy node when its health could not be read."""
        if not self.unreadable:
            return []
        return [
            Evidence(
                f"health of node {self.name} not checked ({self.unreadable}); if it is down, "
                "that is the cause instead",
                node_ref(self.name),
            )
        ]


def _check_node(view: ClusterView, name: str) -> tuple[NodeCheck, tuple[str, ...]]:
    """The node check and the warnings of the reads it could not make."""
    if not name:
        return NodeCheck(""), ()
    try:
        node = reads.node(view, name)
    except ReadFailed as failed:  # the node's events may still tell
        down = event_problem(name, _node_events(view, name))  # still not read: not "missing"
        return NodeCheck(name, unreadable=failed.reason, problem=down), (str(failed),)
    if node is None:
        return NodeCheck(name), ()
    unknown = node_status_unknown(node)
    if unknown:  # the status is one witness: the Lease, the taints and the events others
        try:
            stale = lease_problem(name, reads.node_lease(view, name), view.now)
        except ReadFailed:
            stale = None
        down = combined(
            [stale, taint_problem(name, node), event_problem(name, _node_events(view, name))]
        )
        return NodeCheck(name, node, "" if down else unknown, down), ()
    problem = ready_problem(name, node, view.now)
    if problem is None:
        try:
            problem = lease_problem(name, reads.node_lease(view, name), view.now)
        except ReadFailed as failed:
            return NodeCheck(name, node), (str(failed),)  # Ready=True stands on its own
        return NodeCheck(name, node, problem=problem), ()
    if runtime_down_message(node) is None:
        return NodeCheck(name, node, problem=problem), ()
    try:
        alive = lease_renewed(name, reads.node_lease(view, name), view.now)
    except ReadFailed as failed:  # without the Lease the kubelet may be down too
        return NodeCheck(name, node, problem=problem), (str(failed),)
    return NodeCheck(name, node, problem=problem, kubelet_alive=alive), ()


# One check per node and view, not per pod: in an outage 20,000 pods share 200 dead nodes, and
# the check (conditions, lease, evidence text) is the same for all of a node's pods. Keyed by
# the view (whose reads and `now` are fixed for a run), dropped with it.
_NODE_CHECKS: weakref.WeakKeyDictionary[ClusterView, dict[str, tuple[NodeCheck, tuple[str, ...]]]]
_NODE_CHECKS = weakref.WeakKeyDictionary()
_NODE_CHECKS_LOCK = threading.Lock()


def node_check(
    view: ClusterView, name: str, pod: JSON | None = None
) -> tuple[NodeCheck, tuple[str, ...]]:
    """Is node `name` alive, and how sure (NodeCheck.problem's confidence), as seen through
    `view`, with the warnings of the reads that failed (each pod on the node carries them).
    The node's own witnesses (Ready, Lease, taints, events) are read once per node and view;
    `pod`'s status (marked NodeLost) speaks where they could not."""
    found = _memo_check(view, name)
    check, warnings = found
    speaks = check.unreadable or check.problem is not None  # a Ready status outranks it
    lost = pod_lost(name, pod) if speaks and pod is not None else None
    if lost is None or check.kubelet_alive is not None:
        return found
    # the Node's read failed: still not read (not "missing"); pasted without status: known
    unreadable = check.unreadable if check.node is None else ""
    return NodeCheck(name, check.node, unreadable, combined([check.problem, lost])), warnings


def _memo_check(view: ClusterView, name: str) -> tuple[NodeCheck, tuple[str, ...]]:
    try:
        checks = _NODE_CHECKS.get(view)
        if checks is None:
            with _NODE_CHECKS_LOCK:
                checks = _NODE_CHECKS.setdefault(view, {})
    except TypeError:  # a view that cannot be weakly referenced or hashed: no memo
        return _check_node(view, name)
    found = checks.get(name)
    if found is None:  # two threads may both check: the same answer, from memoised reads
        found = checks[name] = _check_node(view, name)
    return found
