"""What the pod causes read: the pod's containers and events, the health of its node
(Ready condition, heartbeat Lease) and PodFacts, which makes the reads they share once.
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.catalogue.evidence import condition_said, read_status
from kubectl_terminating.causes import CERTAIN, CONFIDENCES, HOOKS, LIKELY, TEARDOWN, cause_of
from kubectl_terminating.explain.common import (
    AGE_UNKNOWN,
    Facts,
    as_dict,
    base_finding,
    list_of,
    meta,
    text,
)
from kubectl_terminating.explain.events import event_evidence, event_time, events_about
from kubectl_terminating.model import JSON, Evidence, FailedCheck, Finding, ObjectRef, Remedy
from kubectl_terminating.reads import NODE_LEASE_NAMESPACE
from kubectl_terminating.timeutil import human_duration, seconds_since
from kubectl_terminating.view import ClusterView, ReadFailed

# A node Lease not renewed for this long means its kubelet stopped. 40s is the node lifecycle
# controller's --node-monitor-grace-period default (50s since Kubernetes 1.32); the kubelet
# renews every 10s, so 40s is four missed renewals. A longer leaseDurationSeconds wins.
NODE_LEASE_GRACE_SECONDS = 40
CONTAINER_STATES = ("running", "terminated", "waiting")
# what a pasted pod without spec or status leaves unknown (pod_finding)
NODE_UNKNOWN = "node, volumes and hooks unknown: the file has no spec"
SPEC_UNKNOWN = "volumes and hooks unknown: the file has no spec (node from its events)"
CONTAINERS_UNKNOWN = "container states unknown: the file has no status"
# how volumes-not-reclaimed ends while the kubelet works on the teardown (pod_generation
# rewords it when the kubelet has not processed the deletion at all)
TEARDOWN_PENDING = "kubelet has not finished volume teardown"
# instead, when the pod's phase shows the kubelet is not yet at the volumes (final_status)
BEFORE_FINAL_STATUS = "kubelet has not finished the teardown before its final status"


def spec_of(obj: JSON) -> JSON:
    return as_dict(obj.get("spec"))


def status_of(obj: JSON) -> JSON:
    return as_dict(obj.get("status"))


def duration_text(seconds: int | None) -> str:
    return human_duration(seconds) if seconds is not None else "?"


def past_text(seconds: int | None, article: str = "") -> str:
    """` 10m past deadline` (` 10m after its deadline` with an article); when the age is
    unknown, nothing (the headline says so) or ` at an unknown time after its deadline`."""
    if not article:
        return f" {human_duration(seconds)} past deadline" if seconds is not None else ""
    when = human_duration(seconds) if seconds is not None else "an unknown time"
    return f" {when} after {article} deadline"


def unique_remedies(items: Iterable[Remedy]) -> tuple[Remedy, ...]:
    """Remedies in order, each command once (several hints can suggest the same step)."""
    seen: set[str] = set()
    out: list[Remedy] = []
    for item in items:
        key = item.command or item.description
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


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
    status = status_of(pod)
    reported = [
        container_state(as_dict(s))
        for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
        for s in list_of(status.get(key))
    ]
    known = {c["name"] for c in reported}
    for container in list_of(spec_of(pod).get("containers")):
        name = text(as_dict(container).get("name"))
        if name and name not in known:
            reported.append(container_state({"name": name}))
    return reported


def running_containers(finding: Finding) -> list[str]:
    return [c["name"] for c in finding.containers if c.get("state") == "running"]


# -- the node ----------------------------------------------------------------------------------


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


def pod_lost(name: str, pod: JSON | None) -> NodeProblem | None:
    """The pod's own status: the node controller marked it NodeLost."""
    status = status_of(pod or {})
    reason, message = text(status.get("reason")), text(status.get("message"))
    reading = read_status(reason, message, "Pod") if reason else None
    if reading is None or reading.entry.key != NODE_LOST_ENTRY:
        return None
    message = message or f"Node {name} is unresponsive"
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


# -- the reads the explainers share ------------------------------------------------------------


def kubelet_host(pod: JSON, view: ClusterView) -> str | None:
    """The node whose kubelet wrote the pod's events (source.host): where a pasted pod without
    spec ran. None when the events are not there or name more than one node."""
    uid, namespace = text(meta(pod).get("uid")), text(meta(pod).get("namespace"))
    try:
        events = events_about(view, "Pod", namespace, text(meta(pod).get("name")), uid)
    except ReadFailed:
        return None
    hosts = {
        text(as_dict(as_dict(e).get("source")).get("host"))
        for e in events
        if text(as_dict(as_dict(e).get("source")).get("component")) == "kubelet"
    } - {""}
    return hosts.pop() if len(hosts) == 1 else None


