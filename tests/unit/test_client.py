"""Client against a fault injector: a small HTTP server on 127.0.0.1, started by the test,
that answers with scripted responses (statuses, Retry-After, resets, delays, trickled bodies).

Not a mock of the Kubernetes API: only the transport faults are scripted; the real client
code (urllib3, retries, deadlines, typed errors) runs unchanged. Faults that need a real API
server (RBAC, a restart, a slow aggregated API) are in tests/e2e/test_reliability.py.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
import re
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import urllib3
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_terminating import client as client_module
from kubectl_terminating import find, reads
from kubectl_terminating.client import Client
from kubectl_terminating.discovery import discover
from kubectl_terminating.errors import (
    ApiError,
    DeadlineExceeded,
    Forbidden,
    NotFound,
    Unauthorized,
    Unreachable,
)
from kubectl_terminating.find import UNBOUND, NodeTally, drop_managed_fields, scan_table
from kubectl_terminating.kubeconfig import Connection
from kubectl_terminating.live import LiveView
from kubectl_terminating.nodeaccess import Way
from kubectl_terminating.nodeanswers import NodeEvidenceRefused, Subject
from kubectl_terminating.nodehttp import ThroughProxy
from kubectl_terminating.nodeproxy import SSAR_PATH, NodeProxy
from kubectl_terminating.view import ReadFailed
from tests.profiles import examples

TOKEN = "kt-fault-injector-secret-token-7f3a9c"
OK: dict[str, Any] = {"kind": "Thing", "apiVersion": "v1", "metadata": {"name": "x"}}


@dataclass
class Step:
    """One scripted answer. The last step of a path repeats forever."""

    status: int = 200
    body: Any = field(default_factory=lambda: OK)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the status line
    reset: bool = False  # TCP RST instead of an answer
    trickle: float = 0.0  # pause between body bytes


@dataclass
class Seen:
    path: str
    at: float
    headers: dict[str, str]
    method: str = "GET"
    body: bytes = b""


class FaultServer:
    def __init__(self, port: int = 0) -> None:
        self.script: dict[str, list[Step]] = {}
        self.seen: list[Seen] = []
        self.answered: list[str] = []  # paths whose answer was written whole
        self.stopping = threading.Event()
        self.connections: set[socket.socket] = set()
        self.date: str | None = None  # the Date header of every answer (None: the real time)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like the API server

            def log_message(self, *args: Any) -> None:
                pass

            def date_time_string(self, timestamp: float | None = None) -> str:
                return server.date or super().date_time_string(timestamp)

            def setup(self) -> None:
                super().setup()
                server.connections.add(self.connection)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                self.do_GET(body)

            def do_GET(self, body: bytes = b"") -> None:
                path = self.path.split("?")[0]
                seen = Seen(self.path, time.monotonic(), dict(self.headers), self.command, body)
                server.seen.append(seen)
                steps = server.script.get(path) or [Step(404, {"kind": "Status", "code": 404})]
                step = steps.pop(0) if len(steps) > 1 else steps[0]
                try:
                    self.answer(step)
                except OSError:  # the client gave up first: expected in timeout tests
                    self.close_connection = True

            def answer(self, step: Step) -> None:
                if step.reset:
                    linger = struct.pack("ii", 1, 0)  # close with RST: "connection reset"
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.connection.close()
                    self.close_connection = True
                    return
                if server.stopping.wait(step.delay):
                    return
                raw = step.body if isinstance(step.body, bytes) else json.dumps(step.body).encode()
                self.send_response(step.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for key, value in step.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if not step.trickle:
                    self.wfile.write(raw)
                    server.answered.append(self.path)
                    return
                for byte in raw:
                    if server.stopping.wait(step.trickle):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                server.answered.append(self.path)

            def finish(self) -> None:
                with contextlib.suppress(OSError):
                    super().finish()

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # resets and clients that hung up: part of the script

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def on(self, path: str, *steps: Step) -> None:
        self.script[path] = list(steps)

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path.split("?")[0] == path]

    def stop(self) -> None:
        """Like a process exiting: stop listening and close every open connection."""
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()


REAL_BACKOFF = client_module.BACKOFF


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests about timing set the real backoff again; the others need not wait for it."""
    monkeypatch.setattr(client_module, "BACKOFF", 0.02)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault = FaultServer()
    yield fault
    fault.stop()


