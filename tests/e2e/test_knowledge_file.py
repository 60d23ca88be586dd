"""A user's knowledge file on the real control plane: a custom resource held by the user's own
operator's finalizer, whose Deployment is scaled to 0, is explained with the user's owner and
that workload's state; the fix planner refuses it unless the entry says removal is safe and
the Deployment is gone (docs/knowledge.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.harness.api import create_namespace, delete, remove_finalizers, unique_ns
from tests.harness.api_extensions import create_crd, create_custom_object
from tests.harness.cli import assert_one_line_error, run_cli, run_json
from tests.harness.controlplane import ApiError, ControlPlane

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Held:
    namespace: str  # the bucket's, and the operator's
    group: str
    knowledge: Path

    @property
    def finalizer(self) -> str:
        return f"{self.group}/cleanup"


def operator_deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "acme-operator"}
    container = {"name": "operator", "image": "registry.k8s.io/pause:3.10"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "acme-operator"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


@pytest.fixture(scope="module")
def held(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Held]:
    cp = control_plane
    ns = unique_ns("knowledge")
    group = f"{ns}.example.com"
    create_namespace(cp, ns)
    cp.api("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", operator_deployment(0))
    create_crd(cp, group, "Bucket", "buckets")
    create_custom_object(
        cp, group, "v1", "buckets", "Bucket", "assets", ns=ns, finalizers=[f"{group}/cleanup"]
    )
    delete(cp, f"/apis/{group}/v1/namespaces/{ns}/buckets/assets")
    knowledge = tmp_path_factory.mktemp("knowledge") / "acme.yaml"
    knowledge.write_text(
        "finalizers:\n"
        f"- name: {group}/cleanup\n"
        "  owner: ACME operator\n"
        f"  workload: {{kind: Deployment, namespace: {ns}, name: acme-operator}}\n"
        "  guards: deletes the ACME bucket behind the object\n"
    )
    try:
        yield Held(ns, group, knowledge)
    finally:
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, f"/apis/{group}/v1/namespaces/{ns}/buckets/assets")


def the_blocker(result: dict[str, Any]) -> dict[str, Any]:
    (item,) = [i for i in result["items"] if i["kind"] == "Bucket"]
    (blocker,) = item["blockers"]
    return dict(blocker)


def test_the_users_owner_is_named_with_its_workload_scaled_to_0(
    control_plane: ControlPlane, held: Held
) -> None:
    kubeconfig = control_plane.kubeconfig_path
    without = the_blocker(run_json("all", "-n", held.namespace, kubeconfig=kubeconfig))
    assert without["summary"] == f"finalizer {held.finalizer} (owner: unknown)"
    flag = ("--knowledge-file", str(held.knowledge))
    blocker = the_blocker(run_json(*flag, "all", "-n", held.namespace, kubeconfig=kubeconfig))
    assert blocker["summary"] == f"finalizer {held.finalizer} (owner: ACME operator, not running)"
    messages = [e["message"] for e in blocker["evidence"]]
    assert "scaled to 0: ACME operator does not run" in messages
    first = blocker["remedy"][0]
    assert (
        first["command"]
        == f"kubectl scale deployment/acme-operator -n {held.namespace} --replicas=1"
    )
    # the same through the environment variable
    env = {"KUBECTL_TERMINATING_KNOWLEDGE": str(held.knowledge)}
    by_env = the_blocker(run_json("all", "-n", held.namespace, kubeconfig=kubeconfig, env=env))
    assert by_env["summary"] == blocker["summary"]


def test_a_broken_knowledge_file_runs_nothing(
    control_plane: ControlPlane, held: Held, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("finalizers:\n- name: x\n  owner: [not, a, string]\n")
    result = run_cli(
        "--knowledge-file",
        str(broken),
        "all",
        "-n",
        held.namespace,
        kubeconfig=control_plane.kubeconfig_path,
    )
    line = assert_one_line_error(result)
    assert f"invalid knowledge file {broken}: finalizers[0].owner: must be a string" in line
