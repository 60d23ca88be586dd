"""The first fork of a pod's diagnosis: has the kubelet processed the deletion?

metadata.generation is bumped when the pod is marked for deletion; the kubelet reports the
generation it synced in status.observedGeneration (values as measured on the real kubelet
v1.36.3: tests/fixtures/real-node, tests/e2e/test_real_node.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_terminating.explain.pod_generation import deletion_seen
from kubectl_terminating.model import JSON, Finding
from tests.unit.builders import explain_pod_among as explain
from tests.unit.builders import healthy_cluster, pod_fixture, terminated, types


def web_0(generation: Any, observed: Any, exited: bool = True) -> JSON:
    """web-0 (10m past its deadline) without its volumes, with the generations given
    (None: the field absent, as from a server or kubelet before pod generation tracking)."""
    pod = pod_fixture("pod-web-0")
    if exited:
        pod = terminated(pod, 143, "Error", "2026-01-01T11:49:45Z")
    pod["spec"].pop("volumes", None)
    if generation is not None:
        pod["metadata"]["generation"] = generation
    if observed is not None:
        pod["status"]["observedGeneration"] = observed
    return pod


def explained(generation: Any, observed: Any, exited: bool = True) -> Finding:
    return explain(web_0(generation, observed, exited), healthy_cluster())


def test_kubelet_that_has_not_processed_the_deletion_is_the_headline() -> None:
    finding = explained(2, 1)
    main = finding.blockers[0]
    assert main.type == "teardown-unfinished"
    assert main.summary == "containers exited; kubelet has not processed the deletion"
    said = main.evidence[-1]
    assert said.message.startswith("the kubelet has not processed the deletion")
    assert dict(said.fields) == {"generation": 2, "observedGeneration": 1}


def test_kubelet_that_processed_the_deletion_is_stuck_in_teardown() -> None:
    # the real v1.36 kubelet writes phase Failed before the volumes (tests/fixtures/node-evidence)
    pod = web_0(2, 2)
    pod["status"]["phase"] = "Failed"
    main = explain(pod, healthy_cluster()).blockers[0]
    assert main.summary == "containers exited; kubelet has not finished volume teardown"
    assert "its final status is written, the volumes are what is left" in main.evidence[0].message
    assert main.evidence[-1].message.startswith(
        "the kubelet has processed the deletion (status.observedGeneration 2 = "
        "metadata.generation 2) and is stuck: volumes not reclaimed"
    )


def test_a_non_terminal_phase_puts_the_kubelet_before_its_final_status() -> None:
    # containers exited, the deletion processed, yet phase Running: the kubelet has not
    # written its final status, so it is not at the volumes (the catch-all says so)
    main = explained(2, 2).blockers[0]
    assert main.summary == "containers exited; kubelet's teardown unfinished, which step is unknown"
    assert "before the volumes" in main.evidence[0].message
    assert main.evidence[1].fields == {
        "steps": "the sandbox or the DRA claims: its final status is not written yet"
    }


@pytest.mark.parametrize(("generation", "observed"), [(None, None), (2, None), (None, 1)])
def test_without_generation_tracking_the_diagnosis_is_unchanged(
    generation: Any, observed: Any
) -> None:
    """An older server (no metadata.generation on pods) or kubelet (no observedGeneration)."""
    main = explained(generation, observed).blockers[0]
    assert main.summary == "containers exited; kubelet's teardown unfinished, which step is unknown"
    assert not [e for e in main.evidence if "observedGeneration" in e.fields]


def test_containers_running_says_whether_the_kubelet_saw_the_deletion() -> None:
    finding = explained(3, 2, exited=False)
    main = finding.blockers[0]
    assert main.type == "containers-running"
    assert main.evidence[-1].fields == {"generation": 3, "observedGeneration": 2}


def test_api_side_blockers_are_not_forked() -> None:
    """A finalizer is removed by a controller, not the kubelet: nothing about the kubelet."""
    pod = web_0(2, 2)
    pod["metadata"].update(deletionGracePeriodSeconds=0, finalizers=["example.com/hold"])
    finding = explain(pod, healthy_cluster())
    assert types(finding) == ["finalizer"]
    assert not [e for e in finding.blockers[0].evidence if "observedGeneration" in e.fields]


@pytest.mark.parametrize("bad", [0, -1, True, "2", 1.5])
def test_odd_generations_are_no_answer(bad: Any) -> None:
    assert deletion_seen(web_0(bad, 1)) is None
    assert deletion_seen(web_0(2, bad)) is None
