"""An owner that runs but may not act, and a machine whose clock is off (issue 32, classes 6
and 8), on the real control plane.

The "operator" is what the API server shows of one: a Deployment running as its
ServiceAccount, a leader-election Lease the test keeps renewing, and the Role binding that
lets it update the objects it must release; the test removes the binding. The moved clock is
libfaketime's (Debian's package, as for the exporter's tests), 20 minutes ahead: ages must
still be the API server's.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.timeutil import parse_time
from tests.harness.api import create_configmap, create_namespace, delete, micro_time, unique_ns
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.prometheus import parts
from tests.harness.tiers import skip_or_fail
from tests.harness.users import Users

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
FINALIZER = "acme.cert-manager.io/finalizer"  # fix knows how to prove cert-manager gone
LEASE_NAME = "cert-manager-controller"
LEASES = "/apis/coordination.k8s.io/v1"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
# cert-manager's identity is `<hostname>-external-cert-manager-controller`; the hostname is a
# pod of Deployment cert-manager (made by the test: no scheduler or deployment controller)
LEADER_POD = "cert-manager-55c69bf5cf-2fgjn"
HOLDER = f"{LEADER_POD}-external-cert-manager-controller"
READ_ONLY = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]


@dataclass
class Operator:
    namespace: str  # where it runs
    app: str  # where the object it must release is
    binding: str  # the RoleBinding path that lets it update ConfigMaps in app


class Renewer:
    """Renews a Lease every second, as a running leader does, until stopped."""

    def __init__(self, cp: ControlPlane, path: str) -> None:
        self.cp, self.path = cp, path
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(1.0):
            patch = {"spec": {"renewTime": micro_time()}}
            self.cp.api("PATCH", self.path, patch, "application/merge-patch+json")

    def __enter__(self) -> Renewer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def lease(cp: ControlPlane, namespace: str, holder: str = HOLDER) -> str:
    body = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 60, "renewTime": micro_time()},
    }
    cp.api("POST", f"{LEASES}/namespaces/{namespace}/leases", body)
    return f"{LEASES}/namespaces/{namespace}/leases/{LEASE_NAME}"


def held_configmap(cp: ControlPlane, namespace: str) -> None:
    create_configmap(cp, namespace, "challenge", finalizers=[FINALIZER])
    delete(cp, f"/api/v1/namespaces/{namespace}/configmaps/challenge")


def release(cp: ControlPlane, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/challenge"
    cp.api("PATCH", path, {"metadata": {"finalizers": None}}, "application/merge-patch+json")


@pytest.fixture
def operator(control_plane: ControlPlane) -> Iterator[Operator]:
    cp = control_plane
    ops, app = unique_ns("op-sys"), unique_ns("op-app")
    create_namespace(cp, ops)
    create_namespace(cp, app)
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "cert-manager"}}
    cp.api("POST", f"/api/v1/namespaces/{ops}/serviceaccounts", sa)
    labels = {"app": "cert-manager"}
    container = {"name": "controller", "image": "cert-manager-controller:v1"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cert-manager", "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "cert-manager",
                    "containers": [container],
                },
            },
        },
    }
    cp.api("POST", f"/apis/apps/v1/namespaces/{ops}/deployments", deployment)
    # its leader: the pod the Lease's holder names (no scheduler or kubelet runs it here)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": LEADER_POD, "labels": labels},
        "spec": {"serviceAccountName": "cert-manager", "containers": [container]},
    }
    cp.api("POST", f"/api/v1/namespaces/{ops}/pods", pod)
    rules = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "update", "patch"]}]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}
    cp.api(
        "POST",
        f"{RBAC}/namespaces/{app}/roles",
        {**role, "metadata": {"name": "cm"}, "rules": rules},
    )
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "cert-manager"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
        "subjects": [{"kind": "ServiceAccount", "name": "cert-manager", "namespace": ops}],
    }
    cp.api("POST", f"{RBAC}/namespaces/{app}/rolebindings", binding)
    held_configmap(cp, app)
    lease_path = lease(cp, ops)
    with Renewer(cp, lease_path):
        yield Operator(ops, app, f"{RBAC}/namespaces/{app}/rolebindings/cert-manager")
    release(cp, app)
    delete(cp, lease_path)  # uninstalled: no other test sees a cert-manager running here
    delete(cp, f"/api/v1/namespaces/{ops}/pods/{LEADER_POD}")


def explained(cp: ControlPlane, namespace: str, **run: Any) -> JSON:
    result = run_cli("all", "-n", namespace, "-o", "json", **run)
    assert result.returncode == 0, result.stderr
    [item] = json.loads(result.stdout)["items"]
    blocker: JSON = item["blockers"][0]
    return blocker


def messages(blocker: JSON) -> list[str]:
    return [e["message"] for e in blocker["evidence"]]


def fix_plan(cp: ControlPlane, namespace: str, env: dict[str, str] | None = None) -> JSON:
    result = run_cli(
        "fix", "all", "-n", namespace, "-o", "json", kubeconfig=cp.kubeconfig_path, env=env
    )
    assert result.returncode == 0, result.stderr
    plan: JSON = json.loads(result.stdout)
    return plan


def test_an_operator_that_lost_its_role_binding_runs_but_may_not_act(
    control_plane: ControlPlane, operator: Operator, tmp_path: Path
) -> None:
    cp = control_plane
    account = f"{operator.namespace}/cert-manager"
    before = explained(cp, operator.app, kubeconfig=cp.kubeconfig_path)
    assert before["summary"] == f"finalizer {FINALIZER} (owner: cert-manager, running)"
    assert f"ServiceAccount {account} may update and patch configmaps challenge " in "\n".join(
        m + " " for m in messages(before)
    )

    delete(cp, operator.binding)  # what the SRE benchmark did to its operator
    after = explained(cp, operator.app, kubeconfig=cp.kubeconfig_path)
    assert after["summary"] == (
        f"finalizer {FINALIZER} (owner: cert-manager, running but may not update it)"
    )
    assert f"ServiceAccount {account} may neither update nor patch configmaps challenge" in (
        " ".join(messages(after))
    )
    first = after["remedy"][0]
    assert first["description"].startswith(f"restore the RBAC of ServiceAccount {account}")
    assert first["command"] == (
        f"kubectl auth can-i update configmaps/challenge -n {operator.app} "
        f"--as=system:serviceaccount:{operator.namespace}:cert-manager"
    )
    assert after["remedy"][-1]["when"].startswith("never while cert-manager runs")

    # fix never removes the finalizer of an owner that runs
    plan = fix_plan(cp, operator.app)
    assert [a for o in plan["objects"] for a in o["actions"]] == []
    [refused] = [r for o in plan["objects"] for r in o["refused"]]
    assert f"found: {operator.namespace}/{LEASE_NAME}" in refused["reason"]

    # a user who may read everything but not create subjectaccessreviews: not checked
    with Users(cp, tmp_path / "users", unique_ns("op-users")) as users:
        reader = users.user("reader", cluster_rules=READ_ONLY)
        unchecked = explained(cp, operator.app, kubeconfig=reader.kubeconfig)
    assert unchecked["summary"] == f"finalizer {FINALIZER} (owner: cert-manager, running)"
    [said] = [m for m in messages(unchecked) if "not checked" in m]
    assert "subjectaccessreviews" in said and "forbidden" in said


# -- a machine 20 minutes fast ----------------------------------------------------------------


@pytest.fixture(scope="module")
def faketime() -> Path:
    found = parts()
    if isinstance(found, str):
        skip_or_fail("moved clock", found)
        raise AssertionError(found)
    return found.faketime


def ahead(faketime: Path, offset: str = "+20m") -> dict[str, str]:
    """The environment that moves the tool's clock (not its monotonic clock: its deadlines)."""
    return {"LD_PRELOAD": str(faketime), "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def test_a_machine_20_minutes_fast_still_sees_the_running_owner(
    control_plane: ControlPlane, faketime: Path
) -> None:
    """Only a Lease (the owner runs outside this cluster's view): on this machine's clock it
    reads 20 minutes stale, the owner gone, and fix would remove its finalizer."""
    cp = control_plane
    namespace = unique_ns("clock")
    create_namespace(cp, namespace)
    held_configmap(cp, namespace)
    try:
        # its leader's pod is not in this cluster's view (the review says "not checked")
        holder = "cert-manager-6d9f8b6c5-wxk2p-external-cert-manager-controller"
        with Renewer(cp, lease(cp, namespace, holder)):
            env = ahead(faketime)
            moved = subprocess.run(
                ["date", "+%s"],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=True,
            )
            assert 1150 < int(moved.stdout) - time.time() < 1250  # really moved
            result = run_cli(
                "all", "-n", namespace, "--explain", kubeconfig=cp.kubeconfig_path, env=env
            )
            assert result.returncode == 0, result.stderr
            assert result.stderr.count("Warning: this machine's clock is 20m ahead") == 1
            assert "(owner: cert-manager, running)" in result.stdout
            assert "leader-election lease renewed" in result.stdout
            assert "Overdue:      " in result.stdout and "Overdue:      20m" not in result.stdout
            # the age on the API server's clock (this test's, unmoved), bracketed by readings
            # of it before and after the run: no window a loaded machine could overrun
            deleted = parse_time(
                cp.api("GET", f"/api/v1/namespaces/{namespace}/configmaps/challenge")["metadata"][
                    "deletionTimestamp"
                ]
            )
            before = time.time()
            data = json.loads(
                run_cli(
                    "all", "-n", namespace, "-o", "json", kubeconfig=cp.kubeconfig_path, env=env
                ).stdout
            )
            after = time.time()
            assert deleted is not None
            since = deleted.timestamp()
            overdue = data["items"][0]["overdueSeconds"]
            assert int(before - since) - 1 <= overdue <= int(after - since) + 1, (before, after)

            plan = fix_plan(cp, namespace, env)
            assert [a for o in plan["objects"] for a in o["actions"]] == []
            [refused] = [r for o in plan["objects"] for r in o["refused"]]
            assert f"found: {namespace}/{LEASE_NAME}" in refused["reason"]
    finally:
        release(cp, namespace)
        delete(cp, f"{LEASES}/namespaces/{namespace}/leases/{LEASE_NAME}")
