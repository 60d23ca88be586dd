"""integrations/k9s/plugins.yaml in a real k9s (hack/build-go-tool.sh), driven through tmux.

k9s runs against the real control plane with the shipped file installed the two ways the
file's header documents ($XDG_CONFIG_HOME/k9s/plugins.yaml; $XDG_DATA_HOME/k9s/plugins/),
a stuck pod and a stuck namespace are selected, the plugin's keys pressed, and the screen
(`tmux capture-pane`) must show what the CLI prints for the same object. `kubectl` is the
control plane's and `kubectl-terminating` a wrapper around this venv's entry point, both on
the PATH k9s passes to the plugin. Marker `k9s`: `make test-k9s` builds k9s (about 11
minutes cold on a loaded machine) and installs tmux and less where missing; `make test`
leaves it out.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.harness.api import create_namespace, get, remove_finalizers, unique_ns
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane, go_tool
from tests.harness.scenarios import (
    Stuck,
    namespace_with_metadata_finalizer,
    pod_path,
    pod_with_finalizer,
)
from tests.harness.tiers import skip_or_fail
from tests.harness.tmux import HEIGHT, WIDTH, Tmux

pytestmark = [pytest.mark.e2e, pytest.mark.k9s]

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "integrations" / "k9s" / "plugins.yaml"
MENU_EXPLAIN, MENU_FIX = "Why terminating", "Fix plan (dry run)"


@dataclass(frozen=True)
class Setup:
    k9s: Path
    tmux: str
    bin_dir: Path  # kubectl and kubectl-terminating, for the plugin's shell


@pytest.fixture(scope="module")
def setup(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Setup:
    missing = [tool for tool in ("tmux", "less") if shutil.which(tool) is None]
    if missing:
        skip_or_fail(
            "k9s", f"{' and '.join(missing)} not installed (`make test-k9s` installs them)"
        )
    entry_point = Path(sys.executable).parent / "kubectl-terminating"
    assert entry_point.is_file(), f"{entry_point} missing: run `make venv`"
    bin_dir = tmp_path_factory.mktemp("k9s-bin")
    (bin_dir / "kubectl").symlink_to(control_plane.binaries_dir / "kubectl")
    wrapper = bin_dir / "kubectl-terminating"
    wrapper.write_text(f'#!/bin/sh\nexec "{entry_point}" "$@"\n')
    wrapper.chmod(0o755)
    return Setup(go_tool("k9s"), str(shutil.which("tmux")), bin_dir)


@pytest.fixture(scope="module")
def stuck(control_plane: ControlPlane) -> Iterator[tuple[Stuck, Stuck]]:
    """A pod held by a finalizer alone in its namespace; a namespace held by its finalizer."""
    cp = control_plane
    ns = unique_ns("k9s-pods")
    create_namespace(cp, ns)
    pod = pod_with_finalizer(cp, ns)
    held = namespace_with_metadata_finalizer(cp, unique_ns("k9s-held"))
    try:
        yield pod, held
    finally:
        remove_finalizers(cp, pod_path(pod.namespace, pod.name))
        remove_finalizers(cp, f"/api/v1/namespaces/{held.name}")


def normalized(line: str) -> str:
    """A line without what moves between two runs: ages, times, the plan's digest."""
    line = re.sub(r"\b[0-9a-f]{16}\b", "<digest>", line.rstrip())
    line = re.sub(r"\b(\d+[dhms])+\b", "<age>", line)
    return re.sub(r"\d+", "#", line)


def first_screen(*args: str, kubeconfig: Path) -> list[str]:
    """What the CLI prints (no colour) that fits on the pane's first screen of `less`."""
    done = run_cli(*args, "--color", "never", kubeconfig=kubeconfig)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()[: HEIGHT - 1]
    expected = [normalized(line) for line in lines if line.strip() and len(line) < WIDTH]
    assert expected, done.stdout
    return expected


def shows(expected: list[str]) -> Callable[[str], bool]:
    """Whether a screen holds every expected line (normalized)."""

    def check(screen: str) -> bool:
        on_screen = {normalized(line) for line in screen.splitlines()}
        return all(line in on_screen for line in expected)

    return check


