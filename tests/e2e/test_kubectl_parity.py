"""Exactly like kubectl: global flags anywhere, the connection flags, impersonation, proxies.

The first tests are the habits a kubectl user brings (flags before the command, --server and
--token in CI, impersonation, a corporate proxy, a cluster with insecure-skip-tls-verify). The
conformance matrix then runs the harness's real kubectl and the plugin side by side over
kubeconfigs, flags and environments, through a recording proxy that sees every request's
headers, and compares where each went, the identity headers each sent, and who the API server's
audit log says made each request.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness import scenarios
from tests.harness.api import create_namespace, unique_ns, wait_for
from tests.harness.cli import assert_one_line_error, run_cli
from tests.harness.controlplane import ControlPlane, _make_leaf, kubeconfig_document
from tests.harness.recording_proxy import RecordingProxy
from tests.harness.socks_proxy import SocksProxy, SocksRequest

pytestmark = pytest.mark.e2e

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")
# Headers that say who is asking and how: the ones kubectl and the plugin must send alike.
COMPARED_HEADERS = ("authorization", "impersonate-user", "impersonate-uid", "impersonate-group")


@pytest.fixture(scope="module")
def target(control_plane: ControlPlane) -> tuple[str, str]:
    """A namespace with one pod stuck in Terminating (its node is gone)."""
    ns = unique_ns("parity")
    create_namespace(control_plane, ns)
    stuck = scenarios.pod_on_missing_node(control_plane, ns)
    return ns, stuck.name


@pytest.fixture(scope="module")
def proxy(control_plane: ControlPlane) -> Iterator[RecordingProxy]:
    with RecordingProxy(control_plane.port, control_plane.pki_dir) as running:
        yield running


def _environment(home: Path, kubeconfig: str | None, env: dict[str, str]) -> dict[str, str]:
    """A clean environment: no proxy variables, no kubeconfig but the one given, HOME empty."""
    environ = {k: v for k, v in os.environ.items() if k not in (*PROXY_VARIABLES, "KUBECONFIG")}
    environ["HOME"] = str(home)
    if kubeconfig is not None:
        environ["KUBECONFIG"] = kubeconfig
    environ.update(env)
    return environ


def plugin(
    home: Path, *args: str, kubeconfig: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # run_cli adds os.environ back: blank every proxy variable the caller did not set
    blank = dict.fromkeys(PROXY_VARIABLES, "")
    return run_cli(*args, kubeconfig=kubeconfig, env={"HOME": str(home), **blank, **(env or {})})


def kubectl(
    cp: ControlPlane,
    home: Path,
    *args: str,
    kubeconfig: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cp.binaries_dir / "kubectl"), f"--cache-dir={home / 'kubectl-cache'}", *args],
        capture_output=True,
        text=True,
        env=_environment(home, kubeconfig, env or {}),
        timeout=120,
        check=False,
    )


def _write(path: Path, config: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _admin_config(cp: ControlPlane, **cluster: Any) -> dict[str, Any]:
    return kubeconfig_document(
        {"server": cp.server, "certificate-authority-data": cp.ca_data_b64, **cluster},
        {"token": cp.admin_token},
        "test",
        cluster_name="test",
        user_name="admin",
    )


def _service_url(cp: ControlPlane) -> str:
    """A name the serving certificate holds but no resolver knows: reachable through the
    recording proxy only (and not loopback, so the proxy variables apply to it)."""
    return f"https://kubernetes.default.svc:{cp.port}"


# -- what a kubectl user types --------------------------------------------------------------


def test_global_flags_before_the_command(
    control_plane: ControlPlane, target: tuple[str, str], tmp_path: Path
) -> None:
    ns, name = target
    config = _write(tmp_path / "k.yaml", _admin_config(control_plane))
    before = plugin(
        tmp_path, "--kubeconfig", config, "--request-timeout", "30s", "pods", "-A", "-o", "name"
    )
    assert before.returncode == 0, before.stderr
    assert f"pod/{name}" in before.stdout.splitlines()
    # --context and -n before the command, other flags after it; mixed positions add up
    mixed = plugin(
        tmp_path,
        "--context=test",
        "-n",
        ns,
        "-v",
        "6",
        "po",
        "-o",
        "name",
        "--kubeconfig",
        config,
    )
    assert mixed.returncode == 0, mixed.stderr
    assert mixed.stdout == f"pod/{name}\n"
    assert f"/api/v1/namespaces/{ns}/pods" in mixed.stderr  # -v 6 from before the command
    # a flag after the command wins over the same flag before it, as in kubectl
    wrong = plugin(tmp_path, "--context", "nope", "pods", "--context", "test", kubeconfig=config)
    assert wrong.returncode == 0, wrong.stderr


def test_help_lists_each_global_flag_once(tmp_path: Path) -> None:
    for args in (("--help",), ("pods", "--help"), ("dump", "--help")):
        result = plugin(tmp_path, *args)
        assert result.returncode == 0, result.stderr
        for flag in ("--kubeconfig", "--server", "--as-group", "--request-timeout", "--color"):
            assert result.stdout.count(f"  {flag} ") + result.stdout.count(f", {flag} ") == 1, (
                args,
                flag,
            )
        assert "Global options (before or after the command):" in result.stdout


def test_server_token_and_insecure_flags_without_any_kubeconfig(
    control_plane: ControlPlane, target: tuple[str, str], tmp_path: Path
) -> None:
    ns, name = target
    result = plugin(
        tmp_path,
        "--server",
        control_plane.server,
        "--token",
        control_plane.admin_token,
        "--insecure-skip-tls-verify",
        "pods",
        "-n",
        ns,
        "-o",
        "name",
        kubeconfig=str(tmp_path / "absent"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pod/{name}\n"
    assert result.stderr == ""  # not one library warning about the unverified certificate


def test_insecure_cluster_in_the_kubeconfig_prints_nothing_on_stderr(
    control_plane: ControlPlane, target: tuple[str, str], tmp_path: Path
) -> None:
    config = kubeconfig_document(
        {"server": control_plane.server, "insecure-skip-tls-verify": True},
        {"token": control_plane.admin_token},
        "insecure",
    )
    result = plugin(tmp_path, "pods", "-n", target[0], kubeconfig=_write(tmp_path / "c", config))
    assert result.returncode == 0, result.stderr
    assert target[1] in result.stdout
    assert result.stderr == ""  # kubectl prints nothing here either


def test_https_proxy_and_no_proxy_from_the_environment(
    control_plane: ControlPlane, target: tuple[str, str], proxy: RecordingProxy, tmp_path: Path
) -> None:
    ns, name = target
    config = _write(
        tmp_path / "c", _admin_config(control_plane, server=_service_url(control_plane))
    )
    proxy.recording.clear()
    with_user = proxy.url.replace("http://", "http://jane:s3cr%40t@")
    through = plugin(
        tmp_path,
        "pods",
        "-n",
        ns,
        "-o",
        "name",
        "-v=6",
        kubeconfig=config,
        env={"HTTPS_PROXY": with_user, "NO_PROXY": "example.com,10.0.0.0/8,.cluster.local"},
    )
    assert through.returncode == 0, through.stderr
    assert through.stdout == f"pod/{name}\n"
    assert set(proxy.recording.connects) == {f"kubernetes.default.svc:{control_plane.port}"}
    assert set(proxy.recording.proxy_authorization) == {
        "Basic " + base64.b64encode(b"jane:s3cr@t").decode()
    }
    assert f"proxy {proxy.url} (from HTTPS_PROXY)" in through.stderr  # -v 6, no password
    assert "s3cr" not in through.stderr
    proxy.recording.clear()
    bypassed = plugin(
        tmp_path,
        "pods",
        "-n",
        ns,
        kubeconfig=config,
        env={"https_proxy": proxy.url, "no_proxy": ".svc"},
    )
    line = assert_one_line_error(bypassed)
    assert "no such host" in line
    assert proxy.recording.connects == []


def test_socks5_proxies_as_kubectl_uses_them(
    control_plane: ControlPlane, target: tuple[str, str], tmp_path: Path
) -> None:
    """socks5:// from proxy-url (with user:password) and socks5h:// from HTTPS_PROXY: both tools
    hand the proxy the server's name (the proxy resolves it) with the same user name; a
    socks5h:// proxy-url is refused by both."""
    cp = control_plane
    ns, name = target
    with SocksProxy(cp.port, credentials=("jane", "pa ss")) as socks:
        with_user = socks.url.replace("socks5://", "socks5://jane:pa%20ss@")
        by_url = _admin_config(cp, server=_service_url(cp), **{"proxy-url": with_user})
        from_env = _admin_config(cp, server=_service_url(cp))
        env_proxy = {"HTTPS_PROXY": with_user.replace("socks5://", "socks5h://")}
        for config, env in ((by_url, {}), (from_env, env_proxy)):
            path = _write(tmp_path / "c", config)
            socks.recording.clear()
            theirs = kubectl(cp, tmp_path, "get", "--raw", "/version", kubeconfig=path, env=env)
            kubectl_saw = set(socks.recording.requests)
            socks.recording.clear()
            ours = plugin(tmp_path, "pods", "-n", ns, "-o", "name", kubeconfig=path, env=env)
            assert theirs.returncode == 0, theirs.stderr
            assert ours.returncode == 0, ours.stderr
            assert kubectl_saw == set(socks.recording.requests)
            assert kubectl_saw == {SocksRequest("name", "kubernetes.default.svc", cp.port, "jane")}
            assert ours.stdout == f"pod/{name}\n"
        refused = _admin_config(cp, **{"proxy-url": socks.url.replace("socks5:", "socks5h:")})
        path = _write(tmp_path / "refused", refused)
        line = assert_one_line_error(plugin(tmp_path, "pods", "-A", kubeconfig=path))
        assert 'unsupported scheme "socks5h", must be http, https, or socks5' in line
        theirs = kubectl(cp, tmp_path, "get", "--raw", "/version", kubeconfig=path)
        assert theirs.returncode != 0 and "must be http, https, or socks5" in theirs.stderr


