"""After the pods are explained: the node's own word (`--node-evidence`, one read per node) for
those whose main blocker's row asks for it while the kubelet is alive, or why it was not read.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

from kubectl_terminating.causes import RUNTIME_LOG, cause_of
from kubectl_terminating.explain.node_evidence import (
    confirm,
    evidence_keys,
    not_read,
    wants_evidence,
)
from kubectl_terminating.explain.node_health import node_check
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.nodeanswers import NodeEvidence, NodeEvidenceRefused, Subject, pod_keys
from kubectl_terminating.timeutil import parse_time
from kubectl_terminating.view import ClusterView

# lines from a little before the deletion: the kubelet starts the teardown at the deadline,
# and a grace period can be long
BEFORE_DELETION = timedelta(minutes=2)
NOT_ASKED = "--node-evidence not given"

Fetch = Callable[[Mapping[str, Subject]], tuple[Mapping[str, NodeEvidence], list[str]]]


def _kubelet_alive(view: ClusterView, node: str) -> bool:
    check, _ = node_check(view, node)
    return not check.unreadable and check.node is not None and not check.down


def _since(pod: JSON) -> str:
    """A little before the pod was marked for deletion (its deadline less its grace)."""
    m = pod.get("metadata") or {}
    deadline = parse_time(str(m.get("deletionTimestamp") or ""))
    if deadline is None:
        return ""
    grace = m.get("deletionGracePeriodSeconds")
    start = deadline - timedelta(seconds=grace if isinstance(grace, int) else 0)
    return (start - BEFORE_DELETION).strftime("%Y-%m-%dT%H:%M:%SZ")


def _command(finding: Finding) -> str:
    where = f"-n {shlex.quote(finding.namespace)} " if finding.namespace else ""
    return f"kubectl terminating pods {where}{shlex.quote(finding.name)} --node-evidence --explain"


def wanted(pairs: Sequence[tuple[JSON, Finding]], view: ClusterView) -> list[tuple[JSON, Finding]]:
    """The pods whose main blocker is on their node's side, past the deadline, on a node
    whose kubelet answers."""
    # the node's health last: already read by the explainers for these pods (memoised), while
    # asking it first would read the node of every pod in the run
    return [
        (pod, finding)
        for pod, finding in pairs
        if wants_evidence(finding, kubelet_alive=True) and _kubelet_alive(view, finding.node or "")
    ]


def subjects_of(pods: Sequence[tuple[JSON, Finding]]) -> dict[str, Subject]:
    """One subject per node: the keys of all its wanted pods, since the earliest deletion."""
    subjects: dict[str, Subject] = {}
    for pod, finding in pods:
        node = finding.node or ""
        known = subjects.get(node, Subject(()))
        since = min(filter(None, (known.since, _since(pod))), default="")
        main = finding.blockers[0].type
        runtime = known.runtime or cause_of(main).node_log == RUNTIME_LOG
        keys = tuple(dict.fromkeys((*known.keys, *evidence_keys(pod_keys(pod), main))))
        subjects[node] = Subject(keys, since, runtime)
    return subjects


def apply_node_evidence(
    pairs: Sequence[tuple[JSON, Finding]],
    view: ClusterView,
    fetch: Fetch | None,
    why_not: str = NOT_ASKED,
) -> list[str]:
    """Each wanted pod's main blocker confirmed from its node's evidence (fetch: None when
    it is not to be read, why_not says why); returns the warnings of the reads."""
    pods = wanted(pairs, view)
    if not pods:
        return []
    if fetch is None:
        for _, finding in pods:
            not_read(finding, why_not, _command(finding))
        return []
    try:
        evidence, warnings = fetch(subjects_of(pods))
    except NodeEvidenceRefused as refused:
        for _, finding in pods:
            not_read(finding, refused.why, None)
        return [str(refused)]
    for pod, finding in pods:
        found = evidence.get(finding.node or "")
        if found is None:
            not_read(finding, f"node {finding.node} could not be read", None)
        else:
            confirm(finding, pod_keys(pod), found)
    return warnings
