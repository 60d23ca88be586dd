"""`kubectl terminating all`: every terminating object of any kind, on the real control plane.

One module-scoped set of stuck objects: a pod and a custom resource held by finalizers, a claim
in use (pvc-protection), a bound volume (pv-protection), a namespace with its own finalizer, a
ReplicaSet in foreground deletion waiting on a pod that a finalizer holds, and a CRD waiting on
an instance that a finalizer holds.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.harness import scenarios
from tests.harness.api import (
    create_namespace,
    delete,
    get,
    owner_ref,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.api_extensions import create_crd, create_custom_object
from tests.harness.cli import run_cli, run_json
from tests.harness.controlplane import ApiError, ControlPlane
from tests.harness.kubelet import create_pod

pytestmark = pytest.mark.e2e

CR_FINALIZER = "cleanup"
Item = dict[str, Any]


@dataclass(frozen=True)
class StuckOfEveryKind:
    """What the `all` tests leave stuck: one object of each kind (the stuck pod is a
    scenarios.Stuck)."""

    namespace: str  # the pod, the custom resource and the claim live here
    group: str  # of the custom resource type
    pod: scenarios.Stuck
    in_use: scenarios.InUse
    held_namespace: str  # terminating, held by its own metadata.finalizers
    crd: str  # terminating, its instance `leftover` held by a finalizer

    @property
    def cr_finalizer(self) -> str:
        return f"{self.group}/{CR_FINALIZER}"


def _release(cp: ControlPlane, stuck: StuckOfEveryKind) -> None:
    """Let everything go, so later tests see none of it (best effort)."""
    ns, claim = stuck.namespace, stuck.in_use.claim
    paths = [
        f"/api/v1/namespaces/{ns}/pods/{stuck.pod.name}",
        f"/apis/{stuck.group}/v1/namespaces/{ns}/widgets/gadget",
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{claim}",
        f"/api/v1/persistentvolumes/{stuck.in_use.volume}",
        f"/api/v1/namespaces/{stuck.held_namespace}",
        f"/api/v1/namespaces/{ns}/pods/replica-0",
        f"/apis/{stuck.crd.partition('.')[2]}/v1/gizmos/leftover",
    ]
    for path in paths:
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, path)


def replicaset_in_foreground_deletion(cp: ControlPlane, ns: str) -> None:
    """ReplicaSet `web` deleted with propagationPolicy Foreground: the garbage collector
    deletes its pod first, which a finalizer holds, so `web` keeps foregroundDeletion."""
    labels = {"app": "web"}
    container = {"name": "app", "image": "registry.k8s.io/pause:3.10"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [container]}}
    body = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": template},
    }
    replicaset = cp.api("POST", f"/apis/apps/v1/namespaces/{ns}/replicasets", body)
    create_pod(
        cp, ns, "replica-0", finalizers=["example.com/drain"], owner_refs=[owner_ref(replicaset)]
    )
    delete(cp, f"/apis/apps/v1/namespaces/{ns}/replicasets/web", propagation="Foreground")
    wait_for(
        lambda: get(cp, f"/api/v1/namespaces/{ns}/pods/replica-0")["metadata"].get(
            "deletionTimestamp"
        ),
        message="the garbage collector to delete the ReplicaSet's pod",
    )


def crd_waiting_on_an_instance(cp: ControlPlane, group: str) -> str:
    """A deleted CRD whose instance a finalizer holds: customresourcecleanup stays."""
    create_crd(cp, group, "Gizmo", "gizmos", namespaced=False)
    create_custom_object(
        cp, group, "v1", "gizmos", "Gizmo", "leftover", finalizers=["example.com/keep"]
    )
    name = f"gizmos.{group}"
    delete(cp, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    return name


@pytest.fixture(scope="module")
def stuck(control_plane: ControlPlane) -> Iterator[StuckOfEveryKind]:
    cp = control_plane
    ns = unique_ns("all")
    group = f"{ns}.example.com"
    create_namespace(cp, ns)
    pod = scenarios.pod_with_finalizer(cp, ns)
    create_crd(cp, group, "Widget", "widgets")
    create_custom_object(
        cp, group, "v1", "widgets", "Widget", "gadget", ns=ns, finalizers=[f"{group}/cleanup"]
    )
    delete(cp, f"/apis/{group}/v1/namespaces/{ns}/widgets/gadget")
    in_use = scenarios.volume_in_use(cp, ns)
    held = scenarios.namespace_with_metadata_finalizer(cp, unique_ns("all-held"))
    # the namespace controller empties it and removes `kubernetes`: only its own finalizer is left
    wait_for(
        lambda: not get(cp, f"/api/v1/namespaces/{held.namespace}")["spec"].get("finalizers"),
        message=f"the namespace controller to finish {held.namespace}'s content",
    )
    replicaset_in_foreground_deletion(cp, ns)
    crd = crd_waiting_on_an_instance(cp, f"held-{group}")
    built = StuckOfEveryKind(ns, group, pod, in_use, held.namespace, crd)
    try:
        yield built
    finally:
        _release(cp, built)


@pytest.fixture(scope="module")
def everything(
    control_plane: ControlPlane, stuck: StuckOfEveryKind
) -> dict[tuple[str, str, str], Item]:
    """`all -A -o json`, by (kind, namespace, name)."""
    data = run_json("all", "-A", kubeconfig=control_plane.kubeconfig_path)
    assert data["kind"] == "List" and data["apiVersion"] == "terminating.kubectl.io/v1"
    return {(i["kind"], i["namespace"] or "", i["name"]): i for i in data["items"]}


def _rows(result: subprocess.CompletedProcess[str]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a kubectl-style table (columns three or more spaces apart)."""
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    columns = list(re.finditer(r"\S+", lines[0]))
    starts = [c.start() for c in columns]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    rows = [[line[a:b].strip() for a, b in bounds] for line in lines[1:]]
    return [c.group() for c in columns], rows