def _audit_identities(
    cp: ControlPlane, offset: int, agent: str, expect: bool = True
) -> set[tuple[str, str]]:
    """(user, impersonated user as JSON) of each audited request whose user agent starts
    with `agent` ("kubectl/" or "kubectl-terminating/")."""

    def read() -> set[tuple[str, str]]:
        found = set()
        for event in cp.audit_events(offset):
            if not str(event.get("userAgent", "")).startswith(agent):
                continue
            user = str((event.get("user") or {}).get("username", ""))
            found.add((user, json.dumps(event.get("impersonatedUser"), sort_keys=True)))
        return found

    if expect:
        return wait_for(read, timeout=10, message=f"audit events of {agent}")
    return read()


def test_impersonation_from_flags_and_from_the_kubeconfig(
    control_plane: ControlPlane, target: tuple[str, str], tmp_path: Path
) -> None:
    cp = control_plane
    ns, name = target
    config = _write(tmp_path / "admin", _admin_config(cp))
    offset = cp.audit_offset()
    flags = plugin(
        tmp_path,
        "--as",
        "alice",
        "--as-group",
        "system:masters",
        "pods",
        "-n",
        ns,
        "-o",
        "name",
        "--as-group",
        "team-a",
        "--as-uid",
        "uid-1234",
        "-v",
        "6",
        kubeconfig=config,
    )
    assert flags.returncode == 0, flags.stderr
    assert flags.stdout == f"pod/{name}\n"
    impersonated = {
        "username": "alice",
        "uid": "uid-1234",
        "groups": ["system:masters", "team-a", "system:authenticated"],  # the last: the server's
    }
    assert _audit_identities(cp, offset, "kubectl-terminating/") == {
        ("admin", json.dumps(impersonated, sort_keys=True))
    }
    assert 'impersonating user "alice", uid "uid-1234", groups "system:masters", "team-a"' in (
        flags.stderr
    )
    assert cp.admin_token not in flags.stderr

    user = {
        "token": cp.admin_token,
        "as": "bob",
        "as-groups": ["system:masters"],
        "as-user-extra": {"example.com/reason": ["audit", "drill"]},
    }
    document = kubeconfig_document(
        {"server": cp.server, "certificate-authority-data": cp.ca_data_b64}, user, "as-bob"
    )
    offset = cp.audit_offset()
    from_file = plugin(
        tmp_path, "pods", "-n", ns, "-o", "name", kubeconfig=_write(tmp_path / "bob", document)
    )
    assert from_file.returncode == 0, from_file.stderr
    expected = {
        "username": "bob",
        "groups": ["system:masters", "system:authenticated"],
        "extra": {"example.com/reason": ["audit", "drill"]},
    }
    assert _audit_identities(cp, offset, "kubectl-terminating/") == {
        ("admin", json.dumps(expected, sort_keys=True))
    }


