"""Node-side incidents made to happen for real on a real kubelet and containerd, diagnosed from
what they really write into the API, then undone: the pod must then go by itself.

The module has its own control plane (with the node lifecycle controller on: it marks the node
Unknown when its kubelet stops) and one real node (tests/e2e/node.py). Pods run busybox with
hostNetwork, so no pod network is set up. Waits poll; nothing sleeps a guessed time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.api import create_namespace, unique_ns
from tests.e2e.cli import run_json
from tests.e2e.controlplane import (
    DEFAULT_CONTROLLERS,
    ApiError,
    ControlPlane,
    _pid_cmdline,
    build_binaries,
)
from tests.e2e.node import RealNode, _root_under, busybox_pod, ensure_packages, why_unavailable

pytestmark = [pytest.mark.e2e, pytest.mark.node]

JSON = dict[str, Any]
REPO_ROOT = Path(__file__).resolve().parents[2]
# The node lifecycle controller marks a silent node Unknown after this (kubelet posts every 10s).
NODE_MONITOR_GRACE = "20s"
WAIT = 120.0  # the longest any state takes to appear on a loaded 2-core machine


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealNode]:
    ensure_packages()
    reason = why_unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the real-node tests must run in CI: {reason}")
        pytest.skip(reason)
    state = tmp_path_factory.mktemp("real-node")
    cp = ControlPlane(
        state / "cp",
        build_binaries(),
        controllers=(*DEFAULT_CONTROLLERS, "nodelifecycle"),
        extra_controller_manager_args=[f"--node-monitor-grace-period={NODE_MONITOR_GRACE}"],
    )
    cp.start()
    real = RealNode(cp, state / "node")
    try:
        real.start()
        yield real
    finally:
        real.stop()
        cp.stop()


@pytest.fixture
def ns(node: RealNode) -> str:
    node.wait_ready()  # an earlier test may have just brought its runtime or kubelet back
    name = unique_ns("real")
    create_namespace(node.cp, name)
    return name


# -- helpers -----------------------------------------------------------------------------------


def wait_until(what: str, done: Callable[[], Any], timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = done()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(1.0)


def start_pod(node: RealNode, ns: str, name: str, command: str, **options: Any) -> JSON:
    """A busybox pod on the real node (`busybox_pod`'s options) running `sh -c command`;
    returned once it runs (or, with a postStart hook, once the runtime started it)."""
    pod = busybox_pod(node.name, name, command, **options)
    created = node.cp.api("POST", f"/api/v1/namespaces/{ns}/pods", pod)

    def running() -> JSON | None:
        current = get_pod(node, ns, name) or {}
        states = [
            s.get("state") or {} for s in current.get("status", {}).get("containerStatuses") or []
        ]
        if options.get("post_start"):
            return current if started_event(node, ns, name) else None
        return current if states and "running" in states[0] else None

    wait_until(f"pod {ns}/{name} running", running)
    return created


def get_pod(node: RealNode, ns: str, name: str) -> JSON | None:
    try:
        return node.cp.api("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    except ApiError as error:
        if error.status == 404:
            return None
        raise


def events_of(node: RealNode, ns: str, name: str) -> list[JSON]:
    events = node.cp.api(
        "GET", f"/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3D{name}"
    )
    found: list[JSON] = events.get("items") or []
    return found


def started_event(node: RealNode, ns: str, name: str) -> bool:
    return any(e.get("reason") == "Started" for e in events_of(node, ns, name))


def delete_pod(node: RealNode, ns: str, name: str) -> None:
    node.cp.api("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")


def diagnosis(node: RealNode, ns: str, name: str) -> JSON:
    report = run_json("pods", "-n", ns, name, kubeconfig=node.cp.kubeconfig_path)
    items: list[JSON] = report["items"]
    assert len(items) == 1, report
    return items[0]


def wait_for_blocker(node: RealNode, ns: str, name: str, blocker_type: str) -> JSON:
    """The pod's diagnosis once its main blocker is `blocker_type` (states take time to show:
    a runtime is declared down after the kubelet's sync threshold, a lease goes stale...)."""
    seen: list[str] = []

    def main_is() -> JSON | None:
        item = diagnosis(node, ns, name)
        main = item["blockers"][0]["type"] if item["blockers"] else "none"
        seen.append(main)
        return item if main == blocker_type and (item["overdueSeconds"] or 0) > 0 else None

    try:
        found: JSON = wait_until(f"main blocker {blocker_type}", main_is)
    except AssertionError as error:
        raise AssertionError(f"{error}; main blockers seen: {sorted(set(seen))}") from None
    return found


def wait_gone(node: RealNode, ns: str, name: str) -> None:
    wait_until(f"pod {ns}/{name} gone", lambda: get_pod(node, ns, name) is None)


def pod_volume_dir(node: RealNode, pod: JSON) -> Path:
    uid = pod["metadata"]["uid"]
    return node.pod_dir(uid) / "volumes" / "kubernetes.io~empty-dir" / "scratch"


def evidence_objects(blocker: JSON) -> list[str]:
    return [
        f"{e['object']['kind']}/{e['object']['name']}"
        for e in blocker["evidence"]
        if e.get("object")
    ]


# -- the incidents -----------------------------------------------------------------------------


def test_runtime_down_under_a_live_kubelet(node: RealNode, ns: str) -> None:
    start_pod(node, ns, "app-0", "sleep 3600")
    node.stop_containerd()
    try:
        delete_pod(node, ns, "app-0")
        item = wait_for_blocker(node, ns, "app-0", "runtime-unavailable")
        blocker = item["blockers"][0]
        assert (
            blocker["summary"] == f"container runtime on {node.name} is down (the kubelet is alive)"
        )
        messages = " ".join(e["message"] for e in blocker["evidence"])
        assert "container runtime is down" in messages
        assert f"Lease/{node.name}" in evidence_objects(blocker)
        commands = " ".join(r.get("command", "") for r in blocker["remedy"])
        assert "out-of-service" not in commands and "--force" not in commands
        assert "systemctl status containerd" in commands
    finally:
        node.start_containerd()
    wait_gone(node, ns, "app-0")


def test_kubelet_stopped_node_turns_unknown(node: RealNode, ns: str) -> None:
    start_pod(node, ns, "app-1", "sleep 3600")
    node.stop_kubelet()
    try:
        delete_pod(node, ns, "app-1")

        def unknown() -> bool:
            ready = [
                c
                for c in (node.node_object() or {}).get("status", {}).get("conditions") or []
                if c.get("type") == "Ready"
            ]
            return bool(ready) and ready[0].get("status") == "Unknown"

        wait_until("the node lifecycle controller to mark the node Unknown", unknown)
        item = wait_for_blocker(node, ns, "app-1", "node-not-ready")
        blocker = item["blockers"][0]
        assert blocker["summary"].startswith(f"node {node.name} NotReady")
        assert "kubelet stopped posting" in blocker["summary"]
        assert blocker["evidence"][0]["fields"]["Ready"] == "Unknown"
    finally:
        node.start_kubelet()
    wait_gone(node, ns, "app-1")


def test_immutable_file_in_a_volume(node: RealNode, ns: str) -> None:
    pod = start_pod(node, ns, "app-2", "echo x > /data/locked; sleep 3600", volume=True)
    locked = pod_volume_dir(node, pod) / "locked"
    wait_until("the file in the volume", locked.exists)
    subprocess.run(["chattr", "+i", str(locked)], check=True)
    try:
        delete_pod(node, ns, "app-2")
        item = wait_for_blocker(node, ns, "app-2", "volumes-not-reclaimed")
        blocker = item["blockers"][0]
        assert blocker["summary"] == "containers exited; kubelet has not finished volume teardown"
        commands = [r.get("command", "") for r in blocker["remedy"]]
        uid = pod["metadata"]["uid"]
        assert any("operation not permitted" in c and uid in c for c in commands)
        assert any(c.startswith("lsattr -R") for c in commands)
        wait_until(
            "the kubelet's TearDown error",
            lambda: "operation not permitted" in node.kubelet_log() and uid in node.kubelet_log(),
        )
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=False)
    wait_gone(node, ns, "app-2")


