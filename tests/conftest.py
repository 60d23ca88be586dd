"""Shared fixtures. The e2e control plane starts once per session, on first use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import profiles
from tests.harness.controlplane import ControlPlane, build_binaries

E2E_DIR = Path(__file__).parent / "e2e"

profiles.load()  # before any test module applies its @settings


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; repeated here so the suite works with any ini file.
    config.addinivalue_line("markers", "e2e: needs the real control plane (built on first use)")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "node: needs the real node (kubelet + containerd)")
    config.addinivalue_line("markers", "prometheus: needs a real Prometheus (Debian's package)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is e2e, so `-m "not e2e"` runs the fast suite only."""
    for item in items:
        if E2E_DIR in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd + kube-apiserver + kube-controller-manager, built and started on first use.

    Never skips: a failed build or start fails every test that asked for it, loudly.
    """
    binaries = build_binaries()
    cp = ControlPlane(tmp_path_factory.mktemp("control-plane"), binaries)
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()
