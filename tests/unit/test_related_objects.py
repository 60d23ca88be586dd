"""Files that carry related objects beside the stuck one, or in part (issue 32): a Node pasted
for its taints, a chain namespace -> claim -> pod -> node, the namespace controller's own
words. Each file is made by hand in tests/fixtures/related after what people paste; its
`--explain` text is a golden in tests/golden/related. Run as a user runs them (no `--now`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.fix.plan import Proposal, Refusal, plan
from kubectl_terminating.resources import PVCS
from kubectl_terminating.snapshot import load
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import FIXTURES, run_captured
from tests.unit.golden import assert_golden

RELATED = FIXTURES / "related"
JSON = dict[str, Any]


def explained(name: str, kind: str = "pods") -> JSON:
    """The file's first listed terminating object as `-o json` gives it, its `--explain` text
    checked against the golden related/<name>.txt."""
    path = str(RELATED / f"{name}.json")
    code, text, err = run_captured(kind, from_file=path, explain=True, all_namespaces=True)
    assert code == 0, err
    assert "Traceback" not in err
    assert "none found" not in text and "Remaining:     nothing" not in text
    assert_golden(f"related/{name}.txt", text)
    code, out, err = run_captured(kind, from_file=path, output="json", all_namespaces=True)
    assert code == 0, err
    item: JSON = json.loads(out)["items"][0]
    assert item["blockers"], "a terminating object always ends with a blocker"
    return item


def main(item: JSON) -> JSON:
    blocker: JSON = item["blockers"][0]
    return blocker


# -- 1. a Node pasted without status -----------------------------------------------------------


def test_node_pasted_without_status_is_unknown_not_never_ready() -> None:
    item = explained("pod-node-without-status")
    assert all(b["type"] != "node-not-ready" for b in item["blockers"])
    assert "never reported Ready" not in json.dumps(item)
    assert (
        "health of node worker-9 unknown: the file has the Node without status"
        in (item["unknowns"])
    )
    assert main(item)["type"] == "teardown-unfinished"  # no witness of the node speaks
    assert main(item)["summary"] == (
        "containers exited; node worker-9 not checked (the file has the Node without status); "
        "kubelet's teardown unfinished, which step is unknown"
    )


# -- 5. the volumes a teardown headline waits on -----------------------------------------------


def test_teardown_headline_names_the_volumes_from_the_pod_spec() -> None:
    item = explained("pod-volumes-node-not-checked")
    assert main(item)["type"] == "volumes-not-reclaimed"
    assert main(item)["summary"] == (
        "containers exited; volumes data (PVC data-db-0, block), secrets "
        "(CSI secrets-store.csi.k8s.io) to tear down; node db-node-7 not checked "
        "(not in the snapshot)"
    )


# -- 2. taints are evidence --------------------------------------------------------------------


def test_csi_node_plugin_evicted_by_a_taint_is_the_cause() -> None:
    """`kubectl taint node worker-4 maintenance=true:NoExecute` evicted the EBS node plugin with
    the workloads: the pod, its node's taint, the VolumeAttachment and its attacher say so
    without a kubelet event; the replacement pod's Multi-Attach event is evidence too."""
    item = explained("pod-csi-node-plugin-evicted-by-taint")
    blocker = main(item)
    assert blocker["type"] == "csi-driver-missing"
    assert blocker["summary"] == (
        "CSI driver ebs.csi.aws.com evicted from worker-4 by taint maintenance=true:NoExecute"
    )
    said = json.dumps(blocker)
    assert "VolumeAttachment" in said and "Multi-Attach error for volume" in said
    assert (
        blocker["remedy"][0]["command"]
        == "kubectl taint nodes worker-4 maintenance=true:NoExecute-"
    )
    assert not blocker["remedy"][0].get("destructive")


