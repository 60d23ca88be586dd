"""Node-side incidents made to happen for real on a real kubelet and containerd, diagnosed from
what they really write into the API, then undone: the pod must then go by itself.

The module has its own control plane (with the node lifecycle controller on: it marks the node
Unknown when its kubelet stops) and one real node (tests/harness/node.py). Pods run busybox with
hostNetwork, so no pod network is set up. Waits poll; nothing sleeps a guessed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.api import create_namespace, unique_ns
from tests.harness.cli import run_cli, run_json
from tests.harness.controlplane import (
    DEFAULT_CONTROLLERS,
    ApiError,
    ControlPlane,
    _pid_cmdline,
    build_binaries,
)
from tests.harness.inpod import in_pod_command
from tests.harness.node import (
    CSI_DRIVER,
    NODE_ADDRESS,
    NodeNetwork,
    RealNode,
    _root_under,
    build_csi_driver,
    busybox_pod,
    csi_driver_object,
    ensure_packages,
    why_unavailable,
)
from tests.harness.tiers import skip_or_fail
from tests.harness.users import User, Users, rule

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
        skip_or_fail("real-node", reason)
    state = tmp_path_factory.mktemp("real-node")
    cp = ControlPlane(
        state / "cp",
        build_binaries(),
        controllers=(*DEFAULT_CONTROLLERS, "nodelifecycle"),
        extra_controller_manager_args=[f"--node-monitor-grace-period={NODE_MONITOR_GRACE}"],
        # the node proxy dials the kubelet at its InternalIP (a test address, not loopback)
        extra_apiserver_args=["--kubelet-preferred-address-types=InternalIP,Hostname,ExternalIP"],
    )
    network = NodeNetwork()
    network.make()
    cp.start()
    real = RealNode(cp, state / "node", node_ip=NODE_ADDRESS)
    try:
        real.start()
        # no journald here: the node log query answers from these files
        assert real.serve_log_files() == ["kubelet.log", "containerd.log"]
        yield real
    finally:
        real.stop()
        cp.stop()
        network.remove()


# everything the diagnosis of a pod reads, and no subresource of nodes
READER_RULES = [
    rule(["pods", "nodes", "events", "namespaces", "persistentvolumeclaims"]),
    rule(["persistentvolumes", "services"]),
    rule(["leases"], group="coordination.k8s.io"),
    rule(["csidrivers", "csinodes", "volumeattachments"], group="storage.k8s.io"),
]


@pytest.fixture(scope="module")
def reader(node: RealNode, tmp_path_factory: pytest.TempPathFactory) -> Iterator[User]:
    """A user who may read everything the diagnosis reads, but not `nodes/proxy`."""
    with Users(node.cp, tmp_path_factory.mktemp("users"), "node-ev") as users:
        yield users.user("reader", cluster_rules=READER_RULES)


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


def generations(node: RealNode, ns: str, name: str) -> tuple[Any, Any]:
    """metadata.generation and status.observedGeneration (the kubelet's) of the pod."""
    pod = get_pod(node, ns, name) or {}
    return pod["metadata"].get("generation"), pod.get("status", {}).get("observedGeneration")


NODE_PROXY_PATHS = {"logs/", "logs/kubelet.log", "logs/containerd.log", "stats/summary", "pods"}
NOT_ASKED = "node evidence not read (--node-evidence not given)"


def proxy_requests(node: RealNode, offset: int, user: str | None = None) -> list[JSON]:
    return [
        e
        for e in node.cp.audit_events(offset, user)
        if "/proxy/" in e.get("requestURI", "") and e.get("stage") == "ResponseComplete"
    ]


def with_node_evidence(node: RealNode, ns: str, name: str, says: str) -> JSON:
    """The diagnosis with --node-evidence once its headline contains `says` (the kubelet
    retries with backoff: its line can come after the state the API shows). Only GETs to the
    named paths of the node proxy were sent (audit log)."""
    offset = node.cp.audit_offset()
    seen: list[str] = []
    last: list[str] = []

    def confirmed() -> JSON | None:
        result = run_cli(
            "pods",
            "-n",
            ns,
            name,
            "--node-evidence",
            "-o",
            "json",
            kubeconfig=node.cp.kubeconfig_path,
        )
        assert result.returncode == 0, result.stderr
        item: JSON = json.loads(result.stdout)["items"][0]
        seen.append(item["blockers"][0]["summary"])
        last[:] = [result.stderr, json.dumps(item["blockers"][0]["evidence"])[-3000:]]
        return item if says in seen[-1] else None

    try:
        item: JSON = wait_until(f"the headline to say {says!r}", confirmed)
    except AssertionError as error:
        raise AssertionError(f"{error}; headlines seen: {sorted(set(seen))}; {last}") from None
    capture(node, ns, f"node-evidence-{name}-{ns}", "--node-evidence")
    sent = proxy_requests(node, offset)
    assert sent, "no request to the node proxy"
    for event in sent:
        assert event["verb"] == "get", event
        sub = event["requestURI"].split("/proxy/", 1)[1].split("?", 1)[0]
        assert sub in NODE_PROXY_PATHS, event["requestURI"]
    return item


def without_permission(node: RealNode, reader: User, ns: str, name: str, summary: str) -> None:
    """Under a user without nodes/proxy: one warning naming it, the diagnosis unchanged, and
    not one request to the node proxy."""
    offset = node.cp.audit_offset()
    result = run_cli(
        "pods", "-n", ns, name, "--node-evidence", "-o", "json", kubeconfig=reader.kubeconfig
    )
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "nodes/proxy" in line]
    assert len(warned) == 1 and "get nodes/proxy is not allowed" in warned[0], result.stderr
    item = json.loads(result.stdout)["items"][0]
    assert ageless(item["blockers"][0]["summary"]) == ageless(summary)
    assert proxy_requests(node, offset, reader.username) == []


