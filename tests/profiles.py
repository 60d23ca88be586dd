"""Hypothesis profiles, chosen once in tests/conftest.py: `ci` under CI=true (derandomized:
the same examples on every run, so a red CI is the code's, never the seed's), `default` random
on a laptop, `fuzz` (`make fuzz`) for exploration with many more examples."""

from __future__ import annotations

import os

from hypothesis import settings

FUZZ_SCALE = 25  # `make fuzz` runs each property test this many times longer


def choose() -> str:
    """HYPOTHESIS_PROFILE if set, else `ci` under CI=true (as the tiers read it), else default."""
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI") == "true" else "default"


def load() -> None:
    # no example database in CI: a failure found once must not replay on every later run
    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    settings.register_profile("fuzz", max_examples=100 * FUZZ_SCALE, print_blob=True)
    settings.load_profile(choose())


def examples(count: int) -> int:
    """A property test's max_examples: count, or FUZZ_SCALE times more under `make fuzz`."""
    return count * FUZZ_SCALE if choose() == "fuzz" else count
