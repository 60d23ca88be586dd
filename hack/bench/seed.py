"""What the benchmark leaves stuck: pods from every e2e scenario, and terminating namespaces."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hack.bench import objects
from hack.bench.filler import Filler
from hack.bench.settings import STUCK_COPIES, STUCK_SCENARIOS, log
from tests.harness import scenarios
from tests.harness.api import configmap_body
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import pod_body

HOLDING_FINALIZER = "bench.example.com/cleanup"


@dataclass
class Seeded:
    stuck_pods: set[str] = field(default_factory=set)  # "namespace/name", every terminating pod
    terminating_namespaces: list[str] = field(default_factory=list)


def seed_stuck_pods(cp: ControlPlane, filler: Filler, seeded: Seeded) -> None:
    """STUCK_COPIES of each stuck-pod scenario, each in its own namespace, concurrently."""
    jobs: list[tuple[Callable[..., Any], str]] = []
    for function_name, short in STUCK_SCENARIOS:
        function = getattr(scenarios, function_name, None)
        if function is None:  # scenarios.py is shared: tolerate one being renamed
            log(f"scenario {function_name} not found in tests/harness/scenarios.py, skipped")
            continue
        jobs.extend((function, f"stuck-{short}-{copy}") for copy in range(STUCK_COPIES))
    filler.create_namespaces([ns for _, ns in jobs])
    started = time.monotonic()

    def one(job: tuple[Callable[..., Any], str]) -> str:
        function, ns = job
        stuck = function(cp, ns)
        return f"{stuck.namespace}/{stuck.name}"

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        seeded.stuck_pods.update(pool.map(one, jobs))
    log(f"stuck pods: {len(jobs)} scenarios in {time.monotonic() - started:.1f}s")


def seed_terminating_namespaces(filler: Filler, seeded: Seeded, count: int, crds: int) -> None:
    """Each holds a pod on a node that is gone, and a custom resource with a finalizer whose
    controller does not exist; ConfigMaps, Secrets and a few other custom objects go."""
    if count == 0:
        return
    if crds == 0:
        raise SystemExit("M > 0 needs K > 0 (a custom resource holds each namespace)")
    names = [f"term-{i:03d}" for i in range(count)]
    filler.create_namespaces(names)
    filler.run("terminating namespaces", [partial(_fill, filler, ns, crds) for ns in names])
    seeded.terminating_namespaces = names
    seeded.stuck_pods.update(f"{ns}/runner-0" for ns in names)


def _fill(filler: Filler, ns: str, crds: int) -> int:
    """ns's content, then its deletion: 9 objects."""
    index = int(ns.rpartition("-")[2])
    for j in range(3):
        body = configmap_body(f"config-{j}", data={"app.yaml": "x: 1\n" * 20})
        filler.call("POST", f"/api/v1/namespaces/{ns}/configmaps", body)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds"},
        "stringData": {"password": "hunter2"},
    }
    filler.call("POST", f"/api/v1/namespaces/{ns}/secrets", secret)
    for j in range(3):
        crd = (index * 3 + j) % crds
        if j == 0:
            held = objects.custom_object(crd, f"held-{ns}", [HOLDING_FINALIZER])
        else:
            held = objects.custom_object(crd, f"extra-{j}")
        filler.create_custom(crd, ns, held)
    filler.call(
        "POST", f"/api/v1/namespaces/{ns}/pods", pod_body("runner-0", f"{ns}-gone", [RUNNER])
    )
    filler.call("DELETE", f"/api/v1/namespaces/{ns}")
    return 9


RUNNER = {"name": "runner", "image": "registry.example.com/ci:1"}


def wait_namespaces_settled(filler: Filler, names: Sequence[str], timeout: float = 600.0) -> None:
    """Until the namespace controller has been through each: a condition reports what is
    left, and the pod it deleted is terminating."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending:
        for ns in sorted(pending):
            status = filler.call("GET", f"/api/v1/namespaces/{ns}").get("status") or {}
            conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
            pod = filler.call("GET", f"/api/v1/namespaces/{ns}/pods/runner-0")
            if "True" in conditions.values() and pod.get("metadata", {}).get("deletionTimestamp"):
                pending.discard(ns)
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"namespaces never settled: {sorted(pending)}")
        if pending:
            time.sleep(1.0)