def _with_csinode(tmp_path: Path, drivers: list[JSON]) -> JSON:
    """The taint fixture with the node's CSINode listing `drivers`, as `pods -o json`."""
    data = json.loads((RELATED / "pod-csi-node-plugin-evicted-by-taint.json").read_text())
    data["items"].append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "worker-4"},
            "spec": {"drivers": drivers},
        }
    )
    path = tmp_path / "with-csinode.json"
    path.write_text(json.dumps(data))
    code, out, err = run_captured("pods", from_file=str(path), output="json", all_namespaces=True)
    assert code == 0, err
    (item,) = json.loads(out)["items"]
    return dict(item)


def test_csi_driver_registered_on_the_node_tolerates_the_taint(tmp_path: Path) -> None:
    """The node's CSINode lists the driver: its node plugin runs despite the taint."""
    item = _with_csinode(tmp_path, [{"name": "ebs.csi.aws.com", "nodeID": "i-0a1b2c3d4e5f"}])
    assert all("taint" not in b["summary"] for b in item["blockers"])


def test_csi_driver_gone_from_the_csinode_of_a_tainted_node_names_the_taint(
    tmp_path: Path,
) -> None:
    """The CSINode proves the driver is gone from the node; the taint says why."""
    item = _with_csinode(tmp_path, [])
    blocker = main(item)
    assert blocker["summary"] == (
        "CSI driver ebs.csi.aws.com evicted from worker-4 by taint maintenance=true:NoExecute"
    )
    kinds = [e.get("object", {}).get("kind") for e in blocker["evidence"]]
    assert kinds[:2] == ["CSINode", "Node"]


def test_cni_agent_evicted_by_a_taint_is_said_on_the_network_teardown() -> None:
    item = explained("pod-cni-agent-evicted-by-taint")
    blocker = main(item)
    assert blocker["type"] == "network-teardown"
    said = json.dumps(blocker["evidence"])
    assert "taint maintenance=true:NoExecute" in said and "agent of CNI plugin calico" in said
    assert (
        blocker["remedy"][0]["command"]
        == "kubectl taint nodes worker-6 maintenance=true:NoExecute-"
    )


# -- 3. chains: namespace -> claim -> pod -> node ----------------------------------------------


def test_claim_held_by_pvc_protection_follows_to_its_pod_and_node() -> None:
    """The claim's headline is what holds the pod that uses it, not only "in use by pod"."""
    item = next(
        i
        for i in json.loads(
            run_captured(
                "all",
                from_file=str(RELATED / "namespace-claim-pod-node-chain.json"),
                output="json",
                all_namespaces=True,
            )[1]
        )["items"]
        if i["kind"] == "PersistentVolumeClaim"
    )
    assert main(item)["type"] == "node-not-ready"
    assert main(item)["summary"].startswith("pod renderer-0: node pool-b-2 NotReady for")
    assert [b["type"] for b in item["blockers"]][1] == "protection-in-use"


def test_namespace_chain_is_not_cut_at_the_pvc_protection_finalizer() -> None:
    item = explained("namespace-claim-pod-node-chain", "namespaces")
    assert main(item)["type"] == "node-not-ready"
    assert main(item)["summary"].startswith("pod renderer-0: node pool-b-2 NotReady")
    # the controller's count of pvc-protection is the claim the file shows: said once
    assert not any("state unknown" in b["summary"] for b in item["blockers"])
    assert [b["type"] for b in item["blockers"]].count("finalizer") == 0


# -- 4. "unexpected items still remain": content left, not a rejected delete -------------------


def test_items_still_remain_is_content_left_not_a_delete_failure() -> None:
    item = explained("namespace-content-still-there", "namespaces")
    blocker = main(item)
    assert blocker["type"] == "content-remaining"
    assert blocker["summary"] == "pods (1) still there after the controller deleted them"
    assert blocker["remedy"][0]["command"] == "kubectl terminating pods -n ingest --explain"
    said = json.dumps(item["blockers"])
    assert "rejects the deletes" not in said
    assert all(b["type"] != "namespace-condition" for b in item["blockers"])