def ageless(summary: str) -> str:
    """A summary without its ages (`2s past deadline`): they grow between two runs."""
    return re.sub(r"\b\d+[smhd]\b", "<age>", summary)


def not_asked(blocker: JSON) -> bool:
    return any(r["description"].startswith(NOT_ASKED) for r in blocker["remedy"])


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


def test_runtime_down_under_a_live_kubelet(node: RealNode, ns: str, reader: User) -> None:
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
        assert not_asked(blocker)
        assert generations(node, ns, "app-0")[0] == 2  # bumped at deletion
        confirmed = with_node_evidence(node, ns, "app-0", "container runtime error")
        proof = confirmed["blockers"][0]["evidence"][0]
        assert "rpc error: code = Unavailable" in proof["fields"]["line"]
        without_permission(node, reader, ns, "app-0", blocker["summary"])
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
        # the kubelet never wrote a status after the deletion
        assert generations(node, ns, "app-1") == (2, 1)
        assert blocker["evidence"][-1]["fields"] == {"generation": 2, "observedGeneration": 1}
        assert "has not processed the deletion" in blocker["evidence"][-1]["message"]
        assert not not_asked(blocker)  # its kubelet is down: nothing to ask it
    finally:
        node.start_kubelet()
    wait_gone(node, ns, "app-1")


def test_immutable_file_in_a_volume(node: RealNode, ns: str, reader: User, tmp_path: Path) -> None:
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
        assert not_asked(blocker)
        # the kubelet has processed the deletion (killed the container): stuck in teardown
        wait_until("observedGeneration 2", lambda: generations(node, ns, "app-2") == (2, 2))
        confirmed = with_node_evidence(node, ns, "app-2", f"immutable file {locked} ")
        main = confirmed["blockers"][0]
        assert main["type"] == "volumes-not-reclaimed"
        assert f"unlinkat {locked}: operation not permitted" in main["evidence"][0]["message"]
        assert main["remedy"][1]["command"] == f"chattr -i {shlex.quote(str(locked))}"
        # a bundle keeps the kubelet's lines: explained elsewhere, the same headline
        bundle = tmp_path / "bundle.json"
        kubeconfig = node.cp.kubeconfig_path
        dumped = run_cli(
            "dump", "-n", ns, "--node-evidence", "-f", str(bundle), kubeconfig=kubeconfig
        )
        assert dumped.returncode == 0, dumped.stderr
        offline = run_json(
            "pods",
            "-n",
            ns,
            "app-2",
            "--from-file",
            str(bundle),
            "--node-evidence",
            kubeconfig=kubeconfig,
        )
        assert offline["items"][0]["blockers"][0]["summary"] == main["summary"]
        without_permission(node, reader, ns, "app-2", blocker["summary"])
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=False)
    wait_gone(node, ns, "app-2")