def test_impersonating_groups_without_a_user_is_refused_as_kubectl_does(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    config = _write(tmp_path / "c", _admin_config(control_plane))
    ours = plugin(tmp_path, "--as-group", "system:masters", "pods", kubeconfig=config)
    line = assert_one_line_error(ours)
    assert "without impersonating a user" in line
    theirs = kubectl(control_plane, tmp_path, "--as-group", "g", "get", "pods", kubeconfig=config)
    assert theirs.returncode != 0 and "without impersonating a user" in theirs.stderr


# -- conformance: the same server, identity and headers as kubectl ---------------------------


@dataclass
class Case:
    """One row of the matrix: kubeconfig files (merged through KUBECONFIG, in order), the
    flags (given before the command to both tools), the environment, and whether the
    requests must go through the recording proxy."""

    name: str
    files: list[dict[str, Any]]
    flags: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    proxied: bool = True
    succeeds: bool = True
    audited: bool = True  # the requests reach the API server, which logs who made them


def _client_certificate(cp: ControlPlane, directory: Path) -> tuple[str, str]:
    """A client certificate for user `cert-user` in system:masters, signed by the cluster CA
    (the API server's --client-ca-file)."""
    (directory / "ca.crt").write_bytes(cp.ca_file.read_bytes())
    (directory / "ca.key").write_bytes((cp.pki_dir / "ca.key").read_bytes())
    _make_leaf(
        directory,
        "ca",
        "cert-user",
        "cert-user/O=system:masters",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=clientAuth\n",
    )
    return str(directory / "cert-user.crt"), str(directory / "cert-user.key")


def _cases(cp: ControlPlane, proxy: RecordingProxy, directory: Path) -> list[Case]:
    ca = {"certificate-authority-data": cp.ca_data_b64}
    via_proxy = {**ca, "proxy-url": proxy.url}
    admin = {"token": cp.admin_token}
    svc = _service_url(cp)
    wrong_ca = base64.b64encode((cp.pki_dir / "front-proxy-ca.crt").read_bytes()).decode()
    cert, key = _client_certificate(cp, directory)
    token_file = directory / "carol.token"
    token_file.write_text(cp.tokens["carol"] + "\n")

    def doc(cluster: dict[str, Any], user: dict[str, Any], server: str = cp.server) -> Any:
        return kubeconfig_document({"server": server, **cluster}, user, "ctx")

    first: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "current-context": "mine"}
    first["contexts"] = [{"name": "mine", "context": {"cluster": "c", "user": "u"}}]
    second = doc(via_proxy, admin)
    second["current-context"] = "ctx"  # the first file's current-context wins
    two_contexts = doc(ca, admin, server=svc)
    two_contexts["clusters"].append({"name": "far", "cluster": {"server": "https://127.0.0.1:1"}})
    two_contexts["contexts"].append({"name": "far", "context": {"cluster": "far", "user": "u"}})
    two_contexts["current-context"] = "far"
    impersonating_user = {
        **admin,
        "as": "bob",
        "as-groups": ["system:masters", "team-b"],
        "as-uid": "uid-b",
        "as-user-extra": {"example.com/scopes": ["read", "write"], "reason": ["drill"]},
    }
    return [
        Case("merged KUBECONFIG files, the cluster's proxy-url", [first, second]),
        Case(
            "--context, HTTPS_PROXY with a NO_PROXY that does not match",
            [two_contexts],
            ["--context", "ctx"],
            {"HTTPS_PROXY": proxy.url, "NO_PROXY": "example.com,.local,10.0.0.0/8,127.0.0.1"},
        ),
        Case(
            "--server --token --insecure-skip-tls-verify, no kubeconfig, https_proxy",
            [],
            ["--server", svc, "--token", cp.admin_token, "--insecure-skip-tls-verify"],
            {"https_proxy": proxy.url},
        ),
        Case(
            "--as --as-group --as-uid",
            [doc(via_proxy, admin)],
            [
                *("--as", "alice", "--as-group", "system:masters", "--as-group", "x"),
                *("--as-uid", "1", "--as-user-extra", "reason=drill", "--as-user-extra=r=2"),
                *("--as-user-extra", "example.com/Scopes=a=b", "--as-user-extra", "novalue"),
            ],
        ),
        Case(
            "the kubeconfig user's as, as-groups, as-uid, as-user-extra",
            [doc(via_proxy, impersonating_user)],
        ),
        Case(
            "--token over the kubeconfig user's token",
            [doc(via_proxy, {"token": cp.tokens["carol"]})],
            ["--token", cp.admin_token],
        ),
        Case(
            "--token and the kubeconfig user's tokenFile: the file wins in client-go",
            [doc(via_proxy, {"tokenFile": str(token_file)})],
            ["--token", cp.admin_token],
            succeeds=False,  # carol may not list pods: both are refused, as carol
        ),
        Case(
            "--certificate-authority over a wrong CA, --disable-compression",
            [doc({"certificate-authority-data": wrong_ca, "proxy-url": proxy.url}, admin)],
            ["--certificate-authority", str(cp.ca_file), "--disable-compression"],
        ),
        Case(
            "--server and --tls-server-name over the kubeconfig's server",
            [doc({**via_proxy, "tls-server-name": "wrong.example"}, admin, "https://x.invalid")],
            ["--server", f"https://127.0.0.1:{cp.port}", "--tls-server-name", "kubernetes"],
        ),
        Case(
            "--username --password (the server has no basic auth: 401 for both)",
            [doc(via_proxy, {})],
            ["--username", "jane", "--password", "s3cret"],
            succeeds=False,
        ),
        Case(
            "--client-certificate --client-key (not through the proxy: it cannot present them)",
            [doc(ca, {})],
            ["--client-certificate", cert, "--client-key", key],
            {"HTTPS_PROXY": proxy.url},
            proxied=False,
        ),
        Case(
            "an http:// server through HTTP_PROXY: impersonation, but no credentials in clear",
            [doc({}, admin, server=f"http://kubernetes.default.svc:{cp.port}")],
            ["--as", "alice", "--token", "t0ken"],
            {"HTTP_PROXY": proxy.url, "HTTPS_PROXY": "http://127.0.0.1:1"},
            proxied=False,  # no CONNECT: the request itself goes to the proxy (answered 502)
            succeeds=False,
            audited=False,
        ),
        Case(
            "NO_PROXY matches: neither reaches the unresolvable name",
            [doc(ca, admin, server=svc)],
            env={"HTTPS_PROXY": proxy.url, "NO_PROXY": "*.default.svc"},
            proxied=False,
            succeeds=False,
            audited=False,
        ),
    ]


