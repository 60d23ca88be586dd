"""Reliability on a real API server: restricted users, a slow aggregated API, a restart,
rejected credentials. Transport faults (5xx, 429, resets, trickled bodies) are unit-tested
against a fault injector in tests/unit/test_client.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml

from tests.harness.api import (
    MERGE,
    create_configmap,
    create_namespace,
    delete,
    get_or_none,
    new_namespace,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.api_extensions import apiservice_condition
from tests.harness.backend import local_address
from tests.harness.cli import ROOT, assert_one_line_error, run_cli, run_json
from tests.harness.controlplane import ApiError, ControlPlane, kubeconfig_document
from tests.harness.scenarios import (
    namespace_with_stuck_pod,
    pod_on_dead_node,
    pod_with_finalizer,
    pod_with_running_containers,
    pod_with_unreclaimed_volume,
)
from tests.harness.users import RBAC, Users, rule

pytestmark = pytest.mark.e2e

NOT_POSSIBLE = "checks not possible)"


@pytest.fixture(scope="module")
def users(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    with Users(control_plane, tmp_path_factory.mktemp("users"), "rel-users") as made:
        yield made


def warnings_of(stderr: str) -> list[str]:
    return [
        line.removeprefix("Warning: ")
        for line in stderr.splitlines()
        if line.startswith("Warning: ")
    ]


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr


# -- RBAC-restricted users ----------------------------------------------------------------------


def test_user_who_may_only_list_pods_in_one_namespace(
    control_plane: ControlPlane, users: Users
) -> None:
    cp = control_plane
    ns = new_namespace(cp, "rel-podsonly")
    stuck = pod_on_dead_node(cp, ns)
    held = pod_with_finalizer(cp, ns)  # stuck at once (no grace period)
    user = users.user("pods-only", namespace_rules={ns: [rule(["pods"])]})

    table = run_cli("pods", "-n", ns, kubeconfig=user.kubeconfig)
    assert table.returncode == 0, table.stderr
    assert_no_traceback(table)
    row = next(line for line in table.stdout.splitlines() if line.startswith(stuck.name))
    assert row.endswith(NOT_POSSIBLE), table.stdout  # the table says the answer is partial
    warned = warnings_of(table.stderr)
    assert set(warned) >= {
        "could not read nodes: forbidden",
        "could not read namespaces: forbidden",
        "could not read validatingwebhookconfigurations.admissionregistration.k8s.io: forbidden",
    }

    explained = run_cli("pods", "-n", ns, stuck.name, "--explain", kubeconfig=user.kubeconfig)
    assert explained.returncode == 0, explained.stderr
    assert "Warnings (checks that could not be made):" in explained.stdout
    assert "- could not read nodes: forbidden" in explained.stdout

    data = run_json("pods", "-n", ns, kubeconfig=user.kubeconfig)
    items = {i["name"]: i for i in data["items"]}
    assert set(items) == {stuck.name, held.name}
    assert items[stuck.name]["node"] == stuck.node
    assert "could not read nodes: forbidden" in items[stuck.name]["warnings"]
    for item in items.values():
        assert item["warnings"] and set(item["warnings"]) <= set(data["warnings"])
    # what needs no forbidden read is still found
    assert "finalizer" in {b["type"] for b in items[held.name]["blockers"]}

    # scripts: stuck objects found, checks missing or not
    assert run_cli("pods", "-n", ns, "--exit-code", kubeconfig=user.kubeconfig).returncode == 3
    # the main list itself forbidden: that is the one error, exit 1
    everywhere = run_cli("pods", "-A", kubeconfig=user.kubeconfig)
    line = assert_one_line_error(everywhere)
    assert line.startswith("Error from server (Forbidden): ")
    assert 'cannot list resource "pods"' in line


def test_user_who_may_not_list_some_types_in_the_namespace(
    control_plane: ControlPlane, users: Users
) -> None:
    cp = control_plane
    ns = new_namespace(cp, "rel-sometypes")
    create_configmap(cp, ns, "kept", finalizers=["example.com/keep"])
    delete(cp, f"/api/v1/namespaces/{ns}")
    visible = ["namespaces", "pods", "configmaps", "events", "services", "serviceaccounts"]
    user = users.user("some-types", cluster_rules=[rule(visible)])
    try:
        result = run_cli("ns", ns, "--explain", kubeconfig=user.kubeconfig)
        assert result.returncode == 0, result.stderr
        assert_no_traceback(result)
        assert "secrets: cannot list: forbidden" in result.stdout
        assert "persistentvolumeclaims: cannot list: forbidden" in result.stdout
        assert "configmaps: " in result.stdout and "kept (finalizers: example.com/keep" in (
            result.stdout
        )
        warned = warnings_of(result.stderr)
        assert "could not list secrets: forbidden" in warned
        assert "could not read apiservices.apiregistration.k8s.io: forbidden" in warned

        data = run_json("ns", ns, kubeconfig=user.kubeconfig)
        (item,) = data["items"]
        remaining = {r["resource"]: r for r in item["remaining"]}
        assert remaining["secrets"]["error"] == "forbidden"
        configmaps = remaining["configmaps"]  # kube-root-ca.crt may not be deleted yet
        assert "error" not in configmaps
        assert "kept" in {o["name"] for o in configmaps["objects"]}
        assert "could not list secrets: forbidden" in data["warnings"]

        table = run_cli("ns", ns, kubeconfig=user.kubeconfig)
        assert table.returncode == 0, table.stderr
        (row,) = [line for line in table.stdout.splitlines() if line.startswith(ns)]
        assert row.endswith(NOT_POSSIBLE)
    finally:
        remove_finalizers(cp, f"/api/v1/namespaces/{ns}/configmaps/kept")


def test_user_who_may_list_only_inside_the_namespaces_explained(
    control_plane: ControlPlane, users: Users
) -> None:
    """Several namespaces are explained with one cluster-wide list per small type; a user
    whose Roles allow listing only inside those namespaces gets every namespace's content
    all the same (listed namespace by namespace), with no warning about it."""
    cp = control_plane
    names = [unique_ns("rel-inside"), unique_ns("rel-inside")]
    for ns in names:
        create_namespace(cp, ns)
        create_configmap(cp, ns, "kept", finalizers=["example.com/keep"])
    everything = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list"]}]
    user = users.user(
        "inside-only",
        cluster_rules=[rule(["namespaces"], verbs=["get"])],
        namespace_rules=dict.fromkeys(names, everything),
    )
    # the user's Role and RoleBinding live in the namespaces: held, they outlast the delete
    held = [
        f"{RBAC}/namespaces/{ns}/{kind}/{users.namespace}-inside-only"
        for ns in names
        for kind in ("roles", "rolebindings")
    ]
    for path in held:
        cp.api("PATCH", path, {"metadata": {"finalizers": ["example.com/keep"]}}, MERGE)
    for ns in names:
        delete(cp, f"/api/v1/namespaces/{ns}")
    try:
        data = run_json("ns", *names, kubeconfig=user.kubeconfig)
        items = {i["name"]: i for i in data["items"]}
        assert set(items) == set(names)
        for ns in names:
            remaining = {r["resource"]: r for r in items[ns]["remaining"]}
            assert "error" not in remaining["configmaps"], remaining["configmaps"]
            assert "kept" in {o["name"] for o in remaining["configmaps"]["objects"]}
        assert not [w for w in data["warnings"] if w.startswith("could not list configmaps")]
    finally:
        for path in [*held, *(f"/api/v1/namespaces/{ns}/configmaps/kept" for ns in names)]:
            remove_finalizers(cp, path)


def test_user_who_may_not_read_nodes_events_webhooks_apiservices(
    control_plane: ControlPlane, users: Users
) -> None:
    """Everything the plugin reads but those four: every other result is still there."""
    cp = control_plane
    ns = new_namespace(cp, "rel-noinfra")
    dead = pod_on_dead_node(cp, ns)
    hung = pod_with_running_containers(cp, ns)
    unmounted = pod_with_unreclaimed_volume(cp, ns)
    time.sleep(1)  # a whole second past its deadline (timestamps have whole seconds)
    readable = [
        rule(["pods", "namespaces", "persistentvolumeclaims", "persistentvolumes", "services"]),
        rule(["configmaps", "secrets", "serviceaccounts"]),
        rule(["leases"], group="coordination.k8s.io"),
        rule(["csidrivers", "csinodes", "volumeattachments"], group="storage.k8s.io"),
        rule(["endpointslices"], group="discovery.k8s.io"),
        rule(["customresourcedefinitions"], group="apiextensions.k8s.io"),
    ]
    user = users.user("no-infra", cluster_rules=readable)

    data = run_json("pods", "-n", ns, kubeconfig=user.kubeconfig)
    items = {i["name"]: i for i in data["items"]}
    assert set(items) == {dead.name, hung.name, unmounted.name}
    for item in items.values():
        assert "could not read nodes: forbidden" in item["warnings"]
    # what needs none of the four is still found: the container the runtime never killed
    assert "containers-running" in {b["type"] for b in items[hung.name]["blockers"]}
    # its headline says the node was not checked: "still running past deadline" would state as
    # fact what only the kubelet's last report says (a node that is down reports nothing new)
    running = next(b for b in items[hung.name]["blockers"] if b["type"] == "containers-running")
    assert running["summary"] == (
        f"node {hung.node} not checked (forbidden); app last reported running"
    )
    # nor does it blame the kubelet's volume teardown on a node it could not read
    volumes = next(
        b for b in items[unmounted.name]["blockers"] if b["type"] == "volumes-not-reclaimed"
    )
    # and names the volumes the kubelet still has to tear down, from the pod spec (issue 32)
    assert volumes["summary"] == (
        "containers exited; volume data (PVC data, CSI ebs.csi.example.com) to tear down; "
        f"node {unmounted.node} not checked (forbidden)"
    )
    # each check not made is named, and only those: nothing else was lost on the way
    forbidden = {
        "could not read nodes: forbidden",
        "could not read events: forbidden",
        "could not read events.events.k8s.io: forbidden",
        "could not read validatingwebhookconfigurations.admissionregistration.k8s.io: forbidden",
        "could not read mutatingwebhookconfigurations.admissionregistration.k8s.io: forbidden",
    }
    assert "could not read nodes: forbidden" in data["warnings"]
    assert set(data["warnings"]) <= forbidden, data["warnings"]

    table = run_cli("pods", "-n", ns, kubeconfig=user.kubeconfig)
    assert table.returncode == 0, table.stderr
    rows = [line for line in table.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) == 3 and all(row.endswith(NOT_POSSIBLE) for row in rows), table.stdout

    gone = unique_ns("rel-noinfra-ns")
    namespace_with_stuck_pod(cp, gone)
    explained = run_cli("ns", gone, "--explain", kubeconfig=user.kubeconfig)
    assert explained.returncode == 0, explained.stderr
    assert "could not read apiservices.apiregistration.k8s.io: forbidden" in explained.stdout
    assert "could not read apiservices.apiregistration.k8s.io: forbidden" in warnings_of(
        explained.stderr
    )
    # the remaining pod is still explained, as far as it can be without nodes
    assert f"  Pod {gone}/orphan-0" in explained.stdout
    assert "- could not read nodes: forbidden" in explained.stdout


# -- rejected credentials ----------------------------------------------------------------------


def test_expired_client_certificate_is_one_line_naming_the_context(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    pki = control_plane.pki_dir
    key, csr, crt = tmp_path / "user.key", tmp_path / "user.csr", tmp_path / "user.crt"
    openssl = [
        "openssl",
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        str(key),
        "-out",
        str(csr),
        "-subj",
        "/CN=expired-user",
    ]
    subprocess.run(openssl, check=True, capture_output=True)
    sign = [
        "openssl",
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(pki / "ca.crt"),
        "-CAkey",
        str(pki / "ca.key"),
        "-set_serial",
        "4242",
        "-days",
        "-1",
        "-out",
        str(crt),
    ]
    subprocess.run(sign, check=True, capture_output=True)  # not after: yesterday
    config = kubeconfig_document(
        {"server": control_plane.server, "certificate-authority": str(pki / "ca.crt")},
        {"client-certificate": str(crt), "client-key": str(key)},
        "prod-eu",
    )
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    result = run_cli("pods", "-A", "-v", "6", kubeconfig=path)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: You must be logged in to the server (Unauthorized): the credentials of context "
        '"prod-eu" were rejected (expired or wrong token/certificate?)'
    ]
    key_body = "".join(key.read_text().splitlines()[1:-1])
    assert key_body[:40] not in result.stderr + result.stdout


def test_tampered_token_is_one_line_naming_the_context(
    control_plane: ControlPlane, users: Users, tmp_path: Path
) -> None:
    """A ServiceAccount token (JWT) with a wrong signature: rejected at once, and not shown."""
    user = users.user("tampered", cluster_rules=[rule(["pods"])])
    header, claims, signature = user.token.split(".")
    forged = ".".join([header, claims, signature[::-1]])
    config = control_plane.write_kubeconfig(
        tmp_path / "forged", forged, context_name="ci-runner", user_name="forged"
    )
    line = assert_one_line_error(run_cli("pods", "-A", kubeconfig=config))
    assert 'the credentials of context "ci-runner" were rejected' in line
    assert forged not in line and signature[::-1] not in line


# -- a slow aggregated API ----------------------------------------------------------------------


class SlowApi:
    """An aggregated API served by a local HTTPS server: discovery answers at once, lists of
    `slowthings` in the namespaces named `slow` (or across all namespaces) never do."""

    def __init__(self, cp: ControlPlane, group: str, address: str, slow: set[str]) -> None:
        self.group, self.slow, self.stop_event = group, slow, threading.Event()
        api = self
        version = f"{group}/v1"
        resources = {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": version,
            "resources": [
                {
                    "name": "slowthings",
                    "singularName": "slowthing",
                    "namespaced": True,
                    "kind": "SlowThing",
                    "verbs": ["get", "list"],
                }
            ],
        }
        groups = {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": group,
                    "versions": [{"groupVersion": version, "version": "v1"}],
                    "preferredVersion": {"groupVersion": version, "version": "v1"},
                }
            ],
        }
        empty = {
            "kind": "SlowThingList",
            "apiVersion": version,
            "metadata": {"resourceVersion": "1"},
            "items": [],
        }

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                parts = path.strip("/").split("/")
                if path == f"/apis/{group}/v1":
                    self.reply(200, resources)
                elif path == "/apis":
                    self.reply(200, groups)
                elif parts[-1:] == ["slowthings"]:
                    across = len(parts) == 4  # /apis/<group>/v1/slowthings
                    if (across or parts[4] in api.slow) and api.stop_event.wait(60):
                        return
                    self.reply(200, empty)
                else:
                    self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound"})

            def reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the API server gave up on us
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.httpd = Server((address, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cp.pki_dir / "apiserver.crt", cp.pki_dir / "apiserver.key")
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop_event.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_local_address_is_a_veth_removed_after() -> None:
    """Where the slow API and the webhook backends listen: a real local address, gone after."""
    with local_address("slow aggregated API") as address:
        assert not address.startswith("127.")
        with socket.create_server((address, 0)) as server:
            port = server.getsockname()[1]
            with socket.create_connection((address, port), timeout=5):
                pass
    with pytest.raises(OSError):  # the address went with its interface
        socket.create_server((address, 0)).close()


@pytest.fixture
def slow_api(control_plane: ControlPlane) -> Iterator[SlowApi]:
    """An Available APIService whose lists hang. Removed at the end: the namespace controller
    of the shared cluster lists every type of every namespace it deletes."""
    with local_address("slow aggregated API") as address:
        yield from _slow_api(control_plane, address)


def _slow_api(cp: ControlPlane, address: str) -> Iterator[SlowApi]:
    home = unique_ns("rel-slowapi")
    group = f"{home}.example.com"
    api = SlowApi(cp, group, address, slow=set())
    name = f"v1.{group}"
    try:
        create_namespace(cp, home, wait_for_service_account=False)
        cp.api(
            "POST",
            f"/api/v1/namespaces/{home}/services",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "slow"},
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": api.port}]},
            },
        )
        cp.api(
            "POST",
            f"/apis/discovery.k8s.io/v1/namespaces/{home}/endpointslices",
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {"name": "slow-1", "labels": {"kubernetes.io/service-name": "slow"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": api.port, "protocol": "TCP"}],
            },
        )
        cp.api(
            "POST",
            "/apis/apiregistration.k8s.io/v1/apiservices",
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": name},
                "spec": {
                    "group": group,
                    "version": "v1",
                    "insecureSkipTLSVerify": True,
                    "service": {"namespace": home, "name": "slow", "port": 443},
                    "groupPriorityMinimum": 1000,
                    "versionPriority": 15,
                },
            },
        )
        wait_for(
            lambda: (apiservice_condition(cp, name) or {}).get("status") == "True",
            message=f"APIService {name} Available",
        )
        yield api
    finally:
        try:
            cp.api("DELETE", f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")
        except ApiError as error:
            assert error.status == 404, error
        wait_for(
            lambda: get_or_none(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{name}") is None,
            message=f"APIService {name} deleted",
        )
        api.close()
        delete(cp, f"/api/v1/namespaces/{home}")


def test_slow_aggregated_api_costs_a_warning_not_a_stall(
    control_plane: ControlPlane, slow_api: SlowApi
) -> None:
    cp = control_plane
    ns = unique_ns("rel-slowns")
    slow_api.slow.add(ns)
    namespace_with_stuck_pod(cp, ns)
    things = f"slowthings.{slow_api.group}"

    # The lists of the slow type never answer: which deadline ended each is in its warning
    # (no wall-clock bound here: a loaded machine stretches every run; hack/bench times them).
    result = run_cli(
        "ns", ns, "--explain", "--request-timeout", "3s", kubeconfig=cp.kubeconfig_path
    )
    assert result.returncode == 0, result.stderr
    assert f"{things}: cannot list: no answer within 3s" in result.stdout
    assert f"could not list {things}: no answer within 3s" in warnings_of(result.stderr)
    assert "node-missing" in result.stdout  # everything else is answered

    # no --request-timeout at all: the check deadline (10 s) still bounds it
    table = run_cli("ns", ns, kubeconfig=cp.kubeconfig_path)
    assert table.returncode == 0, table.stderr
    (row,) = [line for line in table.stdout.splitlines() if line.startswith(ns)]
    assert row.endswith("(1 check not possible)"), table.stdout
    assert f"could not list {things}: no answer within 10s" in warnings_of(table.stderr)

    # `all -A` lists every type across namespaces: the slow one is skipped with a warning
    data = run_json("all", "-A", "--request-timeout", "2s", kubeconfig=cp.kubeconfig_path)
    assert f"could not list {things}: no answer within 2s" in data["warnings"]  # not 10s
    assert (ns, "orphan-0") in {(i["namespace"], i["name"]) for i in data["items"]}


# -- the API server restarted in the middle of a scan --------------------------------------------


def start_paused_at_first_request(
    *args: str, kubeconfig: Path
) -> tuple[subprocess.Popen[str], list[str]]:
    """Start the plugin with -v 6 and freeze it (SIGSTOP) as soon as it logs its first request."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
    env.update(PYTHONPATH=str(ROOT), KUBECONFIG=str(kubeconfig))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubectl_terminating", *args, "-v", "6"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    before = []
    while True:
        line = proc.stderr.readline()
        assert line, f"the plugin ended before its first request: {proc.wait()}"
        before.append(line)
        if line.startswith("GET "):
            proc.send_signal(signal.SIGSTOP)
            return proc, before


