"""What users rely on from preflight on a live server, each guarded against the breakage a
careless hand could make (issue 40; the pure guards: tests/unit/test_preflight_guards.py):

- a server whose version cannot be read is not taken for 1.33+: ordered namespace deletion
  (KEP-5080) is not assumed, so an operator deleted with its custom resource is `likely` to
  block, not `certain`. The real API server is put behind a plain-HTTP front that answers
  /version with nothing that names a version (or an error) and passes every other read on;
- `preflight helm RELEASE` judges the release's deployed revision, the newest, as
  `helm uninstall` deletes it: a real helm installs, then upgrades to another object.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml

from tests.e2e.test_preflight import Group, Operator, helm, preflight, reader, users
from tests.harness.api import create_namespace, unique_ns
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane, free_port, kubeconfig_document
from tests.harness.kubelet import create_node

pytestmark = pytest.mark.e2e
__all__ = ["helm", "reader", "users"]  # fixtures of test_preflight.py, used here by name
JSON = dict[str, Any]


class VersionFront:
    """Plain HTTP on 127.0.0.1 in front of the API server: GET /version answers (status,
    body); every other GET is passed on as the admin, over TLS. What the tool sends and gets
    is otherwise the server's own."""

    def __init__(self, cp: ControlPlane, status: int, body: JSON) -> None:
        pool = urllib3.PoolManager(ca_certs=str(cp.ca_file), cert_reqs="CERT_REQUIRED")
        front = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.split("?")[0] == "/version":
                    front.version_asked += 1
                    self.answer(status, json.dumps(body).encode(), "application/json")
                    return
                headers = {"Authorization": f"Bearer {cp.admin_token}"}
                if self.headers.get("Accept"):
                    headers["Accept"] = self.headers["Accept"]
                upstream = pool.request("GET", cp.server + self.path, headers=headers)
                kind = upstream.headers.get("Content-Type", "application/json")
                self.answer(upstream.status, upstream.data, kind)

            def answer(self, code: int, data: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.version_asked = 0
        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def kubeconfig(self, path: Path) -> Path:
        """No credentials: the tool never sends them to an http:// server (the front adds them)."""
        cluster = {"server": f"http://127.0.0.1:{self.port}"}
        path.write_text(yaml.safe_dump(kubeconfig_document(cluster, {}, "front")))
        return path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def shop(control_plane: ControlPlane) -> Iterator[str]:
    """A namespace holding an operator (its pod on a live node, its Lease renewed) and a Widget
    with the operator's finalizer: deleting the namespace deletes the operator first on 1.33+."""
    cp = control_plane
    node = f"pfg-live-{unique_ns('n')[-6:]}"
    create_node(cp, node)
    ns = create_namespace(cp, unique_ns("pfg-shop"))["metadata"]["name"]
    group = Group(cp, "guard")
    operator = Operator(cp, ns, group, node)
    group.widget(cp, ns)
    try:
        yield ns
    finally:
        operator.stopped.set()


def finalizer_confidence(report: JSON) -> str:
    found = [p for p in report["predictions"] if p["object"]["kind"] == "Widget"]
    assert [p["type"] for p in found] == ["finalizer"], report
    return str(found[0]["confidence"])


def test_a_known_1_36_server_makes_the_operator_deadlock_certain(
    control_plane: ControlPlane, reader: Any, shop: str
) -> None:
    code, report = preflight(control_plane, reader, "ns", shop)
    assert (code, report["verdict"]) == (3, "blocked"), report
    assert finalizer_confidence(report) == "certain"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, {"major": "", "minor": "", "gitVersion": "unknown"}),  # a build that says nothing
        (200, {}),
        (404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}),
        (403, {"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403}),
    ],
)
def test_an_unknown_server_version_is_not_taken_for_ordered_deletion(
    control_plane: ControlPlane, tmp_path: Path, shop: str, status: int, body: JSON
) -> None:
    front = VersionFront(control_plane, status, body)
    try:
        result = run_cli("preflight", "ns", shop, "-o", "json",
                         kubeconfig=front.kubeconfig(tmp_path / "front"))  # fmt: skip
    finally:
        front.close()
    assert front.version_asked, "the version was never asked"
    assert "Traceback" not in result.stderr
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "blocked"
    assert finalizer_confidence(report) == "likely"


# -- the Helm revision judged -------------------------------------------------------------------


def configmap_chart(directory: Path) -> Path:
    root = directory / "config"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: config\nversion: 0.1.0\n")
    (root / "values.yaml").write_text("name: one\n")
    (root / "templates" / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 'cm-{{ .Values.name }}'}\n"
        "data: {revision: '{{ .Release.Revision }}'}\n"
    )
    return root


def test_preflight_helm_judges_the_deployed_revision(
    control_plane: ControlPlane, reader: Any, helm: Path, tmp_path: Path
) -> None:
    """Revision 1 holds cm-one; the upgrade to revision 2 replaces it with cm-two (Helm deletes
    cm-one). `helm uninstall` would delete cm-two: preflight must judge that, not cm-one."""
    cp = control_plane
    ns = create_namespace(cp, unique_ns("pfg-helm"))["metadata"]["name"]
    admin = cp.write_kubeconfig(tmp_path / "admin", cp.admin_token)
    root = configmap_chart(tmp_path)

    def run_helm(*args: str) -> None:
        done = subprocess.run(
            [str(helm), *args, "-n", ns, "--kubeconfig", str(admin)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    run_helm("install", "cfg", str(root))
    run_helm("upgrade", "cfg", str(root), "--set", "name=two")
    secrets = cp.api("GET", f"/api/v1/namespaces/{ns}/secrets?labelSelector=owner%3Dhelm")
    by_version = {
        s["metadata"]["labels"]["version"]: s["metadata"]["labels"]["status"]
        for s in secrets["items"]
    }
    assert by_version == {"1": "superseded", "2": "deployed"}, by_version

    code, report = preflight(cp, reader, "helm", "cfg", "-n", ns)
    assert code == 0, report
    assert report["doomed"] == {"ConfigMap": 1}, report
    assert report["target"]["helmOrder"] == [f"ConfigMap/{ns}/cm-two"], report
    run_helm("uninstall", "cfg")
