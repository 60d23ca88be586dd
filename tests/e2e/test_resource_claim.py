"""A pod whose DRA claim the kubelet cannot unprepare, on the real control plane: the claim is
allocated and reserved for the pod (written as the scheduler and the resourceclaim controller
would), the driver's only ResourceSlice is on another node (the kubelet deleted the one of the
pod's node when the plugin went away), and the pod's containers exited with phase Running."""

from __future__ import annotations

from typing import Any

from tests.harness import scenarios
from tests.harness.api import MERGE, create_namespace, delete, get, unique_ns
from tests.harness.cli import run_cli, run_json
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import create_node, pod_body, set_pod_status

DRA = "/apis/resource.k8s.io/v1"


def _claim(cp: ControlPlane, ns: str, pod: dict[str, Any], node: str, driver: str) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "gpu", "namespace": ns},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": driver}}]}
        },
    }
    cp.api("POST", f"{DRA}/namespaces/{ns}/resourceclaims", body)
    m = pod["metadata"]
    result = {"request": "gpu", "driver": driver, "pool": node, "device": "gpu-0"}
    status = {
        "allocation": {"devices": {"results": [result]}},
        "reservedFor": [{"resource": "pods", "name": m["name"], "uid": m["uid"]}],
    }
    path = f"{DRA}/namespaces/{ns}/resourceclaims/gpu/status"
    cp.api("PATCH", path, {"status": status}, MERGE)


def _slice(cp: ControlPlane, node: str, driver: str) -> None:
    spec = {
        "driver": driver,
        "nodeName": node,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}],
    }
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "spec": spec}
    body["metadata"] = {"name": f"{node}-{driver}"}
    cp.api("POST", f"{DRA}/resourceslices", body)


def test_a_claim_the_kubelet_cannot_unprepare(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = unique_ns("dra")
    node, driver = f"{ns}-gpu", f"{ns}.gpu.example.com"
    create_namespace(cp, ns)
    create_node(cp, node)
    create_node(cp, f"{node}-2")
    body = pod_body("train-0", node=node, grace_period=1)
    body["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu"}]
    body["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    pod = cp.api("POST", f"/api/v1/namespaces/{ns}/pods", body)
    _claim(cp, ns, pod, node, driver)
    _slice(cp, f"{node}-2", driver)  # registered elsewhere, no longer on the pod's node
    set_pod_status(cp, ns, "train-0", "Running", {"app": "terminated:0:Completed"})
    scenarios.wait_past_deadline(delete(cp, scenarios.pod_path(ns, "train-0")))
    assert get(cp, f"{DRA}/namespaces/{ns}/resourceclaims/gpu")["status"]["reservedFor"]

    [item] = run_json("pods", "-n", ns, kubeconfig=cp.kubeconfig_path)["items"]
    assert [b["type"] for b in item["blockers"]] == ["resource-claim"]
    main = item["blockers"][0]
    assert main["summary"] == (
        f"DRA driver {driver} not registered on {node}: claim gpu cannot be unprepared"
    )
    fields = [e.get("fields", {}) for e in main["evidence"]]
    assert {"driver": driver, "nodeName": node, "resourceSlices": 0} in fields
    assert {"phase": "Running"} in fields
    assert main["remedy"][-1]["destructive"] and "drain" in main["remedy"][-1]["when"]

    summary = run_cli("pods", "-n", ns, "--summary", kubeconfig=cp.kubeconfig_path)
    assert f"1 pod: DRA driver {driver} not registered on the node" in summary.stdout
    fix = run_cli("fix", "pods", "-n", ns, "train-0", kubeconfig=cp.kubeconfig_path)
    assert "unprepare the claim's devices" in fix.stdout + fix.stderr