def test_all_namespaces_lists_every_kind_with_its_finalizers(
    stuck: StuckOfEveryKind, everything: dict[tuple[str, str, str], Item]
) -> None:
    ns = stuck.namespace
    expected = {
        ("Pod", ns, stuck.pod.name): ("v1", ["example.com/drain"]),
        ("Widget", ns, "gadget"): (f"{stuck.group}/v1", [stuck.cr_finalizer]),
        ("PersistentVolumeClaim", ns, stuck.in_use.claim): ("v1", ["kubernetes.io/pvc-protection"]),
        ("PersistentVolume", "", stuck.in_use.volume): ("v1", ["kubernetes.io/pv-protection"]),
        ("Namespace", "", stuck.held_namespace): ("v1", ["example.com/keep"]),
    }
    for key, (api_version, finalizers) in expected.items():
        assert key in everything, sorted(everything)
        item = everything[key]
        assert item["apiVersion"] == api_version
        assert item["finalizers"] == finalizers
        assert item["deletionTimestamp"] and item["uid"]
    # the claim's pod is not deleted: not listed
    assert ("Pod", ns, stuck.in_use.pod) not in everything


def test_all_namespaces_table_shows_kind_and_finalizers(
    control_plane: ControlPlane, stuck: StuckOfEveryKind
) -> None:
    result = run_cli("all", "-A", kubeconfig=control_plane.kubeconfig_path)
    header, rows = _rows(result)
    assert header == ["NAMESPACE", "KIND", "NAME", "TERMINATING", "FINALIZERS", "BLOCKER"]
    by_name = {(r[0], r[1], r[2]): r for r in rows}
    ns = stuck.namespace
    assert by_name[(ns, f"Widget.{stuck.group}", "gadget")][4] == stuck.cr_finalizer
    assert by_name[(ns, "Pod", stuck.pod.name)][4] == "example.com/drain"
    claim = by_name[(ns, "PersistentVolumeClaim", stuck.in_use.claim)]
    assert claim[4] == "kubernetes.io/pvc-protection"
    assert claim[5] == f"pvc-protection: claim in use by pod {stuck.in_use.pod}"  # main blocker
    volume = by_name[("", "PersistentVolume", stuck.in_use.volume)]
    assert volume[4] == "kubernetes.io/pv-protection"
    held = by_name[("", "Namespace", stuck.held_namespace)]
    assert held[4] == "example.com/keep"
    assert held[5].startswith("finalizer example.com/keep")
    # every kind names its main blocker, as --explain does
    for row in (claim, volume, by_name[(ns, f"Widget.{stuck.group}", "gadget")]):
        assert row[5] not in ("", "-"), row
    replicaset = by_name[(ns, "ReplicaSet.apps", "web")]
    assert replicaset[4] == "foregroundDeletion"
    assert replicaset[5].startswith("foregroundDeletion: 1 dependents left"), replicaset
    crd = by_name[("", "CustomResourceDefinition.apiextensions.k8s.io", stuck.crd)]
    assert crd[4] == "customresourcecleanup.apiextensions.k8s.io"
    assert crd[5] not in ("", "-"), crd