@dataclass
class Seen:
    returncode: int
    connects: set[str]
    headers: set[tuple[tuple[str, tuple[str, ...]], ...]]
    identities: set[tuple[str, str]]


def _run_case(
    cp: ControlPlane,
    proxy: RecordingProxy,
    case: Case,
    home: Path,
    kubeconfig: str,
    command: list[str],
    agent: str,
    run: Any,
) -> Seen:
    proxy.recording.clear()
    offset = cp.audit_offset()
    result = run(*case.flags, *command, kubeconfig=kubeconfig, env=case.env)
    assert (result.returncode == 0) == case.succeeds, (case.name, agent, result.stderr)
    assert "Traceback" not in result.stderr
    headers = {
        tuple((name, tuple(r.values(name))) for name in (*COMPARED_HEADERS, "accept-encoding"))
        for r in proxy.recording.requests
    }
    extra = {
        (name, value)
        for r in proxy.recording.requests
        for name, value in r.headers
        if name.startswith("impersonate-extra-")
    }
    extras = ("extra", tuple(sorted(f"{n}={v}" for n, v in extra)))
    headers = {(*h, extras) for h in headers}
    identities = _audit_identities(cp, offset, agent, expect=case.audited)
    return Seen(result.returncode, set(proxy.recording.connects), headers, identities)


