"""A small HTTP proxy on 127.0.0.1 that records what clients send through it.

It answers `CONNECT host:port` (how kubectl and the plugin reach an https server through a
proxy) and records the target and the Proxy-Authorization header; a plain request for an
http:// server is recorded with its headers and answered 502. Every tunnel then goes to
the test API server whatever host was named (so a server URL such as
https://kubernetes.default.svc:PORT, which no resolver knows, is reached through the proxy
only). The proxy ends the client's TLS itself with the API server's own
certificate (the client cannot tell), records each request's method, path and headers, and
forwards it to the API server over a new TLS connection: the tests then compare the headers
kubectl sends with the plugin's. Only HTTP/1.1 is offered, so Go's client does not speak HTTP/2.
With `date_offset` it moves the Date header of every answer: the API server's clock as the
client sees it (the tool counts ages on it), moved without moving the shared control plane's.
"""

from __future__ import annotations

import socket
import socketserver
import ssl
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path


@dataclass
class Request:
    method: str
    path: str
    headers: list[tuple[str, str]]  # lower-case names, in order, repeated names kept

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name.lower()]


@dataclass
class Recording:
    connects: list[str] = field(default_factory=list)  # "host:port"
    proxy_authorization: list[str] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def clear(self) -> None:
        with self.lock:
            self.connects.clear()
            self.proxy_authorization.clear()
            self.requests.clear()


def _read_head(stream: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = stream.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    method, target = lines[0].split(" ")[:2]
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    return method, target, headers


class RecordingProxy:
    def __init__(self, upstream_port: int, pki_dir: Path, date_offset: float = 0.0) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.date_offset = date_offset  # seconds added to each answer's Date header
        self.recording = Recording()
        self._server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._server_tls.load_cert_chain(pki_dir / "apiserver.crt", pki_dir / "apiserver.key")
        self._server_tls.set_alpn_protocols(["http/1.1"])
        self._client_tls = ssl.create_default_context(cafile=str(pki_dir / "ca.crt"))
        self._client_tls.check_hostname = False
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._handle(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _handle(self, client: socket.socket) -> None:
        head = _read_head(client)
        if not head:
            return
        method, target, headers = _parse_head(head)
        record = self.recording
        with record.lock:
            if method == "CONNECT":
                record.connects.append(target)
            else:  # a request for an http:// server: recorded, never forwarded
                record.requests.append(Request(method, target, headers))
            record.proxy_authorization += [v for k, v in headers if k == "proxy-authorization"]
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        upstream = socket.create_connection(self.upstream, timeout=60)
        inner: ssl.SSLSocket | None = None
        try:
            inner = self._server_tls.wrap_socket(client, server_side=True)
            secure = self._client_tls.wrap_socket(upstream)
        except (ssl.SSLError, OSError):
            upstream.close()
            if inner is not None:
                inner.close()
            return
        self._forward(inner, secure)

    def _forward(self, client: ssl.SSLSocket, upstream: ssl.SSLSocket) -> None:
        """One request per connection (the answer says `Connection: close`): record it, send
        it on unchanged but for that header, relay the answer until the server closes. Both
        sockets are closed however it ends (a client that connects and sends nothing too)."""
        try:
            head = _read_head(client)
            if not head:
                return
            method, target, headers = _parse_head(head)
            with self.recording.lock:
                self.recording.requests.append(Request(method, target, headers))
            lines = head.split(b"\r\n\r\n", 1)
            kept = [
                line
                for line in lines[0].split(b"\r\n")
                if not line.lower().startswith((b"connection:", b"keep-alive:"))
            ]
            rest = lines[1] if len(lines) > 1 else b""
            upstream.sendall(b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n" + rest)
            if self.date_offset:
                client.sendall(self._moved_date(_read_head(upstream)))
            while chunk := upstream.recv(65536):
                client.sendall(chunk)
        except OSError:
            pass
        finally:
            upstream.close()
            client.close()

    def _moved_date(self, answer: bytes) -> bytes:
        """The answer's head (and what came with it) with its Date moved by date_offset."""
        head, sep, rest = answer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        for number, line in enumerate(lines):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"date":
                moved = parsedate_to_datetime(value.strip().decode("latin-1"))
                moved += timedelta(seconds=self.date_offset)
                lines[number] = b"Date: " + format_datetime(moved, usegmt=True).encode()
        return b"\r\n".join(lines) + sep + rest
