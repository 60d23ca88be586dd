"""A case from the corpus (tests/fixtures/corpus) replayed on the real control plane.

kubernetes#64002's `fleet-system`: a namespace held by Rancher's
`controller.cattle.io/namespace-auth` finalizer after Rancher's agent was gone. The real API
server and namespace controller play it out; the plugin must name Rancher as the owner, judge it
by its leader-election Lease, and give the same answer from `kubectl get ns -o json` saved to a
file (`--from-file`, the way the corpus is run), where the Lease cannot be checked.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.api import (
    JSON,
    MERGE,
    create_namespace,
    delete,
    get,
    micro_time,
    now,
    unique_ns,
    wait_for,
)
from tests.harness.cli import run_json
from tests.harness.controlplane import ApiError, ControlPlane

pytestmark = pytest.mark.e2e

RANCHER_FINALIZER = "controller.cattle.io/namespace-auth"
RANCHER_LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/cattle-controllers"


@pytest.fixture
def rancher_gone(control_plane: ControlPlane) -> Iterator[str]:
    """A namespace Rancher put its finalizer on, deleted after Rancher stopped: its
    leader-election Lease was last renewed ten minutes ago."""
    cp = control_plane
    ns = unique_ns("fleet-system")
    create_namespace(cp, ns, finalizers=[RANCHER_FINALIZER], wait_for_service_account=False)
    lease: JSON = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "cattle-controllers", "namespace": "kube-system"},
        "spec": {
            "holderIdentity": "rancher-7d9f8c6b5-x2x4k",
            "leaseDurationSeconds": 45,
            "renewTime": micro_time(now(-600)),
        },
    }
    cp.api("POST", RANCHER_LEASE.rsplit("/", 1)[0], lease)
    delete(cp, f"/api/v1/namespaces/{ns}")
    try:
        # the namespace controller finishes its part: only Rancher's finalizer is left
        wait_for(
            lambda: not (get(cp, f"/api/v1/namespaces/{ns}").get("spec") or {}).get("finalizers"),
            60.0,
            message=f"the namespace controller to finish with {ns}",
        )
        yield ns
    finally:
        with contextlib.suppress(ApiError):
            cp.api("DELETE", RANCHER_LEASE)
        with contextlib.suppress(ApiError):
            cp.api("PATCH", f"/api/v1/namespaces/{ns}", {"metadata": {"finalizers": None}}, MERGE)


def main_blocker(data: JSON) -> JSON:
    (item,) = data["items"]
    blocker: JSON = item["blockers"][0]
    return blocker


def test_rancher_finalizer_is_owned_by_rancher_judged_by_its_lease(
    control_plane: ControlPlane, rancher_gone: str, tmp_path: Path
) -> None:
    ns = rancher_gone
    live = main_blocker(run_json("ns", ns, kubeconfig=control_plane.kubeconfig_path))
    assert live["type"] == "namespace-finalizer"
    assert live["summary"] == f"finalizer {RANCHER_FINALIZER} (owner: Rancher, not running)"
    said = "\n".join(e["message"] for e in live["evidence"])
    assert "removed by Rancher (namespace-auth handler)" in said
    assert "it runs as Deployment cattle-system/cattle-cluster-agent" in said
    assert "leader-election lease not renewed for 10m" in said
    assert live["remedy"][0]["description"].startswith("restore Rancher's agent")
    assert live["remedy"][-1]["destructive"]

    # the corpus way: the namespace alone, saved with kubectl, explained offline
    saved = tmp_path / f"{ns}.json"
    saved.write_text(json.dumps(get(control_plane, f"/api/v1/namespaces/{ns}")))
    offline = main_blocker(run_json("ns", "--from-file", str(saved), "--now", kubeconfig=""))
    assert offline["type"] == "namespace-finalizer"
    assert offline["summary"] == f"finalizer {RANCHER_FINALIZER} (owner: Rancher, state unknown)"
