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


def said(found: list[JSON]) -> str:
    return json.dumps(found)


def test_the_node_controllers_taints_did_not_evict_the_csi_node_plugin(tmp_path: Path) -> None:
    found = blockers(tmp_path, CONTROLLER_TAINTS)
    assert "node.kubernetes.io/unreachable" not in said(found), found
    assert "node.kubernetes.io/not-ready" not in said(found), found
    assert all("evicted" not in b["summary"] for b in found), found
    commands = [r.get("command") or "" for b in found for r in b.get("remedy") or []]
    assert not any(c.startswith("kubectl taint") for c in commands), commands


def test_beside_them_the_operators_taint_is_the_one_named(tmp_path: Path) -> None:
    found = blockers(tmp_path, [*CONTROLLER_TAINTS, MAINTENANCE])
    assert found[0]["summary"] == (
        "CSI driver ebs.csi.aws.com evicted from worker-4 by taint maintenance=true:NoExecute"
    )
    assert found[0]["remedy"][0]["command"] == (
        "kubectl taint nodes worker-4 maintenance=true:NoExecute-"
    )
    assert "node.kubernetes.io/unreachable" not in said(found), found
