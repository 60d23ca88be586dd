"""Shared fixtures. The e2e control plane starts once per session, on first use."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import profiles
from tests.harness.controlplane import K8S_VERSION_ENV, ControlPlane, build_binaries

E2E_DIR = Path(__file__).parent / "e2e"
# What `make test-matrix` runs on every Kubernetes it tests besides the pinned one: the
# scenarios users rely on (pods, namespaces, other kinds, fix, fleet, watch, exporter, types a
# server does not serve). The real node, the benchmarks' sizes and the rest stay on the pinned.
MATRIX = frozenset(
    {
        "test_pods.py",
        "test_namespaces.py",
        "test_all.py",
        "test_fix.py",
        "test_fleet.py",
        "test_watch.py",
        "test_exporter.py",
        "test_not_served.py",
        "test_versions.py",
        "test_preflight.py",
    }
)

profiles.load()  # before any test module applies its @settings


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; repeated here so the suite works with any ini file.
    config.addinivalue_line("markers", "e2e: needs the real control plane (built on first use)")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "node: needs the real node (kubelet + containerd)")
    config.addinivalue_line("markers", "prometheus: needs a real Prometheus (Debian's package)")
    config.addinivalue_line("markers", "k9s: a real k9s in tmux (make test-k9s)")
    config.addinivalue_line("markers", "headlamp: the Headlamp plugin (make test-headlamp)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is e2e, so `-m "not e2e"` runs the fast suite only. With
    K8S_VERSION set (make test-matrix), only the MATRIX modules' e2e tests run, none marked
    node (the real node runs the pinned kubelet only)."""
    matrix = bool(os.environ.get(K8S_VERSION_ENV))
    kept, dropped = [], []
    for item in items:
        path = Path(str(item.path))
        e2e = E2E_DIR in path.parents
        if e2e:
            item.add_marker(pytest.mark.e2e)
        if matrix and not (e2e and path.name in MATRIX and item.get_closest_marker("node") is None):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


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
