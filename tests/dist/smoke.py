"""Smoke test of the shipped artefact: the single-file executable that `make krew-install`
put into a throw-away KREW_ROOT, found by the real kubectl through plugin discovery on PATH
and run against the real test control plane.

Run by `make smoke` (after `make krew-install`), not by `make test`: it needs KREW_ROOT.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from tests.harness import scenarios
from tests.harness.api import create_namespace, get, unique_ns
from tests.harness.controlplane import ControlPlane

pytestmark = pytest.mark.dist


@pytest.fixture(scope="module")
def krew_root() -> Path:
    root = os.environ.get("KREW_ROOT")
    assert root, "KREW_ROOT is not set: run `make smoke`, which installs the plugin first"
    path = Path(root)
    assert (path / "bin" / "kubectl-terminating").exists(), f"krew did not install into {path}"
    return path


def kubectl(
    cp: ControlPlane, krew_root: Path, *args: str, extra_path: str = ""
) -> subprocess.CompletedProcess[str]:
    """The real kubectl with only krew's bin (and the control plane's binaries) on PATH, so the
    plugin can only come from what krew installed, never from the virtualenv."""
    dirs = (extra_path, str(krew_root / "bin"), str(cp.binaries_dir), "/usr/bin", "/bin")
    path = os.pathsep.join(d for d in dirs if d)
    env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", "/tmp"),
        "KUBECONFIG": str(cp.kubeconfig_path),
        "KREW_ROOT": str(krew_root),
    }
    return subprocess.run(
        [str(cp.binaries_dir / "kubectl"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_plugin_is_the_frozen_binary(krew_root: Path) -> None:
    link = krew_root / "bin" / "kubectl-terminating"
    target = link.resolve()
    assert target.parent.parent.name == "terminating", target  # store/terminating/vX.Y.Z/
    # A PyInstaller single file, not a script that needs the virtualenv's Python.
    assert target.read_bytes()[:2] != b"#!", target


def test_kubectl_finds_the_plugin_and_it_explains_a_stuck_pod(
    control_plane: ControlPlane, krew_root: Path
) -> None:
    ns = unique_ns("smoke")
    create_namespace(control_plane, ns)
    stuck = scenarios.pod_on_missing_node(control_plane, ns, grace_period=1)
    scenarios.wait_past_deadline(get(control_plane, scenarios.pod_path(ns, stuck.name)))

    listed = kubectl(control_plane, krew_root, "plugin", "list", "--name-only")
    assert "kubectl-terminating" in listed.stdout, listed.stderr

    result = kubectl(control_plane, krew_root, "terminating", "pods", "-A", "-o", "json")
    assert result.returncode == 0, result.stderr
    items = {(i["namespace"], i["name"]): i for i in json.loads(result.stdout)["items"]}
    item = items[(stuck.namespace, stuck.name)]
    assert item["node"] == stuck.node
    assert item["blockers"][0]["type"] == "node-missing"

    table = kubectl(control_plane, krew_root, "terminating", "pods", "-n", ns)
    assert table.returncode == 0, table.stderr
    header, row = table.stdout.splitlines()[:2]
    assert header.split()[:4] == ["NAME", "NODE", "TERMINATING", "OVERDUE"]
    assert row.split()[:2] == [stuck.name, stuck.node]


def test_errors_through_kubectl_are_one_line(control_plane: ControlPlane, krew_root: Path) -> None:
    result = kubectl(control_plane, krew_root, "terminating", "pods", "--context", "nope")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.strip()] == [
        'error: context "nope" does not exist'
    ]


def test_completion_through_kubectl(
    control_plane: ControlPlane, krew_root: Path, tmp_path: Path
) -> None:
    """kubectl 1.26+ completes plugin arguments by running kubectl_complete-terminating from
    PATH; krew ships it in the store, and the README tells users to put it on PATH."""
    store = next((krew_root / "store" / "terminating").iterdir())
    helper_dir = tmp_path / "helper"
    helper_dir.mkdir()
    shutil.copy(store / "kubectl_complete-terminating", helper_dir)
    result = kubectl(
        control_plane, krew_root, "__complete", "terminating", "", extra_path=str(helper_dir)
    )
    assert result.returncode == 0, result.stderr
    words = {line.split("\t")[0] for line in result.stdout.splitlines()}
    assert {"pods", "namespaces", "all", "dump"} <= words, result.stdout


def test_an_agent_session_with_the_krew_binary(
    control_plane: ControlPlane, krew_root: Path
) -> None:
    """The README's MCP configuration runs `kubectl-terminating mcp` from krew's bin: the
    official SDK's client starts it, lists the tools and explains a stuck pod through it."""
    ns = unique_ns("smoke-mcp")
    create_namespace(control_plane, ns)
    stuck = scenarios.pod_on_missing_node(control_plane, ns, grace_period=1)
    scenarios.wait_past_deadline(get(control_plane, scenarios.pod_path(ns, stuck.name)))
    binary = krew_root / "bin" / "kubectl-terminating"
    params = StdioServerParameters(
        command=str(binary),
        args=["mcp"],
        env={"PATH": "/usr/bin:/bin", "KUBECONFIG": str(control_plane.kubeconfig_path)},
    )
    seen: dict[str, object] = {}

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params) as client:
                seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
                result = await client.call_tool(
                    "terminating_explain", {"kind": "pods", "name": stuck.name, "namespace": ns}
                )
                block = result.content[0]
                assert isinstance(block, TextContent)
                seen["error"], seen["answer"] = result.is_error, json.loads(block.text)

    anyio.run(main)
    assert "terminating_explain" in seen["tools"]  # type: ignore[operator]
    assert seen["error"] is False, seen["answer"]
    (item,) = seen["answer"]["items"]  # type: ignore[index]
    assert item["name"] == stuck.name
    assert item["blockers"][0]["type"] == "node-missing"