def test_namespace_flag_narrows_to_that_namespace(
    control_plane: ControlPlane, stuck: StuckOfEveryKind
) -> None:
    ns = stuck.namespace
    data = run_json("all", "-n", ns, kubeconfig=control_plane.kubeconfig_path)
    found = {(i["kind"], i["namespace"], i["name"]) for i in data["items"]}
    # no cluster-scoped objects (volume, namespace), nothing from other namespaces
    assert found == {
        ("Pod", ns, stuck.pod.name),
        ("Widget", ns, "gadget"),
        ("PersistentVolumeClaim", ns, stuck.in_use.claim),
        ("ReplicaSet", ns, "web"),
        ("Pod", ns, "replica-0"),
    }
    header, rows = _rows(run_cli("all", "-n", ns, kubeconfig=control_plane.kubeconfig_path))
    assert header == ["KIND", "NAME", "TERMINATING", "FINALIZERS", "BLOCKER"]
    assert sorted(r[1] for r in rows) == sorted(name for _, _, name in found)


def _types(item: Item) -> list[str]:
    return [b["type"] for b in item["blockers"]]


def _evidence(blocker: Item) -> str:
    return "\n".join(e["message"] for e in blocker["evidence"])


def test_explain_judges_a_claim_in_use_by_its_pod(
    stuck: StuckOfEveryKind, everything: dict[tuple[str, str, str], Item]
) -> None:
    ns = stuck.namespace
    claim = everything[("PersistentVolumeClaim", ns, stuck.in_use.claim)]
    assert _types(claim) == ["protection-in-use"]
    (blocker,) = claim["blockers"]
    assert blocker["summary"] == f"pvc-protection: claim in use by pod {stuck.in_use.pod}"
    pod_refs = [e.get("object") for e in blocker["evidence"]]
    assert {"kind": "Pod", "name": stuck.in_use.pod, "namespace": ns, "apiVersion": "v1"} in (
        pod_refs
    )
    assert "phase Running" in _evidence(blocker)
    first, last = blocker["remedy"][0], blocker["remedy"][-1]
    assert not first["destructive"] and first["command"].startswith("kubectl delete pod")
    assert last["destructive"] and "pvc-protection" in last["command"]


def test_explain_judges_a_bound_volume(
    stuck: StuckOfEveryKind, everything: dict[tuple[str, str, str], Item]
) -> None:
    volume = everything[("PersistentVolume", "", stuck.in_use.volume)]
    assert _types(volume) == ["protection-in-use"]
    (blocker,) = volume["blockers"]
    assert (
        blocker["summary"]
        == f"pv-protection: bound to claim {stuck.namespace}/{stuck.in_use.claim}"
    )
    fields = [e.get("fields", {}) for e in blocker["evidence"]]
    assert {"phase": "Bound", "claim": f"{stuck.namespace}/{stuck.in_use.claim}"} in fields
    assert f"claim {stuck.namespace}/{stuck.in_use.claim} is terminating" in _evidence(blocker)


def test_explain_judges_a_custom_resource_by_its_finalizer(
    stuck: StuckOfEveryKind, everything: dict[tuple[str, str, str], Item]
) -> None:
    widget = everything[("Widget", stuck.namespace, "gadget")]
    assert _types(widget) == ["finalizer"]
    (blocker,) = widget["blockers"]
    assert blocker["summary"] == f"finalizer {stuck.cr_finalizer} (owner: unknown)"
    assert f"no known owner for {stuck.cr_finalizer}" in _evidence(blocker)
    assert blocker["remedy"][-1]["destructive"]


def test_explain_text_for_one_namespace(
    control_plane: ControlPlane, stuck: StuckOfEveryKind
) -> None:
    ns = stuck.namespace
    result = run_cli("all", "-n", ns, "--explain", kubeconfig=control_plane.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"PersistentVolumeClaim {ns}/{stuck.in_use.claim}" in out
    assert f"Widget {ns}/gadget" in out
    assert f"[protection-in-use] pvc-protection: claim in use by pod {stuck.in_use.pod}" in out
    assert f"[finalizer] finalizer {stuck.cr_finalizer} (owner: unknown)" in out
    assert "DESTRUCTIVE: " in out


def test_released_objects_are_gone_from_the_list(control_plane: ControlPlane) -> None:
    """The same listing, once the finalizer's owner let go (what the fixture does at the end)."""
    cp = control_plane
    ns = unique_ns("all-gone")
    create_namespace(cp, ns)
    group = f"{ns}.example.com"
    create_crd(cp, group, "Widget", "widgets")
    path = f"/apis/{group}/v1/namespaces/{ns}/widgets/w"
    create_custom_object(cp, group, "v1", "widgets", "Widget", "w", ns=ns, finalizers=["x.io/f"])
    delete(cp, path)
    before = run_json("all", "-n", ns, kubeconfig=cp.kubeconfig_path)
    assert [i["name"] for i in before["items"]] == ["w"]
    remove_finalizers(cp, path)
    after = run_cli("all", "-n", ns, kubeconfig=cp.kubeconfig_path)
    assert after.returncode == 0 and after.stdout == ""
    assert after.stderr.strip() == f"No resources found in {ns} namespace."
