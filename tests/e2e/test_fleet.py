"""Several clusters in one run (--contexts, --all-contexts) over real control planes.

Three clusters: the session's (alpha, whose context gets its token from an exec credential
plugin), a second one (beta: one context as bob, allowed to read, one as carol, allowed
nothing) and a third one started then stopped (gamma: its port refuses). Every context has
its own credentials; the audit log of each API server shows which ones it received.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness import api
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import create_node, create_pod, renew_lease, set_pod_status
from tests.harness.users import binding_body

pytestmark = pytest.mark.e2e

FINALIZER = "example.com/fleet-drain"
USER_AGENT = "kubectl-terminating/"


@dataclass
class Fleet:
    alpha: ControlPlane
    beta: ControlPlane
    namespace: str  # the same name in alpha and beta
    kubeconfig: Path  # contexts alpha, beta, beta-forbidden, gamma-stopped
    nodes: dict[str, str]  # cluster name -> the node its pods are on

    def renew(self) -> None:
        """The nodes' Leases go stale without a kubelet: renew them before each run."""
        renew_lease(self.alpha, self.nodes["alpha"])
        renew_lease(self.beta, self.nodes["beta"])


def held_pod(cp: ControlPlane, ns: str, name: str, node: str) -> None:
    """A finished pod on a healthy node, deleted at once: only FINALIZER holds it."""
    create_pod(cp, ns, name, node=node, finalizers=[FINALIZER])
    set_pod_status(cp, ns, name, "Succeeded", {"app": "terminated:0"})
    api.delete(cp, f"/api/v1/namespaces/{ns}/pods/{name}", grace_period=0)


def exec_plugin(directory: Path, token: str) -> dict[str, Any]:
    """An exec credential plugin that hands out token, as aws/gke-gcloud-auth-plugin do."""
    plugin = directory / "credential-plugin"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token},
    }
    plugin.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(plugin),
            "interactiveMode": "Never",
        }
    }