def make_client(server: FaultServer | int, request_timeout: float = 0.0, **kwargs: Any) -> Client:
    port = server if isinstance(server, int) else server.port
    connection = Connection(
        server=f"http://127.0.0.1:{port}", context="faulty", namespace="default", token=TOKEN
    )
    return Client(connection, request_timeout=request_timeout, **kwargs)


def outcome(function: Any, *args: Any, **kwargs: Any) -> Any:
    """What the call returned, or the error it raised."""
    try:
        return function(*args, **kwargs)
    except Exception as error:
        return error


class FakeTime:
    """The client's clock and sleep: a pause moves the clock on at once, and is recorded. The
    waits asserted are the ones the client chose, never how long the machine took."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


# -- 5xx, 429 and Retry-After ----------------------------------------------------------------


@pytest.mark.parametrize("statuses", [(500, 502, 503), (504, 504, 504)])
def test_5xx_is_retried_then_answers(server: FaultServer, statuses: tuple[int, ...]) -> None:
    server.on("/api/v1/x", *(Step(status, {}) for status in statuses), Step())
    client = make_client(server)
    assert client.get("/api/v1/x") == OK
    assert len(server.requests("/api/v1/x")) == 4
    assert client.stats.retries == 3


def test_backoff_doubles_and_is_capped(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime
) -> None:
    monkeypatch.setattr(client_module, "MAX_ATTEMPTS", 6)
    monkeypatch.setattr(client_module, "BACKOFF", 0.05)
    monkeypatch.setattr(client_module, "MAX_BACKOFF", 0.15)
    server.on("/api/v1/x", Step(503, {"kind": "Status", "message": "busy", "code": 503}))
    client = make_client(server, clock=fake_time.clock, sleep=fake_time.sleep)
    error = outcome(client.get, "/api/v1/x")
    assert isinstance(error, ApiError) and error.status == 503
    assert len(server.requests("/api/v1/x")) == 6  # then gives up: one typed error
    assert fake_time.pauses == [0.05, 0.1, 0.15, 0.15, 0.15]


def test_5xx_gives_up_after_max_attempts_with_one_clear_error(server: FaultServer) -> None:
    body = {"kind": "Status", "message": "etcdserver: request timed out", "code": 500}
    server.on("/api/v1/x", Step(500, body))
    error = outcome(make_client(server).get, "/api/v1/x")
    assert isinstance(error, ApiError)
    assert str(error) == "the server answered 500 for /api/v1/x: etcdserver: request timed out"
    assert len(server.requests("/api/v1/x")) == client_module.MAX_ATTEMPTS


def test_429_waits_as_long_as_retry_after_says(server: FaultServer, fake_time: FakeTime) -> None:
    server.on("/api/v1/x", Step(429, {}, {"Retry-After": "1"}), Step())
    client = make_client(server, clock=fake_time.clock, sleep=fake_time.sleep)
    assert client.get("/api/v1/x") == OK
    assert fake_time.pauses == [1.0]  # Retry-After, not the backoff


def test_retry_after_is_capped(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime
) -> None:
    monkeypatch.setattr(client_module, "MAX_RETRY_AFTER", 0.3)
    server.on("/api/v1/x", Step(429, {}, {"Retry-After": "3600"}), Step())
    client = make_client(server, clock=fake_time.clock, sleep=fake_time.sleep)
    assert client.get("/api/v1/x") == OK
    assert fake_time.pauses == [0.3]


def test_retry_after_in_http_date_form_falls_back_to_backoff(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime
) -> None:
    monkeypatch.setattr(client_module, "BACKOFF", REAL_BACKOFF)
    date = "Wed, 21 Oct 2026 07:28:00 GMT"
    server.on("/api/v1/x", Step(503, {}, {"Retry-After": date}), Step())
    client = make_client(server, clock=fake_time.clock, sleep=fake_time.sleep)
    assert client.get("/api/v1/x") == OK
    assert fake_time.pauses == [REAL_BACKOFF]


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(400, ApiError), (401, Unauthorized), (403, Forbidden), (404, NotFound), (410, ApiError)],
)
def test_client_errors_are_not_retried(
    server: FaultServer, status: int, error_type: type[Exception]
) -> None:
    server.on("/api/v1/x", Step(status, {"kind": "Status", "message": "no", "code": status}))
    error = outcome(make_client(server).get, "/api/v1/x")
    assert isinstance(error, error_type)
    assert len(server.requests("/api/v1/x")) == 1


def test_unauthorized_names_the_context_not_the_token(server: FaultServer) -> None:
    server.on("/api/v1/x", Step(401, {"kind": "Status", "message": "Unauthorized", "code": 401}))
    error = outcome(make_client(server).get, "/api/v1/x")
    assert isinstance(error, Unauthorized)
    assert 'context "faulty"' in str(error) and TOKEN not in str(error)


def test_deadline_spans_retries(server: FaultServer, fake_time: FakeTime) -> None:
    """A 503 with Retry-After: 1 and a 1.5 s deadline: one retry fits, a second would not."""
    server.on("/api/v1/x", Step(503, {"kind": "Status", "code": 503}, {"Retry-After": "1"}))
    client = make_client(server, clock=fake_time.clock, sleep=fake_time.sleep)
    error = outcome(client.get, "/api/v1/x", deadline=1.5)
    assert isinstance(error, ApiError) and error.status == 503
    assert len(server.requests("/api/v1/x")) == 2
    assert fake_time.pauses == [1.0]


# -- connection resets, refused connections, a restarted server ------------------------------


def test_connection_reset_is_retried(server: FaultServer) -> None:
    server.on("/api/v1/x", Step(reset=True), Step(reset=True), Step())
    client = make_client(server)
    assert client.get("/api/v1/x") == OK
    assert client.stats.retries == 2


def test_persistent_reset_is_one_clear_error(server: FaultServer) -> None:
    server.on("/api/v1/x", Step(reset=True))
    error = outcome(make_client(server).get, "/api/v1/x")
    assert isinstance(error, Unreachable)
    assert str(error) == (
        f"unable to connect to the server http://127.0.0.1:{server.port} "
        f'(context "faulty"): connection reset by peer'
    )
    assert len(server.requests("/api/v1/x")) == client_module.MAX_ATTEMPTS


def test_tls_handshake_failure_is_retried_only_once_tls_has_worked() -> None:
    """A handshake alert after the server has answered over TLS is passing; before any
    answer, or a failed certificate verification at any time, is the configuration's fault: no
    retry. But a decode_error alert is the server's hiccup whenever it comes: seen twice from
    a kube-apiserver on a loaded 2-core machine, on a new process's first request (CI)."""
    ssl_error, pool = urllib3.exceptions.SSLError, urllib3.HTTPSConnectionPool("127.0.0.1")

    def failed(said: str) -> urllib3.exceptions.MaxRetryError:
        return urllib3.exceptions.MaxRetryError(pool, "/api", ssl_error(said))

    decode = failed("[SSL: TLSV1_ALERT_DECODE_ERROR] tlsv1 alert decode error")
    unknown_ca = failed("[SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca")
    verify = failed("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    assert client_module._transient(decode, alive=True)
    assert client_module._transient(decode, alive=False)
    assert client_module._transient(unknown_ca, alive=True)
    assert not client_module._transient(unknown_ca, alive=False)
    assert not client_module._transient(verify, alive=True)
    assert not client_module._transient(verify, alive=False)


def test_refused_before_any_answer_fails_at_once() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused
        client = make_client(port)
        error = outcome(client.get, "/api/v1/x")
    assert isinstance(error, Unreachable) and str(error).endswith("connection refused")
    assert client.stats.retries == 0  # a wrong address is not retried


def test_server_restarting_mid_run_is_retried(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answered, went away and came back on the same port within the retries."""
    monkeypatch.setattr(client_module, "BACKOFF", REAL_BACKOFF)
    server.on("/api/v1/x", Step())
    client = make_client(server)
    assert client.get("/api/v1/x") == OK
    port = server.port
    server.stop()
    restarted: list[FaultServer] = []

    def restart() -> None:
        again = FaultServer(port)
        again.on("/api/v1/y", Step())
        restarted.append(again)

    timer = threading.Timer(0.5, restart)
    timer.start()
    try:
        assert client.get("/api/v1/y") == OK
        assert client.stats.retries >= 1
    finally:
        timer.join()
        for again in restarted:
            again.stop()


def test_server_gone_mid_run_is_one_clear_error(server: FaultServer) -> None:
    server.on("/api/v1/x", Step())
    client = make_client(server)
    client.get("/api/v1/x")
    server.stop()
    error = outcome(client.get, "/api/v1/y")
    assert isinstance(error, Unreachable) and str(error).endswith("connection refused")
    assert client.stats.retries == client_module.MAX_ATTEMPTS - 1


# -- timeouts and deadlines -------------------------------------------------------------------


def test_request_timeout_is_honoured_and_not_retried(server: FaultServer) -> None:
    server.on("/api/v1/x", Step(delay=10))
    error = outcome(make_client(server, request_timeout=0.5).get, "/api/v1/x")
    assert isinstance(error, Unreachable)
    assert "did not answer within the request timeout" in str(error)
    assert server.answered == []  # the client gave up first: the server still holds it
    assert len(server.requests("/api/v1/x")) == 1


def test_request_timeout_bounds_a_trickled_body(server: FaultServer) -> None:
    """Each byte comes well within the read timeout; the whole answer would take 10 s."""
    server.on("/api/v1/x", Step(body=b"{" + b" " * 48 + b"}", trickle=0.2))
    error = outcome(make_client(server, request_timeout=0.5).get, "/api/v1/x")
    assert isinstance(error, Unreachable)
    assert server.answered == []  # given up mid-body, before the last byte


def test_check_deadline_is_ten_seconds_or_the_request_timeout_if_lower(
    server: FaultServer,
) -> None:
    assert make_client(server).check_deadline == 10.0
    assert make_client(server, request_timeout=3).check_deadline == 3.0
    assert make_client(server, request_timeout=60).check_deadline == 10.0


def test_missed_deadline_is_a_typed_error_for_a_warning(server: FaultServer) -> None:
    server.on("/apis/slow.example.com/v1/things", Step(delay=10))
    client = make_client(server)  # no request timeout at all
    error = outcome(client.get, "/apis/slow.example.com/v1/things", deadline=0.5)
    assert isinstance(error, DeadlineExceeded)
    assert str(error) == "no answer within 0.5s"
    assert server.answered == []


def test_slow_group_does_not_stall_discovery(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Legacy (per-group) discovery with one group that never answers: bounded, reported."""
    monkeypatch.setattr(client_module, "CHECK_DEADLINE", 0.5)
    server.on("/api", Step(body={"kind": "APIVersions", "versions": ["v1"]}))
    groups = [
        {"name": g, "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"}}
        for g in ("fast.example.com", "slow.example.com")
    ]
    server.on("/apis", Step(body={"kind": "APIGroupList", "groups": groups}))
    resource = {"name": "things", "kind": "Thing", "namespaced": True, "verbs": ["list"]}
    server.on("/api/v1", Step(body={"kind": "APIResourceList", "resources": [resource]}))
    server.on(
        "/apis/fast.example.com/v1", Step(body={"kind": "APIResourceList", "resources": [resource]})
    )
    server.on("/apis/slow.example.com/v1", Step(delay=10))
    discovery = discover(make_client(server))
    assert "/apis/slow.example.com/v1" not in server.answered  # not waited for
    assert discovery.failed_groups == {"slow.example.com/v1": "no answer within 0.5s"}
    assert {r.group for r in discovery.resources} == {"", "fast.example.com"}


# -- the live view turns read failures into warnings ------------------------------------------


def test_live_view_read_failures(server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "CHECK_DEADLINE", 0.5)
    forbidden = {"kind": "Status", "reason": "Forbidden", "code": 403, "message": "no"}
    server.on("/api/v1/nodes/n1", Step(403, forbidden))
    server.on("/apis/storage.k8s.io/v1/volumeattachments", Step(delay=10))
    server.on("/api/v1/nodes/n2", Step(401, {"kind": "Status", "code": 401}))
    view = LiveView(make_client(server))
    with pytest.raises(ReadFailed, match=r"^could not read nodes: forbidden$"):
        reads.node(view, "n1")
    with pytest.raises(ReadFailed, match=r"^could not read .*: no answer within 0.5s$"):
        reads.volume_attachments(view)
    with pytest.raises(Unauthorized):  # wrong credentials stay the run's one error
        reads.node(view, "n2")


# -- secrets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "credentials",
    [
        {"token": TOKEN},
        {"token": "sha256~Xk3PqR7s-Tu_vW/AbC+dEf=="},  # OpenShift's, base64 characters
        {"token": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"},  # a JWT
        {"username": "alice", "password": "p@ss w0rd:!"},  # basic: base64 on the wire
    ],
    ids=["token", "sha256", "jwt", "basic"],
)
def test_credentials_echoed_by_a_broken_proxy_are_redacted(
    server: FaultServer, credentials: dict[str, Any]
) -> None:
    connection = Connection(
        server=f"http://127.0.0.1:{server.port}", context="faulty", namespace="default"
    )
    log = io.StringIO()
    client = Client(replace(connection, **credentials), verbosity=6, log=log)
    secret = credentials.get("token") or credentials["password"]
    scheme, sent = "Bearer", secret
    if "username" in credentials:
        scheme, sent = "Basic", base64.b64encode(f"alice:{secret}".encode()).decode()
    echo = f"bad gateway; request was: GET /api/v1/x Authorization: {scheme} {sent}; {secret}"
    server.on("/api/v1/x", Step(400, echo.encode()))
    error = outcome(client.get, "/api/v1/x")
    assert isinstance(error, ApiError)
    said = str(error)
    assert secret not in said and sent not in said and "<redacted>" in said, said
    assert "GET http://127.0.0.1" in log.getvalue() and secret not in log.getvalue()
    headers = {k.lower(): v for k, v in server.seen[0].headers.items()}
    assert headers["authorization"] == f"{scheme} {sent}"  # it was sent
    assert secret not in repr(client.connection)


# -- compression ------------------------------------------------------------------------------


def big_table(rows: int) -> dict[str, Any]:
    """A pods Table as the API server sends it, every 1,000th pod terminating."""
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "columnDefinitions": [{"name": "Name"}, {"name": "Status"}, {"name": "Node"}],
        "rows": [
            {"cells": [f"pod-{i}", "Terminating" if i % 1000 == 0 else "Running", f"n-{i % 9}"]}
            for i in range(rows)
        ],
    }


