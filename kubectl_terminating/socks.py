"""SOCKS5 proxies (`socks5://` in a cluster's proxy-url or in HTTPS_PROXY), as kubectl has them.

Go's net/http reaches the API server through a SOCKS5 proxy by handing it the server's host
name (the proxy resolves it: what curl calls socks5h), with the user name and password of the
proxy URL when it has them, port 1080 when it names none. urllib3's own SOCKS support needs
PySocks, which has had no release since 2019; this is urllib3.contrib.socks's shape on
python-socks (kept up, pure Python, no dependencies), imported only when a SOCKS proxy is used.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import unquote, urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

SCHEMES = ("socks5", "socks5h")
DEFAULT_PORT = 1080


class _SocksConnection(HTTPConnection):
    """A connection whose socket is a tunnel through the SOCKS5 proxy."""

    def __init__(self, *args: Any, _socks_options: dict[str, Any], **kwargs: Any) -> None:
        self._socks_options = _socks_options
        super().__init__(*args, **kwargs)

    def _new_conn(self) -> socket.socket:
        from python_socks import ProxyError, ProxyType
        from python_socks.sync import Proxy

        options = self._socks_options
        proxy = Proxy(
            ProxyType.SOCKS5,
            options["host"],
            options["port"],
            options["username"],
            options["password"],
            rdns=True,  # the proxy resolves the server's name, as Go's SOCKS5 dialer does
        )
        timeout = self.timeout if isinstance(self.timeout, int | float) else None
        errors = urllib3.exceptions
        try:
            sock: socket.socket = proxy.connect(self.host, self.port, timeout=timeout)
        except TimeoutError as exc:  # python-socks's ProxyTimeoutError is one
            raise errors.ConnectTimeoutError(
                self, f"Connection to {self.host} timed out. (connect timeout={timeout})"
            ) from exc
        except (ProxyError, OSError) as exc:
            # ProxyConnectionError (the proxy is not there) is an OSError; ProxyError is
            # the proxy's refusal (rule set, host unreachable, bad credentials)
            raise errors.NewConnectionError(
                self, f"Failed to establish a new connection: SOCKS5 proxy: {exc}"
            ) from exc
        return sock


class _SocksHTTPSConnection(_SocksConnection, HTTPSConnection):
    pass


class _SocksHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _SocksConnection


class _SocksHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _SocksHTTPSConnection


class SocksProxyManager(urllib3.PoolManager):
    """A PoolManager whose every connection goes through one SOCKS5 proxy."""

    def __init__(self, proxy_url: str, **connection_pool_kw: Any) -> None:
        parts = urlsplit(proxy_url)
        if parts.scheme.lower() not in SCHEMES or not parts.hostname:
            raise ValueError(f"not a SOCKS5 proxy URL: {parts.scheme}://{parts.hostname or ''}")
        connection_pool_kw["_socks_options"] = {
            "host": parts.hostname,
            "port": parts.port or DEFAULT_PORT,
            "username": unquote(parts.username) if parts.username is not None else None,
            "password": unquote(parts.password) if parts.password is not None else None,
        }
        super().__init__(**connection_pool_kw)
        self.pool_classes_by_scheme = {
            "http": _SocksHTTPConnectionPool,
            "https": _SocksHTTPSConnectionPool,
        }
        self.proxy_url = proxy_url
