"""Explanations fitted to what a real kubelet (v1.36.3) and containerd (1.6) wrote.

Each fixture in tests/fixtures/real-node is `kubectl get -o json` of a pod, its node, the
node's Lease and the pod's events, captured from the harness's real node while the incident
was happening (tests/e2e/test_real_node.py makes the same incidents happen and asserts the
same blockers live). managedFields were dropped; nothing else was edited.
"""

from __future__ import annotations

import json
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
    assert kinds == ["Node", "Lease", "Event"]
    assert "FailedKillPod" in blocker["evidence"][2]["message"]
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
    "name", ["runtime-down", "posthook-never-returns", "immutable-file", "busy-mount", "full-disk"]
)
def test_explain_rendering(name: str) -> None:
    out, _ = explained(name, explain=True)
    assert_golden(f"real-node/{name}.txt", out)