class K9s:
    """k9s in a tmux pane, with its own home, XDG directories and the given plugin file."""

    def __init__(
        self, setup: Setup, directory: Path, kubeconfig: Path, ns: str, readonly: bool
    ) -> None:
        home, xdg = (
            directory / "home",
            {
                name: directory / name.lower()
                for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
            },
        )
        args = ["--context", "test", "--namespace", ns, "--command", "pods"]
        if readonly:
            # the other documented install, the default kubeconfig: k9s passes the plugin an
            # empty $KUBECONFIG, which must mean the default as it does for kubectl
            plugins = xdg["XDG_DATA_HOME"] / "k9s" / "plugins" / "kubectl-terminating.yaml"
            (home / ".kube").mkdir(parents=True)
            shutil.copy(kubeconfig, home / ".kube" / "config")
            args.append("--readonly")
        else:
            plugins = xdg["XDG_CONFIG_HOME"] / "k9s" / "plugins.yaml"
            args.append(f"--kubeconfig={kubeconfig}")
        plugins.parent.mkdir(parents=True)
        shutil.copy(PLUGINS, plugins)
        env = {
            "HOME": str(home),
            "PATH": f"{setup.bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "XDG_DATA_DIRS": str(directory / "none"),  # no system-wide plugins
            **{name: str(path) for name, path in xdg.items()},
        }
        self.kubeconfig = kubeconfig
        self.tmux = Tmux(setup.tmux, directory)
        self.tmux.start([str(setup.k9s), *args, "--logoless", "--splashless"], env)

    def cli(self, *args: str) -> list[str]:
        """What the plugin should show: the CLI's first screen for these arguments."""
        return first_screen(*args, kubeconfig=self.kubeconfig)

    def wait(self, expected: list[str], what: str) -> str:
        return self.tmux.wait_for(shows(expected), what)

    def table(self, name: str, view: str) -> str:
        """Wait for k9s's table `view` with its row `name` selected (the only one shown)."""
        return self.tmux.wait_for(
            lambda s: f"{view}(" in s and name in s and "Terminating" in s, f"{view} table"
        )

    def press(self, key: str, expected: list[str], what: str) -> str:
        """Press a plugin key, wait for its answer in `less`, leave `less` with q."""
        self.tmux.keys(key)
        screen = self.wait(expected, what)
        self.tmux.keys("q")
        # keys typed while k9s takes the terminal back can be lost: wait for its header
        self.tmux.wait_for(lambda s: s.startswith(" Context: "), "k9s back after q")
        return screen

    def view(self, command: str, title: str, name: str) -> None:
        """Go to k9s's `command` view (titled `title`), filtered down to the object `name`."""
        self.tmux.keys(f":{command}", "Enter")
        self.tmux.wait_for(lambda s: f" {title}(" in s, f"{title} view")
        self.tmux.keys(f"/{name}", "Enter")
        self.table(name, title)

    def stop(self) -> None:
        self.tmux.stop()


@pytest.fixture
def k9s(
    setup: Setup, control_plane: ControlPlane, stuck: tuple[Stuck, Stuck], tmp_path: Path
) -> Iterator[Callable[[bool], K9s]]:
    """Starts k9s on the stuck pod's namespace (read-only or not) and waits for the pod's row;
    stopped after the test."""
    sessions: list[K9s] = []

    def start(readonly: bool) -> K9s:
        directory = tmp_path / f"session-{len(sessions)}"
        directory.mkdir()
        kubeconfig, ns = control_plane.kubeconfig_path, stuck[0].namespace
        sessions.append(K9s(setup, directory, kubeconfig, ns, readonly))
        sessions[-1].table(stuck[0].name, "pods")
        return sessions[-1]

    try:
        yield start
    finally:
        for session in sessions:
            session.stop()


def test_the_plugin_explains_the_selected_pod_and_namespace(
    k9s: Callable[[bool], K9s], control_plane: ControlPlane, stuck: tuple[Stuck, Stuck]
) -> None:
    pod, held = stuck
    k9s_rw = k9s(False)
    menu = k9s_rw.tmux.screen()
    assert MENU_EXPLAIN in menu and MENU_FIX in menu, menu
    explain_pod = k9s_rw.cli("pods", "-n", pod.namespace, pod.name, "--explain")
    k9s_rw.press("E", explain_pod, "explanation of the pod")
    k9s_rw.table(pod.name, "pods")
    # fix: the dry-run plan, nothing written
    plan = k9s_rw.cli("fix", "pods", "-n", pod.namespace, pod.name)
    assert any("Nothing to write." in line for line in plan), plan
    k9s_rw.press("Y", plan, "fix plan of the pod")
    assert get(control_plane, pod_path(pod.namespace, pod.name))["metadata"]["finalizers"]
    k9s_rw.table(pod.name, "pods")
    everything_here = k9s_rw.cli("all", "-n", pod.namespace, "--explain")
    k9s_rw.press("W", everything_here, "everything terminating in the pod's namespace")

    k9s_rw.view("ns", "namespaces", held.name)
    explain_ns = k9s_rw.cli("ns", held.name, "--explain")
    k9s_rw.press("E", explain_ns, "explanation of the namespace")
    k9s_rw.table(held.name, "namespaces")
    # a cluster-scoped object: k9s's $NAMESPACE is "-", the plugin reads every namespace
    everything = k9s_rw.cli("all", "-A", "--explain")
    k9s_rw.press("W", everything, "everything terminating")


def test_read_only_k9s_hides_the_fix_plan(
    k9s: Callable[[bool], K9s], stuck: tuple[Stuck, Stuck]
) -> None:
    pod, held = stuck
    k9s_ro = k9s(True)
    menu = k9s_ro.tmux.screen()
    assert MENU_EXPLAIN in menu and MENU_FIX not in menu, menu
    plan = k9s_ro.cli("fix", "pods", "-n", pod.namespace, pod.name)
    explain_pod = k9s_ro.cli("pods", "-n", pod.namespace, pod.name, "--explain")
    # keys are read in order: had Y opened the plan in `less`, E would go to `less` and no
    # explanation would come
    k9s_ro.tmux.keys("Y")
    screen = k9s_ro.press("E", explain_pod, "explanation of the pod after Y")
    assert not shows(plan)(screen), screen

    k9s_ro.table(pod.name, "pods")
    k9s_ro.view("ns", "namespaces", held.name)
    explain_ns = k9s_ro.cli("ns", held.name, "--explain")
    k9s_ro.tmux.keys("Y")
    k9s_ro.press("E", explain_ns, "explanation of the namespace after Y")
