"""Offline diagnosis end to end: dump a real cluster, stop it, explain the file the same way."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import scenarios
from tests.harness.api import create_namespace, namespace_conditions, wait_for
from tests.harness.cli import run_cli, run_json
from tests.harness.controlplane import ControlPlane, build_binaries
from tests.harness.kubelet import renew_lease

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
COMMANDS = (("pods", "-A"), ("ns",), ("all", "-A"))
# Ages move on between the live run and the capture: compare everything else.
_DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:ms|[smhdy])(?:\d+[smh])?\b")


def _without_ages(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_ages(v)
            for k, v in value.items()
            if not re.search(r"(?i)seconds|age|renewtime", k)
        }
    if isinstance(value, list):
        return [_without_ages(v) for v in value]
    if isinstance(value, str):
        return _DURATION.sub("<age>", value)
    return value


SECRET_VALUE = "c2VjcmV0LWluLWNsZWFy"  # base64 of "secret-in-clear"
APPLIED_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {
        "name": "db-password",
        "finalizers": ["example.com/keep"],
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                {"apiVersion": "v1", "kind": "Secret", "data": {"password": SECRET_VALUE}}
            )
        },
    },
    "data": {"password": SECRET_VALUE},
}


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    """Live answers and a dump from a cluster of its own, which is stopped before the yield."""
    cp = ControlPlane(tmp_path_factory.mktemp("snapshot-cp"), build_binaries())
    cp.start()
    bundle = tmp_path_factory.mktemp("bundle") / "bundle.json.gz"
    try:
        create_namespace(cp, "shop")
        scenarios.pod_on_missing_node(cp, "shop")
        scenarios.pod_on_dead_node(cp, "shop")
        stuck = scenarios.pod_with_unreclaimed_volume(cp, "shop")
        scenarios.pod_with_finalizer(cp, "shop")
        scenarios.namespace_with_orphaned_custom_resource(cp, "legacy", "widgets.snap.example.com")
        scenarios.namespace_with_stuck_pod(cp, "runners")
        # a Secret applied with kubectl (its data in clear in an annotation) held by a finalizer
        create_namespace(cp, "vault")
        cp.api("POST", "/api/v1/namespaces/vault/secrets", APPLIED_SECRET)
        cp.api("DELETE", "/api/v1/namespaces/vault")
        # the live answer and the dump must see the same pass of the namespace controller
        wait_for(
            lambda: all(
                "NamespaceFinalizersRemaining" in namespace_conditions(cp, ns)
                for ns in ("legacy", "runners", "vault")
            ),
            timeout=120,
            message="the namespace controller's first pass over legacy, runners and vault",
        )
        renew_lease(cp, str(stuck.node))
        live = {" ".join(c): run_json(*c, kubeconfig=cp.kubeconfig_path) for c in COMMANDS}
        dumped = run_cli("dump", "-A", "-f", str(bundle), kubeconfig=cp.kubeconfig_path)
        assert dumped.returncode == 0, dumped.stderr
        assert "Secret and ConfigMap data not included" in dumped.stderr
    finally:
        cp.stop()
    yield live, bundle


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_same_diagnosis_from_the_file(
    captured: tuple[dict[str, Any], Path], command: tuple[str, ...]
) -> None:
    live, bundle = captured
    offline = run_cli(*command, "--from-file", str(bundle), "-o", "json")
    assert offline.returncode == 0, offline.stderr
    expected = live[" ".join(command)]
    assert expected["items"], "the scenario must produce terminating objects"
    got, want = _without_ages(json.loads(offline.stdout)), _without_ages(expected)
    assert got == want, _first_difference(got, want)


def _first_difference(got: Any, want: Any, path: str = "") -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if got.get(key) != want.get(key):
                return _first_difference(got.get(key), want.get(key), f"{path}.{key}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for index, (g, w) in enumerate(zip(got, want, strict=True)):
            if g != w:
                return _first_difference(g, w, f"{path}[{index}]")
    return f"{path}: offline {got!r} != live {want!r}"


def test_bundle_holds_what_the_explainers_read(captured: tuple[dict[str, Any], Path]) -> None:
    import gzip

    _, bundle = captured
    data = json.loads(gzip.decompress(bundle.read_bytes()))
    assert data["kind"] == "Snapshot" and data["header"]["serverVersion"] == "v1.36.3"
    kinds = {o["kind"] for o in data["objects"]}
    assert {
        "Pod",
        "Namespace",
        "Node",
        "Lease",
        "PersistentVolumeClaim",
        "PersistentVolume",
    } <= kinds
    assert "CustomResourceDefinition" in kinds
    assert not [o for o in data["objects"] if o["kind"] in ("Secret", "ConfigMap") and "data" in o]
    legacy = {c["resource"]["kind"] for c in data["namespaceContent"]["legacy"]}
    assert "Widget" in legacy
    # the Secret left in a terminating namespace is listed, its data nowhere in the bundle
    vault = {c["resource"]["kind"]: c["items"] for c in data["namespaceContent"]["vault"]}
    assert [s["metadata"]["name"] for s in vault["Secret"]] == ["db-password"]
    assert SECRET_VALUE not in json.dumps(data)


def test_ages_from_capture_time_or_now(captured: tuple[dict[str, Any], Path]) -> None:
    _, bundle = captured
    at_capture = json.loads(run_cli("pods", "-A", "--from-file", str(bundle), "-o", "json").stdout)
    now = json.loads(
        run_cli("pods", "-A", "--from-file", str(bundle), "--now", "-o", "json").stdout
    )
    then = {(i["namespace"], i["name"]): i["terminatingSeconds"] for i in at_capture["items"]}
    later = {(i["namespace"], i["name"]): i["terminatingSeconds"] for i in now["items"]}
    assert then.keys() == later.keys()
    assert then and all(later[key] > then[key] for key in then)  # --now: older than captured
