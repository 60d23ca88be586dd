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


# -- calibration: how often each confidence is right (docs/confidence.md) ----------------------


def calibration() -> tuple[dict[str, tuple[int, int]], list[tuple[str, str, str, str]]]:
    """Per confidence of the main blocker: (right, of how many), and every wrong one as (file,
    expected type, confidence, got type). Right: the main blocker's type is the one the thread
    established (index.json `expect.type`); known gaps (`xfail`) count as they come out."""
    counts = {level: [0, 0] for level in (*CONFIDENCES, None)}
    wrong = []
    for entry in INDEX:
        item, _ = explain(CORPUS / entry["file"])
        main = item["blockers"][0]
        tally = counts[main.get("confidence")]
        tally[1] += 1
        if main["type"] == entry["expect"]["type"]:
            tally[0] += 1
        else:
            wrong.append((entry["file"], entry["expect"]["type"], main["confidence"], main["type"]))
    return {str(k): (v[0], v[1]) for k, v in counts.items() if v[1]}, wrong


def calibration_table(counts: dict[str, tuple[int, int]]) -> str:
    lines = ["| confidence | right | main blockers | share right |", "|---|---|---|---|"]
    for level, (right, total) in counts.items():
        lines.append(f"| {level} | {right} | {total} | {100 * right // total}% |")
    return "\n".join(lines)


def test_no_certain_main_blocker_of_the_corpus_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints how often each confidence is right over the corpus; a `certain` main blocker of
    another type than the thread established fails (`-s` shows the table, or run
    `python -m tests.unit.test_corpus`)."""
    counts, wrong = calibration()
    with capsys.disabled():
        print(f"\ncorpus calibration ({len(INDEX)} objects)\n{calibration_table(counts)}")
        for file, expected, confidence, got in wrong:
            print(f"  wrong: {file}: expected {expected}, got {got} ({confidence})")
    assert "None" not in counts, "a main blocker states no confidence"
    assert [w for w in wrong if w[2] == CERTAIN] == []


if __name__ == "__main__":
    found, misses = calibration()
    print(calibration_table(found))
    for miss in misses:
        print("wrong:", *miss)