def test_items_still_remain_is_followed_to_the_pods() -> None:
    item = explained("namespace-pods-still-there", "namespaces")
    assert main(item)["type"] == "node-not-ready"
    assert main(item)["summary"].startswith("pod collector-5d8f9c7b6-h4k2p: node edge-3 NotReady")
    assert "rejects the deletes" not in json.dumps(item["blockers"])


def test_fix_plans_a_claims_raised_pod_blockers_under_the_pod() -> None:
    """The claim's raised node-not-ready is the pod's: `fix` plans it under the pod (a child of
    the claim), never as a taint or refusal of the claim itself."""
    loaded = load(str(RELATED / "namespace-claim-pod-node-chain.json"))
    claim = next(o for o in loaded.objects if o["kind"] == "PersistentVolumeClaim")
    later = datetime(2026, 3, 6, 18, 0, tzinfo=timezone.utc)  # the file's deletions are past
    view = StaticView(loaded.objects, later, unreadable=loaded.unreadable)
    finding = explain_object(claim, PVCS, view)
    assert [c.name for c in finding.children] == ["renderer-0"]
    sections = plan([finding])
    claim_steps = [s for s in sections[0].steps if isinstance(s, Proposal | Refusal)]
    assert all(s.blocker.type == "protection-in-use" for s in claim_steps)
    assert sections[1].subject.name == "renderer-0"


def test_a_rejected_delete_beside_items_still_there_keeps_its_own_blocker(tmp_path: Path) -> None:
    """The controller aggregates its errors ("[a, b]"): a webhook's rejection beside pods still
    there is still a rejected delete, headlined by the webhook, not by the pods' message."""
    ns = json.loads((RELATED / "namespace-content-still-there.json").read_text())
    failure = next(
        c for c in ns["status"]["conditions"] if c["type"] == "NamespaceDeletionContentFailure"
    )
    failure["message"] = (
        "Failed to delete all resource types, 2 remaining: [unexpected items still remain in "
        "namespace: ingest for gvr: /v1, Resource=pods, Internal error occurred: failed calling "
        'webhook "validate.widgets.example.com": failed to call webhook: Post '
        '"https://widgets-webhook.ingest.svc:443/validate?timeout=10s": service '
        '"widgets-webhook" not found]'
    )
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(ns))
    code, out, err = run_captured("namespaces", from_file=str(path), output="json")
    assert code == 0, err
    (item,) = json.loads(out)["items"]
    summaries = {b["type"]: b["summary"] for b in item["blockers"]}
    assert "validate.widgets.example.com" in summaries["webhook"]
    assert summaries["namespace-condition"] == (
        "content deletion failed: webhook validate.widgets.example.com"
    )
    assert (
        summaries["content-remaining"] == "pods (1) still there after the controller deleted them"
    )


# -- a kill that timed out in the runtime, no container status shown (METR/vivaria#537) -----


def test_a_sandbox_kill_that_timed_out_is_the_runtime_not_volume_teardown() -> None:
    blocker = main(explained("pod-sandbox-kill-timed-out"))
    assert blocker["type"] == "runtime-unavailable"
    assert blocker["summary"] == (
        "container runtime on worker-1 timed out stopping the pod (FailedKillPod: DeadlineExceeded)"
    )


# -- the service controller's own word (catalogue load-balancer-not-deleted) ---------------------


def test_a_service_whose_load_balancer_cannot_be_deleted_names_it() -> None:
    """A Service held by load-balancer-cleanup, its DeleteLoadBalancerFailed event pasted as
    `kubectl describe` shows it (no uid): the headline names the finalizer and the failing
    step; likely, not certain, in a file without Leases (whether its owner runs could not be
    read: live, test_catalogue_readings.py sees it certain)."""
    item = explained("service-load-balancer-delete-failed", "all")
    blocker = main(item)
    assert blocker["type"] == "finalizer"
    assert blocker["summary"] == (
        "finalizer service.kubernetes.io/load-balancer-cleanup: the cloud load balancer cannot "
        "be deleted (DeleteLoadBalancerFailed)"
    )
    assert blocker["confidence"] == "likely"
    assert "DependencyViolation" in json.dumps(blocker["evidence"])
