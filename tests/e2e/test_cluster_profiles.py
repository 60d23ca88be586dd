"""A fleet from the cluster inventory (--cluster-profiles) over real control planes.

The hub is a control plane of its own serving the ClusterProfile CRD of the
cluster-inventory-api (tests/fixtures/clusterinventory, vendored with its provenance). Its
inventory namespace holds three ClusterProfiles: member-a (the session's control plane, a
pod stuck there), member-b (a control plane started then stopped: its port refuses) and
staging (labelled apart). Each names its access provider "ocm" with the cluster's server,
CA and, as OCM writes it, the exec extension's clusterName; the provider file's plugin
picks the token by that name (so it proves provideClusterInfo) and leaves a marker line
each time it runs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_fleet import held_pod
from tests.harness import api
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane, kubeconfig_document
from tests.harness.kubelet import create_node, renew_lease

pytestmark = pytest.mark.e2e

CRD = (
    Path(__file__).parents[1]
    / "fixtures/clusterinventory/multicluster.x-k8s.io_clusterprofiles.yaml"
)
PROFILES = "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/{ns}/clusterprofiles"
INVENTORY = "fleet-inventory"  # the hub context's namespace


@dataclass
class Inventory:
    member: ControlPlane  # member-a's
    namespace: str  # member-a's namespace with the stuck pod
    node: str
    directory: Path
    kubeconfig: Path  # one context, the hub's, in INVENTORY
    providers: Path
    marker: Path  # a line per plugin run: the clusterName it was told

    def runs(self) -> list[str]:
        return self.marker.read_text().splitlines() if self.marker.exists() else []

    def run(self, *args: str, **env: str) -> Any:
        renew_lease(self.member, self.node)
        home = self.directory / "home"  # no kuberc but the one a test names
        home.mkdir(exist_ok=True)
        argv = [*args, "--clusterprofile-provider-file", str(self.providers)]
        return run_cli(*argv, kubeconfig=self.kubeconfig, env={"HOME": str(home), **env})


def plugin(directory: Path, tokens: dict[str, str], marker: Path) -> Path:
    """An exec credential plugin that reads spec.cluster.config.clusterName from
    KUBERNETES_EXEC_INFO (given with provideClusterInfo) and hands out that cluster's token."""
    path = directory / "cp-creds"
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, os\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "name = info['spec']['cluster']['config']['clusterName']\n"
        f"open({str(marker)!r}, 'a').write(name + '\\n')\n"
        f"token = {tokens!r}[name]\n"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',\n"
        "                  'status': {'token': token}}))\n"
    )
    path.chmod(0o755)
    return path


def cluster_profile(hub: ControlPlane, name: str, member: ControlPlane, env: str) -> None:
    """A ClusterProfile as OCM writes it: its access provider in status (the status
    subresource: written by a second request)."""
    path = PROFILES.format(ns=INVENTORY)
    body = {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": name, "labels": {"env": env}},
        "spec": {"displayName": name, "clusterManager": {"name": "open-cluster-management"}},
    }
    created = hub.api("POST", path, body)
    created["status"] = {
        "accessProviders": [
            {
                "name": "ocm",
                "cluster": {
                    "server": member.server,
                    "certificate-authority-data": member.ca_data_b64,
                    "extensions": [
                        {
                            "name": "client.authentication.k8s.io/exec",
                            "extension": {"clusterName": name},
                        }
                    ],
                },
            }
        ]
    }
    hub.api("PUT", f"{path}/{name}/status", created)


@pytest.fixture(scope="module")
def inventory(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Inventory]:
    directory = tmp_path_factory.mktemp("inventory")
    hub = ControlPlane(directory / "hub", control_plane.binaries_dir)
    stopped = ControlPlane(directory / "member-b", control_plane.binaries_dir)
    hub.start()
    try:
        stopped.start()
        stopped.stop()  # a member that went down: its port refuses connections
        crd = yaml.safe_load(CRD.read_text())
        hub.api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        api.wait_for(
            lambda: hub.api_raw("GET", PROFILES.format(ns="default"))[0] == 200,
            message="ClusterProfiles served",
        )
        api.create_namespace(hub, INVENTORY)
        cluster_profile(hub, "member-a", control_plane, "prod")
        cluster_profile(hub, "member-b", stopped, "prod")
        cluster_profile(hub, "staging", stopped, "staging")
        ns = api.unique_ns("inventory")
        api.create_namespace(control_plane, ns)
        node = f"{ns}-node"
        create_node(control_plane, node)
        held_pod(control_plane, ns, "job-a", node)
        marker = directory / "plugin-runs"
        command = plugin(
            directory,
            {"member-a": control_plane.admin_token, "member-b": "x", "staging": "x"},
            marker,
        )
        providers = directory / "providers.json"
        exec_config = {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(command),
            "provideClusterInfo": True,
        }
        providers.write_text(
            json.dumps({"providers": [{"name": "ocm", "execConfig": exec_config}]})
        )
        kubeconfig = directory / "hub.kubeconfig"
        document = kubeconfig_document(
            {"server": hub.server, "certificate-authority-data": hub.ca_data_b64},
            {"token": hub.admin_token},
            "hub",
            namespace=INVENTORY,
        )
        kubeconfig.write_text(yaml.safe_dump(document))
        yield Inventory(control_plane, ns, node, directory, kubeconfig, providers, marker)
        api.remove_finalizers(control_plane, f"/api/v1/namespaces/{ns}/pods/job-a")
        api.delete(control_plane, f"/api/v1/namespaces/{ns}")
    finally:
        hub.stop()
        stopped.stop()


