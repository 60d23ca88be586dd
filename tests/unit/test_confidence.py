"""Every blocker states how sure it is (causes.CONFIDENCES) and the witness that makes it so
(DESIGN.md "How sure"): over every fixture file, and case by case with the evidence thinned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating import causes
from kubectl_terminating.causes import CERTAIN, LIKELY, POSSIBLE
from kubectl_terminating.explain.namespaces import explain_namespace
from kubectl_terminating.model import Blocker
from tests.unit.builders import FIXTURES, run_captured
from tests.unit.nsfixtures import scenario

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
        for blocker in blockers_of(item):
            assert_stated(blocker)


@pytest.mark.parametrize("name", sorted(p.stem for p in (FIXTURES / "namespaces").glob("*.json")))
def test_every_blocker_of_every_namespace_scenario_states_its_confidence(name: str) -> None:
    found = scenario(name)
    finding = explain_namespace(found.namespace, found.view)
    for blocker in blockers_of(finding.to_json(lambda _: {})):
        assert_stated(blocker)


def test_a_blocker_whose_proof_was_not_read_is_at_most_possible() -> None:
    said = Blocker("finalizer", "f", unchecked="could not list pods", confidence=CERTAIN, basis="b")
    assert (said.confidence, said.basis) == (
        POSSIBLE,
        "b; the read that would prove it is missing (unchecked)",
    )
    assert Blocker("finalizer", "f", confidence=LIKELY, basis="b").confidence == LIKELY
    # what to_json prints, always
    assert Blocker("finalizer", "f").to_json()["confidence"] is None
