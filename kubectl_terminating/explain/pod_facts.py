"""What the pod causes read: the pod's containers and PodFacts, which makes the reads they share
once (its events through explain/events.py, its node's health through explain/node_health.py).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property

from kubectl_terminating import reads
from kubectl_terminating.causes import HOOKS, TEARDOWN, cause_of
from kubectl_terminating.explain.common import (
    AGE_UNKNOWN,
    Facts,
    as_dict,
    base_finding,
    list_of,
    meta,
    spec_of,
    status_of,
    text,
)
from kubectl_terminating.explain.events import events_about
from kubectl_terminating.explain.node_health import NodeCheck, node_check, node_lost
from kubectl_terminating.model import JSON, FailedCheck, Finding, ObjectRef, Remedy
from kubectl_terminating.timeutil import human_duration
from kubectl_terminating.view import ClusterView, ReadFailed

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
    reading = node_lost(pod)
    return (reading.names.get("node") or None) if reading is not None else None


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
