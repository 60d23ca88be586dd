"""The unit tests' shared homes: tests/unit/builders.py (clocks, fixtures, builders, explaining
over a static view), nsfixtures.py (the namespace scenarios) and golden.py (golden files).

Their asserts are rewritten as the tests' own are, so a failing helper shows its values.
"""

import pytest

pytest.register_assert_rewrite("tests.unit.builders", "tests.unit.golden", "tests.unit.nsfixtures")
