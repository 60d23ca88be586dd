"""`kubectl terminating fix` on the real control plane: every action and every refusal.

Each test builds its stuck objects, asks for the dry-run plan (`-o json`), then applies it
with the digest the dry run printed and checks what the API server shows afterwards.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.api import (
    MERGE,
    create_configmap,
    create_namespace,
    delete,
    get,
    get_or_none,
    micro_time,
    namespace_conditions,
    now,
    unique_ns,
    wait_for,
)
from tests.harness.api_extensions import apiservice_condition, create_apiservice
from tests.harness.cli import ROOT, run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.scenarios import (
    Stuck,
    namespace_with_blocking_webhook,
    namespace_with_unavailable_apiservice,
    pod_on_dead_node,
    pod_on_missing_node,
    pod_path,
    wait_past_deadline,
)
from tests.harness.storage import create_volume_attachment
from tests.harness.users import Users

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
READ_ONLY = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]
CERT_MANAGER = "acme.cert-manager.io/finalizer"
LEASES = "/apis/coordination.k8s.io/v1"


@pytest.fixture(scope="module")
def users(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    with Users(control_plane, tmp_path_factory.mktemp("users"), "fix-users") as made:
        yield made


def dry_run(cp: ControlPlane, *args: str, kubeconfig: Path | None = None) -> JSON:
    result = run_cli("fix", *args, "-o", "json", kubeconfig=kubeconfig or cp.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    plan: JSON = json.loads(result.stdout)
    return plan


def actions(plan: JSON) -> list[JSON]:
    return [a for o in plan["objects"] for a in o["actions"]]


def the_action(plan: JSON) -> JSON:
    """The plan's one action; the whole plan (its refusals say why) when it has another count."""
    found = actions(plan)
    assert len(found) == 1, json.dumps(plan, indent=1)
    return found[0]


def refusals(plan: JSON) -> list[JSON]:
    return [r for o in plan["objects"] for r in o["refused"]]


def apply(
    cp: ControlPlane, *args: str, digest: str, kubeconfig: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "fix",
        *args,
        "--apply",
        "--confirm",
        digest,
        kubeconfig=kubeconfig or cp.kubeconfig_path,
        input="",
    )


def wait_gone(cp: ControlPlane, path: str, timeout: float) -> None:
    wait_for(lambda: get_or_none(cp, path) is None, timeout=timeout, message=f"{path} gone")


def overdue_pod(
    cp: ControlPlane, prefix: str, build: Callable[..., Stuck] = pod_on_missing_node
) -> Stuck:
    """A pod of `build` (its node gone by default) in a namespace of its own, past its 1 s
    grace period."""
    ns = unique_ns(prefix)
    create_namespace(cp, ns)
    stuck = build(cp, ns, grace_period=1)
    wait_past_deadline(get(cp, pod_path(ns, stuck.name)))
    return stuck


# -- pods --------------------------------------------------------------------------------------


def test_pod_on_deleted_node_is_force_deleted(control_plane: ControlPlane, tmp_path: Path) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-gone")
    plan = dry_run(cp, "pods", "-n", stuck.namespace)
    action = the_action(plan)
    assert action["action"] == "force-delete-pod"
    assert action["request"]["verb"] == "DELETE"
    assert action["request"]["body"]["gracePeriodSeconds"] == 0
    pod = get(cp, pod_path(stuck.namespace, stuck.name))
    assert action["request"]["body"]["preconditions"] == {
        "uid": pod["metadata"]["uid"],
        "resourceVersion": pod["metadata"]["resourceVersion"],
    }
    assert {p["observed"] for p in action["proof"]} == {"absent", "none"}
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is not None  # dry run

    audit_file = tmp_path / "audit.jsonl"
    earlier = '{"result":"done","note":"an earlier run"}'
    audit_file.write_text(earlier + "\n")  # a trail: kept, the new record appended
    result = run_cli(
        "fix",
        "pods",
        "-n",
        stuck.namespace,
        "--apply",
        "--confirm",
        plan["digest"],
        "--audit-file",
        str(audit_file),
        kubeconfig=cp.kubeconfig_path,
        input="",
    )
    assert result.returncode == 0, result.stderr
    assert "force delete Pod" in result.stdout and ": done (200)" in result.stdout
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is None
    first, *added = audit_file.read_text().splitlines()
    assert first == earlier
    [record] = [json.loads(line) for line in added]
    assert record["user"] == "admin"
    assert record["action"] == "force-delete-pod" and record["result"] == "done"
    assert record["request"]["path"] == pod_path(stuck.namespace, stuck.name)
    assert record["response"]["status"] == 200
    assert [p["description"] for p in record["evidence"]] == [
        f"Node {stuck.node} does not exist",
        f"no VolumeAttachment attaches a volume to node {stuck.node}",
    ]
    assert f"audit: {added[0]}" in result.stderr


