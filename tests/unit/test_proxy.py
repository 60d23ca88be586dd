"""Proxy choice as Go's ProxyFromEnvironment makes it (the cases of golang.org/x/net's
httpproxy tests, which kubectl's client uses)."""

from __future__ import annotations

import pytest

from kubectl_terminating.proxy import no_proxy_matches, parse_proxy, proxy_for, without_credentials

# httpproxy's TestUseProxy table: NO_PROXY, and whether each host:80 still goes through the proxy
GO_NO_PROXY = (
    "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, "
    "10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, "
    "2002:db8:a::45/64"
)
GO_USE_PROXY = [
    ("localhost", False),
    ("127.0.0.1", False),
    ("127.0.0.2", False),
    ("[::1]", False),
    ("[::2]", True),
    ("192.168.1.1", False),
    ("192.168.1.2", True),
    ("192.168.1.3", False),
    ("192.168.1.4", True),
    ("10.0.0.2", False),
    ("[2001:db8::52:0:1]", False),
    ("[2001:db8::52:0:2]", True),
    ("[2001:db8::52:0:3]", False),
    ("[2002:db8:a::123]", False),
    ("[fe80::424b:c8be:1643:a1b6]", True),
    ("barbaz.net", True),
    ("www.barbaz.net", False),
    ("foobar.com", False),
    ("www.foobar.com", False),
    ("foofoobar.com", True),
    ("baz.com", True),
    ("localhost.net", True),
    ("local.localhost", True),
    ("barbarbaz.net", True),
    ("wildcard.io", True),
    ("nested.wildcard.io", False),
    ("awildcard.io", True),
]


@pytest.mark.parametrize(("host", "proxied"), GO_USE_PROXY)
def test_no_proxy_as_go_matches_it(host: str, proxied: bool) -> None:
    env = {"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": GO_NO_PROXY}
    chosen = proxy_for(f"http://{host}:80", None, env)
    assert (chosen is not None) == proxied


@pytest.mark.parametrize(("host", "_"), GO_USE_PROXY)
def test_no_proxy_star_matches_everything(host: str, _: bool) -> None:
    assert proxy_for(f"https://{host}:443", None, {"HTTPS_PROXY": "p:1", "NO_PROXY": "*"}) is None


def test_malformed_no_proxy_entry_is_ignored() -> None:
    assert not no_proxy_matches(":1", "example.com", "80")
    assert proxy_for("https://example.com", None, {"HTTPS_PROXY": "p:1", "NO_PROXY": ":1"})


@pytest.mark.parametrize(
    ("no_proxy", "server", "proxied"),
    [
        ("example.com", "https://example.com/", False),
        (".example.com", "https://example.com/", True),
        ("ample.com", "https://example.com/", True),
        ("example.com", "https://foo.example.com/", False),
        (".foo.com", "https://example.com/", True),
        ("EXAMPLE.com ,  other", "https://Foo.Example.COM:6443", False),
        ("example.com:6443", "https://example.com:6443", False),
        ("example.com:443", "https://example.com:6443", True),
        ("example.com:443", "https://example.com", False),  # the scheme's default port
        # a domain entry never matches an IP address (kubectl 1.36.3 proxies https://0.0.0.0:PORT
        # with NO_PROXY=0.0 or .0.0.0, and goes direct with NO_PROXY=0.0.0.0)
        ("0.0", "https://0.0.0.0:6443", True),
        (".0.0.0", "https://0.0.0.0:6443", True),
        ("0.0.1", "https://10.0.0.1", True),
        ("0.0.0.0", "https://0.0.0.0:6443", False),
    ],
)
def test_domains_ports_and_case(no_proxy: str, server: str, proxied: bool) -> None:
    env = {"HTTPS_PROXY": "proxy:3128", "NO_PROXY": no_proxy}
    assert (proxy_for(server, None, env) is not None) == proxied


def test_scheme_picks_the_variable_upper_case_first() -> None:
    env = {"HTTP_PROXY": "http.proxy.tld", "https_proxy": "lower:1", "HTTPS_PROXY": "upper:1"}
    https = proxy_for("https://api.example.com", None, env)
    assert https is not None and https.url == "http://upper:1" and https.source == "HTTPS_PROXY"
    http = proxy_for("http://api.example.com", None, env)
    assert http is not None and http.url == "http://http.proxy.tld"
    lower = proxy_for("https://api.example.com", None, {"https_proxy": "lower:1"})
    assert lower is not None and lower.source == "https_proxy"


def test_http_proxy_is_ignored_in_a_cgi_environment_but_not_https_proxy() -> None:
    env = {"HTTP_PROXY": "p:1", "HTTPS_PROXY": "https://s", "REQUEST_METHOD": "GET"}
    assert proxy_for("http://api.example.com", None, env) is None
    assert proxy_for("https://api.example.com", None, env) is not None


def test_cluster_proxy_url_comes_first_even_for_loopback() -> None:
    env = {"HTTPS_PROXY": "env:1", "NO_PROXY": "*"}
    chosen = proxy_for("https://127.0.0.1:6443", "http://cluster:3128", env)
    assert chosen is not None and chosen.url == "http://cluster:3128"
    assert chosen.source == "proxy-url"


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("cache.corp.example.com:1234", "http://cache.corp.example.com:1234"),
        ("cache.corp.example.com", "http://cache.corp.example.com"),
        ("https://cache.corp.example.com", "https://cache.corp.example.com"),
        ("socks5://127.0.0.1", "socks5://127.0.0.1"),
    ],
)
def test_bare_proxy_addresses_mean_http(value: str, parsed: str) -> None:
    assert parse_proxy(value) == parsed


def test_credentials_are_left_out_of_the_shown_url() -> None:
    assert without_credentials("http://u:s3cret@proxy:3128/") == "http://proxy:3128/"
    assert without_credentials("http://proxy:3128") == "http://proxy:3128"
