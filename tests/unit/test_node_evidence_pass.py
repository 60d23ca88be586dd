"""Which pods get node evidence, and that it is read once per node (nodeevidence.py)."""

from __future__ import annotations

import copy
from collections.abc import Mapping

from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.nodeanswers import NodeEvidence, NodeEvidenceRefused, Subject
from kubectl_terminating.nodeevidence import apply_node_evidence
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import PODS_NOW, healthy_cluster, pod_fixture, terminated


def exited(name: str, uid: str) -> JSON:
    pod = terminated(pod_fixture("pod-web-0"), 143, "Error", "2026-01-01T11:49:45Z")
    pod["spec"].pop("volumes", None)
    pod["metadata"].update(name=name, uid=uid)
    return pod


def explained(pods: list[JSON], *without: str) -> tuple[list[tuple[JSON, Finding]], StaticView]:
    view = StaticView([*pods, *healthy_cluster(*without)], PODS_NOW)
    return [(p, explain_pod(copy.deepcopy(p), view)) for p in pods], view


UIDS = ("11111111-aaaa-4aaa-8aaa-000000000001", "11111111-aaaa-4aaa-8aaa-000000000002")


def test_one_read_per_node_with_every_stuck_pods_keys() -> None:
    pairs, view = explained([exited("a-0", UIDS[0]), exited("a-1", UIDS[1])])
    asked: list[Mapping[str, Subject]] = []

    def fetch(subjects: Mapping[str, Subject]) -> tuple[dict[str, NodeEvidence], list[str]]:
        asked.append(subjects)
        line = f'pod "{UIDS[1]}" : unlinkat /var/lib/kubelet/pods/x/f: operation not permitted'
        return {"worker-1": NodeEvidence("worker-1", "logs/kubelet.log", (line,))}, []

    assert apply_node_evidence(pairs, view, fetch) == []
    assert len(asked) == 1 and list(asked[0]) == ["worker-1"]
    assert set(UIDS) <= set(asked[0]["worker-1"].keys)
    # the deadline 11:50:00, less its 30s grace (the deletion), less 2m
    assert asked[0]["worker-1"].since == "2026-01-01T11:47:30Z"
    summaries = [f.blockers[0].summary for _, f in pairs]
    assert summaries[1].startswith("immutable file /var/lib/kubelet/pods/x/f")
    assert not summaries[0].startswith("immutable file")  # the line named the other pod


def test_refused_is_one_warning_and_the_hint_says_why() -> None:
    pairs, view = explained([exited("a-0", UIDS[0])])

    def fetch(_subjects: Mapping[str, Subject]) -> tuple[dict[str, NodeEvidence], list[str]]:
        raise NodeEvidenceRefused("get nodes/proxy is not allowed", "node evidence not read: x")

    assert apply_node_evidence(pairs, view, fetch) == ["node evidence not read: x"]
    steps = [r.description for r in pairs[0][1].blockers[0].remedy]
    assert any(
        d.startswith("node evidence not read (get nodes/proxy is not allowed)") for d in steps
    )


def test_a_node_without_a_kubelet_is_not_asked() -> None:
    """The Node object gone (node-missing): no kubelet to ask, and no hint to ask it."""
    pairs, view = explained([exited("a-0", UIDS[0])], "node-worker-1")

    def fetch(_subjects: Mapping[str, Subject]) -> tuple[dict[str, NodeEvidence], list[str]]:
        raise AssertionError("asked a node whose kubelet is gone")

    assert apply_node_evidence(pairs, view, fetch) == []
    assert pairs[0][1].blockers[0].type == "node-missing"
    assert pairs[0][1].blockers[0].type == "node-missing"