def kubeconfig(path: Path, clusters: dict[str, ControlPlane], users: dict[str, Any]) -> Path:
    """One file, a context per user: users maps context -> (cluster name, user entry)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {"server": cp.server, "certificate-authority-data": cp.ca_data_b64},
            }
            for name, cp in clusters.items()
        ],
        "users": [{"name": context, "user": user} for context, (_, user) in users.items()],
        "contexts": [
            {"name": context, "context": {"cluster": cluster, "user": context}}
            for context, (cluster, _) in users.items()
        ],
        "current-context": next(iter(users)),
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def fleet(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    directory = tmp_path_factory.mktemp("fleet")
    beta = ControlPlane(directory / "beta", control_plane.binaries_dir)
    gamma = ControlPlane(directory / "gamma", control_plane.binaries_dir)
    beta.start()
    try:
        gamma.start()
        gamma.stop()  # a cluster that went down: its port refuses connections
        ns = api.unique_ns("fleet")
        for cp in (control_plane, beta):
            api.create_namespace(cp, ns)
        beta.api(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            binding_body(
                "ClusterRole",
                "fleet-bob",
                "cluster-admin",
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"},
            ),
        )
        nodes = {"alpha": f"{ns}-alpha", "beta": f"{ns}-beta"}
        create_node(control_plane, nodes["alpha"])
        create_node(beta, nodes["beta"])
        held_pod(control_plane, ns, "job-a", nodes["alpha"])
        held_pod(beta, ns, "job-b1", nodes["beta"])
        held_pod(beta, ns, "job-b2", nodes["beta"])
        path = kubeconfig(
            directory / "kubeconfig",
            {"alpha": control_plane, "beta": beta, "gamma": gamma},
            {
                "alpha": ("alpha", exec_plugin(directory, control_plane.admin_token)),
                "beta": ("beta", {"token": beta.tokens["bob"]}),
                "beta-forbidden": ("beta", {"token": beta.tokens["carol"]}),
                "gamma-stopped": ("gamma", {"token": gamma.tokens["admin"]}),
            },
        )
        yield Fleet(control_plane, beta, ns, path, nodes)
        api.remove_finalizers(control_plane, f"/api/v1/namespaces/{ns}/pods/job-a")
        api.delete(control_plane, f"/api/v1/namespaces/{ns}")
    finally:
        beta.stop()
        gamma.stop()


def run_fleet(fleet: Fleet, *args: str) -> Any:
    fleet.renew()
    return run_cli(*args, kubeconfig=fleet.kubeconfig)


FLEET_USERS = ("admin", "bob", "carol")  # the users of the fleet's contexts


def agents(cp: ControlPlane, mark: int) -> set[tuple[str, int]]:
    """(user, status) of every request this tool sent to cp since mark as one of the fleet's
    users (a `serve` of another test on the shared control plane may still be reading: seen
    once in the v1.37.2 matrix as its service account; it is not the fleet's business)."""
    return {
        (e["user"]["username"], e["responseStatus"]["code"] // 100 * 100)
        for e in cp.audit_events(mark)
        if e.get("userAgent", "").startswith(USER_AGENT) and e["user"]["username"] in FLEET_USERS
    }


def test_every_context_is_read_with_its_own_credentials(fleet: Fleet) -> None:
    """One table: the readable clusters' pods, CONTEXT first; the stopped and the forbidden
    contexts are one warning each; each API server saw only its own contexts' users."""
    marks = fleet.alpha.audit_offset(), fleet.beta.audit_offset()
    result = run_fleet(fleet, "pods", "-n", fleet.namespace, "--all-contexts")
    assert result.returncode == 0, result.stderr
    rows = [line.split()[:2] for line in result.stdout.splitlines()]
    assert rows == [["CONTEXT", "NAME"], ["alpha", "job-a"], ["beta", "job-b1"], ["beta", "job-b2"]]
    warnings = result.stderr.splitlines()
    assert len(warnings) == 2, result.stderr
    assert warnings[0].startswith(
        'Warning: context "beta-forbidden": Error from server (Forbidden)'
    )
    assert 'User "carol" cannot list resource "pods"' in warnings[0]
    assert warnings[1].startswith('Warning: context "gamma-stopped": unable to connect')
    assert "Traceback" not in result.stderr
    # alpha's token came from the exec plugin; beta got bob's and carol's, nobody else's
    assert agents(fleet.alpha, marks[0]) == {("admin", 200)}
    assert agents(fleet.beta, marks[1]) == {("bob", 200), ("carol", 400)}


def test_json_items_and_the_summary_name_their_cluster(fleet: Fleet) -> None:
    result = run_fleet(
        fleet,
        "pods",
        "-n",
        fleet.namespace,
        "--contexts",
        "beta,alpha,gamma-stopped",
        "-o",
        "json",
        "-v",
        "1",
    )
    assert result.returncode == 0, result.stderr
    # -v: each context's request totals, named
    assert 'context "beta": requests: ' in result.stderr
    assert 'context "alpha": requests: ' in result.stderr
    document = json.loads(result.stdout)
    assert [(i["context"], i["name"]) for i in document["items"]] == [
        ("beta", "job-b1"),
        ("beta", "job-b2"),
        ("alpha", "job-a"),
    ]
    (group,) = document["summary"]
    assert group["type"] == "finalizer" and group["count"] == 3
    assert group["contexts"] == [{"context": "beta", "count": 2}, {"context": "alpha", "count": 1}]
    assert document["warnings"][0].startswith('context "gamma-stopped": unable to connect')


def test_all_and_ns_run_on_each_context_too(fleet: Fleet) -> None:
    result = run_fleet(
        fleet, "all", "-n", fleet.namespace, "--contexts", "alpha,beta", "-o", "json"
    )
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    assert sorted((i["context"], i["kind"], i["name"]) for i in items) == [
        ("alpha", "Pod", "job-a"),
        ("beta", "Pod", "job-b1"),
        ("beta", "Pod", "job-b2"),
    ]
    result = run_fleet(fleet, "ns", fleet.namespace, "--contexts", "alpha,beta")
    # the namespace exists and is not terminating in either cluster
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("exists but is not terminating") == 2


def test_summary_is_grouped_across_clusters(fleet: Fleet) -> None:
    result = run_fleet(fleet, "pods", "-n", fleet.namespace, "--all-contexts", "--summary")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Summary: 3 pods in 2 clusters, 1 cause",
        f"finalizer {FINALIZER}: 3 pods in 2 clusters: beta (2), alpha (1)",
    ]


def test_exit_1_only_when_no_context_could_be_read(fleet: Fleet) -> None:
    result = run_fleet(
        fleet, "pods", "-n", fleet.namespace, "--contexts", "gamma-stopped,beta-forbidden,nope"
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert [line.split('"')[1] for line in lines[:3]] == ["gamma-stopped", "beta-forbidden", "nope"]
    assert lines[2] == 'Warning: context "nope": context "nope" does not exist'
    assert lines[3] == "error: none of the 3 contexts could be read"
    # one readable context is enough, and --exit-code still says stuck objects were found
    result = run_fleet(
        fleet, "pods", "-n", fleet.namespace, "--contexts", "gamma-stopped,alpha", "--exit-code"
    )
    assert result.returncode == 3, result.stderr


def test_dump_of_every_context_is_explained_per_context(fleet: Fleet, tmp_path: Path) -> None:
    bundle = tmp_path / "fleet.json.gz"
    result = run_fleet(fleet, "dump", "-n", fleet.namespace, "--all-contexts", "-f", str(bundle))
    assert result.returncode == 0, result.stderr
    assert "terminating objects in 2 contexts to" in result.stderr
    assert 'Warning: context "gamma-stopped": unable to connect' in result.stderr
    # offline: no kubeconfig, no cluster; each pod explained against its own cluster's objects
    offline = run_cli("pods", "--from-file", str(bundle), "-o", "json", kubeconfig="/nonexistent")
    assert offline.returncode == 0, offline.stderr
    items = json.loads(offline.stdout)["items"]
    assert [(i["context"], i["name"], i["node"]) for i in items] == [
        ("alpha", "job-a", fleet.nodes["alpha"]),
        ("beta", "job-b1", fleet.nodes["beta"]),
        ("beta", "job-b2", fleet.nodes["beta"]),
    ]
    assert all(i["blockers"][0]["type"] == "finalizer" for i in items)
    assert 'Warning: context "gamma-stopped": unable to connect' in offline.stderr
    table = run_cli("pods", "--from-file", str(bundle), kubeconfig="/nonexistent")
    assert table.stdout.splitlines()[0].split()[:3] == ["CONTEXT", "NAMESPACE", "NAME"]
