"""The catalogue's generic reader on the real control plane: a Service held by the service
controller's finalizer, whose own DeleteLoadBalancerFailed event (cloud-provider
controllers/service/controller.go) names why; the same Service pasted without its finalizers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness.api import create_event, create_namespace, delete, remove_finalizers, unique_ns
from tests.harness.cli import run_json
from tests.harness.controlplane import ControlPlane

pytestmark = pytest.mark.e2e

LB_CLEANUP = "service.kubernetes.io/load-balancer-cleanup"
CLOUD_ERROR = "Error deleting load balancer: DependencyViolation: the load balancer has a dependent"


def item_named(document: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        i for i in document["items"] if i["kind"] == kind and i["name"] == name
    )
    return found


def test_a_service_whose_load_balancer_cannot_be_deleted(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    ns = unique_ns("lb")
    create_namespace(cp, ns)
    path = f"/api/v1/namespaces/{ns}/services/web"
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": ns, "finalizers": [LB_CLEANUP]},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"app": "web"}},
    }
    made = cp.api("POST", f"/api/v1/namespaces/{ns}/services", service)
    try:
        delete(cp, path)  # no cloud controller here: the finalizer stays, as when it fails
        create_event(
            cp, ns, made, "DeleteLoadBalancerFailed", CLOUD_ERROR, component="service-controller"
        )
        item = item_named(
            run_json("all", "-n", ns, kubeconfig=cp.kubeconfig_path), "Service", "web"
        )
        main = item["blockers"][0]
        assert main["type"] == "finalizer"
        assert main["summary"] == (
            f"finalizer {LB_CLEANUP}: the cloud load balancer cannot be deleted "
            "(DeleteLoadBalancerFailed)"
        )
        assert main["confidence"] == "certain"
        assert CLOUD_ERROR in json.dumps(main["evidence"])

        # pasted without its finalizers and without the event: "not in the file", likely the
        # load balancer's cleanup (the file shows type LoadBalancer), never "should complete"
        obj = cp.api("GET", path)  # as `kubectl get -o json` prints it
        obj["metadata"].pop("finalizers", None)
        paste = tmp_path / "service.json"
        paste.write_text(json.dumps(obj))
        thin = item_named(
            run_json("all", "--from-file", str(paste), kubeconfig=cp.kubeconfig_path),
            "Service",
            "web",
        )
        said = thin["blockers"][0]
        assert (said["type"], said["confidence"]) == ("finalizer", "likely")
        assert LB_CLEANUP in said["summary"] and "not in the file" in said["summary"]
        assert "should complete" not in json.dumps(thin)
    finally:
        remove_finalizers(cp, path)
