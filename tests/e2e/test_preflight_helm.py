"""`preflight helm` and the pre-delete gate with a real helm (built from the Go module proxy by
hack/build-go-tool.sh, cached), on the real control plane.

A chart installs an operator Deployment, its CRD and a custom resource with the operator's
finalizer, and a `pre-delete` hook Job that runs `kubectl terminating preflight helm RELEASE`.
The control plane has no scheduler or kubelet, so the test plays them for the hook: it runs the
Job's own command (this checkout's CLI, as the read-only user) and writes the Job's terminal
status from the command's exit code, as the job controller would. What is real: helm, its
release Secret, the uninstall's hook handling and deletion, preflight's reads and verdict.
"""

from __future__ import annotations

import secrets
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_preflight import (
    CR_VERSION,
    SETTLE,
    Group,
    Operator,
    preflight,
    record,
    write_outcomes,
)
from tests.e2e.test_readonly import READ_ONLY
from tests.harness.api import MERGE, create_namespace, get_or_none, owner_ref, unique_ns, wait_for
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import create_node
from tests.harness.users import User, Users

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
JSON = dict[str, Any]


@pytest.fixture(scope="module", autouse=True)
def outcomes() -> Iterator[None]:
    yield
    write_outcomes()


@pytest.fixture(scope="module")
def users(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    with Users(control_plane, tmp_path_factory.mktemp("users"), "pf-helm-users") as made:
        yield made


@pytest.fixture(scope="module")
def reader(users: Users) -> User:
    return users.user("pf-helm-reader", READ_ONLY)


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pf-helm-admin")
    return control_plane.write_kubeconfig(directory / "admin", control_plane.admin_token)


@pytest.fixture(scope="module")
def live_node(control_plane: ControlPlane) -> str:
    name = f"pf-helm-node-{secrets.token_hex(3)}"
    create_node(control_plane, name)
    return name


@pytest.fixture(scope="module")
def helm() -> Path:
    built = subprocess.run(
        ["bash", str(ROOT / "hack" / "build-go-tool.sh"), "helm"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(built.stdout.strip().splitlines()[-1])


def chart(directory: Path, group: Group) -> Path:
    root = directory / "operator"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: operator\nversion: 0.1.0\n")
    (root / "templates" / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: operator}\n"
        "spec:\n  selector: {matchLabels: {app: operator}}\n"
        "  template:\n    metadata: {labels: {app: operator}}\n"
        "    spec: {containers: [{name: operator, image: example.invalid/operator}]}\n"
    )
    (root / "templates" / "widget.yaml").write_text(
        f"apiVersion: {group.group}/{CR_VERSION}\nkind: Widget\n"
        f"metadata: {{name: w1, finalizers: [{group.finalizer}]}}\n"
    )
    # the documented gate (docs/preflight.md): a failing pre-delete hook aborts the uninstall
    (root / "templates" / "preflight-hook.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: preflight\n  annotations:\n"
        '    "helm.sh/hook": pre-delete\n'
        '    "helm.sh/hook-delete-policy": before-hook-creation\n'
        "spec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n"
        "      containers:\n      - name: preflight\n        image: kubectl-terminating:test\n"
        "        args: [preflight, helm, '{{ .Release.Name }}', -n, '{{ .Release.Namespace }}']\n"
    )
    return root


class HookRunner(threading.Thread):
    """Plays the scheduler, kubelet and job controller for the hook Job: runs its command
    with the read-only user's credentials and writes the Job's terminal status from the exit."""

    def __init__(self, cp: ControlPlane, ns: str, kubeconfig: Path) -> None:
        super().__init__(daemon=True)
        self.cp, self.ns, self.kubeconfig = cp, ns, kubeconfig
        self.exit_code: int | None = None
        self.output = ""
        self.start()

    def run(self) -> None:
        path = f"/apis/batch/v1/namespaces/{self.ns}/jobs/preflight"
        job = wait_for(lambda: get_or_none(self.cp, path), timeout=60, message="hook Job")
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        result = run_cli(*args, kubeconfig=self.kubeconfig)
        self.exit_code, self.output = result.returncode, result.stdout + result.stderr
        started = job["metadata"]["creationTimestamp"]
        if result.returncode == 0:
            terminal = ["SuccessCriteriaMet", "Complete"]
            extra: JSON = {"succeeded": 1, "completionTime": started}
        else:
            terminal = ["FailureTarget", "Failed"]
            extra = {"failed": 1}
        conditions = [
            {
                "type": kind,
                "status": "True",
                "reason": "PreflightExit",
                "message": f"preflight exited {result.returncode}",
                "lastProbeTime": started,
                "lastTransitionTime": started,
            }
            for kind in terminal
        ]
        status = {"startTime": started, "conditions": conditions, **extra}
        self.cp.api("PATCH", f"{path}/status", {"status": status}, MERGE)


def test_helm_release_with_operator_crd_and_cr(
    control_plane: ControlPlane,
    reader: User,
    admin: Path,
    live_node: str,
    helm: Path,
    tmp_path: Path,
) -> None:
    cp = control_plane
    ns = create_namespace(cp, unique_ns("pf-helm-rel"))["metadata"]["name"]
    group = Group(cp, "helm")
    root = chart(tmp_path, group)

    def run_helm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(helm), *args, "-n", ns, "--kubeconfig", str(admin)],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    installed = run_helm("install", "op", str(root))
    assert installed.returncode == 0, installed.stderr
    operator = Operator(cp, ns, group, live_node)  # the Deployment's pod, as its controllers
    try:
        gate(cp, ns, group, operator, reader, run_helm)
    finally:
        operator.stopped.set()


def gate(
    cp: ControlPlane, ns: str, group: Group, operator: Operator, reader: User, run_helm: Any
) -> None:
    """Blocked, the hook stops the uninstall; the CR first, then clear and uninstalled."""
    deployment = cp.api("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/operator")
    pod = f"/api/v1/namespaces/{ns}/pods/{operator.pod}"
    cp.api("PATCH", pod, {"metadata": {"ownerReferences": [owner_ref(deployment)]}}, MERGE)

    code, report = preflight(cp, reader, "helm", "op", "-n", ns)
    assert (code, report["verdict"]) == (3, "blocked")
    found = next(p for p in report["predictions"] if p["object"]["name"] == "w1")
    assert (found["type"], found["confidence"]) == ("finalizer", "likely")
    assert report["order"][0]["delete"] == [f"Widget/{ns}/w1"]
    assert report["target"]["helmOrder"][-1] == f"Widget/{ns}/w1"  # Helm deletes it last

    # the gate: the hook's preflight fails, so helm deletes nothing
    hook = HookRunner(cp, ns, reader.kubeconfig)
    refused = run_helm("uninstall", "op", "--timeout", "60s")
    hook.join(timeout=10)
    assert hook.exit_code == 3, hook.output
    # helm 4.3.1: `Error: resource Job/NS/preflight not ready. status: Failed, ...`
    assert refused.returncode != 0 and "/preflight not ready" in refused.stderr, refused.stderr
    widget = cp.api("GET", group.path(ns, "w1"))
    assert not widget["metadata"].get("deletionTimestamp")
    still = cp.api("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/operator")
    assert not still["metadata"].get("deletionTimestamp")

    # the safe order: the custom resource first, while the operator runs; then the uninstall
    cp.api("DELETE", group.path(ns, "w1"))
    wait_for(lambda: get_or_none(cp, group.path(ns, "w1")) is None, timeout=SETTLE, message="w1")
    code, after = preflight(cp, reader, "helm", "op", "-n", ns)
    assert (code, after["verdict"]) == (0, "clear"), after
    hook = HookRunner(cp, ns, reader.kubeconfig)
    done = run_helm("uninstall", "op", "--timeout", "60s")
    hook.join(timeout=10)
    assert hook.exit_code == 0, hook.output
    assert done.returncode == 0, done.stderr
    assert run_helm("status", "op").returncode != 0  # the release is gone
    assert get_or_none(cp, f"/apis/apps/v1/namespaces/{ns}/deployments/operator") is None or (
        cp.api("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/operator")["metadata"].get(
            "deletionTimestamp"
        )
    )
    record(
        "helm release: operator, CRD, CR",
        "preflight helm op",
        report,
        "uninstall stopped by the hook",
        found,
    )
    record("the same after the CR is deleted first", "preflight helm op", after, "uninstalled")


def test_a_forbidden_release_secret_is_one_line(
    control_plane: ControlPlane,
    users: Users,
) -> None:
    nobody = users.user(
        "pf-no-secrets", [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]
    )
    result = run_cli("preflight", "helm", "op", "-n", "default", kubeconfig=nobody.kubeconfig)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "helm get manifest op -n default | kubectl terminating preflight -f -" in lines[0]
    assert "Traceback" not in result.stderr
