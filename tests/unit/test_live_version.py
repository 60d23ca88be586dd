"""The server's version as the live view states it (`not served by this server (vX.Y)`) and
as preflight judges ordered namespace deletion by it."""

from __future__ import annotations

import pytest

from kubectl_terminating.live import version_numbers, version_of


@pytest.mark.parametrize(
    ("answer", "numbers"),
    [
        ({"major": "1", "minor": "36", "gitVersion": "v1.36.3"}, (1, 36)),
        ({"major": "1", "minor": "31+", "gitVersion": "v1.31.4-eks-1a2b3c"}, (1, 31)),
        # a v1.30 built without Kubernetes's scripts answers empty major and minor (as the
        # matrix's v1.30.14 does): the gitVersion still says it
        ({"major": "", "minor": "", "gitVersion": "v1.30.14"}, (1, 30)),
        ({"gitVersion": "v1.29.0-gke.100"}, (1, 29)),
        ({"major": "", "minor": "", "gitVersion": "unknown"}, None),
        ({}, None),
    ],
)
def test_the_version_comes_from_major_and_minor_else_git_version(
    answer: dict[str, str], numbers: tuple[int, int] | None
) -> None:
    assert version_numbers(answer) == numbers
    assert version_of(answer) == (f"v{numbers[0]}.{numbers[1]}" if numbers else "version unknown")
