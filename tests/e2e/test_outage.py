"""A mass outage on a real control plane: many pods stuck on a few dead nodes, grouped by cause,
and read with requests and bytes that do not grow with the healthy pods.

The test plays the kubelets: dead nodes report Ready=Unknown with a stale Lease, so nothing
ever confirms the deletion of the pods bound to them, as on a cluster whose zone went down.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.harness import scenarios
from tests.harness.api import condition, create_namespace, delete, get, now, unique_ns
from tests.harness.cli import run_cli, run_json
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import create_node, create_pod, renew_lease, set_pod_status, stale_lease

pytestmark = pytest.mark.e2e

STATS = re.compile(r"requests: (\d+), bytes: (\d+)")
DURATION = re.compile(r"^(\d+[smhdy])+$")


def dead_node(cp: ControlPlane, name: str) -> None:
    """A node whose kubelet stopped posting 10 minutes ago."""
    stopped = condition(
        "Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", now(-600)
    )
    create_node(cp, name, ready="Unknown", conditions=[stopped])
    stale_lease(cp, name, 600)


def stuck_on(cp: ControlPlane, ns: str, nodes: Sequence[str], per_node: int) -> list[str]:
    """per_node pods bound to each node, deleted with a 1s grace period; their names."""
    work = [(f"{node}-pod-{i}", node) for node in nodes for i in range(per_node)]

    def one(name_node: tuple[str, str]) -> str:
        name, node = name_node
        create_pod(cp, ns, name, node=node, grace_period=1)
        delete(cp, scenarios.pod_path(ns, name))
        return name

    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(one, work))
    scenarios.wait_past_deadline(get(cp, scenarios.pod_path(ns, names[-1])))
    return names


def healthy_pods(cp: ControlPlane, ns: str, node: str, start: int, count: int) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: create_pod(cp, ns, f"ok-{i}", node=node), range(start, count)))


@dataclass
class Outage:
    ns: str
    dead: list[str]
    healthy: list[str]  # nodes whose Lease must look fresh when the plugin runs


@pytest.fixture(scope="module")
def outage(control_plane: ControlPlane) -> Iterator[Outage]:
    """40 pods on 4 dead nodes, one pod whose CSI driver is gone, one held by a finalizer."""
    cp = control_plane
    ns = unique_ns("outage")
    create_namespace(cp, ns)
    dead = [f"{ns}-zone-b-{i}" for i in range(4)]
    for node in dead:
        dead_node(cp, node)
    stuck_on(cp, ns, dead, 10)
    driver = scenarios.pod_with_unreclaimed_volume(cp, ns)
    held = scenarios.pod_with_finalizer(cp, ns)
    scenarios.wait_past_deadline(get(cp, scenarios.pod_path(ns, driver.name)))
    yield Outage(ns, dead, [n for n in (driver.node, held.node) if n])


def renew(cp: ControlPlane, outage: Outage) -> None:
    for node in outage.healthy:
        renew_lease(cp, node)


def test_table_ends_with_the_causes(control_plane: ControlPlane, outage: Outage) -> None:
    renew(control_plane, outage)
    result = run_cli("pods", "-n", outage.ns, kubeconfig=control_plane.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    table, _, summary = result.stdout.partition("\n\n")
    assert len(table.splitlines()) == 1 + 42  # header and every pod, one line each
    zone = f"{outage.ns}-zone-b"
    assert summary.splitlines() == [
        "Summary: 42 pods, 3 causes",
        f"40 pods: node NotReady (4 nodes: {zone}-0, {zone}-1 ... {zone}-3)",
        f"1 pod: CSI driver {scenarios.MISSING_DRIVER} not installed or not running",
        "1 pod: finalizer example.com/drain",
    ], result.stdout
    rows_only = run_cli(
        "pods", "-n", outage.ns, "--no-headers", kubeconfig=control_plane.kubeconfig_path
    )
    assert len(rows_only.stdout.splitlines()) == 42  # scripts get rows, nothing else


def test_summary_alone(control_plane: ControlPlane, outage: Outage) -> None:
    renew(control_plane, outage)
    result = run_cli("pods", "-n", outage.ns, "--summary", kubeconfig=control_plane.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Summary: 42 pods, 3 causes"
    assert lines[1].startswith("40 pods: node NotReady (4 nodes: ")
    assert len(lines) == 4


def test_json_summary(control_plane: ControlPlane, outage: Outage) -> None:
    renew(control_plane, outage)
    report = run_json("pods", "-n", outage.ns, kubeconfig=control_plane.kubeconfig_path)
    assert len(report["items"]) == 42
    groups = {(g["type"], g["count"]): g for g in report["summary"]}
    assert set(groups) == {("node-not-ready", 40), ("csi-driver-missing", 1), ("finalizer", 1)}
    nodes = groups[("node-not-ready", 40)]
    assert nodes["shared"] == {"kind": "Node", "names": outage.dead}
    example = nodes["example"]
    assert example["kind"] == "Pod" and example["namespace"] == outage.ns
    assert any(i["name"] == example["name"] and i["node"] in outage.dead for i in report["items"])
    driver = groups[("csi-driver-missing", 1)]["shared"]
    assert driver == {"kind": "CSIDriver", "names": [scenarios.MISSING_DRIVER]}
    finalizer = groups[("finalizer", 1)]["shared"]
    assert finalizer == {"kind": "finalizer", "names": ["example.com/drain"]}


def _stats(cp: ControlPlane, ns: str) -> tuple[int, int, int]:
    """(pods found, requests, bytes) of `pods -n ns -o json -v 1`."""
    result = run_cli("pods", "-n", ns, "-o", "json", "-v", "1", kubeconfig=cp.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    match = STATS.search(result.stderr)
    assert match, result.stderr
    return len(json.loads(result.stdout)["items"]), int(match[1]), int(match[2])


def test_reads_grow_with_the_stuck_pods_not_the_healthy_ones(
    control_plane: ControlPlane,
) -> None:
    """210 pods stuck on 7 dead nodes (past the point where a full list used to be read),
    then 150 more healthy pods beside them: the same requests, and the bytes grow only by the
    candidates' Table rows, a fraction of what the healthy pods' full objects weigh."""
    cp = control_plane
    ns = unique_ns("mass")
    create_namespace(cp, ns)
    healthy = f"{ns}-ok"
    create_node(cp, healthy)
    dead = [f"{ns}-dead-{i}" for i in range(7)]
    for node in dead:
        dead_node(cp, node)
    stuck_on(cp, ns, dead, 30)
    healthy_pods(cp, ns, healthy, 0, 30)
    found, requests, before = _stats(cp, ns)
    assert found == 210
    healthy_pods(cp, ns, healthy, 30, 180)
    found_after, requests_after, after = _stats(cp, ns)
    assert found_after == 210
    assert requests_after == requests
    full_pod = len(json.dumps(get(cp, f"/api/v1/namespaces/{ns}/pods/ok-0")))
    per_healthy_pod = (after - before) / 150
    assert per_healthy_pod < full_pod / 3, (per_healthy_pod, full_pod)


@dataclass
class Mixed:
    ns: str
    runtime_down: str  # a node whose kubelet renews its Lease: refreshed before each run
    brief: list[str]  # pods on a dead or missing node that nothing else holds


@pytest.fixture(scope="module")
def mixed(control_plane: ControlPlane) -> Mixed:
    """Pods on two dead nodes and a missing one (explained from their metadata in the
    table), next to pods that need more: one on a dead node with a finalizer, one there the
    kubelet confirmed (grace 0) that a finalizer holds, and pods on a node whose runtime is
    down under a live kubelet (their events are read)."""
    cp = control_plane
    ns = unique_ns("brief")
    create_namespace(cp, ns)
    dead = [f"{ns}-dead-{i}" for i in range(2)]
    for node in dead:
        dead_node(cp, node)
    runtime_down = f"{ns}-runtime"
    create_node(cp, runtime_down, ready="False")
    brief = stuck_on(cp, ns, [*dead, f"{ns}-gone"], 5)
    for name in ("held-0", "confirmed-0"):
        create_pod(cp, ns, name, node=dead[0], grace_period=1, finalizers=["example.com/drain"])
        set_pod_status(cp, ns, name, "Running", {"app": "running"})
    delete(cp, scenarios.pod_path(ns, "held-0"))
    delete(cp, scenarios.pod_path(ns, "confirmed-0"), grace_period=0)
    for i in range(4):
        create_pod(cp, ns, f"busy-{i}", node=runtime_down, grace_period=1)
        set_pod_status(cp, ns, f"busy-{i}", "Running", {"app": "running"})
        delete(cp, scenarios.pod_path(ns, f"busy-{i}"))
    scenarios.wait_past_deadline(get(cp, scenarios.pod_path(ns, "busy-3")))
    return Mixed(ns, runtime_down, brief)


def _cells(table: str, columns: int) -> list[list[str]]:
    """The first `columns` cells of each row, cut where the header's columns start;
    durations (TERMINATING, OVERDUE) may tick between two runs, so they read `<duration>`."""
    lines = table.splitlines()
    starts: list[int | None] = [m.start() for m in re.finditer(r"(?<!\S)\S", lines[0])]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))[:columns]
    return [
        [
            "<duration>" if DURATION.match(cell) else cell
            for cell in (line[a:b].strip() for a, b in bounds)
        ]
        for line in lines
    ]


def test_table_and_summary_same_as_from_whole_pods(
    control_plane: ControlPlane, mixed: Mixed
) -> None:
    """The table and --summary read pods on a dead node metadata only; `-o wide`, which shows
    their phase and containers, reads them whole: both say the same, row for row and cause
    for cause, and the brief read moves fewer bytes with the same requests."""
    cp = control_plane

    def run(*flags: str) -> tuple[str, int, int]:
        renew_lease(cp, mixed.runtime_down)
        result = run_cli("pods", "-n", mixed.ns, "-v", "1", *flags, kubeconfig=cp.kubeconfig_path)
        assert result.returncode == 0, result.stderr
        match = STATS.search(result.stderr)
        assert match, result.stderr
        return result.stdout, int(match[1]), int(match[2])

    table, requests, brief_bytes = run()
    wide, wide_requests, whole_bytes = run("-o", "wide")
    summary, _, _ = run("--summary")
    rows, causes = table.split("\n\n")
    wide_rows, wide_causes = wide.split("\n\n")
    assert len(rows.splitlines()) == 1 + 15 + 2 + 4  # more than 20: the causes follow
    assert wide_rows.splitlines()[0].split()[5:] == [
        "CONFIDENCE",
        "PHASE",
        "CONTAINERS",
        "FINALIZERS",
    ]
    assert _cells(rows, 5) == _cells(wide_rows, 5)
    assert causes == wide_causes == summary
    ns = mixed.ns
    assert summary.splitlines() == [
        "Summary: 21 pods, 4 causes",
        f"11 pods: node NotReady (2 nodes: {ns}-dead-0, {ns}-dead-1)",  # held-0 among them
        f"5 pods: node no longer exists ({ns}-gone)",
        f"4 pods: container runtime down ({mixed.runtime_down})",
        "1 pod: finalizer example.com/drain",  # confirmed-0
    ]
    # the same reads, and held-0 and confirmed-0 (finalizers) read whole; the pods on dead
    # nodes without their spec and status
    assert requests == wide_requests + 2

    def size(name: str, keys: tuple[str, ...] = ("metadata", "spec", "status")) -> int:
        pod = get(cp, scenarios.pod_path(mixed.ns, name))
        return len(json.dumps({k: pod[k] for k in keys}, separators=(",", ":")))

    saved = sum(size(name, ("spec", "status")) for name in mixed.brief)
    reread = size("held-0") + size("confirmed-0")
    assert whole_bytes - (brief_bytes - reread) > 0.8 * saved, (whole_bytes, brief_bytes, saved)
