"""A pod whose node is gone or not ready: no kubelet will confirm its deletion."""

from __future__ import annotations

import shlex

from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.causes import CERTAIN, NODE_MISSING, NODE_NOT_READY, RUNTIME_UNAVAILABLE
from kubectl_terminating.explain.common import as_dict, list_of, spec_of, text
from kubectl_terminating.explain.events import event_evidence, newest_event, newest_saying
from kubectl_terminating.explain.node_health import NodeProblem, node_ref
from kubectl_terminating.explain.pod_facts import PodFacts, container_states
from kubectl_terminating.model import JSON, Blocker, Evidence, Remedy

OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
# The NoExecute taints the DaemonSet controller makes every daemon pod tolerate (with
# disk/memory/pid-pressure, unschedulable and network-unavailable, all NoSchedule): any other
# NoExecute taint evicts the daemon pods that do not tolerate it, CSI node plugins and CNI
# agents among them (`kubectl taint node N maintenance=true:NoExecute`).
DAEMON_TOLERATED = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})


def taint_text(taint: JSON) -> str:
    """`key=value:Effect`, as `kubectl taint` takes it."""
    key, value, effect = (text(taint.get(k)) for k in ("key", "value", "effect"))
    return f"{key}{'=' + value if value else ''}:{effect}"


def evicting_taints(node: JSON | None) -> list[JSON]:
    """The node's NoExecute taints that evict daemon pods not tolerating them."""
    return [
        as_dict(t)
        for t in list_of(spec_of(node or {}).get("taints"))
        if as_dict(t).get("effect") == "NoExecute"
        and as_dict(t).get("key") not in DAEMON_TOLERATED | {OUT_OF_SERVICE_TAINT}
    ]


def taint_evidence(node: str, taints: list[JSON], what: str) -> Evidence:
    """The node's evicting taints as evidence of what they evict (`what`)."""
    said = ", ".join(taint_text(t) for t in taints)
    return Evidence(
        f"node {node} has taint {said}: it evicts every daemon pod that does not tolerate it, "
        f"{what}",
        node_ref(node),
        {"taints": [taint_text(t) for t in taints]},
    )


def untaint(node: str, taints: list[JSON], what: str) -> Remedy:
    """Remove the taints (or tolerate them in the DaemonSet of `what`)."""
    quoted = " ".join(shlex.quote(taint_text(t) + "-") for t in taints)
    return Remedy(
        f"let {what} run on {node} again: remove the taint (or add a toleration for it to its "
        "DaemonSet); the kubelet then finishes the teardown by itself",
        f"kubectl taint nodes {shlex.quote(node)} {quoted}",
    )


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
                f"kubectl get node {shlex.quote(name)}",
            ),
            facts.force_delete(
                f"node {name} is gone and its machine will not come back with the pod's "
                "containers still running"
            ),
        ),
        confidence=CERTAIN,
        basis=f"the API has no Node {name}",
    )


def _has_out_of_service_taint(node: JSON | None) -> bool:
    return any(
        as_dict(t).get("key") == OUT_OF_SERVICE_TAINT
        for t in list_of(spec_of(node or {}).get("taints"))
    )


