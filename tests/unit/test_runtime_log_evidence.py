"""`--node-evidence` for a pod whose runtime is down reads containerd's log too, and what that
log says about the pod's container is used (issue 40, item 8): the pod and its node as the real
kubelet v1.36.3 left them with containerd stopped (tests/fixtures/real-node/runtime-down.json),
the kubelet's own lines of that incident (node-evidence/kubelet-runtime-down.log), and the line
containerd 1.6 wrote when a full disk kept it from recording a container's exit
(node-evidence/full-disk.json, its container id made the pod's). The node proxy is the fault
server of test_client.py; what is asked of it and the explanation are both checked."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.nodeevidence import apply_node_evidence
from kubectl_terminating.nodeproxy import SSAR_PATH, NodeProxy
from kubectl_terminating.snapshot import SnapshotSource
from tests.unit.builders import FIXTURES
from tests.unit.test_client import FaultServer, Step, make_client

NODE = "real-4a8c78"
PROXY = f"/api/v1/nodes/{NODE}/proxy/"
CONTAINER = "fe15f1ccb6ba9fdbd4eefef3b45dce7af78e0d1f0899914a6dc5666e7f96f25f"  # the pod's
RECORDED = "81011356368c574d648e59173f7bb95a3a820307cced8e3fa56c16583e19486b"  # full-disk's


def containerd_disk_line() -> str:
    recorded = json.loads((FIXTURES / "node-evidence" / "full-disk.json").read_text())
    (evidence,) = recorded["nodeEvidence"].values()
    line = next(x for x in evidence["runtimeLines"] if "no space left on device" in x)
    return str(line).replace(RECORDED, CONTAINER)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault = FaultServer()
    kubelet = (FIXTURES / "node-evidence" / "kubelet-runtime-down.log").read_bytes()
    review = {"kind": "SelfSubjectAccessReview", "status": {"allowed": True}}
    fault.on(SSAR_PATH, Step(201, review))
    # the node log query: the kubelet's lines first, then containerd's (the order of reading)
    fault.on(PROXY + "logs/", Step(body=kubelet), Step(body=containerd_disk_line().encode()))
    fault.on(PROXY + "stats/summary", Step(body={"node": {}}))
    fault.on(PROXY + "pods", Step(body={"kind": "PodList", "items": []}))
    yield fault
    fault.stop()


def test_a_runtime_down_pod_reads_containerds_log_and_uses_it(server: FaultServer) -> None:
    source = SnapshotSource.open(str(FIXTURES / "real-node" / "runtime-down.json"))
    (pod,) = [o for o in source.loaded.objects if o.get("kind") == "Pod"]
    finding = explain_pod(json.loads(json.dumps(pod)), source.view)
    assert finding.blockers[0].type == "runtime-unavailable"

    warnings = apply_node_evidence(
        [(pod, finding)], source.view, NodeProxy(make_client(server)).read_nodes
    )
    asked = [s.path for s in server.seen if s.path.startswith(PROXY + "logs/")]
    assert any("query=containerd" in path for path in asked), asked
    main = finding.blockers[0]
    assert main.summary == f"disk full on {NODE} (containerd log)", (
        main.summary,
        warnings,
    )
    proof = main.evidence[0]
    assert proof.message.startswith(f"the containerd log on {NODE} (logs/?query=containerd): ")