def test_api_server_restart_mid_scan(control_plane: ControlPlane) -> None:
    """Two scans frozen after their first request; the API server is stopped. One resumes
    while it is down: one clear error (or, if the server is back within its retries, the
    answer). Then it is started again and the other resumes: the correct answer."""
    cp = control_plane
    ns = new_namespace(cp, "rel-restart")
    stuck = pod_on_dead_node(cp, ns)
    scan = ("all", "-A", "-o", "json")
    survivor, _ = start_paused_at_first_request(*scan, kubeconfig=cp.kubeconfig_path)
    unlucky, _ = start_paused_at_first_request(*scan, kubeconfig=cp.kubeconfig_path)
    try:
        cp.stop_apiserver()
        unlucky.send_signal(signal.SIGCONT)
        out, err = unlucky.communicate(timeout=60)
    finally:
        cp.start_apiserver()  # the session's cluster is ready again (waits for /readyz)
    # and its discovery answers: ready, a restarted server built it in over 10 s once on a
    # loaded machine (2 cores, a `yes` beside CI), past the scan's 10 s for a check read
    wait_for(
        lambda: cp.api_raw("GET", "/apis")[0] == 200,
        timeout=60,
        message="discovery",
        ignore=(urllib3.exceptions.HTTPError,),  # its own 10 s passed: ask again
    )
    survivor.send_signal(signal.SIGCONT)
    survivor_out, survivor_err = survivor.communicate(timeout=60)

    errors = [line for line in err.splitlines() if not line.startswith(("GET ", "requests: "))]
    assert "Traceback" not in err
    if unlucky.returncode == 1:
        assert errors == [
            f'error: unable to connect to the server {cp.server} (context "test"): '
            "connection refused"
        ]
        assert out == ""
    else:  # the server came back within the retries
        assert unlucky.returncode == 0, err

    assert survivor.returncode == 0, survivor_err
    assert "Traceback" not in survivor_err
    requests_after = [line for line in survivor_err.splitlines() if line.startswith("GET ")]
    assert len(requests_after) > 10  # most of the scan ran against the restarted server
    data = json.loads(survivor_out)
    found = {(i["namespace"], i["name"]): i for i in data["items"]}
    assert (ns, stuck.name) in found
    assert "node-not-ready" in {b["type"] for b in found[(ns, stuck.name)]["blockers"]}
