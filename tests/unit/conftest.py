"""The unit tests' shared homes: tests/unit/builders.py (clocks, fixtures, builders, explaining
over a static view), nsfixtures.py (the namespace scenarios) and golden.py (golden files).

Their asserts are rewritten as the tests' own are, so a failing helper shows its values.
"""

from collections.abc import Iterator

import pytest

from kubectl_terminating.causes import CONFIDENCES
from kubectl_terminating.model import Finding

pytest.register_assert_rewrite("tests.unit.builders", "tests.unit.golden", "tests.unit.nsfixtures")


@pytest.fixture(autouse=True)
def every_blocker_states_its_confidence(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every finding an explainer makes in any unit test (run_causes ends in sort_blockers) has
    blockers that state their confidence and its basis (DESIGN.md "How sure"), checked as the
    test ends: the fixtures combined as the tests combine them, not only file by file."""
    made: list[Finding] = []
    sort = Finding.sort_blockers

    def recorded(finding: Finding) -> None:
        made.append(finding)
        sort(finding)

    monkeypatch.setattr(Finding, "sort_blockers", recorded)
    yield
    for finding in made:
        for blocker in (b for f in (finding, *finding.children) for b in f.blockers):
            said = (finding.name, blocker.type, blocker.summary)
            assert blocker.confidence in CONFIDENCES and blocker.basis, said