def lost_on(pod: JSON) -> str | None:
    """The node the pod's status names (the node controller's NodeLost message: "Node X which
    was running pod Y is unresponsive"), read through the catalogue."""
    status = status_of(pod)
    reason, message = text(status.get("reason")), text(status.get("message"))
    if not reason:
        return None
    reading = read_status(reason, message, "Pod")
    if reading is None or reading.entry.key != NODE_LOST_ENTRY:
        return None
    return reading.names.get("node") or None


def status_known(pod: JSON) -> bool:
    """Whether the pod's container states can be read. A whole pod without status is a partial
    copy; a pod of a down node the finder read as metadata plus spec.nodeName (find.py) has no
    status on purpose: its node, not its containers, is what holds it."""
    spec = spec_of(pod)
    return isinstance(pod.get("status"), dict) or "containers" not in spec


def pod_finding(pod: JSON, view: ClusterView) -> Finding:
    """The finding the pod causes start from: node, phase and containers from the pod; a pod
    read from the API always has spec and status, so without them the file is a partial copy:
    say what that hides, and take the node from the kubelet's events when they name it."""
    finding = base_finding(pod, view, "Pod", "v1")
    finding.node = text(spec_of(pod).get("nodeName")) or None
    finding.phase = text(status_of(pod).get("phase")) or None
    finding.containers = container_states(pod)
    if not isinstance(pod.get("spec"), dict):
        finding.node = kubelet_host(pod, view) or lost_on(pod)
        finding.unknowns.append(SPEC_UNKNOWN if finding.node else NODE_UNKNOWN)
    elif not finding.node:
        finding.node = lost_on(pod)  # a paste that cut spec.nodeName
    if not status_known(pod):
        finding.unknowns.append(CONTAINERS_UNKNOWN)
    return finding


class PodFacts(Facts):
    """The pod and the reads several pod causes share, made once and only when needed.

    A shared read that fails becomes a warning on the finding and an "unknown" answer, so one
    missing permission costs one piece of evidence, not every check after it. The one way to
    build them: the finding comes from the pod (pod_finding), so node, phase and containers are
    there wherever facts are made (explain_pod, preflight, a test).
    """

    def __init__(self, pod: JSON, view: ClusterView) -> None:
        pod = as_dict(pod)
        super().__init__(pod, view, pod_finding(pod, view))

    @property
    def pod(self) -> JSON:
        return self.obj

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

    @property
    def kubelet_pending(self) -> bool:
        """The pod's kubelet still has to confirm the deletion. Once it has (or after a forced
        delete) deletionGracePeriodSeconds is 0 and only finalizers can hold the pod."""
        grace = meta(self.pod).get("deletionGracePeriodSeconds")
        return bool(self.node_name) and grace != 0

    @property
    def past_deadline(self) -> bool:
        """Past the deadline, or of unknown age (a file without capture time): then the causes
        still name what the evidence points to, and the headline says the age is unknown."""
        if self.overdue is None:
            return AGE_UNKNOWN in self.finding.unknowns
        return self.overdue > 0

    @property
    def kubelet_overdue(self) -> bool:
        """Past the deadline, the kubelet's work not done, and no known node problem."""
        return self.kubelet_pending and self.past_deadline and not self.node.unhealthy

    def reached(self, step: str, seen: bool = False) -> bool:
        """The kubelet's teardown has got to step (causes.TEARDOWN): it is alive and overdue,
        and no cause so far explains an earlier step; from the network on, every container is
        known to be down (killPod stops them first). `seen`: the kubelet's own event puts it
        there, which a pasted pod without its container states does not contradict."""
        if not self.kubelet_overdue:
            return False
        earlier = TEARDOWN[: TEARDOWN.index(step)]
        if any(cause_of(b.type).stage in earlier for b in self.finding.blockers):
            return False
        if TEARDOWN.index(step) <= TEARDOWN.index(HOOKS):
            return True
        return not running_containers(self.finding) and (
            seen or CONTAINERS_UNKNOWN not in self.finding.unknowns
        )

    @property
    def final_status(self) -> bool | None:
        """Whether the kubelet wrote the pod's final status (a terminal phase): it does after
        the containers, the network and the DRA claims, before the volumes (on the real v1.36
        kubelet every volume teardown failure showed phase Failed). None where the evidence
        cannot tell: no phase, a kubelet reporting no observedGeneration (before 1.33), or one
        that has not processed the deletion yet (an earlier step)."""
        status = status_of(self.pod)
        observed, generation = status.get("observedGeneration"), meta(self.pod).get("generation")
        if not isinstance(observed, int) or not isinstance(generation, int):
            return None  # no generation tracking: the phase says less
        if not self.finding.phase or observed < generation:
            return None
        return self.finding.phase in ("Succeeded", "Failed")

    @cached_property
    def node(self) -> NodeCheck:
        check, warnings = node_check(self.view, self.node_name, self.pod)
        for warning in warnings:
            self.warn(FailedCheck(warning))  # each a read of the node check that failed
        if check.partial:
            said = f"health of node {check.name} unknown: {check.unreadable}"
            if said not in self.finding.unknowns:
                self.finding.unknowns.append(said)
        return check

    @cached_property
    def _events_read(self) -> tuple[list[JSON], str | None]:
        """The pod's events, and why they could not be read (None: they were)."""
        uid = self.finding.uid or ""
        try:  # by uid; in a file also by name (a paste may leave the uids out)
            events = events_about(self.view, "Pod", self.namespace, self.name, uid)
        except ReadFailed as failed:
            self.warn(failed)
            return [], str(failed)
        cut = sum(1 for e in events if not text(e.get("reason")) or "message" not in e)
        if cut:  # the kubelet writes both: these were cut from a paste
            self.finding.unknowns.append(
                f"{cut} of the pod's events unknown: the file has them without reason or message"
            )
        return events, None

    @property
    def events(self) -> list[JSON]:
        return self._events_read[0]

    @property
    def events_unread(self) -> str | None:
        """Why the events could not be read: a cause that needs one says so."""
        return self._events_read[1]

    def on_node(self, what: str) -> str:
        return f"on node {self.node_name or '?'}: {what}"

    def kubelet_log(self, why: str = "read the kubelet's log for the pod") -> Remedy:
        return Remedy(self.on_node(why), f"journalctl -u kubelet --since -1h | grep {self.uid}")

    def log_errors(self, unit: str, key: str, errors: tuple[tuple[str, str], ...]) -> Remedy:
        """Where the API carries no event: the lines of a node service's log about `key` with
        one of the error strings that tell the causes apart (each with what it means)."""
        pattern = "|".join(error for error, _ in errors)
        meanings = "; ".join(f"'{error}': {meaning}" for error, meaning in errors)
        return Remedy(
            self.on_node(f"no event says why: the {unit} log does ({meanings})"),
            f"journalctl -u {unit} --since -1h | grep {key} | grep -E '{pattern}'",
        )

    def force_delete(self, when: str) -> Remedy:
        return Remedy(
            "force delete the pod object",
            f"kubectl delete pod -n {shlex.quote(self.namespace)} {shlex.quote(self.name)} "
            "--grace-period=0 --force",
            destructive=True,
            when=when,
        )