def test_pod_with_volume_still_attached_is_refused(control_plane: ControlPlane) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-attached")
    pv = f"pv-{stuck.namespace}"
    cp.api(
        "POST",
        "/api/v1/persistentvolumes",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "csi": {"driver": "disk.csi.example.com", "volumeHandle": pv},
            },
        },
    )
    create_volume_attachment(cp, None, stuck.node or "", pv, attacher="disk.csi.example.com")
    plan = dry_run(cp, "pods", "-n", stuck.namespace)
    assert actions(plan) == []
    [refused] = refusals(plan)
    assert "VolumeAttachment" in refused["reason"] and "found: csi-" in refused["reason"]
    result = apply(cp, "pods", "-n", stuck.namespace, digest=plan["digest"])
    assert result.returncode == 0, result.stderr
    assert "Nothing to write." in result.stdout
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is not None


def test_apply_without_confirmation_off_a_terminal_writes_nothing(
    control_plane: ControlPlane,
) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-noconfirm")
    result = run_cli(
        "fix", "pods", "-n", stuck.namespace, "--apply", kubeconfig=cp.kubeconfig_path, input=""
    )
    assert result.returncode == 3, result.stderr
    assert "nothing was written" in result.stderr and "--confirm" in result.stderr
    assert "Traceback" not in result.stderr
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is not None


