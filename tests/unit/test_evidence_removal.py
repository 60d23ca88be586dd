"""The general guard of partial evidence: every real object we hold, with one part a person
might leave out of a paste taken away, still gets an honest answer through `--from-file`.

For every file of tests/fixtures/corpus, tests/fixtures/snapshots, tests/fixtures/real-node,
tests/fixtures/related and tests/fixtures/node-evidence (those with the kubelet's lines, read
with --node-evidence), each removal in turn (spec, status, status.conditions,
metadata.finalizers, metadata.creationTimestamp, the capture time, managedFields, events) is
applied to the file's terminating objects, and each part a paste leaves out of the related
objects beside them (a Node's status or spec, a PV's, PVC's or VolumeAttachment's spec or
status, an Event's reason or message, a Lease's spec, a webhook configuration's webhooks:
RELATED_PARTS), and the run must: exit 0; list each of them; give as main blocker the one of
the full object or one that names what is missing (an `unknowns` entry on the finding, or an
`unchecked` blocker); never print "none found"; never print "Remaining: nothing" for content
the file does not list; never call an object of unknown age "inside its grace period".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.resources import is_terminating, meta
from kubectl_terminating.snapshot import SNAPSHOT_KIND, load
from tests.unit.builders import FIXTURES, run_captured

JSON = dict[str, Any]
SOURCES = sorted(
    [p for p in (FIXTURES / "corpus").glob("*.json") if p.name != "index.json"]
    + list((FIXTURES / "real-node").glob("*.json"))
    + [p for p in (FIXTURES / "node-evidence").glob("*.json") if p.name != "stats-summary.json"]
    + list((FIXTURES / "snapshots").iterdir())
    + list((FIXTURES / "related").glob("*.json"))
)


def _drop(obj: JSON, path: str) -> None:
    *parents, last = path.split(".")
    for key in parents:
        inner = obj.get(key)
        obj = inner if isinstance(inner, dict) else {}
    obj.pop(last, None)


def _on_targets(path: str) -> Callable[[list[JSON]], list[JSON]]:
    def remove(objects: list[JSON]) -> list[JSON]:
        for obj in objects:
            if is_terminating(obj):
                _drop(obj, path)
        return objects

    return remove


def _without_events(objects: list[JSON]) -> list[JSON]:
    return [o for o in objects if o.get("kind") != "Event"]


# The related objects a file carries beside its terminating ones, and the part of each that a
# paste leaves out most (a Node pasted for its taints has no status; a PVC or PV copied from
# `describe` loses its spec; a webhook configuration its webhooks).
RELATED_PARTS = {
    "Node": ("status", "spec"),
    "PersistentVolume": ("spec", "status"),
    "PersistentVolumeClaim": ("spec", "status"),
    "VolumeAttachment": ("spec", "status"),
    "Event": ("message", "reason"),
    "Lease": ("spec",),
    "ValidatingWebhookConfiguration": ("webhooks",),
    "MutatingWebhookConfiguration": ("webhooks",),
}


def _on_related(index: int) -> Callable[[list[JSON]], list[JSON]]:
    """The index-th part of RELATED_PARTS taken from every related object that has one."""

    def remove(objects: list[JSON]) -> list[JSON]:
        for obj in objects:
            parts = RELATED_PARTS.get(str(obj.get("kind")), ())
            if not is_terminating(obj) and index < len(parts):
                _drop(obj, parts[index])
        return objects

    return remove


REMOVALS: dict[str, Callable[[list[JSON]], list[JSON]]] = {
    "spec": _on_targets("spec"),
    "status": _on_targets("status"),
    "status.conditions": _on_targets("status.conditions"),
    "metadata.finalizers": _on_targets("metadata.finalizers"),
    "metadata.creationTimestamp": _on_targets("metadata.creationTimestamp"),
    "metadata.managedFields": _on_targets("metadata.managedFields"),
    "events": _without_events,
    "related: main part": _on_related(0),
    "related: second part": _on_related(1),
    "capture time": lambda objects: objects,  # said by how the file is written and run
}


def _written(source: Path, removal: str, tmp: Path) -> tuple[Path, bool]:
    """The file with the removal applied, and whether to run it with --now."""
    tmp.mkdir(exist_ok=True)
    out = tmp / "partial.json"
    if source.is_file():
        data = json.loads(source.read_text())
        if data.get("kind") == SNAPSHOT_KIND:
            data = copy.deepcopy(data)
            data["objects"] = REMOVALS[removal](data["objects"])
            if removal == "capture time":
                data["header"].pop("capturedAt", None)
            out.write_text(json.dumps(data))
            return out, False
    objects = REMOVALS[removal](copy.deepcopy(load(str(source)).objects))
    out.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": objects}))
    # pasted objects are judged as of now (test_corpus); the files captured during an incident
    # (real node, snapshots) as of their newest timestamp, as their goldens are
    return out, source.parent.name == "corpus" and removal != "capture time"


def _key(item: JSON) -> tuple[str, str, str]:
    return item["kind"], item.get("namespace") or "", item["name"]


def _run(
    path: Path, now: bool, node_evidence: bool = False
) -> tuple[dict[tuple[str, str, str], JSON], str]:
    flags: JSON = {"from_file": str(path), "now": now, "node_evidence": node_evidence}
    code, out, err = run_captured("all", output="json", **flags)
    assert code == 0, err
    assert "Traceback" not in err
    items = {_key(i): i for i in json.loads(out)["items"]}
    code, text, err = run_captured("all", explain=True, **flags)
    assert code == 0, err
    return items, text


def _targets(path: Path) -> set[tuple[str, str, str]]:
    return {
        (str(o.get("kind")), str(meta(o).get("namespace") or ""), str(meta(o).get("name")))
        for o in load(str(path)).objects
        if is_terminating(o)
    }


def _names_what_is_missing(item: JSON) -> bool:
    main = item["blockers"][0]
    return bool(item.get("unknowns")) or main.get("unchecked") is not None


def _has_related(source: Path) -> bool:
    return any(
        str(o.get("kind")) in RELATED_PARTS and not is_terminating(o)
        for o in load(str(source)).objects
    )


CASES = [
    pytest.param(source, removal, id=f"{source.stem}-{removal}")
    for source in SOURCES
    for removal in REMOVALS
    if not removal.startswith("related") or _has_related(source)
]


@pytest.mark.parametrize(("source", "removal"), CASES)
def test_a_paste_without_a_part_still_names_the_blocker(
    source: Path, removal: str, tmp_path: Path
) -> None:
    full, now = _written(source, "metadata.managedFields", tmp_path / "full")  # as held
    kubelet = source.parent.name == "node-evidence"
    full_items, _ = _run(full, now, kubelet)
    path, now = _written(source, removal, tmp_path)
    items, text = _run(path, now, kubelet)
    assert "none found" not in text
    assert "Remaining:     nothing" not in text or load(str(path)).content is not None
    # a status-only paste without its status holds no sign of a deletion left: nothing to list
    for key in _targets(source) & _targets(path):
        assert key in items, f"{key} not listed without {removal}"
        item = items[key]
        assert item["blockers"], key
        main = item["blockers"][0]
        if item["overdueSeconds"] is None:
            assert all(b["type"] != "grace-period" for b in item["blockers"]), key
        expected = full_items[key]["blockers"][0]["type"]
        assert main["type"] == expected or _names_what_is_missing(item), (
            f"without {removal}: {main['type']} ({main['summary']}) instead of {expected}, "
            f"and it does not say what is missing"
        )
