"""Every blocker states how sure it is (causes.CONFIDENCES) and the witness that makes it so
(DESIGN.md "How sure"): over every fixture file, and case by case with the evidence thinned."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating import causes
from kubectl_terminating.causes import CERTAIN, LIKELY, POSSIBLE
from kubectl_terminating.explain.namespaces import explain_namespace
from kubectl_terminating.model import JSON, Blocker, Finding
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import FIXTURES, run_captured
from tests.unit.builders import explain_pod_among as explain
from tests.unit.builders import healthy_cluster as cluster
from tests.unit.builders import pod_fixture as load
from tests.unit.nsfixtures import scenario
from tests.unit.test_explain_pods import blocker, event, exited, node, pod

# Whole clusters (or pastes of one) that `--from-file` explains: every fixture directory but the
# namespace scenarios (below), the pod parts (tests/fixtures/pods, combined as the pod tests
# combine them: conftest's recorder checks those) and the certificates.
SNAPSHOTS = (
    FIXTURES / "snapshots" / "cluster-info-dump",
    FIXTURES / "snapshots" / "kubectl-get-pods-nodes.json",
)
FILES = [
    *sorted(
        p
        for d in ("corpus", "partial", "related", "real-node", "node-evidence")
        for p in (FIXTURES / d).glob("*.json")
        if p.name not in {"index.json", "stats-summary.json"}
    ),
    *SNAPSHOTS,
]


def blockers_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    """An item's blockers and those of the pods explained inside it."""
    return [*item["blockers"], *(b for pod in item.get("pods", []) for b in blockers_of(pod))]


def assert_stated(blocker: dict[str, Any]) -> None:
    said = (blocker["type"], blocker["summary"])
    assert blocker.get("confidence") in causes.CONFIDENCES, said
    assert blocker.get("confidenceBasis"), said
    if "unchecked" in blocker:
        assert blocker["confidence"] == POSSIBLE, said


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_blocker_of_every_fixture_file_states_its_confidence(path: Path) -> None:
    code, out, err = run_captured(
        "all", from_file=str(path), now=True, output="json", all_namespaces=True
    )
    assert code == 0, err
    items = json.loads(out)["items"]
    assert items, f"nothing terminating in {path}"
    for item in items:
        for said in blockers_of(item):
            assert_stated(said)


@pytest.mark.parametrize("name", sorted(p.stem for p in (FIXTURES / "namespaces").glob("*.json")))
def test_every_blocker_of_every_namespace_scenario_states_its_confidence(name: str) -> None:
    found = scenario(name)
    finding = explain_namespace(found.namespace, found.view)
    for said in blockers_of(finding.to_json(lambda _: {})):
        assert_stated(said)


def test_a_blocker_whose_proof_was_not_read_is_at_most_possible() -> None:
    said = Blocker("finalizer", "f", unchecked="could not list pods", confidence=CERTAIN, basis="b")
    assert (said.confidence, said.basis) == (
        POSSIBLE,
        "b; the read that would prove it is missing (unchecked)",
    )
    assert Blocker("finalizer", "f", confidence=LIKELY, basis="b").confidence == LIKELY
    # what to_json prints, always
    assert Blocker("finalizer", "f").to_json()["confidence"] is None


# -- each witness, and the same case with it thinned: the confidence drops ---------------------


def test_a_node_marked_unknown_by_its_controller_is_certain_one_saying_false_likely() -> None:
    unknown = node(Ready=("Unknown", "NodeStatusUnknown", "2026-01-01T09:00:00Z"))
    said = blocker(explain(pod(), [unknown, *cluster("node-worker-1")]), "node-not-ready")
    assert (said.confidence, said.basis) == (
        CERTAIN,
        "the node lifecycle controller marked Ready Unknown: the kubelet stopped posting",
    )
    false = node(Ready=("False", "KubeletNotReady", "2026-01-01T09:00:00Z"))
    thinned = blocker(explain(pod(), [false, *cluster("node-worker-1")]), "node-not-ready")
    assert thinned.confidence == LIKELY  # the kubelet itself wrote it: it is alive


def test_a_teardown_event_is_certain_the_teardown_order_alone_possible() -> None:
    node_obj = load("node-worker-1")
    node_obj["status"]["volumesInUse"] = []
    failed = event("FailedUnMount", 'UnmountVolume.TearDown failed for volume "data": busy')
    objects = [node_obj, *cluster("node-worker-1")]
    said = blocker(explain(exited(), [*objects, failed]), "volumes-not-reclaimed")
    assert (said.confidence, said.basis) == (CERTAIN, "the kubelet's FailedUnMount event")
    thinned = blocker(explain(exited(), objects), "volumes-not-reclaimed")
    assert thinned.confidence == POSSIBLE
    assert thinned.basis and "order of teardown" in thinned.basis


def test_a_set_up_event_is_no_teardown_witness() -> None:
    """FailedMount says the volume was never mounted, not that its teardown fails: likely."""
    node_obj = load("node-worker-1")
    node_obj["status"]["volumesInUse"] = []
    mount = event("FailedMount", 'MountVolume.SetUp failed for volume "data": timed out')
    said = blocker(explain(exited(), [node_obj, *cluster("node-worker-1"), mount]),
                   "volumes-not-reclaimed")  # fmt: skip
    assert (said.confidence, said.basis) == (
        LIKELY,
        "the kubelet's FailedMount event (not a teardown)",
    )


def generation_synced(phase: str) -> JSON:
    """web-0 exited, its deletion processed by the kubelet, in the phase given."""
    obj = exited()
    obj["metadata"]["generation"] = 2
    obj["status"].update(phase=phase, observedGeneration=2)
    return obj