def pending_writes(facts: PodFacts) -> tuple[str, ...]:
    """The writes deletion still needs: finalizer removal (UPDATE) and the kubelet's final
    delete with grace period 0 (DELETE)."""
    writes = ("UPDATE",) if facts.finding.finalizers else ()
    return writes + (("DELETE",) if facts.kubelet_pending else ())


# -- for the finder (kinds.py wires these into Source.find_pods) -------------------------------


def node_down(view: ClusterView, name: str) -> bool:
    """No kubelet will act on the node's pods: it is gone, or unhealthy with no sign of life
    (the same check, memoised, that the pod explainers make)."""
    return node_check(view, name)[0].down


Work = tuple[str, str]  # (kind, name) of a read to make ahead
WEBHOOKS = "Webhooks"  # the kind of the read of both webhook configuration kinds


def read_ahead(
    view: ClusterView,
    pods: Sequence[JSON],
    map_: Callable[[Callable[[Work], None], Sequence[Work]], object],
) -> None:
    """Read concurrently, before the pods are explained, what their explainers will ask for
    first: each pod's namespace, the node of each pod whose kubelet has yet to confirm, and
    the webhook configurations when a pod still needs a write (pending_writes: the webhooks
    cause reads them then), the same memoised reads, so no more of them. Explained in order,
    the threads would otherwise all wait on each namespace's read in turn (20,000 pods in 200
    namespaces, 200 round trips one after the other), and on the webhooks' at the start."""
    namespaces, nodes, writes = set(), set(), False
    for pod in pods:
        m, spec = as_dict(pod.get("metadata")), spec_of(pod)
        namespaces.add(str(m.get("namespace") or ""))
        if spec.get("nodeName") and m.get("deletionGracePeriodSeconds") != 0:
            nodes.add(str(spec["nodeName"]))
            writes = True
        writes = writes or any(isinstance(f, str) for f in list_of(m.get("finalizers")))

    def read(what: tuple[str, str]) -> None:
        kind, name = what
        if kind == "Node":
            node_check(view, name)  # failed reads stay in the memo, as warnings
        elif kind == WEBHOOKS:
            with contextlib.suppress(ReadFailed):  # remembered: the explainer reports it
                reads.webhook_configurations_each(view)
        elif name:
            with contextlib.suppress(ReadFailed):
                reads.namespace(view, name)

    work = sorted({("Namespace", ns) for ns in namespaces} | {("Node", n) for n in nodes})
    map_(read, ([(WEBHOOKS, "")] if writes else []) + work)  # webhooks first: all pods ask
