"""`make demo`: a local control plane with realistic stuck pods and namespaces, explained.

    python -m tests.harness.demo up --state-dir .demo

A fresh state dir is seeded once; every run then plays the kubelet of the healthy nodes (renews
their Leases), shows what is stuck and why, and last breaks the metrics APIService to show how
one unavailable APIService holds every terminating namespace. Where the machine can run one
(tests/harness/node.py: Linux, root, Debian's containerd), a real node (containerd + kubelet) joins
too, with one pod really stuck on it: a postStart hook that never returns.

    python -m tests.harness.demo down --state-dir .demo

stops it all (`make demo-down`): the node from what it recorded, then the control plane.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from tests.harness import scenarios
from tests.harness.api import (
    create_namespace,
    delete,
    get,
    get_or_none,
    namespace_conditions,
    wait_for,
)
from tests.harness.api_extensions import apiservice_condition, create_apiservice
from tests.harness.controlplane import (
    ApiError,
    ControlPlane,
    ControlPlaneError,
    _live_state,
    attach,
    down,
    up,
)
from tests.harness.kubelet import renew_lease
from tests.harness.node import (
    RealNode,
    busybox_pod,
    ensure_packages,
    recorded_name,
    recorded_pids,
    stop_recorded,
    why_unavailable,
)

METRICS = "v1beta1.metrics.k8s.io"
METRICS_PATH = f"/apis/apiregistration.k8s.io/v1/apiservices/{METRICS}"
NODE_DIR = "node"  # the real node's state dir, under the demo's
HOOKED = "hooked-0"  # the pod held by its postStart hook on the real node
HOOKED_PATH = f"/api/v1/namespaces/shop/pods/{HOOKED}"
NAMESPACES = ("legacy-app", "payments", "old-team", "archive", "ci-runners", "analytics")


def seed(cp: ControlPlane) -> None:
    create_namespace(cp, "shop")
    scenarios.pod_on_dead_node(cp, "shop", "web-0", grace_period=1)
    scenarios.pod_with_running_containers(cp, "shop", "hung-worker-0")
    scenarios.pod_with_unreclaimed_volume(cp, "shop", "db-0")
    scenarios.pod_with_finalizer(cp, "shop", "batch-0")
    scenarios.pod_on_missing_node(cp, "shop", "cache-0", grace_period=1)
    scenarios.pod_in_grace_period(cp, "shop", "slow-shutdown-0")
    scenarios.volume_in_use(cp, "shop", "reports-0")  # a claim and a volume held while in use
    scenarios.namespace_with_orphaned_custom_resource(cp, "legacy-app", "widgets.demo.example.com")
    scenarios.namespace_with_blocking_webhook(cp, "payments", "gadgets.demo.example.com")
    scenarios.namespace_with_metadata_finalizer(cp, "old-team")
    scenarios.namespace_with_spec_finalizer(cp, "archive", "backup.example.com/archive")
    scenarios.namespace_with_stuck_pod(cp, "ci-runners", grace_period=1)
    # Last: about 30 s after a conversion webhook starts failing, the API server cannot serve
    # lists of that type any more, which stalls the namespace controller for every namespace.
    scenarios.namespace_with_broken_conversion(cp, "analytics", "gizmos.demo.example.com")


def play_kubelets(cp: ControlPlane, real: str | None) -> None:
    """Renew the Lease of every node that reports Ready=True, as its kubelet would (not the
    real node's: its kubelet does)."""
    for node in get(cp, "/api/v1/nodes").get("items") or []:
        conditions = node.get("status", {}).get("conditions") or []
        if node["metadata"]["name"] != real and any(
            c["type"] == "Ready" and c["status"] == "True" for c in conditions
        ):
            with contextlib.suppress(ApiError):  # a node without a Lease: nothing to renew
                renew_lease(cp, node["metadata"]["name"])


def _start_real_node(cp: ControlPlane, node_dir: Path) -> str:
    """The recorded node if its containerd and kubelet still run, else a fresh one that
    outlives this command; its name."""
    name = recorded_name(node_dir)
    if name is not None and set(recorded_pids(node_dir)) == {"containerd", "kubelet"}:
        return name
    stop_recorded(node_dir)  # leftovers of a dead or half-dead one
    print("starting a real node (containerd + kubelet)...", file=sys.stderr, flush=True)
    node = RealNode(cp, node_dir, die_with_parent=False)
    node.start()
    node.record()
    return node.name


def _hold_pod_with_hook(cp: ControlPlane, node_name: str) -> None:
    """A pod whose postStart hook never returns (hostPID: killing the container does not end
    the hook), deleted: the kubelet's pod worker waits on the hook, so it stays Terminating.
    Returns once the grace period is over."""
    if get_or_none(cp, HOOKED_PATH) is None:
        pod = busybox_pod(
            node_name, HOOKED, "sleep 86400", grace=1, post_start="sleep 86401", host_pid=True
        )
        cp.api("POST", "/api/v1/namespaces/shop/pods", pod)
        events = f"/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3D{HOOKED}"
        wait_for(
            lambda: any(e.get("reason") == "Started" for e in get(cp, events).get("items") or []),
            120.0,
            interval=0.5,
            message=f"{HOOKED} started on {node_name}",
        )
        delete(cp, HOOKED_PATH)
    meta = get(cp, HOOKED_PATH)["metadata"]
    deleted = datetime.fromisoformat(meta["deletionTimestamp"].replace("Z", "+00:00"))
    left = deleted.timestamp() + meta.get("deletionGracePeriodSeconds", 0) + 1 - time.time()
    time.sleep(max(0.0, left))  # the deadline: before it, the pod is not stuck yet


def add_real_node(cp: ControlPlane, state_dir: Path) -> str | None:
    """Join a real node and hold one pod on it for real; the node's name, or None (and one
    line saying why) where this machine cannot run one."""
    ensure_packages()
    reason = why_unavailable()
    try:
        if reason is None:
            name = _start_real_node(cp, state_dir / NODE_DIR)
            _hold_pod_with_hook(cp, name)
            return name
    except (RuntimeError, ControlPlaneError, ApiError, TimeoutError) as error:
        stop_recorded(state_dir / NODE_DIR)
        reason = str(error).splitlines()[0]
    print(f"no real node in this demo: {reason}", file=sys.stderr)
    return None


def wait_for_namespace_controller(cp: ControlPlane, timeout: float = 30.0) -> None:
    """Until the namespace controller has written its conditions on the demo's namespaces."""

    def written() -> bool:
        return all(
            get_or_none(cp, f"/api/v1/namespaces/{ns}") is None or namespace_conditions(cp, ns)
            for ns in NAMESPACES
        )

    with contextlib.suppress(TimeoutError):  # show what there is rather than fail the demo
        wait_for(written, timeout, interval=0.5, message="namespace conditions")


def break_metrics_apiservice(cp: ControlPlane) -> None:
    """The classic: metrics-server removed, its APIService left behind."""
    if get_or_none(cp, METRICS_PATH) is None:
        create_apiservice(cp, "metrics.k8s.io", "v1beta1", "kube-system", "metrics-server")
    with contextlib.suppress(TimeoutError):
        wait_for(lambda: apiservice_condition(cp, METRICS), 15.0, message=f"{METRICS} status")


def _plugin(kubeconfig: Path, *args: str) -> None:
    command = ["kubectl", "terminating", *args]
    print(f"\n$ {' '.join(command)}", flush=True)
    env = dict(os.environ, KUBECONFIG=str(kubeconfig))
    subprocess.run([sys.executable, "-m", "kubectl_terminating", *args], env=env, check=False)


def _say(text: str) -> None:
    print(f"\n# {text}")


def demo(state_dir: Path) -> int:
    if _live_state(state_dir) is None:  # a new control plane: a recorded node's is gone
        stop_recorded(state_dir / NODE_DIR)
    kubeconfig = up(state_dir)
    cp = attach(state_dir)
    try:
        if get_or_none(cp, "/api/v1/namespaces/shop") is None:  # a fresh cluster
            print("seeding stuck pods and namespaces...", file=sys.stderr, flush=True)
            seed(cp)
        if get_or_none(cp, METRICS_PATH) is not None:  # left by an earlier run: start without
            delete(cp, METRICS_PATH)
        real = add_real_node(cp, state_dir)
        play_kubelets(cp, real)
        wait_for_namespace_controller(cp)
    finally:
        cp.detach()
    _plugin(kubeconfig, "pods", "-A")
    if real is not None:
        _say(f"{HOOKED} runs on {real}, a real node (containerd + kubelet): its postStart hook")
        print("# never returns, and the kubelet tears the pod down only after it does.")
        _plugin(kubeconfig, "pods", "-n", "shop", HOOKED, "--explain")
    _plugin(kubeconfig, "ns")
    _say("analytics: its CRD's conversion webhook is gone. About 30 s later (1.36) the API server")
    print("# cannot list that type at all, which stalls the namespace controller everywhere.")
    _plugin(kubeconfig, "ns", "payments", "--explain")
    _plugin(kubeconfig, "all", "-A")
    _say("Now metrics-server goes away and leaves its APIService behind: discovery fails, and")
    print("# no namespace still in its content phase can finish. archive and old-team are past")
    print("# it (kubernetes gone from spec.finalizers): only their own finalizers hold them.")
    cp = attach(state_dir)
    try:
        break_metrics_apiservice(cp)
    finally:
        cp.detach()
    _plugin(kubeconfig, "ns")
    kubectl = Path(cp.binaries_dir) / "kubectl"
    print(
        f"""
The demo cluster keeps running. Point your own tools at it:
    export KUBECONFIG={kubeconfig}
    {kubectl} get pods -A
    .venv/bin/kubectl-terminating ns --explain
    .venv/bin/kubectl-terminating pods -n shop web-0 --explain
Stop it (only the processes the demo started):
    make demo-down""",
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.demo")
    parser.add_argument("command", choices=["up", "down"])
    parser.add_argument("--state-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    state_dir = args.state_dir.resolve()
    if args.command == "down":
        stopped = stop_recorded(state_dir / NODE_DIR) + down(state_dir)
        print(f"stopped {len(stopped)} processes", file=sys.stderr)
        return 0
    try:
        return demo(state_dir)
    except ControlPlaneError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
