"""A real backend for admission webhooks and aggregated APIs: an HTTPS server on a non-loopback
address of this machine, on a veth pair made for it (the API server rejects loopback endpoints;
an address on a local interface is delivered locally, so no packet leaves), behind a selector-less
Service whose EndpointSlice and Endpoints point at it, "run" by a pod object on a live node.

It allows every AdmissionReview and answers discovery for any group. When its pod is deleted
it plays the kubelet and the endpoint controllers: it stops serving, confirms the pod's
deletion and empties its endpoints, as a real backend pod's deletion would.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.harness.api import MERGE, delete, get_or_none, micro_time
from tests.harness.controlplane import ControlPlane, _make_ca, _make_leaf
from tests.harness.kubelet import create_pod
from tests.harness.tiers import skip_or_fail

JSON = dict[str, Any]


@contextlib.contextmanager
def local_address(tier: str) -> Iterator[str]:
    """A non-loopback IPv4 address of this machine for the block: on a veth pair added for it
    and deleted after (root and `ip`; the address goes with its link). Without them, the
    tier's tests fail in CI and skip elsewhere."""
    link = f"kt{secrets.token_hex(4)}"
    address = f"198.18.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"  # RFC 2544
    steps = (
        ["ip", "link", "add", link, "type", "veth", "peer", "name", f"{link}p"],
        ["ip", "link", "set", link, "up"],
        ["ip", "addr", "add", f"{address}/32", "dev", link],
    )
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as error:
        subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=10, check=False)
        skip_or_fail(tier, f"no veth pair for a local non-loopback address ({error})")
    try:
        yield address
    finally:
        subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=10, check=False)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, body: JSON) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # an AdmissionReview: allowed
        length = int(self.headers.get("Content-Length") or 0)
        review = json.loads(self.rfile.read(length) or b"{}")
        uid = (review.get("request") or {}).get("uid", "")
        self._send(
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {"uid": uid, "allowed": True},
            }
        )

    def do_GET(self) -> None:  # discovery of an aggregated group/version: no resources
        parts = self.path.strip("/").split("/")
        group_version = "/".join(parts[1:3]) if parts[:1] == ["apis"] else "v1"
        self._send({"kind": "APIResourceList", "groupVersion": group_version, "resources": []})


def publish_service(
    cp: ControlPlane,
    ns: str,
    name: str,
    port: tuple[str, int],
    address: str,
    target_port: int,
    target: JSON | None = None,
) -> None:
    """A selector-less Service `name` with one port (name, number) whose EndpointSlice and
    Endpoints point at address:target_port, as the endpoint controllers would write them for a
    ready pod (`target`, its reference). The API server's service proxy and its webhook and
    aggregation clients read these."""
    port_name, number = port
    cp.api(
        "POST",
        f"/api/v1/namespaces/{ns}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name},
            "spec": {
                "ports": [
                    {
                        "name": port_name,
                        "port": number,
                        "targetPort": target_port,
                        "protocol": "TCP",
                    }
                ]
            },
        },
    )
    endpoint_port = {"name": port_name, "port": target_port, "protocol": "TCP"}
    reference = {"targetRef": target} if target else {}
    cp.api(
        "POST",
        f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": name, "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}, **reference}],
            "ports": [endpoint_port],
        },
    )
    cp.api(
        "POST",
        f"/api/v1/namespaces/{ns}/endpoints",
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name},
            "subsets": [{"addresses": [{"ip": address, **reference}], "ports": [endpoint_port]}],
        },
    )


RUNNING: list[Backend] = []  # stop_all() ends them, whatever their tests did


class Backend(threading.Thread):
    def __init__(self, cp: ControlPlane, ns: str, node: str, directory: Path) -> None:
        super().__init__(daemon=True)
        self.cp, self.ns, self.node = cp, ns, node
        self.service = f"backend-{secrets.token_hex(2)}"
        self.pod = f"{self.service}-0"
        self.network = contextlib.ExitStack()  # its veth pair, deleted when it stops
        self.address = self.network.enter_context(local_address("webhook backends"))
        RUNNING.append(self)
        self.stopped = threading.Event()
        directory.mkdir(parents=True, exist_ok=True)
        host = f"{self.service}.{ns}.svc"
        _make_ca(directory, "ca", "preflight-backend-ca")
        _make_leaf(
            directory,
            "ca",
            "serving",
            host,
            f"subjectAltName=DNS:{host},DNS:{host}.cluster.local,IP:{self.address}\n"
            "extendedKeyUsage=serverAuth\n",
        )
        self.ca_bundle = (directory / "ca.crt").read_text()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(directory / "serving.crt", directory / "serving.key")
        self.server = ThreadingHTTPServer((self.address, 0), _Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        create_pod(cp, ns, self.pod, node=node)
        self._publish()
        self.start()

    @property
    def pod_path(self) -> str:
        return f"/api/v1/namespaces/{self.ns}/pods/{self.pod}"

    def _publish(self) -> None:
        target = {"kind": "Pod", "name": self.pod, "namespace": self.ns}
        publish_service(
            self.cp, self.ns, self.service, ("https", 443), self.address, self.port, target
        )

    def _withdraw(self) -> None:
        """The kubelet confirms the deletion; the endpoint controllers drop the address."""
        self._close()
        for path, body in (
            (
                f"/apis/discovery.k8s.io/v1/namespaces/{self.ns}/endpointslices/{self.service}",
                {"endpoints": None},
            ),
            (f"/api/v1/namespaces/{self.ns}/endpoints/{self.service}", {"subsets": None}),
        ):
            with contextlib.suppress(Exception):  # already deleted with its namespace
                self.cp.api("PATCH", path, body, MERGE)
        if get_or_none(self.cp, self.pod_path) is not None:
            delete(self.cp, self.pod_path, grace_period=0)

    def run(self) -> None:
        while not self.stopped.wait(0.3):
            try:
                pod = get_or_none(self.cp, self.pod_path)
                if pod is None or pod["metadata"].get("deletionTimestamp"):
                    self._withdraw()
                    return
                node_lease = (
                    f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.node}"
                )
                self.cp.api("PATCH", node_lease, {"spec": {"renewTime": micro_time()}}, MERGE)
            except Exception:  # the control plane restarting: try again
                continue
        self._close()

    def _close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.network.close()

    def client_config(self, path: str = "/validate") -> JSON:
        return {
            "service": {"namespace": self.ns, "name": self.service, "path": path, "port": 443},
            "caBundle": base64.b64encode(self.ca_bundle.encode()).decode(),
        }


def stop_all() -> None:
    """Every backend stopped, its veth pair deleted (a test that failed left some running)."""
    while RUNNING:
        backend = RUNNING.pop()
        backend.stopped.set()
        if backend.is_alive():
            backend.join(timeout=10)
        backend.network.close()  # also when its thread never started
