"""Connecting like kubectl: kubeconfig precedence, contexts, namespaces, auth and clear errors."""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness.api import (
    create_configmap,
    create_namespace,
    delete,
    remove_finalizers,
    unique_ns,
)
from tests.harness.cli import assert_one_line_error, run_cli, run_json
from tests.harness.controlplane import ControlPlane, kubeconfig_document
from tests.harness.kubelet import create_node, create_pod

pytestmark = pytest.mark.e2e


def _kubeconfig(cp: ControlPlane, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(cp.kubeconfig_path.read_text())
    config.update(overrides)
    return config


def _write(path: Path, config: Mapping[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def stuck_pod(control_plane: ControlPlane) -> tuple[str, str]:
    """A pod that stays Terminating: its node has no kubelet to confirm the deletion."""
    ns = unique_ns("conn")
    create_namespace(control_plane, ns)
    create_node(control_plane, f"{ns}-node")
    create_pod(control_plane, ns, "web-0", node=f"{ns}-node")
    delete(control_plane, f"/api/v1/namespaces/{ns}/pods/web-0")
    return ns, "web-0"


def test_connects_with_generated_kubeconfig(
    control_plane: ControlPlane, stuck_pod: tuple[str, str]
) -> None:
    ns, name = stuck_pod
    data = run_json("pods", "-A", kubeconfig=control_plane.kubeconfig_path)
    assert data["apiVersion"] == "terminating.kubectl.io/v1"
    assert data["kind"] == "List"
    assert (ns, name) in {(i["namespace"], i["name"]) for i in data["items"]}


def test_kubeconfig_flag_beats_environment(
    control_plane: ControlPlane, stuck_pod: tuple[str, str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    broken.write_text("::: not yaml [")
    result = run_cli(
        "pods",
        "-n",
        stuck_pod[0],
        "-o",
        "name",
        "--kubeconfig",
        str(control_plane.kubeconfig_path),
        kubeconfig=broken,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pod/{stuck_pod[1]}\n"


def test_context_flag_switches_clusters(
    control_plane: ControlPlane, stuck_pod: tuple[str, str], tmp_path: Path
) -> None:
    config = _kubeconfig(control_plane)
    clusters = config["clusters"]
    contexts = config["contexts"]
    assert isinstance(clusters, list) and isinstance(contexts, list)
    clusters.append({"name": "elsewhere", "cluster": {"server": "https://127.0.0.1:1"}})
    contexts.append({"name": "elsewhere", "context": {"cluster": "elsewhere", "user": "admin"}})
    config["current-context"] = "elsewhere"
    path = _write(tmp_path / "config", config)

    refused = run_cli("pods", "-A", kubeconfig=path, timeout=60)
    line = assert_one_line_error(refused)
    assert "https://127.0.0.1:1" in line and "connection refused" in line
    assert 'context "elsewhere"' in line

    switched = run_cli("pods", "-A", "-o", "name", "--context", "test", kubeconfig=path)
    assert switched.returncode == 0, switched.stderr
    assert f"pod/{stuck_pod[1]}" in switched.stdout.splitlines()


def test_default_namespace_comes_from_context(
    control_plane: ControlPlane, stuck_pod: tuple[str, str], tmp_path: Path
) -> None:
    ns, name = stuck_pod
    path = control_plane.write_kubeconfig(tmp_path / "ns", control_plane.admin_token, namespace=ns)
    found = run_cli("pods", "-o", "name", kubeconfig=path)
    assert found.returncode == 0, found.stderr
    assert found.stdout == f"pod/{name}\n"

    other = control_plane.write_kubeconfig(
        tmp_path / "other", control_plane.admin_token, namespace="default"
    )
    empty = run_cli("pods", kubeconfig=other)
    assert empty.returncode == 0
    assert empty.stdout == ""
    assert empty.stderr.strip() == "No resources found in default namespace."

    flag = run_cli("pods", "-n", ns, "-o", "name", kubeconfig=other)
    assert flag.stdout == f"pod/{name}\n"


def test_two_file_kubeconfig_first_file_wins(
    control_plane: ControlPlane, stuck_pod: tuple[str, str], tmp_path: Path
) -> None:
    """Like kubectl: the first file to set current-context (and each named entry) wins."""
    ns, name = stuck_pod
    base = _kubeconfig(control_plane)
    first = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "mine",
        "contexts": [
            {"name": "mine", "context": {"cluster": "test", "user": "admin", "namespace": ns}}
        ],
        "users": [],
        "clusters": [],
    }
    second = dict(base)
    second_contexts = [
        {"name": "mine", "context": {"cluster": "test", "user": "admin", "namespace": "default"}},
        *base["contexts"],
    ]
    second["contexts"] = second_contexts
    second["current-context"] = "test"
    paths = f"{_write(tmp_path / 'a', first)}:{_write(tmp_path / 'b', second)}"
    result = run_cli("pods", "-o", "name", kubeconfig=paths)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pod/{name}\n"
    # a file listed in KUBECONFIG that does not exist is skipped, as kubectl does
    missing_first = run_cli("pods", "-o", "name", kubeconfig=f"{tmp_path / 'nope'}:{paths}")
    assert missing_first.stdout == f"pod/{name}\n"


def test_bad_kubeconfig_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nclusters: [\n")
    line = assert_one_line_error(run_cli("pods", kubeconfig=path))
    assert line.startswith("error: ") and str(path) in line and "YAML" in line


def test_unknown_context_is_one_clear_line(control_plane: ControlPlane) -> None:
    result = run_cli("pods", "--context", "nope", kubeconfig=control_plane.kubeconfig_path)
    assert assert_one_line_error(result) == 'error: context "nope" does not exist'


def test_missing_kubeconfig_and_not_in_cluster(tmp_path: Path) -> None:
    result = run_cli("pods", kubeconfig=tmp_path / "absent", env={"HOME": str(tmp_path)})
    line = assert_one_line_error(result)
    assert "no kubeconfig found" in line and "not running inside a cluster" in line


def test_unreachable_server_fails_within_request_timeout(tmp_path: Path) -> None:
    # A local socket that accepts connections and never answers: only the timeout ends it.
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        config = kubeconfig_document(
            {"server": f"https://127.0.0.1:{port}", "insecure-skip-tls-verify": True},
            {"token": "x"},
            "c",
        )
        path = _write(tmp_path / "config", config)
        result = run_cli("pods", "--request-timeout", "2s", kubeconfig=path)
    line = assert_one_line_error(result)
    assert "unable to connect to the server" in line
    assert "within the request timeout" in line, line  # ended by --request-timeout


def test_wrong_token_is_unauthorized(control_plane: ControlPlane, tmp_path: Path) -> None:
    path = control_plane.write_kubeconfig(tmp_path / "config", "not-a-token", user_name="mallory")
    line = assert_one_line_error(run_cli("pods", "-A", kubeconfig=path))
    assert "You must be logged in to the server (Unauthorized)" in line
    assert 'context "test"' in line
    assert "not-a-token" not in line


def test_forbidden_list_is_one_clear_line(control_plane: ControlPlane, tmp_path: Path) -> None:
    path = control_plane.write_kubeconfig(tmp_path / "config", control_plane.tokens["dave"])
    line = assert_one_line_error(run_cli("pods", "-A", kubeconfig=path))
    assert line.startswith("Error from server (Forbidden): ")
    assert 'cannot list resource "pods"' in line


def test_wrong_certificate_authority_is_tls_error(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    config = _kubeconfig(control_plane)
    other_ca = control_plane.pki_dir / "front-proxy-ca.crt"
    cluster = config["clusters"][0]["cluster"]
    cluster.pop("certificate-authority-data")
    cluster["certificate-authority"] = str(other_ca)
    line = assert_one_line_error(run_cli("pods", "-A", kubeconfig=_write(tmp_path / "c", config)))
    assert "TLS certificate verification failed" in line


def client_certificate(cp: ControlPlane, d: Path) -> dict[str, str]:
    """A client certificate of the system:masters group signed by the cluster's CA (PEM), as
    an exec plugin's status gives it."""
    key, csr, crt = d / "exec.key", d / "exec.csr", d / "exec.crt"
    subprocess.run(
        ["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(key), "-out", str(csr),
         "-subj", "/O=system:masters/CN=kt-exec-plugin"],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        ["openssl", "x509", "-req", "-in", str(csr), "-CA", str(cp.pki_dir / "ca.crt"),
         "-CAkey", str(cp.pki_dir / "ca.key"), "-CAcreateserial", "-CAserial", str(d / "serial"),
         "-days", "1", "-out", str(crt)],
        check=True, capture_output=True,
    )  # fmt: skip
    return {"clientCertificateData": crt.read_text(), "clientKeyData": key.read_text()}


@pytest.mark.parametrize("returns", ["token", "certificate"])
def test_exec_credential_plugin(
    control_plane: ControlPlane, stuck_pod: tuple[str, str], tmp_path: Path, returns: str
) -> None:
    """The plugin's token or client certificate (the only credential of the user) is used."""
    plugin = tmp_path / "credential-plugin"
    status = (
        {"token": control_plane.admin_token}
        if returns == "token"
        else client_certificate(control_plane, tmp_path)
    )
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": status,
    }
    plugin.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    config = _kubeconfig(control_plane)
    config["users"] = [
        {
            "name": "admin",
            "user": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": str(plugin),
                    "interactiveMode": "Never",
                }
            },
        }
    ]
    result = run_cli(
        "pods", "-n", stuck_pod[0], "-o", "name", kubeconfig=_write(tmp_path / "c", config)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pod/{stuck_pod[1]}\n"


def test_failing_exec_plugin_is_one_clear_line(control_plane: ControlPlane, tmp_path: Path) -> None:
    config = _kubeconfig(control_plane)
    config["users"] = [
        {
            "name": "admin",
            "user": {
                "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/false"}
            },
        }
    ]
    line = assert_one_line_error(run_cli("pods", "-A", kubeconfig=_write(tmp_path / "c", config)))
    assert "exec credential plugin" in line and "/bin/false" in line


def test_large_answers_come_gzipped_unless_the_kubeconfig_disables_it(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The API server gzips answers over 128 KiB for a client that accepts it: the metadata
    of three ConfigMaps with 60 kB annotations is such an answer. The content is the same
    either way; `disable-compression: true` on the cluster turns it off, as in kubectl."""
    cp = control_plane
    ns = unique_ns("gzip")
    create_namespace(cp, ns)
    names = [f"big-{i}" for i in range(3)]
    for name in names:
        blob = {"example.com/blob": "x" * 60_000}
        create_configmap(cp, ns, name, finalizers=["example.com/keep"], annotations=blob)
    delete(cp, f"/api/v1/namespaces/{ns}")
    plain = _kubeconfig(cp)
    for cluster in plain["clusters"]:
        cluster["cluster"]["disable-compression"] = True
    try:
        for kubeconfig, compressed in (
            (cp.kubeconfig_path, True),
            (_write(tmp_path / "plain.yaml", plain), False),
        ):
            result = run_cli("ns", ns, "-o", "json", "-v", "6", kubeconfig=kubeconfig)
            assert result.returncode == 0, result.stderr
            (item,) = json.loads(result.stdout)["items"]
            configmaps = next(r for r in item["remaining"] if r["resource"] == "configmaps")
            assert set(names) <= {o["name"] for o in configmaps["objects"]}
            listed = [
                line
                for line in result.stderr.splitlines()
                if line.startswith("GET ") and f"/namespaces/{ns}/configmaps?" in line
            ]
            assert len(listed) == 1, result.stderr
            assert listed[0].endswith(" (gzip)") == compressed, listed[0]
    finally:
        for name in names:
            remove_finalizers(cp, f"/api/v1/namespaces/{ns}/configmaps/{name}")