def gzipped(body: dict[str, Any]) -> Step:
    raw = json.dumps(body, separators=(",", ":")).encode()
    return Step(body=gzip.compress(raw), headers={"Content-Encoding": "gzip"})


def test_answers_are_asked_gzipped_and_decompressed(server: FaultServer) -> None:
    """As kubectl, the client accepts gzip (the API server compresses answers over 128 KiB);
    a gzipped answer of several MB reads back whole, through get() and through the streamed
    Table scan (whose chunked reads must not stop at a chunk the decoder holds back)."""
    table = big_table(60_000)  # about 3 MB of JSON, 1/20 of it on the wire
    server.on("/api/v1/pods", gzipped(table))
    log = io.StringIO()
    client = make_client(server, verbosity=6, log=log)
    assert client.get("/api/v1/pods") == table
    assert server.seen[-1].headers["Accept-Encoding"] == "gzip"
    assert log.getvalue().rstrip().endswith("ms (gzip)")

    head, *rows = scan_table(client.stream("/api/v1/pods"), (b'"Terminating"',))
    assert head["kind"] == "Table" and "rows" not in head
    assert [row["cells"][0] for row in rows] == [f"pod-{i}" for i in range(0, 60_000, 1000)]


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_table_scan_counts_each_nodes_pods_without_decoding_them(chunk: int) -> None:
    """The scan counts every row's NODE cell from its bytes, whatever the chunking and the
    cells before it hold (commas, escaped quotes, brackets, numbers), so find_pods knows a node
    holds thousands of pods without decoding them; rows without a node count as UNBOUND."""
    statuses = ["Running", 'Err,or "x" [1]', "Terminating", "Init:0/1"]
    rows = [
        {"cells": [f"p-{i}", "1/1", statuses[i % 4], i % 3, "5m", "10.0.0.1", node, "<none>"]}
        for i, node in enumerate(["big"] * 40 + ["small"] * 3 + ["<none>"] * 2)
    ]
    columns = ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node"]
    table = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "columnDefinitions": [{"name": c} for c in columns],
        "rows": rows,
    }
    # as the API server writes it: compact, `<` and `>` escaped
    body = _compact(table).replace(b"<", b"\\u003c").replace(b">", b"\\u003e")
    tally = NodeTally()
    answer = scan_table((body[i : i + chunk] for i in range(0, len(body), chunk)), (), tally)
    tally.at(6)
    assert len(list(answer)) == 1 + 45
    assert tally.pods() == {"big": 40, "small": 3, UNBOUND: 2}


