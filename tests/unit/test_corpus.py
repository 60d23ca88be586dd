"""Real objects from public threads about stuck Terminating, explained through `--from-file`.

Each file of tests/fixtures/corpus holds what a thread pasted (`kubectl get -o json/yaml`, or
`kubectl describe` turned back into the object), as data; index.json names the thread, the cause
it established, the main blocker the file alone can prove and, for the newer entries, how sure a
careful reader of the file alone would be of it (`expect.confidence`). A file lacks most kinds
(nodes, APIServices, the namespace's content): the answer must come from what the object itself
says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.causes import CERTAIN, CONFIDENCES
from tests.unit.builders import FIXTURES, run_captured

CORPUS = FIXTURES / "corpus"
INDEX: list[dict[str, Any]] = json.loads((CORPUS / "index.json").read_text())["entries"]


def explain(path: Path) -> tuple[dict[str, Any], str]:
    """The file's one terminating object, as `--from-file F --now -o json` explains it."""
    kinds = {"Pod": "pods", "Namespace": "namespaces"}
    kind = kinds.get(json.loads(path.read_text()).get("kind"), "all")
    code, out, err = run_captured(
        kind,
        from_file=str(path),
        now=True,  # pastes carry no capture time; judge them as overdue, as they were
        output="json",
        all_namespaces=kind != "namespaces",
    )
    assert code == 0, err
    (item,) = json.loads(out)["items"]
    return item, err


def test_the_corpus_is_large_and_every_file_is_indexed() -> None:
    files = {p.name for p in CORPUS.glob("*.json")} - {"index.json"}
    assert len(INDEX) >= 20
    assert sorted(e["file"] for e in INDEX) == sorted(files)
    for entry in INDEX:
        assert entry["url"].startswith("https://"), entry
        expect = entry["expect"]
        assert entry["cause"] and (expect.get("summary") or expect.get("mentions")), entry
        assert expect.get("confidence", CERTAIN) in CONFIDENCES, entry
    assert len({e["url"] for e in INDEX}) == len(INDEX), "a thread is in the corpus twice"


def case(entry: dict[str, Any]) -> Any:
    """An entry as a test case; `xfail` names the known gap that keeps it from passing yet (it
    must fail until that gap is closed, then the mark goes)."""
    marks = [pytest.mark.xfail(strict=True, reason=entry["xfail"])] if "xfail" in entry else []
    return pytest.param(entry, marks=marks, id=entry["file"].removesuffix(".json"))


@pytest.mark.parametrize("entry", [case(e) for e in INDEX])
def test_real_object_gets_the_main_blocker_its_thread_established(entry: dict[str, Any]) -> None:
    item, stderr = explain(CORPUS / entry["file"])
    assert "Traceback" not in stderr
    main = item["blockers"][0]  # blockers come sorted: the main one first
    expect = entry["expect"]
    assert main["type"] == expect["type"], [(b["type"], b["summary"]) for b in item["blockers"]]
    for part in expect.get("summary", []):
        assert part in main["summary"], (part, main["summary"])
    said = json.dumps(main)  # a name may not fit the 70-column summary: evidence and remedies
    for name in expect.get("mentions", []):
        assert name in said, (name, main)
    if "confidence" in expect and "confidence" in main:  # blockers carry one once issue 37 lands
        basis = (main["confidence"], main.get("confidenceBasis"))
        assert main["confidence"] == expect["confidence"], basis


def test_calibration_no_certain_main_blocker_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    """Per confidence the tool gave its main blocker: how many of the corpus' are the type the
    thread established, printed even without -s; a `certain` one must never be wrong."""
    table: dict[str, list[int]] = {}
    wrong_but_certain = []
    for entry in INDEX:
        item, _ = explain(CORPUS / entry["file"])
        main = item["blockers"][0]
        right = main["type"] == entry["expect"]["type"]
        said = main.get("confidence", "unset")
        row = table.setdefault(said, [0, 0])
        row[0] += right
        row[1] += 1
        if said == CERTAIN and not right:
            wrong_but_certain.append((entry["file"], main["type"], entry["expect"]["type"]))
    with capsys.disabled():
        print("\ncorpus calibration (main blocker): confidence  right/total")
        for said in (*CONFIDENCES, "unset"):
            if said in table:
                print(f"  {said:<10} {table[said][0]}/{table[said][1]}")
    assert not wrong_but_certain
