"""Golden files: rendered output compared with a reviewed copy in tests/golden.

Run with UPDATE_GOLDENS=1 to rewrite them after an intended change, then review the diff.
A missing golden file fails the test (it is never created silently).
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"


def assert_golden(name: str, actual: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("UPDATE_GOLDENS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        return
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDENS=1 and review it"
    expected = path.read_text()
    assert actual == expected, f"output differs from {path} (UPDATE_GOLDENS=1 rewrites it)"