@contextlib.contextmanager
def kubelet_configured(node: RealNode, settings: JSON) -> Iterator[JSON]:
    """The kubelet restarted with these KubeletConfiguration fields, then as before."""
    node.stop_kubelet()
    node.kubelet_overrides = settings
    node.start_kubelet()
    try:
        wait_until("the kubelet to serve", lambda: node.kubelet.running() and node.ready())
        yield settings
    finally:
        node.stop_kubelet()
        node.kubelet_overrides = {}
        node.start_kubelet()


@contextlib.contextmanager
def immutable_file_stuck(node: RealNode, ns: str, name: str) -> Iterator[tuple[JSON, Path]]:
    """A pod stuck in volume teardown by an immutable file (its main blocker, the file) until
    the block ends: then the file is freed and the pod goes."""
    pod = start_pod(node, ns, name, "echo x > /data/locked; sleep 3600", volume=True)
    locked = pod_volume_dir(node, pod) / "locked"
    wait_until("the file in the volume", locked.exists)
    subprocess.run(["chattr", "+i", str(locked)], check=True)
    try:
        delete_pod(node, ns, name)
        blocker = wait_for_blocker(node, ns, name, "volumes-not-reclaimed")["blockers"][0]
        wait_until("the kubelet's TearDown error", lambda: str(locked) in node.kubelet_log())
        yield blocker, locked
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=False)
    wait_gone(node, ns, name)