def test_conformance_with_kubectl(
    control_plane: ControlPlane, target: tuple[str, str], proxy: RecordingProxy, tmp_path: Path
) -> None:
    cp = control_plane
    ns, _ = target
    failures = []
    for index, case in enumerate(_cases(cp, proxy, tmp_path)):
        directory = tmp_path / f"case-{index}"
        directory.mkdir()
        paths = [_write(directory / f"config-{i}", f) for i, f in enumerate(case.files)]
        kubeconfig = os.pathsep.join(paths) if paths else str(directory / "absent")

        def run_kubectl(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
            return kubectl(cp, directory, *args, **kwargs)  # noqa: B023

        def run_plugin(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
            return plugin(directory, *args, **kwargs)  # noqa: B023

        theirs = _run_case(
            cp,
            proxy,
            case,
            directory,
            kubeconfig,
            ["get", "--raw", f"/api/v1/namespaces/{ns}/pods"],
            "kubectl/",
            run_kubectl,
        )
        ours = _run_case(
            cp,
            proxy,
            case,
            directory,
            kubeconfig,
            ["pods", "-n", ns],
            "kubectl-terminating/",
            run_plugin,
        )
        assert bool(theirs.connects) == case.proxied, (case.name, theirs)
        assert theirs.headers or not (case.proxied or case.env.get("HTTP_PROXY")), case.name
        for aspect in ("connects", "headers", "identities"):
            if getattr(theirs, aspect) != getattr(ours, aspect):
                failures.append(
                    f"{case.name}: {aspect} kubectl={getattr(theirs, aspect)} "
                    f"plugin={getattr(ours, aspect)}"
                )
    assert not failures, "\n".join(failures)