def test_busy_mount_in_a_volume(node: RealNode, ns: str, tmp_path: Path) -> None:
    pod = start_pod(node, ns, "app-3", "mkdir -p /data/held; sleep 3600", volume=True)
    held = pod_volume_dir(node, pod) / "held"
    wait_until("the directory in the volume", held.exists)
    subprocess.run(["mount", "--bind", str(tmp_path), str(held)], check=True)
    try:
        delete_pod(node, ns, "app-3")
        item = wait_for_blocker(node, ns, "app-3", "volumes-not-reclaimed")
        commands = [r.get("command", "") for r in item["blockers"][0]["remedy"]]
        assert any("device or resource busy" in c for c in commands)
        assert any("mountinfo" in c for c in commands)
        wait_until(
            "the kubelet's busy error", lambda: "device or resource busy" in node.kubelet_log()
        )
    finally:
        subprocess.run(["umount", str(held)], check=False)
    wait_gone(node, ns, "app-3")


def test_full_disk_under_the_runtime_root(node: RealNode, ns: str) -> None:
    """A full filesystem (a 16 MiB tmpfs, filled) under containerd's record of one container:
    the container is killed, but containerd cannot checkpoint its exit and keeps reporting it
    running; the kubelet writes no event after `Killing`, only containerd's log says why."""
    start_pod(node, ns, "app-5", "sleep 3600")
    current = get_pod(node, ns, "app-5") or {}
    container_id = current["status"]["containerStatuses"][0]["containerID"].split("//")[1]
    record = (
        node.state_dir / "containerd-root" / "io.containerd.grpc.v1.cri" / "containers"
    ) / container_id
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(record)], check=True)
    try:
        fill = subprocess.run(
            ["dd", "if=/dev/zero", f"of={record}/fill", "bs=1M"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert "No space left on device" in fill.stderr
        delete_pod(node, ns, "app-5")
        item = wait_for_blocker(node, ns, "app-5", "containers-running")
        blocker = item["blockers"][0]
        assert blocker["summary"].startswith("app still running ")
        commands = [r.get("command", "") for r in blocker["remedy"]]
        assert any(c.startswith("journalctl -u containerd") and container_id in c for c in commands)
        assert any("no space left on device" in r["description"] for r in blocker["remedy"])
        containerd_log = node.state_dir / "containerd.log"
        wait_until(
            "containerd's checkpoint error",
            lambda: f"containers/{container_id}/.tmp-status" in containerd_log.read_text()
            and "no space left on device" in containerd_log.read_text(),
        )
        reasons = [e["reason"] for e in events_of(node, ns, "app-5")]
        assert "Killing" in reasons and "FailedKillPod" not in reasons
    finally:
        subprocess.run(["umount", str(record)], check=False)
    wait_gone(node, ns, "app-5")


def test_post_start_hook_that_never_returns(node: RealNode, ns: str) -> None:
    hook = "sleep 3601"  # its own command line: the hook's process is found and ended by it
    start_pod(node, ns, "app-4", "sleep 3600", post_start=hook, host_pid=True)
    delete_pod(node, ns, "app-4")
    try:
        item = wait_for_blocker(node, ns, "app-4", "lifecycle-hook")
        blocker = item["blockers"][0]
        assert blocker["summary"] == "postStart hook of app never returned"
        assert blocker["evidence"][0]["fields"]["postStart"] == f"sh -c '{hook}'"
        assert "Started" in blocker["evidence"][1]["message"]
        assert item["phase"] == "Pending"
        assert "volumes-not-reclaimed" not in [b["type"] for b in item["blockers"]]
        # the remedy's `ps | grep` finds the hook's process on the node (this machine)
        find = next(r["command"] for r in blocker["remedy"] if r["command"].startswith("ps "))
        listed = subprocess.run(["sh", "-c", find], capture_output=True, text=True, check=False)
        assert any(line.split(None, 2)[2] == hook for line in listed.stdout.splitlines()), find
    finally:
        for pid in node.processes(hook.split()):  # the hook's own process, in this node only
            os.kill(pid, signal.SIGKILL)
    wait_gone(node, ns, "app-4")


@pytest.mark.parametrize(
    ("name", "command", "pre_stop"),
    [
        ("prestop-0", "sleep 3600", "sleep 3600"),  # a preStop hook longer than the grace
        ("deaf-0", "trap '' TERM; while true; do sleep 1; done", None),  # ignores SIGTERM
    ],
)
def test_slow_to_stop_is_not_stuck(
    node: RealNode, ns: str, name: str, command: str, pre_stop: str | None
) -> None:
    """Killed at the deadline by the kubelet: while inside the grace period it is not stuck."""
    start_pod(node, ns, name, command, grace=15, pre_stop=pre_stop)
    delete_pod(node, ns, name)
    item = diagnosis(node, ns, name)
    assert item["overdueSeconds"] < 0
    assert "grace-period" in [b["type"] for b in item["blockers"]]
    assert not [b for b in item["blockers"] if b["type"] not in ("grace-period",)], item
    wait_gone(node, ns, name)


def leftovers(state_dir: Path) -> list[str]:
    """Processes naming state_dir (kubelet, containerd, shims) or running in one of its
    containers' root filesystems, and mounts under it."""
    prefix = f"{state_dir}/"
    procs = [
        " ".join(_pid_cmdline(int(p.name)))
        for p in Path("/proc").iterdir()
        if p.name.isdigit()
        and int(p.name) != os.getpid()
        and (prefix in " ".join(_pid_cmdline(int(p.name))) or _root_under(int(p.name), prefix))
    ]
    mounts = [line for line in Path("/proc/mounts").read_text().splitlines() if prefix in line]
    return procs + mounts


@pytest.mark.parametrize("runtime_down", [False, True])
def test_a_recorded_node_is_stopped_from_another_process(
    node: RealNode, tmp_path: Path, runtime_down: bool
) -> None:
    """`make demo-down`: a node started detached (as `make demo` does) is stopped by another
    process from what it recorded, with nothing left: no kubelet, containerd, shim or container
    process (a hook's too: in a hostPID pod it outlives its container), no mount; also when
    containerd is already gone and cannot be asked to kill its containers."""
    detached = RealNode(node.cp, tmp_path / "detached", die_with_parent=False)
    try:
        detached.start()
        detached.record()
        ns = unique_ns("real")
        create_namespace(node.cp, ns)
        start_pod(detached, ns, "hooked", "sleep 3600", post_start="sleep 3602", host_pid=True)
        delete_pod(detached, ns, "hooked")
        assert detached.processes(["sleep", "3602"])
        if runtime_down:
            detached.stop_containerd()
        down = "import sys; from pathlib import Path; from tests.e2e.node import stop_recorded; "
        down += "stop_recorded(Path(sys.argv[1]))"
        subprocess.run(
            [sys.executable, "-c", down, str(detached.state_dir)],
            cwd=REPO_ROOT,
            check=True,
            timeout=180,
        )
        assert leftovers(detached.state_dir) == []
    finally:
        detached.stop()