def test_the_table_scan_patterns_compile_on_python_3_10() -> None:
    """pyproject says Python 3.10+: possessive quantifiers and atomic groups are 3.11's, and
    on 3.10 compiling them fails (`re.error: multiple repeat`) on every live `pods` run."""
    for pattern in (find._STRING, find._CELL):
        assert not re.search(rb"[*+?}]\+|\(\?>", pattern), pattern


def test_a_kubelet_answer_nested_too_deeply_is_a_problem_of_its_node(server: FaultServer) -> None:
    """The kubelet's JSON through the node proxy is read as bounded as a file: one answer
    nested 100,000 deep is one problem of that node, not a RecursionError ending the run."""
    proxy = "/api/v1/nodes/n1/proxy/"
    server.on(proxy + "logs/", Step(body=b"E1124 kubelet.go:1] pod uid-1 failed\n"))
    server.on(proxy + "stats/summary", Step(body=b"[" * 100_000))
    server.on(proxy + "pods", Step(body={"kind": "PodList", "items": []}))
    evidence, warnings = NodeProxy(make_client(server)).read_node("n1", Subject(("uid-1",)))
    assert evidence.lines == ("E1124 kubelet.go:1] pod uid-1 failed",)
    assert evidence.problems == (
        "stats/summary: cannot read stats/summary of node n1: the JSON " "is nested too deeply",
    )
    assert warnings == [f"node evidence of n1: could not read {evidence.problems[0]}"]


