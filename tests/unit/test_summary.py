"""Stuck objects grouped by cause (an outage: many pods, few causes), over the pod fixtures.

Each pod is explained by the real explainers over its own static view of the cluster; the
summary is then a pure function of the findings. UPDATE_GOLDENS=1 rewrites the goldens.
"""

from __future__ import annotations

import copy
import json

import pytest

from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import Finding
from kubectl_terminating.render.structured import list_document
from kubectl_terminating.render.summary import summary_text
from kubectl_terminating.summary import group_by_cause
from tests.unit.builders import explain_pod_among as explained
from tests.unit.builders import healthy_cluster, pod_fixture
from tests.unit.golden import assert_golden
from tests.unit.test_render_pods import node_not_ready, renamed, volumes_stuck


def uid(index: int) -> str:
    return f"00000000-0000-4000-8000-{index:012d}"


def on_dead_node(index: int, node: str) -> Finding:
    """Like node_not_ready's api-0, on `node` (Ready=Unknown, Lease stale)."""
    base = node_not_ready()
    assert base.main_blocker is not None and base.main_blocker.type == "node-not-ready"
    pod = renamed(pod_fixture("pod-web-0"), f"web-{index}", uid(index))
    pod["spec"]["nodeName"] = node
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    dead = pod_fixture("node-worker-1")
    dead["metadata"]["name"] = node
    dead["status"]["volumesInUse"] = dead["status"]["volumesAttached"] = []
    for condition in dead["status"]["conditions"]:
        condition.update(status="Unknown", reason="NodeStatusUnknown")
    return explained(pod, [dead, pod_fixture("namespace-shop")])


def on_missing_node(index: int, node: str) -> Finding:
    pod = renamed(pod_fixture("pod-web-0"), f"cache-{index}", uid(index))
    pod["spec"]["nodeName"] = node
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    return explained(pod, [*healthy_cluster(), pod_fixture("namespace-shop")])


def held_by(index: int, finalizer: str) -> Finding:
    """The kubelet confirmed the deletion; only the finalizer holds the pod."""
    pod = renamed(pod_fixture("pod-web-0"), f"job-{index}", uid(index))
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    pod["metadata"].update(finalizers=[finalizer], deletionGracePeriodSeconds=0)
    return explained(pod, healthy_cluster())


@pytest.fixture(scope="module")
def outage() -> list[Finding]:
    """45 pods on 12 NotReady nodes, 3 on 2 deleted nodes, 4 + 2 held by two finalizers and
    one whose CSI driver was uninstalled."""
    found = [on_dead_node(i, f"zone-b-{i % 12}") for i in range(45)]
    found += [on_missing_node(100 + i, f"gone-{i % 2}") for i in range(3)]
    found += [held_by(200 + i, "example.com/drain") for i in range(4)]
    found += [held_by(300 + i, "example.com/archive") for i in range(2)]
    found.append(copy.deepcopy(volumes_stuck()))
    return found


def test_each_pod_counts_once_under_its_main_cause(outage: list[Finding]) -> None:
    groups = group_by_cause(outage)
    assert sum(g.count for g in groups) == len(outage)
    rows = [(g.count, g.type, g.subject_kind, g.subjects) for g in groups]
    nodes = tuple(f"zone-b-{i}" for i in range(12))
    assert rows == [
        (45, "node-not-ready", "Node", nodes),
        (4, "finalizer", "finalizer", ("example.com/drain",)),
        (3, "node-missing", "Node", ("gone-0", "gone-1")),
        (2, "finalizer", "finalizer", ("example.com/archive",)),
        (1, "csi-driver-missing", "CSIDriver", ("ebs.csi.aws.com",)),
    ]


def test_summary_lines(outage: list[Finding]) -> None:
    text = summary_text(outage)
    assert text.splitlines()[:2] == [
        "Summary: 55 pods, 5 causes",
        "45 pods: node NotReady (12 nodes: zone-b-0, zone-b-1 ... zone-b-11)",
    ]
    assert "1 pod: CSI driver ebs.csi.aws.com not installed or not running" in text
    assert "4 pods: finalizer example.com/drain" in text
    assert_golden("summary/outage.txt", text)


def test_json_summary_block(outage: list[Finding]) -> None:
    summary = list_document(outage, [], json_extras)["summary"]
    assert [g["count"] for g in summary] == [45, 4, 3, 2, 1]
    first = summary[0]
    assert first["type"] == "node-not-ready"
    assert first["shared"] == {"kind": "Node", "names": [f"zone-b-{i}" for i in range(12)]}
    assert first["example"] == {"kind": "Pod", "namespace": "shop", "name": "web-0"}
    assert_golden("summary/outage.json", json.dumps(summary, indent=4) + "\n")


def test_a_node_side_cause_on_many_nodes_is_one_group() -> None:
    """Volumes the kubelets did not reclaim on 3 nodes (a driver restarted cluster-wide): one
    line naming the nodes, not one line per node."""
    found = []
    for index in range(6):
        finding = copy.deepcopy(volumes_stuck())
        finding.name, finding.node = f"db-{index}", f"worker-{index % 3}"
        found.append(finding)
    for finding in found:  # the main cause of volumes_stuck is its driver; keep only teardown
        finding.blockers = [b for b in finding.blockers if b.type == "volumes-not-reclaimed"]
    groups = group_by_cause(found)
    assert [(g.count, g.type, g.subjects) for g in groups] == [
        (6, "volumes-not-reclaimed", ("worker-0", "worker-1", "worker-2"))
    ]
    assert summary_text(found).splitlines()[1] == (
        "6 pods: volumes not reclaimed (3 nodes: worker-0, worker-1, worker-2)"
    )


def test_names_from_the_cluster_cannot_drive_the_terminal() -> None:
    finding = held_by(1, "example.com/\x1b[31mred")
    assert "\x1b" not in summary_text([finding])


def test_nothing_to_summarise() -> None:
    assert summary_text([]) == ""
    assert group_by_cause([]) == []
