"""A main blocker's summary names what holds the object (the types and objects left, the
finalizer, the node, the volume, the driver), never only a count: over every corpus case and
every golden `-o json` document."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_corpus import CORPUS, INDEX, explain

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
# "2 objects left in 1 type", "at least 3 objects left", "1 type not listable", "3 finalizers"
BARE_COUNT = re.compile(
    r"^(at least )?\d+ (objects?|types?|finalizers?|volumes?|containers?|claims?)"
    r"( left| not listable| remain\w*)?( in \d+ types?)?(, \d+ with finalizers)?\W*$"
)


def mains(document: Any) -> Iterator[dict[str, Any]]:
    """Every item's main blocker in a `-o json` document (a List, or one item), and its pods'."""
    items = document.get("items", [document]) if isinstance(document, dict) else []
    for item in items:
        if isinstance(item, dict) and item.get("blockers"):
            yield {"item": item, "main": item["blockers"][0]}
            yield from mains({"items": item.get("pods", [])})


def assert_named(item: dict[str, Any], main: dict[str, Any]) -> None:
    summary = main["summary"]
    assert not BARE_COUNT.match(summary), f"{item.get('name')}: only a count: {summary!r}"
    if main["type"] == "content-remaining" and item.get("remaining"):
        types = [r["resource"].split(".")[0] for r in item["remaining"]]
        assert any(t in summary for t in types), (summary, types)


def golden_documents() -> list[Path]:
    return sorted(p for p in GOLDEN.rglob("*.json") if '"blockers"' in p.read_text())


@pytest.mark.parametrize("path", golden_documents(), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_every_golden_main_blocker_names_what_holds_it(path: Path) -> None:
    for found in mains(json.loads(path.read_text())):
        assert_named(found["item"], found["main"])


MAIN_LINE = re.compile(r"^\s*1\. \[([a-z-]+)\] (.+)$", re.M)


def golden_texts() -> list[Path]:
    return sorted(p for p in GOLDEN.rglob("*.txt") if MAIN_LINE.search(p.read_text()))


@pytest.mark.parametrize("path", golden_texts(), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_every_golden_explanation_names_what_holds_it(path: Path) -> None:
    """`--explain` text: each object's first blocker (`1. [type] summary`)."""
    for kind, summary in MAIN_LINE.findall(path.read_text()):
        assert_named({"name": path.stem}, {"type": kind, "summary": summary})


@pytest.mark.parametrize("entry", INDEX, ids=lambda e: e["file"].removesuffix(".json"))
def test_every_corpus_main_blocker_names_what_holds_it(entry: dict[str, Any]) -> None:
    item, _ = explain(CORPUS / entry["file"])
    assert_named(item, item["blockers"][0])


def test_a_bare_count_is_caught() -> None:
    """The check itself: the summaries this round replaced fail it."""
    for said in ("2 objects left in 1 type, 2 with finalizers", "at least 3 objects left"):
        assert BARE_COUNT.match(said)
    assert not BARE_COUNT.match("finalizer example.com/x; left: widgets.example.com (2)")