def test_an_endpoint_whose_narrow_right_is_missing_is_never_asked_for(
    server: FaultServer,
) -> None:
    """Read with `get nodes/log` and `get nodes/pods` but not `get nodes/stats`: the kubelet's
    stats/summary is not requested at all (the way's one warning says so, nodeaccess.py)."""
    proxy = "/api/v1/nodes/n1/proxy/"
    server.on(proxy + "logs/", Step(body=b"E1124 kubelet.go:1] pod uid-1 failed\n"))
    server.on(proxy + "stats/summary", Step(body={"node": {}}))
    server.on(proxy + "pods", Step(body={"kind": "PodList", "items": []}))
    reading = NodeProxy(make_client(server))
    kubelet = ThroughProxy(reading.client, "n1")
    way = Way(True, frozenset({"log", "pods"}))
    evidence, warnings = reading.read_node("n1", Subject(("uid-1",)), kubelet, way)
    sent = [s.path.removeprefix(proxy).split("?")[0] for s in server.seen]
    assert sent == ["logs/", "pods"]
    assert (evidence.free, evidence.kubelet_pods, warnings) == ({}, {}, [])


@pytest.mark.parametrize("allowed", [True, False])
def test_node_proxy_reads_only_after_the_permission_is_granted(
    server: FaultServer, allowed: bool
) -> None:
    """`get nodes/proxy` is exec-equivalent: a SelfSubjectAccessReview for it comes first,
    and nothing is sent to a node proxy unless its answer is allowed."""
    proxy = "/api/v1/nodes/n1/proxy/"
    review = {"kind": "SelfSubjectAccessReview", "status": {"allowed": allowed}}
    server.on(SSAR_PATH, Step(201, review))
    server.on(proxy + "logs/", Step(body=b"E1124 kubelet.go:1] pod uid-1 failed\n"))
    server.on(proxy + "stats/summary", Step(body={"node": {}}))
    server.on(proxy + "pods", Step(body={"kind": "PodList", "items": []}))
    reading = NodeProxy(make_client(server))
    read = outcome(reading.read_nodes, {"n1": Subject(("uid-1",))})
    first = server.seen[0]
    assert (first.method, first.path) == ("POST", SSAR_PATH)
    spec = json.loads(first.body)["spec"]["resourceAttributes"]
    assert spec == {"verb": "get", "resource": "nodes", "subresource": "proxy"}
    to_node = [s.path for s in server.seen if s.path.startswith(proxy)]
    if allowed:
        evidence, _ = read
        assert evidence["n1"].lines == ("E1124 kubelet.go:1] pod uid-1 failed",)
        assert to_node
    else:
        assert isinstance(read, NodeEvidenceRefused)
        assert "nodes/proxy is not allowed" in str(read) and to_node == []


