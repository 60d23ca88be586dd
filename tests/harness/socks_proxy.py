"""A small SOCKS5 proxy on 127.0.0.1 that records what clients ask it for.

It speaks RFC 1928 CONNECT, with no authentication or with RFC 1929 user name and password,
records each request (the address as the client sent it: a name or an IP, the port and the
user name) and tunnels every one to one port on 127.0.0.1 whatever was named, so a server name
no resolver knows is reached through the proxy only. Nothing leaves the loopback interface.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import socketserver
import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SocksRequest:
    address_type: str  # "name", "ipv4" or "ipv6": how the client named the server
    host: str
    port: int
    username: str | None


@dataclass
class SocksRecording:
    requests: list[SocksRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the client closed the connection")
        data += chunk
    return data


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, target_port: int, credentials: tuple[str, str] | None, recording: SocksRecording
    ) -> None:
        self.target_port = target_port
        self.credentials = credentials
        self.recording = recording
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        client: socket.socket = self.request
        with contextlib.suppress(ConnectionError, OSError):
            username = self._negotiate(client)
            if username is False:
                return
            request = self._request(client, username if isinstance(username, str) else None)
            if request is None:
                return
            with self.server.recording.lock:
                self.server.recording.requests.append(request)
            with socket.create_connection(("127.0.0.1", self.server.target_port), 10) as upstream:
                client.sendall(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00")
                back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
                back.start()
                _pump(client, upstream)
                back.join(10)

    def _negotiate(self, client: socket.socket) -> str | bool:
        """The user name (True when none was needed), or False when the client was refused."""
        version, count = _read_exactly(client, 2)
        methods = _read_exactly(client, count)
        if version != 5:
            return False
        wanted = self.server.credentials
        if wanted is None:
            client.sendall(b"\x05\x00")
            return True
        if 2 not in methods:
            client.sendall(b"\x05\xff")
            return False
        client.sendall(b"\x05\x02")
        _, length = _read_exactly(client, 2)
        user = _read_exactly(client, length).decode()
        (length,) = _read_exactly(client, 1)
        password = _read_exactly(client, length).decode()
        ok = (user, password) == wanted
        client.sendall(b"\x01\x00" if ok else b"\x01\x01")
        return user if ok else False

    def _request(self, client: socket.socket, username: str | None) -> SocksRequest | None:
        version, command, _, address_type = _read_exactly(client, 4)
        if version != 5 or command != 1:  # CONNECT only
            client.sendall(b"\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00")
            return None
        if address_type == 1:
            kind, host = "ipv4", str(ipaddress.IPv4Address(_read_exactly(client, 4)))
        elif address_type == 4:
            kind, host = "ipv6", str(ipaddress.IPv6Address(_read_exactly(client, 16)))
        else:
            (length,) = _read_exactly(client, 1)
            kind, host = "name", _read_exactly(client, length).decode()
        port = int.from_bytes(_read_exactly(client, 2), "big")
        return SocksRequest(kind, host, port, username)


class SocksProxy:
    """`with SocksProxy(port) as proxy:` tunnels to 127.0.0.1:port; proxy.url to use it."""

    def __init__(self, target_port: int, credentials: tuple[str, str] | None = None) -> None:
        self.recording = SocksRecording()
        self._server = _Server(target_port, credentials, self.recording)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        port: int = self._server.server_address[1]
        return port

    @property
    def url(self) -> str:
        return f"socks5://127.0.0.1:{self.port}"

    def __enter__(self) -> SocksProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