def _apply_on_terminal(cp: ControlPlane, ns: str, typed: str) -> tuple[int, str]:
    """Run `fix pods -n ns --apply` with a terminal as stdin and type `typed` at the prompt."""
    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(PYTHONPATH=str(ROOT), KUBECONFIG=str(cp.kubeconfig_path))
    with subprocess.Popen(
        [sys.executable, "-m", "kubectl_terminating", "fix", "pods", "-n", ns, "--apply"],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as proc:
        os.close(secondary)
        os.write(primary, f"{typed}\n".encode())
        _, err = proc.communicate(timeout=60)
    os.close(primary)
    return proc.returncode, err


def test_apply_on_a_terminal_asks_for_the_name(control_plane: ControlPlane) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-tty")
    code, err = _apply_on_terminal(cp, stuck.namespace, "not-the-name")
    assert code == 3, err
    assert f"Type the name '{stuck.name}'" in err
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is not None
    code, err = _apply_on_terminal(cp, stuck.namespace, stuck.name)
    assert code == 0, err
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is None


def test_digest_from_before_a_change_is_refused(control_plane: ControlPlane) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-changed")
    before = dry_run(cp, "pods", "-n", stuck.namespace)
    path = pod_path(stuck.namespace, stuck.name)
    cp.api("PATCH", path, {"metadata": {"labels": {"touched": "yes"}}}, MERGE)
    result = apply(cp, "pods", "-n", stuck.namespace, digest=before["digest"])
    assert result.returncode == 3, result.stderr
    assert f"the plan changed since digest {before['digest']}" in result.stderr
    assert "nothing was written" in result.stderr
    assert get_or_none(cp, path) is not None
    after = dry_run(cp, "pods", "-n", stuck.namespace)
    assert after["digest"] != before["digest"]
    assert apply(cp, "pods", "-n", stuck.namespace, digest=after["digest"]).returncode == 0
    assert get_or_none(cp, path) is None


def test_forbidden_write_fails_with_one_line(control_plane: ControlPlane, users: Users) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-forbidden")
    reader = users.user("reader", cluster_rules=READ_ONLY)
    plan = dry_run(cp, "pods", "-n", stuck.namespace, kubeconfig=reader.kubeconfig)
    assert len(actions(plan)) == 1  # reading was enough to plan
    result = apply(
        cp, "pods", "-n", stuck.namespace, digest=plan["digest"], kubeconfig=reader.kubeconfig
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if not line.startswith("audit: ")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("Error from server (Forbidden): ")
    assert 'cannot delete resource "pods"' in errors[0]
    audit = json.loads(result.stderr.split("audit: ", 1)[1].splitlines()[0])
    assert audit["result"] == "forbidden" and audit["user"] == reader.username
    assert get_or_none(cp, pod_path(stuck.namespace, stuck.name)) is not None


def test_out_of_service_taint_only_on_the_operators_word(control_plane: ControlPlane) -> None:
    cp = control_plane
    stuck = overdue_pod(cp, "fix-down", pod_on_dead_node)
    ns, node = stuck.namespace, stuck.node or ""

    inferred = dry_run(cp, "pods", "-n", ns)
    assert actions(inferred) == []
    [refused] = refusals(inferred)
    assert refused["blocker"]["type"] == "node-not-ready"
    assert f"--node-down {node}" in refused["reason"]

    plan = dry_run(cp, "pods", "-n", ns, "--node-down", node)
    action = the_action(plan)
    assert action["action"] == "taint-out-of-service"
    assert action["request"]["verb"] == "PATCH"
    assert action["request"]["body"][0]["op"] == "test"  # resourceVersion: a node back is refused
    result = apply(cp, "pods", "-n", ns, "--node-down", node, digest=plan["digest"])
    assert result.returncode == 0, result.stderr
    taints = get(cp, f"/api/v1/nodes/{node}")["spec"]["taints"]
    assert {
        "key": "node.kubernetes.io/out-of-service",
        "value": "nodeshutdown",
        "effect": "NoExecute",
    } in taints


# -- finalizers --------------------------------------------------------------------------------


def _lease(cp: ControlPlane, ns: str, name: str, renewed: str | None = None) -> JSON:
    body = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {
            "holderIdentity": f"{name}-pod",
            "leaseDurationSeconds": 60,
            "renewTime": renewed or micro_time(),
        },
    }
    return cp.api("POST", f"{LEASES}/namespaces/{ns}/leases", body)


def test_finalizer_refused_while_its_operator_lease_is_renewed(
    control_plane: ControlPlane,
) -> None:
    cp = control_plane
    ns = unique_ns("fix-lease")
    create_namespace(cp, ns)
    create_configmap(cp, ns, "challenge", finalizers=[CERT_MANAGER])
    delete(cp, f"/api/v1/namespaces/{ns}/configmaps/challenge")
    _lease(cp, ns, "cert-manager-controller")

    plan = dry_run(cp, "all", "-n", ns)
    assert actions(plan) == []
    [refused] = refusals(plan)
    assert refused["blocker"]["type"] == "finalizer"
    assert f"found: {ns}/cert-manager-controller" in refused["reason"]
    assert get(cp, f"/api/v1/namespaces/{ns}/configmaps/challenge")["metadata"]["finalizers"]

    # The operator is uninstalled: its Lease goes; now the finalizer can be removed.
    delete(cp, f"{LEASES}/namespaces/{ns}/leases/cert-manager-controller")
    plan = dry_run(cp, "all", "-n", ns)
    action = the_action(plan)
    assert action["action"] == "remove-finalizer" and action["finalizer"] == CERT_MANAGER
    ops = action["request"]["body"]
    assert {"op": "test", "path": "/metadata/finalizers/0", "value": CERT_MANAGER} in ops
    result = apply(cp, "all", "-n", ns, digest=plan["digest"])
    assert result.returncode == 0, result.stderr
    assert get_or_none(cp, f"/api/v1/namespaces/{ns}/configmaps/challenge") is None


def test_finalizer_removed_when_its_operator_lease_was_left_behind(
    control_plane: ControlPlane,
) -> None:
    """helm uninstall removes cert-manager but leaves its leader-election Lease: last renewed an
    hour ago, it is evidence that cert-manager is gone (said with that time), not of life."""
    cp = control_plane
    ns = unique_ns("fix-stale-lease")
    create_namespace(cp, ns)
    create_configmap(cp, ns, "challenge", finalizers=[CERT_MANAGER])
    delete(cp, f"/api/v1/namespaces/{ns}/configmaps/challenge")
    renewed = micro_time(now(-3600))
    _lease(cp, ns, "cert-manager-controller", renewed)

    plan = dry_run(cp, "all", "-n", ns)
    action = the_action(plan)
    assert action["action"] == "remove-finalizer" and action["finalizer"] == CERT_MANAGER
    [lease] = [c for c in action["proof"] if c["read"].endswith("/leases")]
    assert lease["holds"]
    assert lease["observed"].startswith(f"stale: {ns}/cert-manager-controller last renewed ")
    result = apply(cp, "all", "-n", ns, digest=plan["digest"])
    assert result.returncode == 0, result.stderr
    assert get_or_none(cp, f"/api/v1/namespaces/{ns}/configmaps/challenge") is None


def test_unknown_finalizer_owner_is_refused(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = unique_ns("fix-unknown")
    create_namespace(cp, ns)
    create_configmap(cp, ns, "held", finalizers=["example.com/mystery"])
    delete(cp, f"/api/v1/namespaces/{ns}/configmaps/held")
    plan = dry_run(cp, "all", "-n", ns)
    assert actions(plan) == []
    [refused] = refusals(plan)
    assert "owner of example.com/mystery unknown" in refused["reason"]


# -- namespaces --------------------------------------------------------------------------------


def test_orphaned_apiservice_deleted_then_namespaces_finish(control_plane: ControlPlane) -> None:
    cp = control_plane
    group = f"{unique_ns('orphan')}.example.com"
    operator_ns = unique_ns("fix-operator")
    stuck = namespace_with_unavailable_apiservice(cp, operator_ns, group)
    other = unique_ns("fix-bystander")
    create_namespace(cp, other)
    create_configmap(cp, other, "settings")
    delete(cp, f"/api/v1/namespaces/{other}")
    try:
        wait_for(
            lambda: (apiservice_condition(cp, stuck.name) or {}).get("status") == "False",
            timeout=30,
            message="the APIService marked unavailable",
        )
        wait_for(
            lambda: "NamespaceDeletionDiscoveryFailure" in namespace_conditions(cp, other),
            timeout=60,
            message="the namespace controller stalled by discovery",
        )
        plan = dry_run(cp, "ns", operator_ns, other)
        action = the_action(plan)
        assert action["action"] == "delete-apiservice"
        assert action["target"]["name"] == stuck.name
        assert action["recreate"]["spec"]["service"]["name"] == "api"  # can be recreated
        observed = [(p["read"], p["observed"]) for p in action["proof"]]
        assert observed == [
            (f"/api/v1/namespaces/{operator_ns}/services/api", "absent"),
            (f"/api/v1/namespaces/{operator_ns}", "terminating"),
        ]
        result = apply(cp, "ns", operator_ns, other, digest=plan["digest"])
        assert result.returncode == 0, result.stderr
        assert get_or_none(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{stuck.name}") is None
        for ns in (operator_ns, other):  # the namespace controller finishes them by itself
            wait_gone(cp, f"/api/v1/namespaces/{ns}", timeout=120)
    finally:
        path = f"/apis/apiregistration.k8s.io/v1/apiservices/{stuck.name}"
        if get_or_none(cp, path) is not None:
            delete(cp, path)


def test_apiservice_whose_namespace_lives_is_refused(control_plane: ControlPlane) -> None:
    """metrics-server uninstalled from kube-system: its namespace stays, so the Service could
    come back; the APIService is not deleted (a printed remedy only)."""
    cp = control_plane
    group = f"{unique_ns('alive')}.example.com"
    home = unique_ns("fix-home")
    create_namespace(cp, home)
    apiservice = create_apiservice(cp, group, "v1alpha1", home, "api")["metadata"]["name"]
    ns = unique_ns("fix-stalled")
    create_namespace(cp, ns)
    delete(cp, f"/api/v1/namespaces/{ns}")
    try:
        wait_for(
            lambda: (apiservice_condition(cp, apiservice) or {}).get("status") == "False",
            timeout=30,
            message="the APIService marked unavailable",
        )
        plan = dry_run(cp, "ns", ns)
        assert [a for a in actions(plan) if a["action"] == "delete-apiservice"] == []
        [refused] = [
            r
            for r in refusals(plan)
            if r["blocker"]["type"] == "apiservice-unavailable"
            and apiservice in r["blocker"]["summary"]
        ]
        assert f"Namespace {home} is gone or terminating" in refused["reason"]
        assert "exists" in refused["reason"]
    finally:
        delete(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{apiservice}")


def test_webhook_of_uninstalled_operator_deleted(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = unique_ns("fix-webhook")
    group = f"{ns}.example.com"
    namespace_with_blocking_webhook(cp, ns, group)
    config = f"{ns}-guard"
    path = f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{config}"
    try:
        plan = dry_run(cp, "ns", ns)
        [action] = [a for a in actions(plan) if a["action"] == "delete-webhook-configuration"]
        assert action["target"]["name"] == config
        assert action["recreate"]["webhooks"][0]["clientConfig"]["service"]["name"] == "guard"
        result = apply(cp, "ns", ns, "-o", "json", digest=plan["digest"])
        assert result.returncode == 0, result.stderr
        applied = json.loads(result.stdout)
        assert applied["dryRun"] is False and applied["digest"] == plan["digest"]
        [done] = [r for r in applied["results"] if r["target"]["name"] == config]
        assert (done["result"], done["response"]["status"]) == ("done", 200)
        assert get_or_none(cp, path) is None
    finally:
        if get_or_none(cp, path) is not None:
            delete(cp, path)


def test_namespace_spec_finalizer_removed_through_finalize(control_plane: ControlPlane) -> None:
    """A spec finalizer whose owner (cert-manager) left no Lease, Deployment or webhook: removed
    with PUT /finalize carrying the namespace's resourceVersion; the namespace then goes."""
    cp = control_plane
    ns = unique_ns("fix-finalize")
    create_namespace(cp, ns, spec_finalizers=[CERT_MANAGER])
    delete(cp, f"/api/v1/namespaces/{ns}")
    wait_for(
        lambda: get(cp, f"/api/v1/namespaces/{ns}")["spec"]["finalizers"] == [CERT_MANAGER],
        timeout=60,
        message="the namespace controller done with its own finalizer",
    )
    plan = dry_run(cp, "ns", ns)
    action = the_action(plan)
    assert action["action"] == "finalize-namespace"
    assert action["request"]["verb"] == "PUT"
    assert action["request"]["path"] == f"/api/v1/namespaces/{ns}/finalize"
    assert action["request"]["body"]["spec"]["finalizers"] == []
    result = apply(cp, "ns", ns, digest=plan["digest"])
    assert result.returncode == 0, result.stderr
    wait_gone(cp, f"/api/v1/namespaces/{ns}", timeout=30)
