"""The user's kuberc decides which exec credential plugins run (credentialPluginPolicy), on the
real control plane: a plugin that leaves a mark each time it runs and hands out the admin
token, in one context beside a context with a token of its own. The harness's real kubectl
1.36.3 is asked the same questions: the plugin runs for both or for neither."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness.api import create_namespace, delete, unique_ns, wait_for
from tests.harness.cli import assert_one_line_error, run_cli, start_serve
from tests.harness.controlplane import ControlPlane, free_port
from tests.harness.kubelet import create_node, create_pod

pytestmark = pytest.mark.e2e

PLUGIN = "kt-marked-plugin"
HEAD = {"apiVersion": "kubectl.config.k8s.io/v1beta1", "kind": "Preference"}


@dataclass
class Setup:
    cp: ControlPlane
    namespace: str  # web-0 in it is stuck
    directory: Path
    plugin: Path  # leaves a line in `marker` each time it runs
    marker: Path
    kubeconfig: Path  # contexts "plugin" (the current one: its user is the plugin) and "token"

    def ran(self) -> int:
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0

    def kuberc(self, name: str, **fields: Any) -> Path:
        path = self.directory / name
        path.write_text(yaml.safe_dump({**HEAD, **fields}))
        return path

    def env(self, **extra: str) -> dict[str, str]:
        """HOME without a kuberc, the plugin's folder last on PATH, and extra."""
        home = self.directory / "home"
        home.mkdir(exist_ok=True)
        path = f"{os.environ.get('PATH', '')}:{self.plugin.parent}"
        return {"HOME": str(home), "PATH": path, "KUBERC": "", **extra}


@pytest.fixture(scope="module")
def setup(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Setup:
    cp, directory = control_plane, tmp_path_factory.mktemp("kuberc")
    ns = unique_ns("kuberc")
    create_namespace(cp, ns)
    create_node(cp, f"{ns}-node")  # no kubelet behind it: the pod stays Terminating
    create_pod(cp, ns, "web-0", node=f"{ns}-node")
    delete(cp, f"/api/v1/namespaces/{ns}/pods/web-0")
    marker = directory / "ran"
    plugin = directory / "bin" / PLUGIN
    plugin.parent.mkdir()
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": cp.admin_token},
    }
    plugin.write_text(
        f"#!/bin/sh\necho ran >> '{marker}'\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    cluster = {"server": cp.server, "certificate-authority-data": cp.ca_data_b64}
    exec_user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(plugin),
            "interactiveMode": "Never",
        }
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [
            {"name": "plugin", "user": exec_user},
            {"name": "token", "user": {"token": cp.admin_token}},
        ],
        "contexts": [
            {"name": name, "context": {"cluster": "test", "user": name}}
            for name in ("plugin", "token")
        ],
        "current-context": "plugin",
    }
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    kubeconfig.chmod(0o600)
    return Setup(cp, ns, directory, plugin, marker, kubeconfig)


def plugin_run(setup: Setup, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, kubeconfig=setup.kubeconfig, env=setup.env(**env))