@pytest.mark.parametrize(
    ("settings", "warning"),
    [
        ({"enableSystemLogQuery": False}, "enableSystemLogQuery: false"),
        # the kubelet refuses the query without the handler: both off
        (
            {"enableSystemLogHandler": False, "enableSystemLogQuery": False},
            "enableSystemLogHandler: false",
        ),
    ],
)
def test_kubelet_log_query_or_handler_off_is_one_warning(
    node: RealNode, ns: str, settings: dict[str, bool], warning: str
) -> None:
    """The kubelet's log query off: `logs/` answers the HTML listing of /var/log, the file is
    read instead (one warning); its log handler off: 405, no lines (one warning)."""
    with (
        kubelet_configured(node, settings),
        immutable_file_stuck(node, ns, "off-0") as (_, locked),
    ):
        result = run_cli(
            "pods",
            "-n",
            ns,
            "off-0",
            "--node-evidence",
            "-o",
            "json",
            kubeconfig=node.cp.kubeconfig_path,
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr.count(warning) == 1, result.stderr
        main = json.loads(result.stdout)["items"][0]["blockers"][0]
        if "enableSystemLogHandler" not in settings:  # the file under /var/log still says it
            assert main["summary"].startswith(f"immutable file {locked} ")
        else:
            assert main["summary"] == "containers exited; kubelet has not finished volume teardown"


def in_pod(
    node: RealNode, user: User, directory: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`kubectl-terminating ARGS` as a pod of `user`'s ServiceAccount runs it (inpod.py)."""
    namespace = user.username.split(":")[2]
    command = in_pod_command(node.cp, directory, user.token, namespace, args)
    return subprocess.run(command, capture_output=True, text=True, timeout=WAIT, check=False)


REFUSED_IN_A_POD = (
    "Warning: node evidence not read: neither get nodes/log nor get nodes/proxy is allowed "
    "for this user (in a pod the kubelet is read directly with get nodes/log, get nodes/stats "
    "and get nodes/pods; get nodes/proxy, the API server's node proxy, is exec-equivalent: "
    "grant it only where that is acceptable)"
)


def in_pod_until(
    node: RealNode, user: User, directory: Path, args: tuple[str, ...], says: str
) -> tuple[JSON, str]:
    """The main blocker and stderr of `args` run in a pod of `user` once its headline says
    `says` (the kubelet retries its teardown: its line comes again after a restart)."""
    runs = iter(range(1000))

    def confirmed() -> tuple[JSON, str] | None:
        result = in_pod(node, user, directory / f"run-{next(runs)}", *args)
        assert result.returncode == 0, result.stderr
        main: JSON = json.loads(result.stdout)["items"][0]["blockers"][0]
        return (main, result.stderr) if says in main["summary"] else None

    found: tuple[JSON, str] = wait_until(f"the headline to say {says!r}", confirmed)
    return found


def node_evidence_said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "node evidence" in line]


def test_in_a_pod_the_kubelet_is_read_directly_with_the_narrow_rights(
    node: RealNode, ns: str, tmp_path: Path
) -> None:
    """From a pod, a user with `get` on nodes/log, nodes/stats and nodes/pods but not
    nodes/proxy: a kubelet whose serving certificate the cluster's CA did not sign is not
    read (one warning); one that authorizes each request (Webhook, a CA-signed certificate, as
    in production) is read directly, and the evidence names the way and the right. A user
    without them gets one line and nothing is sent to any kubelet. The API server's node
    proxy is never used."""
    narrow_rules = [*READER_RULES, rule(["nodes/log", "nodes/stats", "nodes/pods"], ["get"])]
    args = ("pods", "-n", ns, "authz-0", "--node-evidence", "-o", "json")
    with (
        Users(node.cp, tmp_path / "users", "node-authz") as users,
        immutable_file_stuck(node, ns, "authz-0") as (blocker, locked),
    ):
        narrow = users.user("narrow", cluster_rules=narrow_rules)
        plain = users.user("plain", cluster_rules=READER_RULES)
        offset = node.cp.audit_offset()
        # the harness's kubelet serves the self-signed certificate it made itself
        unverified = in_pod(node, narrow, tmp_path / "unverified", *args)
        assert unverified.returncode == 0, unverified.stderr
        (said,) = node_evidence_said(unverified.stderr)
        assert said.startswith(
            f"Warning: node evidence of {node.name}: could not read logs/: could not verify "
            f"the kubelet at {NODE_ADDRESS}:"
        ), said
        with kubelet_configured(node, node.authorizing()) as settings:
            main, stderr = in_pod_until(node, narrow, tmp_path / "narrow", args, "immutable")
            assert main["summary"].startswith(f"immutable file {locked} ")
            port = settings["port"]
            way = f"logs/kubelet.log from the kubelet at {NODE_ADDRESS}:{port} with get nodes/log"
            assert f"({way}): " in main["evidence"][0]["message"]
            assert main["evidence"][0]["fields"]["source"] == way
            # pods read too (nodes/pods); stats/summary let through (nodes/stats) to its
            # handler, whose cAdvisor has no stats of this machine's root filesystem: 500
            stats = (
                f"Warning: node evidence of {node.name}: could not read stats/summary: the "
                f"kubelet at {NODE_ADDRESS}:{port} answered 500: Internal Error: failed to get "
                "rootFs stats"
            )
            problems = node_evidence_said(stderr)
            assert all(p.startswith(stats) and "; pods:" not in p for p in problems), stderr
            assert proxy_requests(node, offset, narrow.username) == []

            refused = in_pod(node, plain, tmp_path / "plain", *args)
            assert refused.returncode == 0, refused.stderr
            assert node_evidence_said(refused.stderr) == [REFUSED_IN_A_POD], refused.stderr
            item = json.loads(refused.stdout)["items"][0]
            assert ageless(item["blockers"][0]["summary"]) == ageless(blocker["summary"])
            assert proxy_requests(node, offset, plain.username) == []
            # nothing reached the kubelet either: it logs each request it forbids, by user
            assert plain.username not in node.kubelet_log()


def test_busy_mount_in_a_volume(node: RealNode, ns: str, tmp_path: Path, reader: User) -> None:
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
        blocker = item["blockers"][0]
        assert not_asked(blocker)
        confirmed = with_node_evidence(node, ns, "app-3", f"mount {held} is busy")
        commands = [r.get("command", "") for r in confirmed["blockers"][0]["remedy"]]
        assert f"grep -l {pod['metadata']['uid']} /proc/*/mountinfo" in commands
        without_permission(node, reader, ns, "app-3", blocker["summary"])
    finally:
        subprocess.run(["umount", str(held)], check=False)
    wait_gone(node, ns, "app-3")


def test_full_disk_under_the_runtime_root(node: RealNode, ns: str, reader: User) -> None:
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
        assert not_asked(blocker)
        confirmed = with_node_evidence(node, ns, "app-5", "disk full")
        assert confirmed["blockers"][0]["type"] == "disk-full"
        assert "no space left on device" in confirmed["blockers"][0]["evidence"][0]["message"]
        without_permission(node, reader, ns, "app-5", blocker["summary"])
    finally:
        subprocess.run(["umount", str(record)], check=False)
    wait_gone(node, ns, "app-5")


def test_post_start_hook_that_never_returns(node: RealNode, ns: str, reader: User) -> None:
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
        # its pod worker is held in the hook: the kubelet has not processed the deletion
        assert generations(node, ns, "app-4") == (2, 1)
        assert "has not processed the deletion" in blocker["evidence"][-1]["message"]
        assert not_asked(blocker)
        confirmed = with_node_evidence(node, ns, "app-4", blocker["summary"])
        notes = [e["message"] for e in confirmed["blockers"][0]["evidence"]]
        assert any(n.startswith("node evidence read from logs/kubelet.log") for n in notes), notes
        without_permission(node, reader, ns, "app-4", blocker["summary"])
        # an hour on, the API server's event TTL has deleted its events (a hung hook writes
        # none after Started): the hook is still named, unchecked, never "no container running"
        for event in events_of(node, ns, "app-4"):
            node.cp.api("DELETE", f"/api/v1/namespaces/{ns}/events/{event['metadata']['name']}")
        expired = diagnosis(node, ns, "app-4")["blockers"][0]
        assert expired["type"] == "lifecycle-hook", expired["summary"]
        assert expired["summary"] == "postStart hook of app may not have returned"
        assert "no events at all" in expired["unchecked"]
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


@pytest.fixture(scope="module")
def csi_binary() -> Path:
    try:
        return build_csi_driver()
    except RuntimeError as error:
        skip_or_fail("real-node", str(error).splitlines()[0])
        raise


CSI_DRIVERS = "/apis/storage.k8s.io/v1/csidrivers"


def install_csi_driver(node: RealNode) -> None:
    """The driver's CSIDriver object, as its install creates it (kept if already there)."""
    try:
        node.cp.api("POST", CSI_DRIVERS, csi_driver_object())
    except ApiError as error:
        if error.status != 409:
            raise


def capture(node: RealNode, ns: str, name: str, *flags: str) -> None:
    """With REAL_NODE_CAPTURE=DIR, record what the diagnosis reads (`dump`) into DIR/name.json:
    how tests/fixtures/real-node/csi-driver-*.json and node-evidence-*.json were made."""
    target = os.environ.get("REAL_NODE_CAPTURE")
    if target:
        path = Path(target) / f"{name}.json"
        result = run_cli(
            "dump", "-n", ns, *flags, "-f", str(path), kubeconfig=node.cp.kubeconfig_path
        )
        assert result.returncode == 0, result.stderr


GONE = f"driver name {CSI_DRIVER} not found in the list of registered CSI drivers"
CSI_VARIANTS = {
    # variant: (main blocker type, its summary, what the kubelet logs, what the remedy greps)
    "uninstalled": ("csi-driver-missing", f"CSI driver {CSI_DRIVER} not installed", GONE, GONE),
    "stopped": (
        "csi-driver-missing",
        f"CSI driver {CSI_DRIVER} not running on {{node}}",
        GONE,
        GONE,
    ),
    "crashed": (
        "volumes-not-reclaimed",
        "containers exited; kubelet has not finished volume teardown",
        "Unmounter.TearDownAt failed: rpc error: code = Unavailable",
        "TearDownAt failed",
    ),
}


# the headline with --node-evidence: the driver named by the kubelet's own line
CSI_CONFIRMED = {
    "uninstalled": f"CSI driver {CSI_DRIVER} not installed: the kubelet says it is not registered",
    "stopped": ": the kubelet says it is not registered (kubelet log)",
    "crashed": "CSI driver call failing",
}


@pytest.mark.parametrize("variant", list(CSI_VARIANTS))
def test_csi_driver_gone(
    node: RealNode, ns: str, csi_binary: Path, variant: str, reader: User
) -> None:
    """A pod with an inline CSI volume, then the driver goes: its node plugin stops (it
    removes its registration socket, the kubelet deregisters the driver from CSINode) and,
    when uninstalled, its CSIDriver object is deleted; or it crashes (SIGKILL: the sockets stay,
    CSINode still lists it, calls get `connection refused`). The kubelet cannot call
    NodeUnpublishVolume: it retries `UnmountVolume.TearDown` with backoff and writes no event.
    Once the driver is back, the kubelet unpublishes the volume and removes the pod by itself."""
    main_type, summary, logged, grepped = CSI_VARIANTS[variant]
    install_csi_driver(node)
    node.start_csi_driver(csi_binary)
    try:
        pod = start_pod(node, ns, "csi-0", "sleep 3600", csi_driver=CSI_DRIVER)
        uid = pod["metadata"]["uid"]
        try:
            node.stop_csi_driver(crash=variant == "crashed")
            if variant == "uninstalled":
                node.cp.api("DELETE", f"{CSI_DRIVERS}/{CSI_DRIVER}")
            assert (CSI_DRIVER in node.csi_drivers()) == (variant == "crashed")
            delete_pod(node, ns, "csi-0")
            item = wait_for_blocker(node, ns, "csi-0", main_type)
            blocker = item["blockers"][0]
            assert blocker["summary"] == summary.format(node=node.name)
            assert "Pod/csi-0" in evidence_objects(blocker)  # the inline volume and its driver
            fields = [e["fields"] for e in blocker["evidence"]]
            assert {"volume": "csi", "driver": CSI_DRIVER} in fields
            assert item["phase"] == "Failed"  # every container exited; the volume holds the pod
            commands = [r.get("command", "") for r in blocker["remedy"]]
            assert any(grepped in c and uid in c for c in commands), commands
            wait_until(
                "the kubelet's TearDown error",
                lambda: any(
                    logged in line and uid in line for line in node.kubelet_log().split("\n")
                ),
            )
            # the remedy's grep, run on this kubelet's log, finds that line
            grep = next(c for c in commands if grepped in c)
            grep = grep.replace("journalctl -u kubelet --since -1h", f"cat {node.kubelet.log_path}")
            found = subprocess.run(["sh", "-c", grep], capture_output=True, text=True, check=False)
            assert logged in found.stdout, grep
            assert not [e for e in events_of(node, ns, "csi-0") if e["type"] != "Normal"]
            assert not_asked(blocker)
            says = CSI_CONFIRMED[variant]
            confirmed = with_node_evidence(node, ns, "csi-0", says)
            assert logged in confirmed["blockers"][0]["evidence"][0]["fields"]["line"]
            without_permission(node, reader, ns, "csi-0", blocker["summary"])
            capture(node, ns, f"csi-driver-{variant}")
        finally:  # the driver comes back: the kubelet unpublishes the volume, removes the pod
            install_csi_driver(node)
            if not node.csi_driver.running():
                node.start_csi_driver(csi_binary)
        wait_gone(node, ns, "csi-0")
        assert not [m for m in Path("/proc/mounts").read_text().splitlines() if uid in m]
    finally:
        node.stop_csi_driver()
        with contextlib.suppress(ApiError):
            node.cp.api("DELETE", f"{CSI_DRIVERS}/{CSI_DRIVER}")


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
    node: RealNode, tmp_path_factory: pytest.TempPathFactory, runtime_down: bool
) -> None:
    """`make demo-down`: a node started detached (as `make demo` does) is stopped by another
    process from what it recorded, with nothing left: no kubelet, containerd, shim or container
    process (a hook's too: in a hostPID pod it outlives its container), no mount; also when
    containerd is already gone and cannot be asked to kill its containers."""
    # a short directory: the kubelet's sockets under it must fit a unix socket path's 107 bytes
    # (a test's own tmp_path under a pytest-xdist worker did not)
    detached = RealNode(node.cp, tmp_path_factory.mktemp("detached"), die_with_parent=False)
    try:
        detached.start()
        detached.record()
        ns = unique_ns("real")
        create_namespace(node.cp, ns)
        start_pod(detached, ns, "hooked", "sleep 3600", post_start="sleep 3602", host_pid=True)
        # the Started event comes before the kubelet execs the hook: wait for its process
        hook = ["sleep", "3602"]
        wait_until("the postStart hook's sleep 3602", lambda: detached.processes(hook))
        delete_pod(detached, ns, "hooked")
        assert detached.processes(hook)
        if runtime_down:
            detached.stop_containerd()
        down = "import sys; from pathlib import Path; "
        down += "from tests.harness.node import stop_recorded; stop_recorded(Path(sys.argv[1]))"
        subprocess.run(
            [sys.executable, "-c", down, str(detached.state_dir)],
            cwd=REPO_ROOT,
            check=True,
            timeout=180,
        )
        assert leftovers(detached.state_dir) == []
    finally:
        detached.stop()
