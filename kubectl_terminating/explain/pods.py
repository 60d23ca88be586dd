"""Why a Pod stays Terminating: its causes in POD_CAUSES, each reading through PodFacts
(docs/explainers.md).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    NAMESPACE_TERMINATING,
    POSSIBLE,
    TABLE,
    UNKNOWN,
)
from kubectl_terminating.explain.common import (
    as_dict,
    base_finding,
    grace_period,
    meta,
    run_causes,
    text,
)
from kubectl_terminating.explain.finalizers import finalizer_blockers
from kubectl_terminating.explain.pod_containers import explain_containers
from kubectl_terminating.explain.pod_facts import (
    CONTAINERS_UNKNOWN,
    NODE_UNKNOWN,
    SPEC_UNKNOWN,
    PodFacts,
    container_states,
    duration_text,
    node_ref,
    pending_writes,
    running_containers,
    spec_of,
    status_of,
)
from kubectl_terminating.explain.pod_generation import fork_on_generation
from kubectl_terminating.explain.pod_hooks import explain_hooks
from kubectl_terminating.explain.pod_network import explain_network
from kubectl_terminating.explain.pod_node import explain_node
from kubectl_terminating.explain.pod_resources import explain_resources
from kubectl_terminating.explain.pod_volumes import explain_volumes
from kubectl_terminating.explain.webhooks import labels_of, webhook_blockers
from kubectl_terminating.model import JSON, Blocker, Evidence, Finding, ObjectRef, Remedy
from kubectl_terminating.resources import PODS
from kubectl_terminating.view import ClusterView, ReadFailed

# Blockers that give context but are not a cause of their own.
CONTEXT_TYPES = frozenset(c.type for c in TABLE if c.context)

PodCause = Callable[[PodFacts], list[Blocker]]


# -- finalizers, namespace, webhooks -----------------------------------------------------------


def explain_finalizers(facts: PodFacts) -> list[Blocker]:
    if not facts.finding.finalizers:
        return []
    return finalizer_blockers(facts.pod, PODS, facts.view)


def explain_namespace(facts: PodFacts) -> list[Blocker]:
    """Context: the pod's namespace is being deleted too."""
    namespace = reads.namespace(facts.view, facts.namespace) if facts.namespace else None
    if namespace is None:
        return []
    phase = text(status_of(namespace).get("phase"))
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
            (
                Remedy(
                    "see why the namespace is stuck",
                    f"kubectl terminating ns {shlex.quote(name)} --explain",
                ),
            ),
            # certain that it is terminating, but a namespace's deletion holds no pod: as
            # what holds this one (the main blocker when nothing else is seen) only possible
            confidence=POSSIBLE,
            basis=f"Namespace {name} is Terminating: context, not what holds the pod",
        )
    ]


def explain_webhooks(facts: PodFacts) -> list[Blocker]:
    writes = pending_writes(facts)
    if not writes:
        return []
    uid = text(meta(facts.pod).get("uid"))
    labels = labels_of(facts.pod)
    return webhook_blockers(PODS, writes, facts.namespace, facts.view, labels=labels, uid=uid)


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
    return Evidence(f"node {check.name} is Ready and its lease is fresh", node_ref(check.name))


def unknown_blocker(facts: PodFacts) -> Blocker:
    finding = facts.finding
    checked = [
        Evidence(
            f"checked: finalizers ({', '.join(finding.finalizers) or 'none'}), node, "
            f"containers ({len(running_containers(finding))} running), volumes, webhooks",
            facts.ref,
            {"finalizers": list(finding.finalizers), "overdueSeconds": facts.overdue},
        ),
        _node_checked(facts),
    ]
    if finding.warnings:
        checked.append(Evidence("not checked: " + "; ".join(finding.warnings)))
    return Blocker(
        UNKNOWN,
        f"{duration_text(facts.overdue)} overdue; no known cause found"
        if facts.overdue is not None
        else "no known cause found in what could be read",
        tuple(checked),
        (
            Remedy(
                "read the pod's state and events",
                f"kubectl describe pod -n {shlex.quote(facts.namespace)} {shlex.quote(facts.name)}",
            ),
            facts.kubelet_log(),
        ),
        confidence=POSSIBLE,
        basis="no cause found in what could be read",
    )


def explain_unknown(facts: PodFacts) -> list[Blocker]:
    """Past the deadline and no cause found by the causes before this one."""
    if not facts.past_deadline:
        return []
    if any(b.type not in CONTEXT_TYPES for b in facts.finding.blockers):
        return []
    return [unknown_blocker(facts)]


# -- the pod explainer -------------------------------------------------------------------------

POD_CAUSES: tuple[PodCause, ...] = (
    grace_period,
    explain_finalizers,
    explain_node,
    explain_containers,
    explain_hooks,
    explain_network,
    explain_resources,
    explain_volumes,
    explain_webhooks,
    explain_namespace,
    explain_unknown,  # last: it looks at what the others found
)


def kubelet_host(pod: JSON, view: ClusterView) -> str | None:
    """The node whose kubelet wrote the pod's events (source.host): where a pasted pod without
    spec ran. None when the events are not there or name more than one node."""
    uid, namespace = text(meta(pod).get("uid")), text(meta(pod).get("namespace"))
    try:
        events = reads.events_for(view, namespace, uid) if uid else []
    except ReadFailed:
        return None
    hosts = {
        text(as_dict(as_dict(e).get("source")).get("host"))
        for e in events
        if text(as_dict(as_dict(e).get("source")).get("component")) == "kubelet"
    } - {""}
    return hosts.pop() if len(hosts) == 1 else None


def status_known(pod: JSON) -> bool:
    """Whether the pod's container states can be read. A whole pod without status is a partial
    copy; a pod of a down node the finder read as metadata plus spec.nodeName (find.py) has no
    status on purpose: its node, not its containers, is what holds it."""
    spec = spec_of(pod)
    return isinstance(pod.get("status"), dict) or "containers" not in spec


def partial_pod(pod: JSON, finding: Finding, view: ClusterView) -> None:
    """A pod read from the API always has spec and status: without them the file is a partial
    copy. Say what that hides, and take the node from the kubelet's events when they name it."""
    if not isinstance(pod.get("spec"), dict):
        finding.node = kubelet_host(pod, view)
        finding.unknowns.append(SPEC_UNKNOWN if finding.node else NODE_UNKNOWN)
    if not status_known(pod):
        finding.unknowns.append(CONTAINERS_UNKNOWN)


def explain_pod(pod: JSON, view: ClusterView) -> Finding:
    """Everything known about why pod has not gone, each blocker with evidence and remedies."""
    pod = as_dict(pod)
    finding = base_finding(pod, view, "Pod", "v1")
    finding.node = text(spec_of(pod).get("nodeName")) or None
    finding.phase = text(status_of(pod).get("phase")) or None
    finding.containers = container_states(pod)
    partial_pod(pod, finding, view)
    return fork_on_generation(run_causes(PodFacts(pod, view, finding), POD_CAUSES), pod)


__all__ = ["container_states", "explain_pod"]
