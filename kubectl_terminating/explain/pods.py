"""Why a Pod stays Terminating: its causes in POD_CAUSES, each reading through PodFacts
(docs/explainers.md).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    NAMESPACE_TERMINATING,
    POSSIBLE,
    TABLE,
    UNKNOWN,
)
from kubectl_terminating.explain.common import (
    AGE_UNKNOWN,
    as_dict,
    grace_period,
    meta,
    run_causes,
    status_of,
    text,
)
from kubectl_terminating.explain.finalizers import finalizer_blockers
from kubectl_terminating.explain.node_health import node_ref
from kubectl_terminating.explain.pod_containers import explain_containers
from kubectl_terminating.explain.pod_facts import (
    PodFacts,
    container_states,
    duration_text,
    pending_writes,
    running_containers,
)
from kubectl_terminating.explain.pod_generation import fork_on_generation
from kubectl_terminating.explain.pod_hooks import explain_hooks
from kubectl_terminating.explain.pod_network import explain_network
from kubectl_terminating.explain.pod_node import explain_node
from kubectl_terminating.explain.pod_resources import explain_resources
from kubectl_terminating.explain.pod_volumes import explain_volumes
from kubectl_terminating.explain.readings import reading_blockers
from kubectl_terminating.explain.webhooks import labels_of, webhook_blockers
from kubectl_terminating.model import JSON, Blocker, Evidence, Finding, ObjectRef, Remedy
from kubectl_terminating.resources import PODS
from kubectl_terminating.timeutil import parse_time
from kubectl_terminating.view import ClusterView, undated

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


def explain_readings(facts: PodFacts) -> list[Blocker]:
    """What the pod's events and status say through the catalogue, where no cause above said a
    blocker of that type (a pasted pod without node or status: the event names the step)."""
    if not facts.past_deadline:
        return []
    if facts.node_name and (not facts.kubelet_pending or facts.node.unhealthy):
        # the kubelet confirmed the deletion (only finalizers hold it), or its node is down
        # (the node holds it): said above, and no events read for a mass outage's pods
        return []
    # the pod causes above read these entries with the node's context: where they could place
    # the pod on its node, what they left unsaid the evidence around it contradicted
    return reading_blockers(facts, facts.events, readers_looked=bool(facts.node_name))


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


DEFAULT_GRACE = 30  # seconds: the Pod API's default terminationGracePeriodSeconds


def _at_or_after(deletion: str | None, view: ClusterView) -> bool:
    """The deletion is at or after the file's newest timestamp (its clock when undated)."""
    deadline = parse_time(deletion)
    return deadline is not None and deadline >= view.now


def maybe_in_grace(facts: PodFacts, grace: int) -> Blocker:
    """A file without capture time, a deletion at (or after) its newest timestamp, nothing
    else found: the pod may still have been inside its grace period when the file was made.
    Said as what it is, a possibility: not the grace-period type, which says "not stuck"."""
    found = unknown_blocker(facts)
    said = Evidence(
        f"deletionTimestamp {facts.finding.deletion_timestamp} is the deletion request plus "
        f"{grace}s, and nothing in the file is later: when the file was made, the grace period "
        "may not have been over",
        facts.ref,
        {
            "deletionTimestamp": facts.finding.deletion_timestamp,
            "deletionGracePeriodSeconds": grace,
        },
    )
    return replace(
        found,
        summary=f"deleted with a {grace}s grace period; no capture time: it may still be inside "
        "it, no other cause found",
        evidence=(said, *found.evidence),
        basis="a grace period the file cannot tell was over, and no cause found",
    )


def explain_unknown(facts: PodFacts) -> list[Blocker]:
    """Past the deadline and no cause found by the causes before this one."""
    if not facts.past_deadline:
        return []
    if any(b.type not in CONTEXT_TYPES for b in facts.finding.blockers):
        return []
    grace = meta(facts.pod).get("deletionGracePeriodSeconds")
    # longer than the default terminationGracePeriodSeconds: a wait someone chose, which a
    # file made during it shows as a pod that "does not go"
    after_all = undated(facts.view) and _at_or_after(facts.finding.deletion_timestamp, facts.view)
    if (
        AGE_UNKNOWN in facts.finding.unknowns
        and after_all
        and isinstance(grace, int)
        and (grace > DEFAULT_GRACE)
    ):
        return [maybe_in_grace(facts, grace)]
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
    explain_readings,
    explain_namespace,
    explain_unknown,  # last: it looks at what the others found
)


def explain_pod(pod: JSON, view: ClusterView) -> Finding:
    """Everything known about why pod has not gone, each blocker with evidence and remedies."""
    pod = as_dict(pod)
    return fork_on_generation(run_causes(PodFacts(pod, view), POD_CAUSES), pod)


__all__ = ["container_states", "explain_pod"]
