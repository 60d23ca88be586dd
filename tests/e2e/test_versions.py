"""What differs between the Kubernetes versions `make test-matrix` runs (docs/development.md),
asserted per version on the real server, with what the tool says on each.

- Ordered namespace deletion (KEP-5080, on by default since 1.33): the controller deletes the
  pods first and waits for them, the rest untouched, and says NamespaceContentRemaining=False
  while a pod remains; before 1.33 it deletes everything at once and names the pods as the
  content remaining. The tool lists the content itself and names the pod's blocker on both.
  While a pod held by a finalizer remains, 1.33+ writes every condition's "ok" variant ("All
  content successfully removed", kubernetes/kubernetes#138208): a pasted namespace is then not
  taken as empty (no /finalize of `kubernetes`); before 1.33 the condition names the finalizer.
- Pod generation (KEP-5067; DESIGN.md: 1.35+): the server bumps a deleted pod's
  metadata.generation and keeps the kubelet's status.observedGeneration; before, neither field
  exists and the tool's diagnosis is the one it gave before the fields existed.
"""

from __future__ import annotations

from pathlib import Path

from tests.harness import api, kubelet, scenarios
from tests.harness.cli import run_json
from tests.harness.controlplane import ControlPlane

ORDERED = (1, 33)  # ordered namespace deletion on by default
GENERATION = (1, 35)  # pods carry metadata.generation, bumped at deletion


def _cleanup(cp: ControlPlane, ns: str, pod: str, configmap: str) -> None:
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/configmaps/{configmap}")
    cp.kubectl("delete", "pod", "-n", ns, pod, "--force", "--grace-period=0", "--wait=false")


def test_namespace_deletion_order_and_what_the_tool_says(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = api.unique_ns("ver-order")
    api.create_namespace(cp, ns)
    api.create_configmap(cp, ns, "held", finalizers=["example.com/hold"])
    stuck = scenarios.pod_on_missing_node(cp, ns, grace_period=1)
    api.delete(cp, f"/api/v1/namespaces/{ns}")
    try:
        failed = api.wait_namespace_condition(cp, ns, "NamespaceDeletionContentFailure")
        assert "Resource=pods" in failed["message"]
        conditions = api.namespace_conditions(cp, ns)
        configmap = api.get(cp, f"/api/v1/namespaces/{ns}/configmaps/held")["metadata"]
        if cp.version >= ORDERED:
            # pods first: the ConfigMap is not even deleted while the pod remains, and the
            # controller's "content remaining" says nothing of the pod
            assert "deletionTimestamp" not in configmap
            assert conditions["NamespaceContentRemaining"]["status"] == "False"
        else:
            assert "deletionTimestamp" in configmap
            remaining = conditions["NamespaceContentRemaining"]
            assert (remaining["status"], remaining["reason"]) == ("True", "SomeResourcesRemain")
            assert "pods" in remaining["message"]
        (item,) = run_json("ns", ns, kubeconfig=cp.kubeconfig_path)["items"]
        assert item["blockers"][0]["type"] == "node-missing", item["blockers"]
        assert stuck.name in item["blockers"][0]["summary"]
        left = {r["resource"]: r["count"] for r in item["remaining"]}
        assert left.get("pods") == 1 and left.get("configmaps", 0) >= 1, left
    finally:
        _cleanup(cp, ns, stuck.name, "held")


def test_content_removed_while_a_pod_remains_and_a_pasted_namespace(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    ns = api.unique_ns("ver-removed")
    api.create_namespace(cp, ns)
    held = scenarios.pod_with_finalizer(cp, ns)  # deleted already; only its finalizer holds it
    api.delete(cp, f"/api/v1/namespaces/{ns}")
    try:
        if cp.version >= ORDERED:
            # the pods-first pass returns early and writes the "ok" variants without counting
            removed = api.wait_for(
                lambda: api.namespace_conditions(cp, ns).get("NamespaceContentRemaining"),
                timeout=90,
                message="the controller's first pass",
            )
            assert (removed["status"], removed["reason"]) == ("False", "ContentRemoved")
            assert api.get(cp, scenarios.pod_path(ns, held.name))  # yet the pod is there
        else:
            said = api.wait_namespace_condition(cp, ns, "NamespaceFinalizersRemaining")
            assert "example.com/drain in 1 resource instances" in said["message"]
        # live: the tool lists the pods itself and names what holds the one left
        (item,) = run_json("ns", ns, kubeconfig=cp.kubeconfig_path)["items"]
        assert item["blockers"][0]["type"] == "finalizer", item["blockers"]
        assert "example.com/drain" in item["blockers"][0]["summary"]
        named = [e.get("object", {}).get("name") for e in item["blockers"][0]["evidence"]]
        assert held.name in named, item["blockers"][0]
        # pasted: `kubectl get ns -o json` alone, as people paste it
        pasted = tmp_path / "ns.json"
        pasted.write_text(cp.kubectl("get", "namespace", ns, "-o", "json").stdout)
        (item,) = run_json("ns", "--from-file", str(pasted), kubeconfig=cp.kubeconfig_path)["items"]
        summaries = [b["summary"] for b in item["blockers"]]
        assert not any("no content" in s for s in summaries), summaries
        destructive = [r for b in item["blockers"] for r in b["remedy"] if r.get("destructive")]
        assert destructive == [], destructive
        if cp.version >= ORDERED:
            assert summaries == ["finalizer kubernetes, content unseen: pods may remain"]
        else:
            assert any("example.com/drain" in s for s in summaries), summaries
    finally:
        api.remove_finalizers(cp, scenarios.pod_path(ns, held.name))


def test_pod_generation_and_what_the_tool_says(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = api.unique_ns("ver-gen")
    api.create_namespace(cp, ns)
    node = f"{ns}-node"
    kubelet.create_node(cp, node, ready="True")
    kubelet.create_pod(cp, ns, "web-0", node=node, grace_period=1)
    kubelet.set_pod_status(cp, ns, "web-0")
    # the kubelet's word that it synced generation 1 (a server before pod generation drops it)
    status = {"status": {"observedGeneration": 1}}
    cp.api("PATCH", f"/api/v1/namespaces/{ns}/pods/web-0/status", status, api.MERGE)
    scenarios.wait_past_deadline(api.delete(cp, f"/api/v1/namespaces/{ns}/pods/web-0"))
    pod = api.get(cp, f"/api/v1/namespaces/{ns}/pods/web-0")
    try:
        (item,) = run_json("pods", "-n", ns, kubeconfig=cp.kubeconfig_path)["items"]
        fields = [e.get("fields") or {} for b in item["blockers"] for e in b["evidence"]]
        seen = [f for f in fields if "observedGeneration" in f]
        if cp.version >= GENERATION:
            assert pod["metadata"]["generation"] == 2  # 1 at creation, bumped at deletion
            assert pod["status"]["observedGeneration"] == 1  # what set_pod_status synced
            assert seen == [{"generation": 2, "observedGeneration": 1}], item["blockers"]
        else:
            assert "generation" not in pod["metadata"]
            assert "observedGeneration" not in pod["status"]
            assert seen == [], item["blockers"]
    finally:
        cp.kubectl("delete", "pod", "-n", ns, "web-0", "--force", "--grace-period=0")
