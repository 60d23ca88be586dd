"""Shared fixtures. The e2e control plane starts once per session, on first use."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import profiles
from tests.harness.controlplane import (
    GO_TOOL_SCRIPT,
    K8S_VERSION_ENV,
    ControlPlane,
    build_binaries,
)
from tests.harness.strays import plugin_processes, stop_strays, watch_threads

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
        "test_newer_kubernetes.py",
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


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is e2e, so `-m "not e2e"` runs the fast suite only. With
    K8S_VERSION set (make test-matrix), only the MATRIX modules' e2e tests run, none marked
    node (the real node runs the pinned kubelet only). Each file is one unit of work for
    pytest-xdist (`--dist loadgroup`): its module fixtures are made once, on one worker, each
    worker with a control plane of its own."""
    matrix = bool(os.environ.get(K8S_VERSION_ENV))
    kept, dropped = [], []
    for item in items:
        path = Path(str(item.path))
        e2e = E2E_DIR in path.parents
        if e2e:
            item.add_marker(pytest.mark.e2e)
        item.add_marker(pytest.mark.xdist_group(path.name))
        if matrix and not (e2e and path.name in MATRIX and item.get_closest_marker("node") is None):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# The files that run a real helm (hack/build-go-tool.sh: about 3.5 minutes cold).
HELM_FILES = frozenset({"test_helm.py", "test_preflight.py", "test_preflight_guards.py"})
EARLY_BUILDS: list[subprocess.Popen[bytes]] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """helm builds beside the e2e files that run before those that use it, at nice 19 (they
    mostly wait on their API servers); the helm tests' own call waits for it (the script's
    lock). A no-op once cached; a failed build fails those tests with its error."""
    if os.environ.get(K8S_VERSION_ENV) or not shutil.which("go"):
        return
    if any(Path(str(item.path)).name in HELM_FILES for item in session.items):
        EARLY_BUILDS.append(
            subprocess.Popen(
                ["nice", "-n", "19", "bash", str(GO_TOOL_SCRIPT), "helm"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for build in EARLY_BUILDS:
        if build.poll() is None:  # the session ended first (-x, Ctrl-C): stop the build
            os.killpg(build.pid, signal.SIGTERM)
            build.wait()


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


@pytest.fixture(scope="module", autouse=True)
def no_stray_plugin_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A test file leaves none of the plugin's processes or watch threads running: one would
    go on reading the control plane, and a later file that audits who read what would see its
    requests. Made first in each module, so checked after the module's own fixtures have
    stopped theirs; a stray process is killed and fails the file's last test with its command
    line, as does a watch thread (by name)."""
    basetemp = tmp_path_factory.getbasetemp()
    before, threads_before = set(plugin_processes(basetemp)), set(watch_threads())
    yield
    strays = stop_strays(basetemp, before)
    assert not strays, f"plugin processes left running (killed now): {strays}"
    threads = [t for t in watch_threads() if t not in threads_before]
    assert not threads, f"watch threads left running: {threads}"