def _node_not_ready(facts: PodFacts, problem: NodeProblem) -> Blocker:
    name = facts.node_name
    evidence = [problem.evidence, *problem.more]
    remedies = [
        Remedy(
            "check the node and its recent events", f"kubectl describe node {shlex.quote(name)}"
        ),
        Remedy(
            facts.on_node("check the kubelet, if the machine is reachable"),
            "systemctl status kubelet; journalctl -u kubelet --since -1h",
        ),
    ]
    if _has_out_of_service_taint(facts.node.node):
        evidence.append(
            Evidence(f"Node {name} already has the {OUT_OF_SERVICE_TAINT} taint", node_ref(name))
        )
    else:
        remedies.append(
            Remedy(
                "mark the shut-down node out of service: its pods are then deleted and their "
                "volumes detached (safer than force deleting pods one by one)",
                f"kubectl taint nodes {shlex.quote(name)} "
                f"{OUT_OF_SERVICE_TAINT}=nodeshutdown:NoExecute",
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
    return Blocker(
        NODE_NOT_READY,
        problem.summary,
        tuple(evidence),
        tuple(remedies),
        confidence=problem.confidence,
        basis=problem.basis,
    )


# The kubelet's events when it cannot reach the runtime to kill the pod's containers, and a
# runtime that answers but never finishes stopping the pod (hung containerd or dockerd: the
# CRI's `code = DeadlineExceeded` while the node may stay Ready; METR/vivaria#537,
# containerd#6080): the catalogue's kill-pod-failed and runtime-deadline-exceeded entries.
KILL_FAILED, RUNTIME_TIMEOUT = "kill-pod-failed", "runtime-deadline-exceeded"


def _runtime_timed_out(facts: PodFacts) -> JSON | None:
    """The kubelet's kill timed out in the runtime, while the pod's status does not show its
    containers: one seen running is containers-running's (it names the same hung runtime), and
    all seen terminated make the event history (teardown went on past it)."""
    states = {c["state"] for c in container_states(facts.pod)}
    if "running" in states or states == {"terminated"}:
        return None
    event = newest_saying(facts.events, (KILL_FAILED,))
    timed_out = event is not None and catalogue.matches(
        RUNTIME_TIMEOUT, text(event.get("reason")), text(event.get("message"))
    )
    return event if timed_out else None


def _runtime_blocker(
    facts: PodFacts, summary: str, evidence: list[Evidence], basis: str
) -> Blocker:
    """The kubelet will kill the containers and confirm the deletion once the runtime answers
    again. The node is not shut down, so neither the out-of-service taint nor a force delete is
    safe: the containers are still running."""
    return Blocker(
        RUNTIME_UNAVAILABLE,
        summary,
        tuple(evidence),
        (
            Remedy(
                facts.on_node("check the container runtime's service and its log"),
                "systemctl status containerd; journalctl -u containerd --since -1h",
            ),
            Remedy(facts.on_node("check that the runtime answers the kubelet"), "crictl info"),
            Remedy(
                facts.on_node(
                    "start (or restart) the runtime: the kubelet then stops the containers "
                    "and the pod goes by itself"
                ),
                "systemctl restart containerd",
            ),
        ),
        confidence=CERTAIN,
        basis=basis,
    )


def _runtime_unavailable(facts: PodFacts, problem: NodeProblem, alive: Evidence) -> Blocker:
    """The kubelet is alive (it renews its Lease) but its node says the runtime is down."""
    evidence = [problem.evidence, alive]
    event = newest_saying(facts.events, (KILL_FAILED,)) or newest_event(
        facts.events, catalogue.entry(RUNTIME_TIMEOUT).event_reasons
    )
    if event is not None:
        evidence.append(event_evidence(event))
    return _runtime_blocker(
        facts,
        f"container runtime on {facts.node_name} is down (the kubelet is alive)",
        evidence,
        "the kubelet's Ready condition says the runtime is down, and it renews its Lease",
    )


def _runtime_hung(facts: PodFacts, event: JSON) -> Blocker:
    """The node did not say the runtime is down, but the kubelet's kill timed out in it."""
    return _runtime_blocker(
        facts,
        f"container runtime on {facts.node_name} timed out stopping the pod "
        f"({text(event.get('reason'))}: DeadlineExceeded)",
        [event_evidence(event)],
        f"the kubelet's {text(event.get('reason'))} event: DeadlineExceeded in the runtime",
    )


def explain_node(facts: PodFacts) -> list[Blocker]:
    # Holds while the kubelet has not confirmed the deletion (deletionGracePeriodSeconds != 0).
    if not facts.kubelet_pending:
        return []
    check = facts.node
    if check.missing:
        return [_node_missing(facts)]
    if check.problem is not None and check.kubelet_alive is not None:
        return [_runtime_unavailable(facts, check.problem, check.kubelet_alive)]
    if check.problem is not None:
        return [_node_not_ready(facts, check.problem)]
    event = _runtime_timed_out(facts)
    return [_runtime_hung(facts, event)] if event is not None else []
