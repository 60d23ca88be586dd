"""Stuck pods on a real control plane: each cause built as it happens, then diagnosed.

Every situation lives in its own namespace and is built once per module (in parallel), then
`pods -A -o json` is run once and each test asserts on its pod. The test plays the kubelet;
healthy nodes get their Lease renewed right before each run of the plugin.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubectl_terminating.timeutil import human_duration, parse_time
from tests.harness import scenarios
from tests.harness.api import create_namespace, delete, get, unique_ns
from tests.harness.cli import assert_one_line_error, run_cli, run_json
from tests.harness.controlplane import ApiError, ControlPlane
from tests.harness.kubelet import renew_lease
from tests.harness.scenarios import Stuck
from tests.harness.storage import volume_attachment_name

pytestmark = pytest.mark.e2e

Item = dict[str, Any]
Builder = Callable[[ControlPlane, str], Stuck]


def _past_deadline(build: Builder) -> Builder:
    """A scenario whose pod is deleted with a 1s grace period, returned once past it."""

    def built(cp: ControlPlane, ns: str) -> Stuck:
        stuck = build(cp, ns)
        scenarios.wait_past_deadline(get(cp, scenarios.pod_path(ns, stuck.name)))
        return stuck

    return built


def _grace_and_stuck(cp: ControlPlane, ns: str) -> Stuck:
    """A stuck pod (orphan-0, node gone) beside one inside its grace period (slow-0, returned:
    its node is the healthy one)."""
    _past_deadline(lambda c, n: scenarios.pod_on_missing_node(c, n, grace_period=1))(cp, ns)
    return scenarios.pod_in_grace_period(cp, ns)


# key -> (builder, whether the scenario's node is meant to be healthy); each its own namespace
SCENARIOS: dict[str, tuple[Builder, bool]] = {
    "missing": (
        _past_deadline(lambda cp, ns: scenarios.pod_on_missing_node(cp, ns, grace_period=1)),
        False,
    ),
    "dead": (
        _past_deadline(lambda cp, ns: scenarios.pod_on_dead_node(cp, ns, grace_period=1)),
        False,
    ),
    "silent": (scenarios.pod_on_silent_node, False),
    "hung": (scenarios.pod_with_running_containers, True),
    "disk": (scenarios.pod_on_full_disk, True),
    "exec": (scenarios.pod_with_exec_hang, True),
    "cni": (scenarios.pod_with_failing_network_teardown, True),
    "sandbox": (scenarios.pod_with_sandbox_kill_timed_out, True),
    "nodriver": (scenarios.pod_with_unreclaimed_volume, True),
    "unregistered": (scenarios.pod_with_unregistered_driver, True),
    "detach": (scenarios.pod_with_failing_detach, True),
    "taint": (scenarios.pod_with_driver_evicted_by_taint, True),
    "job": (scenarios.pod_with_job_tracking_finalizer, True),
    "custom": (scenarios.pod_with_finalizer, True),
    "foreground": (scenarios.pod_with_foreground_dependents, True),
    "webhook": (scenarios.pod_blocked_by_webhook, True),
    "grace": (scenarios.pod_in_grace_period, True),
    # the same name as the terminal pod of "custom" (job-0), in another namespace
    "twin": (
        _past_deadline(
            lambda cp, ns: scenarios.pod_on_missing_node(cp, ns, name="job-0", grace_period=1)
        ),
        False,
    ),
    "mixed": (_grace_and_stuck, True),
}
# scenarios that create their namespace themselves
OWN_NAMESPACE: dict[str, Builder] = {"nsgone": scenarios.namespace_with_stuck_pod}


@dataclass
class Cluster:
    cp: ControlPlane
    pods: dict[str, Stuck] = field(default_factory=dict)
    healthy_nodes: list[str] = field(default_factory=list)

    def ns(self, key: str) -> str:
        return self.pods[key].namespace

    def fresh(self) -> None:
        """Renew the Leases of the nodes meant to be healthy, as their kubelets would."""
        for node in self.healthy_nodes:
            renew_lease(self.cp, node)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.fresh()
        return run_cli(*args, "--color", "never", kubeconfig=self.cp.kubeconfig_path)

    def json(self, *args: str) -> dict[str, Any]:
        self.fresh()
        return run_json(*args, kubeconfig=self.cp.kubeconfig_path)


def _build(cp: ControlPlane, key: str, ns: str) -> tuple[str, Stuck, bool]:
    if key in OWN_NAMESPACE:
        return key, OWN_NAMESPACE[key](cp, ns), False
    build, healthy = SCENARIOS[key]
    create_namespace(cp, ns)
    return key, build(cp, ns), healthy


@pytest.fixture(scope="module")
def cluster(control_plane: ControlPlane) -> Iterator[Cluster]:
    built = Cluster(control_plane)
    namespaces = {key: unique_ns(f"pods-{key}") for key in [*SCENARIOS, *OWN_NAMESPACE]}
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:  # the harness keeps 8 connections
            for key, stuck, healthy in pool.map(
                lambda kv: _build(control_plane, *kv), namespaces.items()
            ):
                built.pods[key] = stuck
                if healthy and stuck.node:
                    built.healthy_nodes.append(stuck.node)
        yield built
    finally:
        # cluster-scoped: never leave it behind, even when building failed half-way
        name = scenarios.pod_webhook_name(namespaces["webhook"])
        with contextlib.suppress(ApiError):
            delete(
                control_plane,
                f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}",
            )


@pytest.fixture(scope="module")
def report(cluster: Cluster) -> dict[tuple[str, str], Item]:
    """`pods -A -o json` once for every scenario, by (namespace, name)."""
    data = cluster.json("pods", "-A")
    assert data["apiVersion"] == "terminating.kubectl.io/v1" and data["kind"] == "List"
    return {(i["namespace"], i["name"]): i for i in data["items"]}


def item(cluster: Cluster, report: dict[tuple[str, str], Item], key: str) -> Item:
    stuck = cluster.pods[key]
    found = report.get((stuck.namespace, stuck.name))
    assert found is not None, f"{stuck.namespace}/{stuck.name} not reported"
    return found


def _seconds_between(since: str, found: Item) -> range:
    """Seconds from `since` to the `now` the run answered at (its deadline plus its overdue
    seconds, within the rounding of each)."""
    start, deadline = parse_time(since), parse_time(found["deletionTimestamp"])
    assert start is not None and deadline is not None
    seconds = int((deadline - start).total_seconds()) + found["overdueSeconds"]
    assert seconds >= 600  # Ready=Unknown 10m before the build
    return range(seconds - 1, seconds + 2)


def types(found: Item) -> list[str]:
    return [b["type"] for b in found["blockers"]]


def blocker(found: Item, kind: str) -> Item:
    matching: list[Item] = [b for b in found["blockers"] if b["type"] == kind]
    assert matching, f"no {kind} blocker in {types(found)}"
    return matching[0]


def messages(b: Item) -> str:
    return "\n".join(e["message"] for e in b["evidence"])


def evidence_fields(b: Item) -> list[Item]:
    return [e.get("fields", {}) for e in b["evidence"]]


def commands(b: Item) -> list[str]:
    return [r.get("command", "") for r in b["remedy"]]


def destructive_commands(b: Item) -> list[str]:
    return [r.get("command", "") for r in b["remedy"] if r["destructive"]]


def assert_no_node_problem(found: Item) -> None:
    assert not [t for t in types(found) if t.startswith("node-")], types(found)


# -- node --------------------------------------------------------------------------------------


def test_node_missing(cluster: Cluster, report: dict[tuple[str, str], Item]) -> None:
    found = item(cluster, report, "missing")
    node = cluster.pods["missing"].node
    assert types(found) == ["node-missing"]
    assert found["overdueSeconds"] > 0 and found["node"] == node
    b = blocker(found, "node-missing")
    assert b["summary"] == f"node {node} no longer exists"
    assert evidence_fields(b) == [{"nodeName": node, "nodeExists": False}]
    assert commands(b)[0] == f"kubectl get node {node}"
    assert destructive_commands(b) == [
        f"kubectl delete pod -n {found['namespace']} {found['name']} --grace-period=0 --force"
    ]


def test_node_not_ready_since(cluster: Cluster, report: dict[tuple[str, str], Item]) -> None:
    found = item(cluster, report, "dead")
    node = cluster.pods["dead"].node
    assert types(found)[0] == "node-not-ready"
    assert "containers-running" not in types(found)  # the node is the cause, not the runtime
    b = blocker(found, "node-not-ready")
    ready = evidence_fields(b)[0]
    # Ready=Unknown since 10m before the build: the age is the one at the run's own `now`
    # (the deadline plus overdueSeconds), however long the module has taken
    assert b["summary"] in {
        f"node {node} NotReady for {human_duration(s)} (kubelet stopped posting)"
        for s in _seconds_between(ready["lastTransitionTime"], found)
    }
    assert ready["Ready"] == "Unknown" and ready["reason"] == "NodeStatusUnknown"
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", ready["lastTransitionTime"])
    assert f"Node {node} Ready=Unknown since {ready['lastTransitionTime']}" in messages(b)
    taint = f"kubectl taint nodes {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
    assert destructive_commands(b) == [
        taint,
        f"kubectl delete pod -n {found['namespace']} {found['name']} --grace-period=0 --force",
    ]


def test_stale_lease_with_ready_true(cluster: Cluster, report: dict[tuple[str, str], Item]) -> None:
    found = item(cluster, report, "silent")
    node = cluster.pods["silent"].node
    assert types(found)[0] == "node-not-ready"
    b = blocker(found, "node-not-ready")
    lease = b["evidence"][0]
    age = lease["fields"]["secondsSinceRenew"]
    assert b["summary"] == f"node {node} lease not renewed for {human_duration(age)}"
    assert lease["object"] == {
        "kind": "Lease",
        "name": node,
        "namespace": "kube-node-lease",
        "apiVersion": "coordination.k8s.io/v1",
    }
    assert lease["fields"]["secondsSinceRenew"] >= 600
    assert lease["fields"]["staleAfterSeconds"] == 40


# -- containers --------------------------------------------------------------------------------


def test_running_containers_on_healthy_node_are_never_a_node_problem(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "hung")
    assert types(found) == ["containers-running"]
    assert_no_node_problem(found)
    b = blocker(found, "containers-running")
    assert b["summary"].startswith("app still running ")
    assert b["summary"].endswith(" past deadline (runtime did not kill them)")
    assert evidence_fields(b)[0]["running"] == ["app"]
    kill = [f for f in evidence_fields(b) if f.get("reason") == "FailedKillPod"]
    assert kill and kill[0]["count"] == 12 and "DeadlineExceeded" in kill[0]["message"]
    assert "likely cause: the container runtime is hung" in messages(b)
    assert destructive_commands(b) == ["systemctl restart containerd"]


def test_disk_pressure_hint(cluster: Cluster, report: dict[tuple[str, str], Item]) -> None:
    found = item(cluster, report, "disk")
    node = cluster.pods["disk"].node
    assert types(found) == ["containers-running"]
    b = blocker(found, "containers-running")
    assert b["summary"].endswith(" past deadline (node disk full)")
    assert "likely cause: the runtime's data disk is full" in messages(b)
    assert f"Node {node} has DiskPressure=True" in messages(b)
    sync = [f for f in evidence_fields(b) if f.get("reason") == "FailedSync"]
    assert sync and "no space left on device" in sync[0]["message"]
    assert "df -h /var/lib/containerd /var/lib/docker /var/lib/kubelet" in commands(b)


def test_host_pid_post_start_exec_hang_hint(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "exec")
    assert types(found) == ["containers-running"]
    b = blocker(found, "containers-running")
    assert b["summary"].endswith(" past deadline (postStart exec hang)")
    assert {"hostPID": True, "postStart": "exec"} in evidence_fields(b)
    assert "crictl stop <container-id>" in commands(b)


def test_network_teardown_failing(cluster: Cluster, report: dict[tuple[str, str], Item]) -> None:
    found = item(cluster, report, "cni")
    node = cluster.pods["cni"].node
    assert types(found)[0] == "network-teardown"
    b = blocker(found, "network-teardown")
    assert b["summary"] == "pod network teardown failing (CNI plugin calico)"
    assert "likely cause: CNI plugin calico cannot delete the pod's network" in messages(b)
    kill = [f for f in evidence_fields(b) if f.get("reason") == "FailedKillPod"]
    assert kill and "failed to destroy network for sandbox" in kill[0]["message"]
    assert f"kubectl get pods -A -o wide --field-selector spec.nodeName={node}" in commands(b)


def test_a_sandbox_kill_that_timed_out_is_the_runtime(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "sandbox")
    node = cluster.pods["sandbox"].node
    assert types(found)[0] == "runtime-unavailable"
    b = blocker(found, "runtime-unavailable")
    assert b["summary"] == (
        f"container runtime on {node} timed out stopping the pod (FailedKillPod: DeadlineExceeded)"
    )
    kill = [f for f in evidence_fields(b) if f.get("reason") == "FailedKillPod"]
    assert kill and "KillPodSandbox" in kill[0]["message"]
    assert "systemctl restart containerd" in commands(b)


# -- volumes -----------------------------------------------------------------------------------


def test_volume_not_reclaimed_csidriver_missing(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "nodriver")
    node = cluster.pods["nodriver"].node
    driver = scenarios.MISSING_DRIVER
    assert types(found) == ["csi-driver-missing", "volumes-not-reclaimed"]
    assert found["phase"] == "Running"
    assert [c["state"] for c in found["containers"]] == ["terminated"]
    csi = blocker(found, "csi-driver-missing")
    assert csi["summary"] == f"CSI driver {driver} not installed"
    assert {"driver": driver, "csiDriverExists": False} in evidence_fields(csi)
    reclaim = blocker(found, "volumes-not-reclaimed")
    assert reclaim["summary"] == f"containers exited; volume data still in use on {node}"
    unique = f"kubernetes.io/csi/{driver}^vol-{found['namespace']}"
    assert f"node {node} still reports {unique} in status.volumesInUse" in messages(reclaim)
    assert {"volumesInUse": unique} in evidence_fields(reclaim)
    assert any(f.get("reason") == "FailedUnMount" for f in evidence_fields(reclaim))
    assert (
        commands(reclaim)[0] == f"kubectl get pods -A -o wide --field-selector spec.nodeName={node}"
    )
    unmount = [r for r in reclaim["remedy"] if r["destructive"]]
    assert len(unmount) == 1 and unmount[0]["command"].startswith("umount ") and unmount[0]["when"]


def test_csi_driver_not_registered_on_node(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "unregistered")
    node = cluster.pods["unregistered"].node
    driver = f"{found['namespace']}.csi.example.com"
    assert types(found) == ["csi-driver-missing", "volumes-not-reclaimed"]
    csi = blocker(found, "csi-driver-missing")
    assert csi["summary"] == f"CSI driver {driver} not running on {node}"
    assert {"driver": driver, "registeredDrivers": [], "csiNodeExists": True} in evidence_fields(
        csi
    )
    assert csi["evidence"][0]["object"]["kind"] == "CSINode"
    reclaim = blocker(found, "volumes-not-reclaimed")
    assert "still in use" in reclaim["summary"]


def test_csi_node_plugin_evicted_by_a_taint(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    """The taint is the evidence of why the driver left the node; the replacement pod's
    Multi-Attach event (read by reason from the namespace's events) shows who waits on it."""
    found = item(cluster, report, "taint")
    ns, node = found["namespace"], cluster.pods["taint"].node
    driver = f"{ns}.csi.example.com"
    assert types(found)[0] == "csi-driver-missing"
    csi = blocker(found, "csi-driver-missing")
    assert csi["summary"] == (
        f"CSI driver {driver} evicted from {node} by taint maintenance=true:NoExecute"
    )
    assert {"taints": ["maintenance=true:NoExecute"]} in evidence_fields(csi)
    attach = [f for f in evidence_fields(csi) if f.get("reason") == "FailedAttachVolume"]
    assert attach and attach[0]["message"].startswith(f'Multi-Attach error for volume "pv-{ns}"')
    assert commands(csi)[0] == f"kubectl taint nodes {node} maintenance=true:NoExecute-"


def test_volume_attachment_detach_error(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "detach")
    ns, node = found["namespace"], cluster.pods["detach"].node
    driver, pv = f"{ns}.csi.example.com", f"pv-{ns}"
    attachment = volume_attachment_name(f"vol-{ns}", driver, str(node))
    assert types(found) == ["volume-attachment", "volumes-not-reclaimed"]
    b = blocker(found, "volume-attachment")
    assert b["summary"] == f"detach of {pv} from {node} failing"
    fields = evidence_fields(b)[0]
    assert fields["detachError"] == scenarios.DETACH_ERROR
    assert fields["attacher"] == driver and fields["attached"] is True
    assert b["evidence"][0]["object"]["name"] == attachment
    # deleting the VolumeAttachment is the very last step, and a destructive one
    last = b["remedy"][-1]
    assert last["command"] == f"kubectl delete volumeattachment {attachment}"
    assert last["destructive"] and "last" in last["when"]


# -- finalizers, owners, webhooks --------------------------------------------------------------


def test_job_tracking_finalizer_owner(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "job")
    assert found["phase"] == "Failed"
    assert found["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert types(found) == ["finalizer"]  # the kubelet part is done: nothing else holds it
    b = blocker(found, "finalizer")
    assert b["summary"].startswith(
        "finalizer batch.kubernetes.io/job-tracking (owner: job controller"
    )
    assert "removed by job controller (kube-controller-manager)" in messages(b)
    owner = [f for f in evidence_fields(b) if "owner" in f]
    assert owner[0]["owner"] == "job controller (kube-controller-manager)"
    remove = b["remedy"][-1]
    assert remove["destructive"] and remove["command"].startswith("kubectl patch pods ")
    assert '"op":"test"' in remove["command"]


def test_custom_finalizer_has_unknown_owner(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "custom")
    assert found["phase"] == "Succeeded"
    assert types(found) == ["finalizer"]
    b = blocker(found, "finalizer")
    assert b["summary"] == "finalizer example.com/drain (owner: unknown)"
    assert "no known owner for example.com/drain" in messages(b)
    assert {"owner": None, "domains": "example.com"} in evidence_fields(b)


def test_foreground_deletion_waits_for_dependents(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "foreground")
    assert found["finalizers"] == ["foregroundDeletion"]
    assert types(found) == ["owner-dependents"]
    b = blocker(found, "owner-dependents")
    assert b["summary"] == "foregroundDeletion: 1 dependents left"
    dependent = [e for e in b["evidence"] if e.get("object", {}).get("kind") == "ConfigMap"]
    assert len(dependent) == 1
    assert dependent[0]["object"]["name"] == "parent-0-state"
    assert dependent[0]["fields"]["blockOwnerDeletion"] is True
    assert dependent[0]["fields"]["finalizers"][0] == "example.com/hold"


def test_webhook_rejects_finalizer_removal(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "webhook")
    ns = found["namespace"]
    config = scenarios.pod_webhook_name(ns)
    assert types(found) == ["webhook", "finalizer"]
    b = blocker(found, "webhook")
    hook = f"{config}.webhooks.test.example.com"
    assert b["summary"] == f"webhook {hook}: service {ns}/pod-guard missing"
    assert f"Service {ns}/pod-guard does not exist" in messages(b)
    rule = evidence_fields(b)[0]
    assert rule["operations"] == ["UPDATE"] and rule["failurePolicy"] == "Fail"
    assert b["evidence"][0]["object"]["name"] == config
    assert destructive_commands(b) == [f"kubectl delete validatingwebhookconfiguration {config}"]


# -- context: namespace, grace period ----------------------------------------------------------


def test_pod_in_terminating_namespace(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    found = item(cluster, report, "nsgone")
    ns = found["namespace"]
    assert {"namespace-terminating", "node-missing"} <= set(types(found))
    b = blocker(found, "namespace-terminating")
    assert b["summary"] == f"namespace {ns} is terminating too"
    assert evidence_fields(b)[0]["phase"] == "Terminating"
    assert evidence_fields(b)[0]["deletionTimestamp"]
    assert commands(b) == [f"kubectl terminating ns {ns} --explain"]


def test_grace_period_is_not_stuck(cluster: Cluster, report: dict[tuple[str, str], Item]) -> None:
    found = item(cluster, report, "grace")
    assert types(found) == ["grace-period"]
    assert -3600 < found["overdueSeconds"] < 0  # deleted with an hour of grace: inside it
    assert "not stuck yet" in found["blockers"][0]["summary"]
    table = cluster.cli("pods", "-n", found["namespace"])
    assert table.returncode == 0, table.stderr
    row = table.stdout.splitlines()[1].split()
    assert row[0] == "slow-0" and row[3] == "-"  # OVERDUE
    assert "still inside its grace period" in table.stdout


def test_exit_code(cluster: Cluster) -> None:
    only_grace = cluster.cli("pods", "-n", cluster.ns("grace"), "--exit-code")
    assert only_grace.returncode == 0, only_grace.stderr
    assert "slow-0" in only_grace.stdout
    mixed = cluster.cli("pods", "-n", cluster.ns("mixed"), "--exit-code")
    assert mixed.returncode == 3, mixed.stderr
    assert "orphan-0" in mixed.stdout and "slow-0" in mixed.stdout
    without = cluster.cli("pods", "-n", cluster.ns("mixed"))
    assert without.returncode == 0


def test_terminal_pods_are_found(cluster: Cluster) -> None:
    """Succeeded/Failed pods print their phase, not Terminating, in the server's table (since
    1.31, kubernetes/kubernetes#122038; Terminating before): found either way."""
    for key, status in (("job", "Error"), ("custom", "Completed")):
        stuck = cluster.pods[key]
        printed = cluster.cp.kubectl("get", "pods", "-n", stuck.namespace, "--no-headers")
        shown = status if cluster.cp.version >= (1, 31) else "Terminating"
        assert printed.stdout.split()[:3] == [stuck.name, "0/1", shown]
        listed = cluster.cli("pods", "-n", stuck.namespace, "-o", "name")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout == f"pod/{stuck.name}\n"


def test_terminal_pod_is_found_beside_a_namesake_in_another_namespace(
    cluster: Cluster, report: dict[tuple[str, str], Item]
) -> None:
    """Candidates from the server's table carry no namespace: a terminating pod named like a
    terminal one elsewhere must not hide it."""
    assert cluster.pods["twin"].name == cluster.pods["custom"].name
    assert types(item(cluster, report, "twin")) == ["node-missing"]
    assert "finalizer" in types(item(cluster, report, "custom"))


# -- the command line --------------------------------------------------------------------------


def test_missing_name_is_not_found(cluster: Cluster) -> None:
    result = cluster.cli("pods", "-n", cluster.ns("mixed"), "x")
    assert assert_one_line_error(result) == 'Error from server (NotFound): pods "x" not found'


def test_selector_narrows(cluster: Cluster) -> None:
    ns = cluster.ns("mixed")
    everything = cluster.cli("pods", "-n", ns, "-o", "name")
    assert everything.stdout == "pod/orphan-0\npod/slow-0\n"
    narrowed = cluster.cli("pods", "-n", ns, "-l", "app=slow-0", "-o", "name")
    assert narrowed.returncode == 0, narrowed.stderr
    assert narrowed.stdout == "pod/slow-0\n"
    none = cluster.cli("pods", "-n", ns, "-l", "app=nope")
    assert none.returncode == 0 and none.stdout == ""
    assert none.stderr.strip() == f"No resources found in {ns} namespace."


def _columns(header: str) -> list[int]:
    return [m.start() for m in re.finditer(r"\S+", header)]


def test_table_has_kubectl_columns(cluster: Cluster) -> None:
    ns = cluster.ns("mixed")
    result = cluster.cli("pods", "-n", ns)
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["NAME", "NODE", "TERMINATING", "OVERDUE", "BLOCKER"]
    assert [r.split()[0] for r in rows] == ["orphan-0", "slow-0"]
    starts = _columns(header)
    cells = [
        [r[a:b].rstrip() for a, b in zip(starts, [*starts[1:], None], strict=True)] for r in rows
    ]
    for column in range(len(starts) - 1):
        widest = max(len(header.split()[column]), *(len(c[column]) for c in cells))
        assert starts[column + 1] - starts[column] == widest + 3, header  # 3-space gap
    orphan = dict(zip(header.split(), cells[0], strict=True))
    assert orphan["NODE"] == f"{ns}-gone"
    assert orphan["BLOCKER"] == f"node {ns}-gone no longer exists"
    assert orphan["OVERDUE"] != "-"


def test_table_all_namespaces_adds_namespace_first(cluster: Cluster) -> None:
    result = cluster.cli("pods", "-A")
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["NAMESPACE", "NAME", "NODE", "TERMINATING", "OVERDUE", "BLOCKER"]
    assert re.match(r"NAMESPACE +NAME ", header)
    listed = {tuple(r.split()[:2]) for r in rows}
    for stuck in cluster.pods.values():
        assert (stuck.namespace, stuck.name) in listed


def test_explain_shows_blockers_evidence_and_destructive_labels(cluster: Cluster) -> None:
    for key in ("missing", "detach"):
        stuck = cluster.pods[key]
        args = ("pods", "-n", stuck.namespace, stuck.name)
        data = cluster.json(*args)
        result = cluster.cli(*args, "--explain")
        assert result.returncode == 0, result.stderr
        text = result.stdout
        assert text.startswith(f"Pod {stuck.namespace}/{stuck.name}\n")
        assert f"Node:         {stuck.node}\n" in text
        lines = [line.strip() for line in text.splitlines()]
        (found,) = data["items"]
        destructive = 0
        for index, b in enumerate(found["blockers"], 1):
            assert f"{index}. [{b['type']}] " in text
            for e in b["evidence"]:
                if " after " not in e["message"]:  # "still here 5s after": changes per run
                    assert any(line.endswith(e["message"]) for line in lines), e["message"]
            for step, r in enumerate(b["remedy"], 1):
                label = "DESTRUCTIVE: " if r["destructive"] else ""
                assert f"{step}. {label}{r['description']}" in lines
                if r.get("command"):
                    assert f"$ {r['command']}" in lines
                destructive += r["destructive"]
        assert text.count("DESTRUCTIVE: ") == destructive > 0
        assert "\x1b" not in text
