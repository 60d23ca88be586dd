"""`fix --apply --wait`: after the writes, the watch of the objects it unstuck, until they are
gone (exit 0) or --timeout (exit 3, naming them)."""

from __future__ import annotations

import pytest

from tests.e2e.test_fix import actions, apply, dry_run, overdue_pod
from tests.harness.api import get_or_none
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.scenarios import pod_on_dead_node, pod_path

pytestmark = pytest.mark.e2e


def test_wait_ends_when_the_unstuck_pod_is_gone(control_plane: ControlPlane) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-wait")
    plan = dry_run(cp, "pods", "-n", stuck.namespace)
    assert [a["action"] for a in actions(plan)] == ["force-delete-pod"]
    result = apply(cp, "pods", "-n", stuck.namespace, "--wait", digest=plan["digest"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith(
        f"{stuck.namespace}/{stuck.name} gone after "
    ), result.stdout
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is None


def test_wait_exits_3_with_what_is_still_there(control_plane: ControlPlane) -> None:
    """The out-of-service taint is written, but no controller here acts on it (podgc is off):
    the pod stays, and --wait says so when its --timeout ends."""
    cp = control_plane
    stuck = overdue_pod(cp, "fix-wait-down", pod_on_dead_node)
    ns, node = stuck.namespace, stuck.node or ""
    plan = dry_run(cp, "pods", "-n", ns, "--node-down", node)
    args = ("pods", "-n", ns, "--node-down", node, "--wait", "--timeout", "3s")
    result = apply(cp, *args, digest=plan["digest"])
    assert result.returncode == 3, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"error: timed out waiting for 1 to go: {ns}/{stuck.name}"
    )
    assert get_or_none(cp, pod_path(ns, stuck.name)) is not None


def test_wait_only_with_apply(control_plane: ControlPlane) -> None:
    result = run_cli("fix", "pods", "--wait", kubeconfig=control_plane.kubeconfig_path)
    assert result.returncode == 2
    assert "--wait only applies with --apply" in result.stderr
