"""SOCKS5 proxies: requests reach the server through a real SOCKS5 proxy on 127.0.0.1."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
import urllib3

from kubectl_terminating.socks import SocksProxyManager
from tests.harness.socks_proxy import SocksProxy, SocksRequest


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f'{{"path": "{self.path}"}}'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def backend() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _get(manager: urllib3.PoolManager, url: str) -> urllib3.BaseHTTPResponse:
    try:
        return manager.request("GET", url, retries=False, timeout=10)
    finally:
        manager.clear()  # close the connection: the proxy's tunnel ends with it


def test_the_proxy_resolves_the_server_name(backend: int) -> None:
    """Like Go's SOCKS5 dialer: the name goes to the proxy, unresolved (none could resolve
    `api.cluster.invalid`), and the default port of the scheme is filled in."""
    with SocksProxy(backend) as proxy:
        manager = SocksProxyManager(proxy.url)
        answer = _get(manager, f"http://api.cluster.invalid:{backend}/api?limit=1")
        assert answer.status == 200
        assert answer.json() == {"path": "/api?limit=1"}
        _get(manager, "http://api.cluster.invalid/version")
    assert proxy.recording.requests == [
        SocksRequest("name", "api.cluster.invalid", backend, None),
        SocksRequest("name", "api.cluster.invalid", 80, None),
    ]


def test_an_ip_address_is_sent_as_an_address(backend: int) -> None:
    with SocksProxy(backend) as proxy:
        assert _get(SocksProxyManager(proxy.url), f"http://127.0.0.1:{backend}/").status == 200
    assert proxy.recording.requests == [SocksRequest("ipv4", "127.0.0.1", backend, None)]


def test_user_and_password_of_the_url_are_decoded_and_sent(backend: int) -> None:
    with SocksProxy(backend, credentials=("us@er", "p:ss")) as proxy:
        good = SocksProxyManager(f"socks5h://us%40er:p%3Ass@127.0.0.1:{proxy.port}")
        assert _get(good, f"http://api.cluster.invalid:{backend}/").status == 200
        bad = SocksProxyManager(f"socks5://us%40er:wrong@127.0.0.1:{proxy.port}")
        with pytest.raises(urllib3.exceptions.NewConnectionError, match="SOCKS5 proxy"):
            _get(bad, f"http://api.cluster.invalid:{backend}/")
    assert [r.username for r in proxy.recording.requests] == ["us@er"]


def test_a_proxy_that_is_not_there_is_a_connection_error() -> None:
    with SocksProxy(1) as proxy:
        port = proxy.port
    manager = SocksProxyManager(f"socks5://127.0.0.1:{port}")
    with pytest.raises(urllib3.exceptions.NewConnectionError, match="SOCKS5 proxy"):
        _get(manager, "http://api.cluster.invalid/")


def test_only_socks5_urls() -> None:
    with pytest.raises(ValueError, match="not a SOCKS5 proxy URL"):
        SocksProxyManager("http://127.0.0.1:3128")