def test_disable_compression_in_the_kubeconfig_is_honoured(server: FaultServer) -> None:
    server.on("/api/v1/x", Step())
    connection = Connection(
        server=f"http://127.0.0.1:{server.port}",
        context="faulty",
        namespace="default",
        disable_compression=True,
    )
    assert Client(connection).get("/api/v1/x") == OK
    # as kubectl: no Accept-Encoding at all (plain bytes), not http.client's `identity`
    assert "Accept-Encoding" not in server.seen[-1].headers


def _compact(obj: Any) -> bytes:
    """As the API server writes JSON: no spaces, `<`, `>` and `&` escaped, unicode kept."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


POD_FIXTURE = "tests/fixtures/pods/pod-web-0.json"


def _with_managed_fields(name: str, annotation: str = "") -> dict[str, Any]:
    with open(POD_FIXTURE) as f:
        pod: dict[str, Any] = json.load(f)
    pod["metadata"]["name"] = name
    pod["metadata"]["annotations"] = {"note": annotation}
    pod["metadata"]["managedFields"] = [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2025-06-01T10:00:00Z",
            "fieldsType": "FieldsV1",
            # keys of list items hold JSON, brackets and escaped quotes included
            "fieldsV1": {
                "f:metadata": {"f:annotations": {".": {}, "f:note": {}}},
                "f:spec": {
                    "f:containers": {'k:{"name":"app]"}': {".": {}, "f:args": {}}},
                    "f:tolerations": {},
                },
            },
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2025-06-01T10:00:01Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {'f:weird\\"]': {}}},
            "subresource": "status",
        },
    ]
    return pod


def test_managed_fields_are_cut_before_decoding() -> None:
    """What is left decodes to the list as the server sent it, less each item's
    managedFields: brackets and escaped quotes inside their strings do not end the cut
    early, and a value that merely spells the key out is left alone."""
    tricky = ',"managedFields":[{"a":"]"}] and \\" then ]'
    listed: dict[str, Any] = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "7"},
        "items": [_with_managed_fields("a"), _with_managed_fields("b", tricky)],
    }
    body = _compact(listed)
    cut = drop_managed_fields(body)
    assert len(cut) < len(body) * 0.8
    for item in listed["items"]:
        del item["metadata"]["managedFields"]
    assert json.loads(cut) == listed
    assert listed["items"][1]["metadata"]["annotations"]["note"] == tricky


# what fieldsV1 keys and managers may spell: brackets, quotes and backslashes in any order
_TRICKY_TEXT = st.text(alphabet='ab]["\\}{:,', max_size=12)


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.dictionaries(_TRICKY_TEXT, _TRICKY_TEXT | st.dictionaries(_TRICKY_TEXT, st.just({}))),
        max_size=3,
    ),
    _TRICKY_TEXT,
)
def test_any_managed_fields_are_cut_whole(entries: list[dict[str, Any]], note: str) -> None:
    """Whatever their strings hold, each item's managedFields are cut whole, and only they:
    the rest decodes as the server sent it (a `]` or a `\\"` inside a string is not its end)."""
    items = [
        {"metadata": {"name": f"p{i}", "annotations": {"n": note}, "managedFields": entries}}
        for i in range(2)
    ]
    cut = drop_managed_fields(_compact({"kind": "PodList", "items": items}))
    for item in items:
        del item["metadata"]["managedFields"]
    assert json.loads(cut) == {"kind": "PodList", "items": items}


def test_a_cut_that_leaves_no_json_falls_back_to_the_whole_body(server: FaultServer) -> None:
    """If an answer had another shape (an array inside managedFields), the cut would end
    early and leave broken JSON: the whole body is decoded instead, never an error."""
    pod = {"metadata": {"name": "a", "managedFields": [{"fieldsV1": {"f:x": [1]}}], "uid": "u"}}
    with pytest.raises(ValueError):  # cut at the inner `]`
        json.loads(drop_managed_fields(_compact(pod)))
    server.on("/api/v1/namespaces/ns/pods/a", Step(body=_compact(pod)))
    client = make_client(server)
    assert client.get("/api/v1/namespaces/ns/pods/a", prune=drop_managed_fields) == pod


# -- credentials: an exec plugin and what the kubeconfig or the flags give -------------------


def self_signed(tmp_path: Path) -> tuple[bytes, bytes]:
    """A client certificate and its key (PEM), made by openssl as the control plane's are."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", "client.key", "-out", "client.crt", "-days", "1",
         "-subj", "/CN=alice"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    return (tmp_path / "client.crt").read_bytes(), (tmp_path / "client.key").read_bytes()