def test_only_a_final_status_written_makes_the_volumes_likely() -> None:
    """A terminal phase the kubelet wrote after the deletion puts it at the volumes (likely);
    a non-terminal one says it has not got there: only its order of teardown (possible)."""
    node_obj = load("node-worker-1")
    node_obj["status"]["volumesInUse"] = []
    objects = [node_obj, *cluster("node-worker-1")]
    written = blocker(explain(generation_synced("Failed"), objects), "volumes-not-reclaimed")
    assert (written.confidence, written.basis) == (
        LIKELY,
        "the kubelet wrote the final status: the volumes are the step left",
    )
    unwritten = blocker(explain(generation_synced("Running"), objects), "volumes-not-reclaimed")
    assert unwritten.confidence == POSSIBLE
    assert unwritten.summary.endswith("before its final status (phase Running)")


def test_a_finalizers_owner_judged_is_certain_a_liveness_read_failed_likely() -> None:
    from kubectl_terminating.explain.finalizers import finalizer_confidence
    from kubectl_terminating.model import Evidence

    assert finalizer_confidence([Evidence("has finalizer x")])[0] == CERTAIN
    failed = Evidence("could not read leases: forbidden", failed_read=True)
    confidence, basis = finalizer_confidence([Evidence("has finalizer x"), failed])
    assert confidence == LIKELY and "could not read leases: forbidden" in basis


def test_a_webhook_service_gone_is_certain_its_slices_alone_likely() -> None:
    from kubectl_terminating.explain.webhooks import webhook_blockers as blockers_of_webhooks
    from kubectl_terminating.resources import PODS
    from tests.unit.builders import PODS_NOW as NOW
    from tests.unit.test_webhooks import SERVICE, config

    namespace = load("namespace-shop")
    [gone] = blockers_of_webhooks(PODS, ["UPDATE"], "shop", StaticView([config(), namespace], NOW))
    assert (gone.confidence, gone.basis) == (
        CERTAIN,
        f"failurePolicy Fail and its Service {SERVICE} does not exist",
    )
    slices = load("endpointslice-policy-webhook")
    slices["endpoints"] = []  # no ready endpoint, and the Service itself cannot be read
    unread = StaticView([config(), namespace, slices], NOW, unreadable={"Service": "forbidden"})
    [thinned] = blockers_of_webhooks(PODS, ["UPDATE"], "shop", unread)
    assert thinned.confidence == LIKELY


def test_pods_raised_to_their_namespace_are_as_sure_as_the_least_sure() -> None:
    from kubectl_terminating.explain.namespaces import stuck_pod_blockers

    def stuck(name: str, confidence: str) -> Finding:
        found = explain(pod(), cluster())
        found.name = name
        found.blockers = [replace(found.blockers[0], confidence=confidence, basis=name)]
        return found

    [raised] = stuck_pod_blockers("shop", [stuck("a", CERTAIN), stuck("b", LIKELY)])
    assert (raised.confidence, raised.basis) == (LIKELY, "pod b: b")


# -- where it is shown: the agents' tools, a dump read back -------------------------------------


def test_the_mcp_tools_answer_with_each_blockers_confidence() -> None:
    from kubectl_terminating.agents.server import EXPLAIN, LIST
    from kubectl_terminating.agents.tools import Tools
    from kubectl_terminating.options import Options

    path = FIXTURES / "related" / "pod-sandbox-kill-timed-out.json"
    tools = Tools(Options(kind="all", from_file=str(path), now=True))
    [item] = tools.explain("pods", "agent-run", "default")["items"]
    assert item["blockers"][0]["confidence"] == CERTAIN
    assert item["blockers"][0]["confidenceBasis"]
    [listed] = tools.list("pods", all_namespaces=True)["items"]
    assert listed["blockers"] == item["blockers"]
    for description in (LIST, EXPLAIN):  # the agent is told what the field means
        assert "confidence" in description and "certain" in description


def test_a_dump_read_back_gives_each_blocker_the_confidence_of_the_live_run(
    tmp_path: Path,
) -> None:
    """`dump` saves what the explainers read; `--from-file` of the bundle explains it again,
    each blocker as sure as on the cluster."""
    from kubectl_terminating.explain.pods import explain_pod
    from kubectl_terminating.resources import PODS
    from kubectl_terminating.snapshot import Capture, RecordingView, bundle, header, write_bundle
    from kubectl_terminating.source import Scope
    from tests.unit.builders import PODS_NOW

    node_obj = load("node-worker-1")
    node_obj["status"]["volumesInUse"] = []
    failed = event("FailedUnMount", 'UnmountVolume.TearDown failed for volume "data": busy')
    capture = Capture()
    view = RecordingView(
        StaticView([exited(), node_obj, *cluster("node-worker-1"), failed], PODS_NOW), capture
    )
    live = explain_pod(view.get(PODS, "shop", "web-0") or {}, view)
    path = tmp_path / "dump.json"
    write_bundle(str(path), bundle(capture, header(PODS_NOW, "v1.36.3", "test", Scope("shop"))))
    code, out, err = run_captured("pods", from_file=str(path), namespace="shop", output="json")
    assert code in (0, 3), err
    [item] = json.loads(out)["items"]
    said = [(b["type"], b["confidence"], b["confidenceBasis"]) for b in item["blockers"]]
    assert said == [(b.type, b.confidence, b.basis) for b in live.blockers]
    assert (CERTAIN, "the kubelet's FailedUnMount event") in [s[1:] for s in said]
