"""The e2e harness itself: the control plane behaves like a cluster whose kubelets are gone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness import api, kubelet, storage
from tests.harness import api_extensions as ext
from tests.harness.controlplane import REPO_ROOT, ApiError, ControlPlane

JSON = dict[str, Any]


def _terminating_pod(cp: ControlPlane, prefix: str, grace: int = 1) -> tuple[str, str]:
    """A namespace with a running pod on a live fake node, already deleted; (ns, pod)."""
    ns, node = api.unique_ns(prefix), api.unique_ns(f"{prefix}-node")
    api.create_namespace(cp, ns)
    kubelet.create_node(cp, node)
    kubelet.create_pod(cp, ns, "web", node=node, grace_period=grace)
    kubelet.set_pod_status(cp, ns, "web", "Running")
    api.delete(cp, f"/api/v1/namespaces/{ns}/pods/web")
    return ns, "web"


def test_apiserver_reports_the_built_version(control_plane: ControlPlane) -> None:
    assert control_plane.api("GET", "/version")["gitVersion"] == "v1.36.3"


def test_built_kubectl_uses_the_written_kubeconfig(control_plane: ControlPlane) -> None:
    out = control_plane.kubectl("get", "ns", "-o", "name").stdout.split()
    assert {"namespace/default", "namespace/kube-system", "namespace/kube-node-lease"} <= set(out)


def test_plain_users_are_authenticated_but_not_authorized(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cfg = control_plane.write_kubeconfig(
        tmp_path / "alice", control_plane.tokens["alice"], namespace="default"
    )
    who = control_plane.kubectl(
        "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", kubeconfig=cfg
    )
    assert who.stdout == "alice"
    denied = control_plane.kubectl("get", "pods", kubeconfig=cfg, check=False)
    assert denied.returncode == 1
    assert "forbidden" in denied.stderr


def test_deleted_pod_on_fake_node_stays_terminating(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns, pod = _terminating_pod(cp, "harness-pod", grace=1)
    time.sleep(3)  # well past the 1 s grace period: nobody confirms the deletion
    obj = api.get(cp, f"/api/v1/namespaces/{ns}/pods/{pod}")
    assert obj["metadata"]["deletionTimestamp"]
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 1
    assert obj["status"]["phase"] == "Running"


def test_namespace_controller_reports_a_stuck_pod(control_plane: ControlPlane) -> None:
    """With OrderedNamespaceDeletion (GA in 1.34) pods go first, and a pod that outlives its
    grace period shows as NamespaceDeletionContentFailure; NamespaceContentRemaining stays
    False ("ContentRemoved") although the pod remains. The explainers must not trust it."""
    cp = control_plane
    ns, _ = _terminating_pod(cp, "harness-ns", grace=1)
    api.delete(cp, f"/api/v1/namespaces/{ns}")

    cond = api.wait_namespace_condition(cp, ns, "NamespaceDeletionContentFailure")
    assert cond["reason"] == "ContentDeletionFailed"
    assert "Resource=pods" in cond["message"]
    conds = api.namespace_conditions(cp, ns)
    assert conds["NamespaceContentRemaining"]["status"] == "False"
    assert api.get(cp, f"/api/v1/namespaces/{ns}")["status"]["phase"] == "Terminating"


@pytest.mark.slow
def test_namespace_controller_reports_content_with_finalizers(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = api.unique_ns("harness-fin")
    api.create_namespace(cp, ns)
    api.create_configmap(cp, ns, "held", finalizers=["example.com/hold"])
    api.delete(cp, f"/api/v1/namespaces/{ns}")

    cond = api.wait_namespace_condition(cp, ns, "NamespaceContentRemaining")
    assert cond["reason"] == "SomeResourcesRemain"
    assert "configmaps" in cond["message"]
    finalizers = api.namespace_conditions(cp, ns)["NamespaceFinalizersRemaining"]
    assert (finalizers["status"], finalizers["reason"]) == ("True", "SomeFinalizersRemain")
    assert "example.com/hold" in finalizers["message"]

    # Once the owner lets go, the controller finishes the namespace.
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/configmaps/held")
    api.wait_for(
        lambda: api.get_or_none(cp, f"/api/v1/namespaces/{ns}") is None,
        timeout=60,
        message=f"{ns} to be gone",
    )


def test_apiservice_without_service_is_unavailable(control_plane: ControlPlane) -> None:
    cp = control_plane
    svc = ext.create_apiservice(cp, "harness.terminating.test", "v1alpha1", "default", "nowhere")
    name = svc["metadata"]["name"]
    try:
        cond = api.wait_for(
            lambda: ext.apiservice_condition(cp, name), timeout=30, message=f"{name} Available"
        )
        assert cond["status"] == "False"
        assert cond["reason"] == "ServiceNotFound"
    finally:
        # Unavailable APIServices block every namespace deletion: never leave one behind.
        api.delete(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")


def test_audit_log_records_each_request(control_plane: ControlPlane, tmp_path: Path) -> None:
    cp = control_plane
    mark = cp.audit_offset()
    cfg = cp.write_kubeconfig(tmp_path / "bob", cp.tokens["bob"])
    cp.kubectl("get", "pods", "-n", "kube-system", kubeconfig=cfg, check=False)

    def bobs_list() -> list[JSON]:
        return [
            e
            for e in cp.audit_events(mark, user="bob")
            if e["verb"] == "list" and e["objectRef"]["resource"] == "pods"
        ]

    events = api.wait_for(bobs_list, timeout=10, message="bob's list in the audit log")
    assert events[0]["level"] == "Metadata"
    assert events[0]["responseStatus"]["code"] == 403
    assert events[0]["objectRef"]["namespace"] == "kube-system"


def test_kubelet_helpers_pass_api_validation(control_plane: ControlPlane) -> None:
    """Every helper writes objects the apiserver accepts, with the fields tests rely on."""
    cp = control_plane
    ns, node, driver = api.unique_ns("harness-h"), api.unique_ns("harness-h-node"), "csi.test.io"
    api.create_namespace(cp, ns, labels={"team": "a"}, spec_finalizers=["example.com/hold"])
    handle = "vol-1"
    vol = kubelet.csi_volume_name(driver, handle)
    kubelet.create_node(
        cp,
        node,
        volumes_in_use=[vol],
        volumes_attached=[vol],
        conditions=[api.condition("DiskPressure", "True", "KubeletHasDiskPressure")],
    )
    kubelet.set_node_ready(cp, node, "Unknown")
    kubelet.stale_lease(cp, node, age_seconds=600)
    storage.create_csidriver(cp, driver)
    kubelet.create_csinode(cp, node, drivers=[])
    pvc, pv = storage.create_bound_volume(cp, ns, "data", f"pv-{ns}", driver, handle)
    assert pvc["status"]["phase"] == pv["status"]["phase"] == "Bound"
    va = storage.create_volume_attachment(
        cp, None, node, f"pv-{ns}", driver, detach_error="timeout"
    )
    assert va["status"]["detachError"]["message"] == "timeout"
    pod = kubelet.create_pod(
        cp,
        ns,
        "db",
        node=node,
        containers=["db", "sidecar"],
        volumes=[kubelet.pvc_volume("data", "data")],
        finalizers=["example.com/keep"],
        host_pid=True,
        post_start=True,
    )
    kubelet.set_pod_status(cp, ns, "db", "Running", {"db": "terminated:137", "sidecar": "running"})
    api.create_event(cp, ns, pod, "FailedKillPod", "error killing pod: DeadlineExceeded", count=3)
    ext.create_validating_webhook(
        cp,
        api.unique_ns("harness-wh"),
        ns,
        "missing",
        [ext.webhook_rule(["UPDATE"], ["pods"])],
        namespace=ns,
    )
    crd = ext.create_crd(
        cp,
        "harness.terminating.test",
        "Widget",
        "widgets",
        conversion_webhook_service=(ns, "converter"),
        versions=["v1", "v1beta1"],
    )
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"

    node_obj = api.get(cp, f"/api/v1/nodes/{node}")
    conds = {c["type"]: c["status"] for c in node_obj["status"]["conditions"]}
    assert conds["Ready"] == "Unknown"
    assert conds["DiskPressure"] == "True"
    assert node_obj["status"]["volumesInUse"] == [vol]
    lease = api.get(cp, f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}")
    assert lease["spec"]["holderIdentity"] == node
    states = {
        s["name"]: s["state"]
        for s in api.get(cp, f"/api/v1/namespaces/{ns}/pods/db")["status"]["containerStatuses"]
    }
    assert states["db"]["terminated"]["exitCode"] == 137
    assert "running" in states["sidecar"]
    # The webhook has no backend and failurePolicy Fail: updates of pods in ns are refused.
    with pytest.raises(ApiError) as refused:
        api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/pods/db")
    assert refused.value.status == 500
    assert "failed calling webhook" in refused.value.body


def test_restart_apiserver_keeps_port_and_data(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = api.unique_ns("harness-restart")
    api.create_namespace(cp, ns, wait_for_service_account=False)
    server = cp.server
    cp.restart_apiserver()
    assert cp.server == server
    assert api.get(cp, f"/api/v1/namespaces/{ns}")["status"]["phase"] == "Active"


@pytest.mark.slow
def test_cli_up_reuses_and_down_stops(control_plane: ControlPlane, tmp_path: Path) -> None:
    state = tmp_path / "demo"

    def cli(*args: str) -> str:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.harness.controlplane",
                *args,
                "--state-dir",
                str(state),
                "--binaries-dir",
                str(control_plane.binaries_dir),
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    kubeconfig = cli("up")
    pids = (state / "controlplane.json").read_text()
    try:
        assert cli("up") == kubeconfig  # reused, not restarted
        assert (state / "controlplane.json").read_text() == pids
        out = control_plane.kubectl("get", "ns", "default", "-o", "name", kubeconfig=kubeconfig)
        assert out.stdout.strip() == "namespace/default"
    finally:
        cli("down")
    for pid in json.loads(pids)["pids"].values():
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid)


def _zombie(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"