def test_the_inventory_s_clusters_are_read_and_an_unreachable_one_is_one_warning(
    inventory: Inventory,
) -> None:
    """--cluster-profiles=env=prod: member-a's stuck pod is listed with its cluster, the
    stopped member-b is one warning line, staging (another label) is not read; exit 0 as
    any fleet with one cluster unread."""
    before = len(inventory.runs())
    result = inventory.run("pods", "-n", inventory.namespace, "--cluster-profiles=env=prod")
    assert result.returncode == 0, result.stderr
    rows = [line.split()[:2] for line in result.stdout.splitlines()]
    assert rows == [["CONTEXT", "NAME"], ["member-a", "job-a"]]
    warnings = result.stderr.splitlines()
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith('Warning: context "member-b": unable to connect'), warnings
    assert "Traceback" not in result.stderr
    # each plugin ran once, told its own cluster; staging's never ran
    assert sorted(inventory.runs()[before:]) == ["member-a", "member-b"]


def test_every_profile_without_a_selector_and_json_names_the_cluster(
    inventory: Inventory,
) -> None:
    result = inventory.run("pods", "-n", inventory.namespace, "--cluster-profiles", "-o", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert [(i["context"], i["name"]) for i in document["items"]] == [("member-a", "job-a")]
    warned = [line.split('"')[1] for line in document["warnings"]]
    assert warned == ["member-b", "staging"]


def test_the_credential_policy_refuses_each_member_s_plugin(inventory: Inventory) -> None:
    """kuberc DenyAll: no plugin runs; each member is one line naming the policy, and with
    none read the run fails as any fleet does."""
    rc = inventory.directory / "deny.kuberc"
    rc.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubectl.config.k8s.io/v1beta1",
                "kind": "Preference",
                "credentialPluginPolicy": "DenyAll",
            }
        )
    )
    before = len(inventory.runs())
    result = inventory.run(
        "pods", "-n", inventory.namespace, "--cluster-profiles=env=prod", KUBERC=str(rc)
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    for name, line in zip(("member-a", "member-b"), lines[:2], strict=True):
        assert line.startswith(f'Warning: context "{name}": exec credential plugin "'), line
        assert line.endswith(f'not allowed: policy set to "DenyAll" (kuberc {rc})'), line
    assert lines[2:] == ["error: none of the 2 contexts could be read"]
    assert inventory.runs()[before:] == []


def test_a_hub_without_the_inventory_is_one_line(inventory: Inventory, tmp_path: Path) -> None:
    """The session's control plane serves no ClusterProfiles: one error line, exit 1."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            kubeconfig_document(
                {
                    "server": inventory.member.server,
                    "certificate-authority-data": inventory.member.ca_data_b64,
                },
                {"token": inventory.member.admin_token},
                "plain",
            )
        )
    )
    result = run_cli(
        "pods",
        "--cluster-profiles",
        "--clusterprofile-provider-file",
        str(inventory.providers),
        kubeconfig=kubeconfig,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'error: context "plain" serves no ClusterProfiles (multicluster.x-k8s.io/v1alpha1): '
        "is it the hub of a cluster inventory?"
    ]


def test_dump_saves_each_member_and_the_file_explains_them(
    inventory: Inventory, tmp_path: Path
) -> None:
    """dump --cluster-profiles: one file, member-a's snapshot and member-b's warning; the
    file read back names member-a as the pod's context."""
    bundle = tmp_path / "fleet.json"
    args = ["dump", "-n", inventory.namespace, "--cluster-profiles=env=prod", "-f", str(bundle)]
    saved = inventory.run(*args)
    assert saved.returncode == 0, saved.stderr
    assert 'context "member-b": unable to connect' in saved.stderr
    result = run_cli("pods", "-n", inventory.namespace, "--from-file", str(bundle))
    assert result.returncode == 0, result.stderr
    rows = [line.split()[:2] for line in result.stdout.splitlines()]
    assert rows == [["CONTEXT", "NAME"], ["member-a", "job-a"]]