def test_the_cluster_ca_is_the_only_root_trusted(tmp_path: Path) -> None:
    """As client-go: a kubeconfig that names its cluster's CA trusts that CA alone, never
    also every public root of this machine (any of which could then vouch for the server);
    without one, the machine's roots."""
    ca, _ = self_signed(tmp_path)

    def cluster(ca_data: bytes | None) -> Connection:
        return Connection("https://127.0.0.1:6443", "c", "default", ca_data=ca_data)

    pinned = Client(cluster(ca))._ssl_context(None, None)
    assert [str(c["subject"]) for c in pinned.get_ca_certs()] == ["((('commonName', 'alice'),),)"]
    assert pinned.verify_mode == ssl.CERT_REQUIRED and pinned.check_hostname
    system = ssl.create_default_context().get_ca_certs()
    assert Client(cluster(None))._ssl_context(None, None).get_ca_certs() == system


@pytest.mark.parametrize("given", ["nothing", "token", "certificate", "basic"])
def test_credentials_given_win_over_the_exec_plugin(
    server: FaultServer, tmp_path: Path, given: str
) -> None:
    """As client-go: the exec plugin runs only when no token, client certificate or basic
    auth is given (--token on a context whose user has an exec plugin is used, not ignored)."""
    ran = tmp_path / "ran"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "token-from-the-plugin"},
    }
    plugin = tmp_path / "plugin"
    plugin.write_text(f"#!/bin/sh\ntouch {ran}\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(0o755)
    cert, key = self_signed(tmp_path)
    given_by: dict[str, dict[str, Any]] = {
        "nothing": {},
        "token": {"token": TOKEN},
        "certificate": {"client_cert_data": cert, "client_key_data": key},
        "basic": {"username": "alice", "password": "s3cr3t"},
    }
    credentials = given_by[given]
    exec_config = {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}
    connection = Connection(
        server=f"http://127.0.0.1:{server.port}",
        context="c",
        namespace="default",
        exec_config=exec_config,
        interactive=False,
        **credentials,
    )
    server.on("/api/v1/x", Step(200, OK))
    assert Client(connection).get("/api/v1/x") == OK
    sent = {k.lower(): v for k, v in server.seen[0].headers.items()}.get("authorization")
    assert ran.exists() == (given == "nothing")
    assert (
        sent
        == {
            "nothing": "Bearer token-from-the-plugin",
            "token": f"Bearer {TOKEN}",
            "certificate": None,
            "basic": "Basic " + base64.b64encode(b"alice:s3cr3t").decode(),
        }[given]
    )


def test_map_answers_in_order_and_raises_the_first_failure_once_all_ran(
    server: FaultServer,
) -> None:
    """Reads made concurrently come back in the order asked; when some fail, every read is
    still made, and the error raised is the first one's in that order (the one a serial run
    would have met), not whichever thread failed first."""
    client = make_client(server, workers=2)
    ran: list[int] = []
    lock = threading.Lock()

    def read(i: int) -> int:
        with lock:
            ran.append(i)
        if i in (5, 2):  # at once, while the other worker is still busy
            raise Forbidden(f"no {i}", 403, "Forbidden")
        time.sleep(0.02)
        return i * 10

    assert client.map(read, [3, 1, 4, 0]) == [30, 10, 40, 0]
    ran.clear()
    with pytest.raises(Forbidden, match="^no 5$"):
        client.map(read, [7, 5, 8, 2, 6, 9])
    assert sorted(ran) == [2, 5, 6, 7, 8, 9]
