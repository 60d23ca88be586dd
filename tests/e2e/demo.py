"""`make demo`: a local control plane with realistic stuck pods and namespaces, explained.

    python -m tests.e2e.demo up --state-dir .demo
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e import scenarios
from tests.e2e.controlplane import ControlPlane, ControlPlaneError, attach, up
from tests.e2e.kubelet import create_apiservice, create_namespace, get_or_none


def seed(cp: ControlPlane) -> None:
    create_namespace(cp, "shop")
    scenarios.pod_on_dead_node(cp, "shop", "web-0")
    scenarios.pod_with_running_containers(cp, "shop", "hung-worker-0")
    scenarios.pod_with_unreclaimed_volume(cp, "shop", "db-0")
    scenarios.pod_with_finalizer(cp, "shop", "batch-0")
    scenarios.pod_on_missing_node(cp, "shop", "cache-0")
    scenarios.pod_in_grace_period(cp, "shop", "slow-shutdown-0")
    scenarios.namespace_with_orphaned_custom_resource(cp, "legacy-app", "widgets.demo.example.com")
    scenarios.namespace_with_blocking_webhook(cp, "payments", "gadgets.demo.example.com")
    scenarios.namespace_with_broken_conversion(cp, "analytics", "gizmos.demo.example.com")
    scenarios.namespace_with_metadata_finalizer(cp, "old-team")
    scenarios.namespace_with_stuck_pod(cp, "ci-runners")
    # The classic: a metrics APIService whose backend was removed stalls every namespace.
    if get_or_none(cp, "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io") is None:
        create_apiservice(cp, "metrics.k8s.io", "v1beta1", "kube-system", "metrics-server")


def _plugin(kubeconfig: Path, *args: str) -> None:
    command = ["kubectl", "terminating", *args]
    print(f"\n$ {' '.join(command)}", flush=True)
    env = dict(os.environ, KUBECONFIG=str(kubeconfig))
    subprocess.run([sys.executable, "-m", "kubectl_terminating", *args], env=env, check=False)


def demo(state_dir: Path) -> int:
    kubeconfig = up(state_dir)
    cp = attach(state_dir)
    try:
        if get_or_none(cp, "/api/v1/namespaces/shop") is None:  # a fresh cluster
            print("seeding stuck pods and namespaces...", file=sys.stderr)
            seed(cp)
    finally:
        cp.detach()
    _plugin(kubeconfig, "pods", "-A")
    _plugin(kubeconfig, "ns")
    _plugin(kubeconfig, "ns", "--explain")
    _plugin(kubeconfig, "all", "-A")
    kubectl = Path(cp.binaries_dir) / "kubectl"
    print(
        f"""
The demo cluster keeps running. Point your own tools at it:
    export KUBECONFIG={kubeconfig}
    {kubectl} get pods -A
    .venv/bin/kubectl-terminating pods -n shop web-0 --explain
Stop it (only the processes the demo started):
    make demo-down""",
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.demo")
    parser.add_argument("command", choices=["up"])
    parser.add_argument("--state-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        return demo(args.state_dir.resolve())
    except ControlPlaneError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
