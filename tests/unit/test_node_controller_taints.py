"""The node lifecycle controller's own taints (`node.kubernetes.io/unreachable` and `not-ready`,
NoExecute and NoSchedule) are tolerated by every daemon pod: they never evicted a CSI node
plugin, and the remedy is never to remove them (issue 40, item 7). The fixture is the EBS
node plugin evicted by `maintenance=true:NoExecute` (tests/unit/test_related_objects.py), its
node's taints replaced by what the controller writes once the kubelet falls silent
(pkg/controller/nodelifecycle: UnreachableTaintTemplate, and the NoSchedule taint of the
Ready condition)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubectl_terminating.explain.pod_node import evicting_taints
from tests.unit.builders import FIXTURES, run_captured

JSON = dict[str, Any]
FIXTURE = FIXTURES / "related" / "pod-csi-node-plugin-evicted-by-taint.json"
SINCE = "2026-05-01T11:00:00Z"
CONTROLLER_TAINTS = [
    {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": SINCE},
    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": SINCE},
    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute", "timeAdded": SINCE},
]
MAINTENANCE = {"key": "maintenance", "value": "true", "effect": "NoExecute"}


def blockers(tmp_path: Path, taints: list[JSON]) -> list[JSON]:
    """`pods -A -o json` of the fixture with worker-4 tainted so; the pod's blockers."""
    data = json.loads(FIXTURE.read_text())
    for item in data["items"]:
        if item["kind"] == "Node":
            item["spec"]["taints"] = taints
    path = tmp_path / "tainted.json"
    path.write_text(json.dumps(data))
    code, out, err = run_captured("pods", from_file=str(path), output="json", all_namespaces=True)
    assert code == 0 and "Traceback" not in err, err
    (item,) = json.loads(out)["items"]
    found: list[JSON] = item["blockers"]
    return found


def removals(found: list[JSON]) -> list[str]:
    """The remedies' commands that lift a taint (`kubectl taint nodes N KEY...-`)."""
    commands = [r.get("command") or "" for b in found for r in b.get("remedy") or []]
    return [c for c in commands if c.startswith("kubectl taint") and c.endswith("-")]


def test_the_node_controllers_taints_did_not_evict_the_csi_node_plugin(tmp_path: Path) -> None:
    """They say the node is down (evidence of that, kept); never that they evicted the driver,
    never a step that lifts them."""
    found = blockers(tmp_path, CONTROLLER_TAINTS)
    assert all("evicted" not in b["summary"] for b in found), found
    assert all("by taint node.kubernetes.io" not in json.dumps(b) for b in found), found
    assert removals(found) == [], found


def test_beside_them_only_the_operators_taint_evicts() -> None:
    """Since the node controller's taints make the node down (node-not-ready, issue 37 class 6),
    the pod's explanation no longer reaches the eviction check on such a node: the check itself
    is held to it, for a node whose taints outlive its recovery and for the CNI agents too."""
    node = {"kind": "Node", "spec": {"taints": [*CONTROLLER_TAINTS, MAINTENANCE]}}
    assert evicting_taints(node) == [MAINTENANCE]
    assert evicting_taints({"kind": "Node", "spec": {"taints": CONTROLLER_TAINTS}}) == []
