"""Issue 37 on the real control plane: what a thin view proves. A pod the node controller
marked NodeLost on a Node whose status nobody wrote (class 2), and a kubelet's DRA event about a
pod whose claim objects are absent (class 3)."""

from __future__ import annotations

from typing import Any

from tests.harness import scenarios
from tests.harness.api import create_event, create_namespace, delete, get, unique_ns
from tests.harness.cli import run_json
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import create_node, pod_body, set_pod_status

JSON = dict[str, Any]


def _main(cp: ControlPlane, ns: str) -> JSON:
    [item] = run_json("pods", "-n", ns, kubeconfig=cp.kubeconfig_path)["items"]
    blocker: JSON = item["blockers"][0]
    return blocker


def test_a_pod_marked_node_lost_on_a_node_without_status(control_plane: ControlPlane) -> None:
    """The Node object is created and its status never written (no kubelet, no Lease); the pod's
    status is written as the node controller's SetPodTerminationReason writes it. The pod's
    own word joins the Node's: node-not-ready, likely, NodeLost in its evidence."""
    cp = control_plane
    ns = unique_ns("lost")
    node = f"{ns}-node"
    create_namespace(cp, ns)
    bare = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}
    cp.api("POST", "/api/v1/nodes", bare)  # its status never written
    cp.api("POST", f"/api/v1/namespaces/{ns}/pods", pod_body("ingest-0", node=node, grace_period=1))
    set_pod_status(
        cp,
        ns,
        "ingest-0",
        "Running",
        reason="NodeLost",
        message=f"Node {node} which was running pod ingest-0 is unresponsive",
    )
    scenarios.wait_past_deadline(delete(cp, scenarios.pod_path(ns, "ingest-0")))
    assert "conditions" not in get(cp, f"/api/v1/nodes/{node}").get("status", {})

    main = _main(cp, ns)
    assert main["type"] == "node-not-ready"
    assert main["confidence"] == "likely"
    assert "NodeLost" in main["confidenceBasis"]
    said = [e["message"] for e in main["evidence"]]
    assert any(m.startswith("status.reason NodeLost: Node ") for m in said), said


DRA_MISSING = (
    "Failed to prepare dynamic resources: prepare dynamic resources: failed to get gRPC client "
    "for driver {d}: plugin name {d} not found in the list of registered DRA plugins"
)


def test_a_dra_event_names_the_driver_without_the_claim(control_plane: ControlPlane) -> None:
    """The pod names a claim that does not exist (no ResourceClaim, no ResourceSlice); the
    kubelet's FailedPrepareDynamicResources event alone names the type and the driver."""
    cp = control_plane
    ns = unique_ns("draev")
    node, driver = f"{ns}-gpu", f"{ns}.gpu.example.com"
    create_namespace(cp, ns)
    create_node(cp, node)
    body = pod_body("train-0", node=node, grace_period=1)
    body["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu"}]
    body["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    pod = cp.api("POST", f"/api/v1/namespaces/{ns}/pods", body)
    set_pod_status(cp, ns, "train-0", "Pending", {"app": "waiting:ContainerCreating"})
    create_event(
        cp, ns, pod, "FailedPrepareDynamicResources", DRA_MISSING.format(d=driver), host=node
    )
    scenarios.wait_past_deadline(delete(cp, scenarios.pod_path(ns, "train-0")))

    main = _main(cp, ns)
    assert main["type"] == "resource-claim"
    assert main["summary"] == (
        f"DRA driver {driver} not registered on {node}: the pod's claims cannot be unprepared"
    )
    assert main["confidence"] == "likely"
