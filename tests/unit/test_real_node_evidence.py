"""Explanations fitted to what a real kubelet (v1.36.3) and containerd (1.6) wrote.

Each fixture in tests/fixtures/real-node is `kubectl get -o json` of a pod, its node, the
node's Lease and the pod's events, captured from the harness's real node while the incident
was happening (tests/e2e/test_real_node.py makes the same incidents happen and asserts the
same blockers live). managedFields were dropped; nothing else was edited. The csi-driver-*
fixtures are `kubectl terminating dump` snapshots written by that test itself
(REAL_NODE_CAPTURE=DIR): they also record what was read and found absent (a CSIDriver).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.unit.builders import FIXTURES as ALL_FIXTURES
from tests.unit.builders import run_captured
from tests.unit.golden import assert_golden

FIXTURES = ALL_FIXTURES / "real-node"


def explained(name: str, **flags: Any) -> tuple[str, str]:
    code, out, err = run_captured(from_file=str(FIXTURES / f"{name}.json"), **flags)
    assert code == 0, err
    return out, err


def main_blocker(name: str) -> dict[str, Any]:
    out, _ = explained(name, output="json")
    items = json.loads(out)["items"]
    assert len(items) == 1
    blocker: dict[str, Any] = items[0]["blockers"][0]
    return blocker


def test_runtime_down_under_a_live_kubelet_is_the_runtime() -> None:
    """Ready=False `container runtime is down`, Lease renewed, FailedKillPod `Unavailable`."""
    blocker = main_blocker("runtime-down")
    assert blocker["type"] == "runtime-unavailable"
    assert blocker["summary"] == "container runtime on real-4a8c78 is down (the kubelet is alive)"
    kinds = [e["object"]["kind"] for e in blocker["evidence"]]
    assert kinds == ["Node", "Lease", "Event", "Pod"]
    assert "FailedKillPod" in blocker["evidence"][2]["message"]
    # the kubelet is alive and wrote a status since the deletion (observedGeneration 2)
    assert blocker["evidence"][3]["fields"] == {"generation": 2, "observedGeneration": 2}
    commands = " ".join(r.get("command", "") for r in blocker["remedy"])
    assert "out-of-service" not in commands  # the machine is up: the taint would be wrong
    assert "--force" not in commands  # its containers still run


def test_post_start_hook_that_never_returned() -> None:
    """Events Created and Started, status waiting ContainerCreating, phase Pending."""
    out, _ = explained("posthook-never-returns", output="json")
    item = json.loads(out)["items"][0]
    types = [b["type"] for b in item["blockers"]]
    assert types[0] == "lifecycle-hook"
    assert "volumes-not-reclaimed" not in types  # nothing was torn down yet
    assert item["blockers"][0]["evidence"][0]["fields"] == {
        "container": "app",
        "postStart": "sleep 3600",
    }


def hook_dump(tmp_path: Path, gone: set[str], created_earlier: int = 0) -> str:
    """The real node's hung-hook dump (`kubectl terminating dump`: its events were read) with
    the events of the reasons `gone` deleted (as the API server's event TTL deletes them) and
    the pod created `created_earlier` seconds before it was."""
    data = json.loads((ALL_FIXTURES / "node-evidence" / "posthook-never-returns.json").read_text())
    data["objects"] = [
        o for o in data["objects"] if o.get("kind") != "Event" or o.get("reason") not in gone
    ]
    for pod in (o for o in data["objects"] if o.get("kind") == "Pod"):
        created = datetime.fromisoformat(
            pod["metadata"]["creationTimestamp"].replace("Z", "+00:00")
        )
        earlier = created - timedelta(seconds=created_earlier)
        pod["metadata"]["creationTimestamp"] = earlier.strftime("%Y-%m-%dT%H:%M:%SZ")
    path = tmp_path / "hook.json"
    path.write_text(json.dumps(data))
    return str(path)


def hook_blockers(path: str) -> list[dict[str, Any]]:
    code, out, err = run_captured(from_file=path, output="json")
    assert code == 0, err
    blockers: list[dict[str, Any]] = json.loads(out)["items"][0]["blockers"]
    return blockers


def test_a_hook_hung_for_over_an_hour_is_still_named_when_its_events_expired(
    tmp_path: Path,
) -> None:
    """Events live 1h (kube-apiserver --event-ttl) and a hung hook writes none after `Started`:
    a pod stuck in its hook for longer has no Started event. That proves nothing: the hook is
    still the likely blocker, said unchecked, never `no container running`."""
    everything = {"Pulled", "Created", "Started"}
    for gone, says in ((everything, "no events at all"), ({"Started"}, "older than the events")):
        main = hook_blockers(hook_dump(tmp_path, gone, created_earlier=2 * 3600))[0]
        assert main["type"] == "lifecycle-hook", main["summary"]
        assert main["summary"] == "postStart hook of app may not have returned"
        assert says in main["unchecked"]
    # a pod minutes old has all its events: without `Started` its container never started
    young = hook_blockers(hook_dump(tmp_path, {"Started"}))
    assert "lifecycle-hook" not in [b["type"] for b in young]
    code, out, err = run_captured(
        from_file=hook_dump(tmp_path, everything, created_earlier=2 * 3600), explain=True
    )
    assert code == 0, err
    assert_golden("real-node/posthook-events-expired.txt", out)


@pytest.mark.parametrize(
    ("name", "tells"),
    [("immutable-file", "operation not permitted"), ("busy-mount", "device or resource busy")],
)
def test_teardown_failure_with_no_event_points_at_the_kubelet_log(name: str, tells: str) -> None:
    """An immutable file or a busy mount in an emptyDir: the kubelet retries the teardown and
    writes no event; the remedies say which log lines tell the causes apart."""
    blocker = main_blocker(name)
    assert blocker["type"] == "volumes-not-reclaimed"
    commands = [r.get("command", "") for r in blocker["remedy"]]
    assert any(tells in c and "journalctl -u kubelet" in c for c in commands)


def test_full_disk_under_the_runtime_root_points_at_the_runtime_log() -> None:
    """containerd's root full: the container exited but containerd could not checkpoint its
    status (`no space left on device`, only in containerd's log); the kubelet still sees it
    running and wrote no event after `Killing`."""
    blocker = main_blocker("full-disk")
    assert blocker["type"] == "containers-running"
    assert blocker["summary"].startswith("app still running ")
    commands = [r.get("command", "") for r in blocker["remedy"]]
    runtime_log = [c for c in commands if c.startswith("journalctl -u containerd")]
    assert (
        runtime_log
        and "969ad238dbe90bf0b4fc930db5ddc7a180fb75667f3ab2eabb964e2ed3b40458" in (runtime_log[0])
    )
    assert any("no space left on device" in r["description"] for r in blocker["remedy"])
    assert any(c.startswith("df -h /var/lib/containerd") for c in commands)


@pytest.mark.parametrize(
    ("name", "summary", "proof"),
    [
        ("csi-driver-gone", "CSI driver harness.csi.test not installed", "CSIDriver"),
        ("csi-driver-stopped", "CSI driver harness.csi.test not running on real-38aca4", "CSINode"),
    ],
)
def test_csi_driver_gone_is_the_driver(name: str, summary: str, proof: str) -> None:
    """The node plugin stopped (the kubelet deregistered it: CSINode lists no driver) and, when
    uninstalled, the CSIDriver object deleted. Every container exited (phase Failed); the
    kubelet wrote no event, only its log: `UnmountVolume.TearDown failed ... driver name
    harness.csi.test not found in the list of registered CSI drivers`."""
    out, _ = explained(name, output="json")
    item = json.loads(out)["items"][0]
    blocker = item["blockers"][0]
    assert (blocker["type"], blocker["summary"]) == ("csi-driver-missing", summary)
    assert [e["object"]["kind"] for e in blocker["evidence"]] == [proof, "Pod", "Pod"]
    assert blocker["evidence"][1]["fields"] == {"volume": "csi", "driver": "harness.csi.test"}
    assert [b["type"] for b in item["blockers"]] == ["csi-driver-missing", "volumes-not-reclaimed"]
    commands = [r.get("command", "") for r in blocker["remedy"]]
    gone = "driver name harness.csi.test not found in the list of registered CSI drivers"
    assert any(gone in c and c.startswith("journalctl -u kubelet") for c in commands)
    # the teardown's other causes (immutable file, busy mount, full disk) are not the hunt here
    assert not any(c.startswith("lsattr") for c in commands)
    assert blocker["remedy"][0]["description"].startswith("restore CSI driver harness.csi.test")


def test_csi_driver_crashed_points_at_the_driver_in_the_kubelet_log() -> None:
    """The node plugin killed (SIGKILL): its sockets stay, CSINode still lists the driver, the
    CSIDriver object is there; nothing in the API tells. The kubelet logs, with no event,
    `Unmounter.TearDownAt failed: rpc error: code = Unavailable ... connection refused`."""
    blocker = main_blocker("csi-driver-crashed")
    assert blocker["type"] == "volumes-not-reclaimed"
    assert blocker["summary"] == "containers exited; kubelet has not finished volume teardown"
    assert {"volume": "csi", "driver": "harness.csi.test"} in [
        e["fields"] for e in blocker["evidence"]
    ]
    commands = [r.get("command", "") for r in blocker["remedy"]]
    assert any("TearDownAt failed" in c and c.startswith("journalctl -u kubelet") for c in commands)


@pytest.mark.parametrize(
    "name",
    [
        "runtime-down",
        "posthook-never-returns",
        "immutable-file",
        "busy-mount",
        "full-disk",
        "csi-driver-gone",
        "csi-driver-stopped",
        "csi-driver-crashed",
    ],
)
def test_explain_rendering(name: str) -> None:
    out, _ = explained(name, explain=True)
    assert_golden(f"real-node/{name}.txt", out)