def kubectl_run(setup: Setup, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The harness's real kubectl with the same kubeconfig and environment."""
    environ = {**os.environ, "KUBECONFIG": str(setup.kubeconfig), **setup.env(**env)}
    return subprocess.run(
        [str(setup.cp.binaries_dir / "kubectl"), *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("where", ["KUBERC", "HOME"])
def test_deny_all_never_runs_the_plugin(setup: Setup, where: str) -> None:
    """DenyAll, in the file KUBERC names or in ~/.kube/kuberc: the plugin never runs and the
    run is one line naming the context and the policy (kubectl refuses it too)."""
    rc = setup.kuberc("deny", credentialPluginPolicy="DenyAll")
    env = {"KUBERC": str(rc)}
    if where == "HOME":
        home = setup.directory / "home-deny"
        (home / ".kube").mkdir(parents=True, exist_ok=True)
        (home / ".kube" / "kuberc").write_text(rc.read_text())
        env = {"HOME": str(home)}
        rc = home / ".kube" / "kuberc"
    before = setup.ran()
    line = assert_one_line_error(plugin_run(setup, "pods", "-n", setup.namespace, **env))
    assert line == (
        f'error: context "plugin": exec credential plugin "{setup.plugin}" not allowed: '
        f'policy set to "DenyAll" (kuberc {rc})'
    )
    assert setup.ran() == before
    refused = kubectl_run(setup, "get", "pods", "-n", setup.namespace, **env)
    assert refused.returncode == 1 and 'policy set to "DenyAll"' in refused.stderr
    assert setup.ran() == before


@pytest.mark.parametrize("entry", ["basename", "full path"])
def test_an_allowlisted_plugin_runs(setup: Setup, entry: str) -> None:
    """Allowlist naming the plugin by basename (found on PATH) or by its full path: it runs
    (once) and the command works, as kubectl's does."""
    name = PLUGIN if entry == "basename" else str(setup.plugin)
    rc = setup.kuberc(
        "allow", credentialPluginPolicy="Allowlist", credentialPluginAllowlist=[{"command": name}]
    )
    before = setup.ran()
    result = plugin_run(setup, "pods", "-n", setup.namespace, "-o", "name", KUBERC=str(rc))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pod/web-0\n"
    assert setup.ran() == before + 1
    done = kubectl_run(setup, "get", "pods", "-n", setup.namespace, "-o", "name", KUBERC=str(rc))
    assert done.returncode == 0, done.stderr
    assert setup.ran() == before + 2


def test_an_allowlist_without_the_plugin_refuses_it(setup: Setup) -> None:
    """An allowlist of another program: refused before it runs, the policy named; a
    program of the same basename elsewhere on PATH is another program."""
    other = setup.directory / "other" / PLUGIN
    other.parent.mkdir(exist_ok=True)
    other.write_text("#!/bin/sh\nexit 1\n")
    other.chmod(0o755)
    rc = setup.kuberc(
        "allow-other",
        credentialPluginPolicy="Allowlist",
        credentialPluginAllowlist=[{"name": PLUGIN}],
    )
    before = setup.ran()
    first = f"{other.parent}:{os.environ.get('PATH', '')}"
    result = plugin_run(setup, "pods", "-n", setup.namespace, KUBERC=str(rc), PATH=first)
    line = assert_one_line_error(result)
    assert line.startswith(f'error: context "plugin": exec credential plugin "{setup.plugin}" ')
    assert f"{setup.plugin} is not in its credentialPluginAllowlist" in line
    assert 'policy set to "Allowlist"' in line
    assert setup.ran() == before
    refused = kubectl_run(setup, "get", "pods", KUBERC=str(rc), PATH=first)
    assert refused.returncode == 1 and "not permitted by the credential plugin allowlist" in (
        refused.stderr
    )
    assert setup.ran() == before


def test_a_refused_context_of_a_fleet_is_one_warning(setup: Setup) -> None:
    """--contexts plugin,token under DenyAll: the token context still answers; the plugin
    context is one warning naming it and the policy; the plugin never ran."""
    rc = setup.kuberc("deny-fleet", credentialPluginPolicy="DenyAll")
    before = setup.ran()
    result = plugin_run(
        setup, "pods", "-n", setup.namespace, "--contexts", "plugin,token", KUBERC=str(rc)
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split()[:2] for line in result.stdout.splitlines()]
    assert rows == [["CONTEXT", "NAME"], ["token", "web-0"]]
    assert result.stderr.splitlines() == [
        f'Warning: context "plugin": exec credential plugin "{setup.plugin}" not allowed: '
        f'policy set to "DenyAll" (kuberc {rc})'
    ]
    assert setup.ran() == before


def test_kuberc_off_lets_the_plugin_run(setup: Setup) -> None:
    """KUBERC=off: the DenyAll of ~/.kube/kuberc is not read, as in kubectl."""
    home = setup.directory / "home-off"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "kuberc").write_text(
        yaml.safe_dump({**HEAD, "credentialPluginPolicy": "DenyAll"})
    )
    before = setup.ran()
    result = plugin_run(
        setup, "pods", "-n", setup.namespace, "-o", "name", HOME=str(home), KUBERC="off"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pod/web-0\n"
    assert setup.ran() == before + 1
    done = kubectl_run(setup, "get", "pods", "-n", setup.namespace, HOME=str(home), KUBERC="off")
    assert done.returncode == 0, done.stderr
    assert setup.ran() == before + 2


def test_a_broken_kuberc_is_one_line(setup: Setup) -> None:
    """A kuberc KUBERC names that kubectl cannot use (not a Preference) or a policy kubectl
    rejects: one line, exit 1, for one context and for a fleet, before any plugin runs."""
    garbage = setup.directory / "garbage"
    garbage.write_text("credentialPluginPolicy: [\n")
    typo = setup.kuberc("typo", credentialPluginPolicy="DenyALL")
    before = setup.ran()
    for rc, said in (
        (garbage, f"error: kuberc {garbage}: no valid Preference of kubectl.config.k8s.io in it"),
        (typo, f'error: kuberc {typo}: credential plugin policy: unknown policy "DenyALL"'),
    ):
        for fleet in ((), ("--contexts", "token,plugin")):
            result = plugin_run(setup, "pods", "-n", setup.namespace, *fleet, KUBERC=str(rc))
            assert assert_one_line_error(result).startswith(said)
        assert kubectl_run(setup, "get", "pods", KUBERC=str(rc)).returncode == 1
    assert setup.ran() == before


def test_serve_never_runs_a_refused_plugin(setup: Setup) -> None:
    """serve under DenyAll: each run is the one refusal line; the plugin never runs."""
    rc = setup.kuberc("deny-serve", credentialPluginPolicy="DenyAll")
    before = setup.ran()
    log_path = setup.directory / "serve.log"
    with open(log_path, "wb") as log:
        proc = start_serve(setup.kubeconfig, free_port(), "1s", log, env=setup.env(KUBERC=str(rc)))
    try:
        wait_for(lambda: log_path.read_text().count('policy set to "DenyAll"') >= 2, 60)
    finally:
        proc.terminate()
        proc.wait(30)
    refusal = f'error: context "plugin": exec credential plugin "{setup.plugin}" not allowed'
    assert refusal in log_path.read_text()
    assert "Traceback" not in log_path.read_text()
    assert setup.ran() == before
