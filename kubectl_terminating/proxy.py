"""Which proxy a request to the API server goes through, chosen the way kubectl chooses it.

kubectl (client-go) uses the cluster's `proxy-url` when the kubeconfig sets one; otherwise Go's
`http.ProxyFromEnvironment` (golang.org/x/net/http/httpproxy): `HTTPS_PROXY` for https servers,
`HTTP_PROXY` for http ones (upper case first, then lower case; `HTTP_PROXY` is ignored in a CGI
environment), never for `localhost` or a loopback address, and not for hosts `NO_PROXY` matches:
`*`, IP addresses and CIDRs, domain names (which match their subdomains; a leading `.` or `*.`
matches subdomains only), each optionally with a `:port`. Pure functions: no I/O.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Proxy:
    url: str
    source: str  # where it came from, for `-v 6`: "proxy-url", "HTTPS_PROXY", ...


def _env(environ: Mapping[str, str], name: str) -> tuple[str, str]:
    for key in (name, name.lower()):
        if environ.get(key):
            return environ[key], key
    return "", name


def parse_proxy(value: str) -> str:
    """A proxy URL as Go parses it: a bare `host:port` means `http://host:port`."""
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc:
        return "http://" + value
    return value


def _split_host_port(text: str) -> tuple[str, str] | None:
    """Go's net.SplitHostPort for the forms NO_PROXY uses; None when there is no port."""
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if bracket and rest.startswith(":") and rest[1:]:
            return host, rest[1:]
        return None
    host, colon, port = text.rpartition(":")
    if colon and ":" not in host and port:
        return host, port
    return None


def _ip(text: str) -> _Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def no_proxy_matches(no_proxy: str, host: str, port: str) -> bool:
    """True when NO_PROXY says to reach host:port directly (httpproxy's useProxy, negated)."""
    host = host.strip().lower()
    ip = _ip(host)
    for entry in no_proxy.split(","):
        pattern = entry.strip().lower()
        if not pattern:
            continue
        if pattern == "*":
            return True
        try:
            if ip is not None and ip in ipaddress.ip_network(pattern, strict=False):
                return True
            if "/" in pattern:
                continue
        except ValueError:
            pass
        split = _split_host_port(pattern)
        pattern_host, pattern_port = split if split else (pattern, "")
        if split and not pattern_host:
            continue  # ":80": malformed, ignored as Go does
        pattern_ip = _ip(pattern_host)
        if pattern_ip is not None:
            if ip is not None and ip == pattern_ip and pattern_port in ("", port):
                return True
            continue
        if ip is not None:
            continue  # a domain entry never matches an IP address (httpproxy's domainMatch)
        if pattern_host.startswith("*."):
            pattern_host = pattern_host[1:]
        exact = not pattern_host.startswith(".")
        suffix = pattern_host if not exact else "." + pattern_host
        if (host.endswith(suffix) or (exact and host == suffix[1:])) and pattern_port in (
            "",
            port,
        ):
            return True
    return False


def proxy_for(server: str, proxy_url: str | None, environ: Mapping[str, str]) -> Proxy | None:
    """The proxy for requests to `server`: the cluster's proxy-url, else the environment's."""
    if proxy_url:
        return Proxy(proxy_url, "proxy-url")
    parts = urlsplit(server)
    scheme = parts.scheme.lower()
    if scheme == "https":
        value, source = _env(environ, "HTTPS_PROXY")
    elif scheme == "http" and not environ.get("REQUEST_METHOD"):
        value, source = _env(environ, "HTTP_PROXY")
    else:
        return None
    if not value:
        return None
    host = (parts.hostname or "").lower()
    port = str(parts.port) if parts.port else DEFAULT_PORTS[scheme]
    ip = _ip(host)
    if host == "localhost" or (ip is not None and ip.is_loopback):
        return None
    no_proxy, _ = _env(environ, "NO_PROXY")
    if no_proxy_matches(no_proxy, host, port):
        return None
    return Proxy(parse_proxy(value), source)


def without_credentials(url: str) -> str:
    """The proxy URL to show in logs and errors: no user name or password."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=netloc).geturl()
