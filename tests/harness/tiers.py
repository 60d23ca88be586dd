"""A tier that needs parts this machine may not have (the real node, Prometheus, a veth pair):
when one is missing the tier skips with one line, and fails under CI=true, where every tier
must run."""

from __future__ import annotations

import os

import pytest


def skip_or_fail(tier: str, reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the {tier} tests must run in CI: {reason}")
    pytest.skip(reason)
