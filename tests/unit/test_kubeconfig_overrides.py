"""kubectl's connection flags over the kubeconfig, with client-go's rules (clientcmd's
getCluster, getAuthInfo, validateAuthInfo and ClientConfig)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_terminating.errors import ConfigError
from kubectl_terminating.kubeconfig import Connection, Overrides, Selection, resolve

CA = b"-----BEGIN CERTIFICATE-----\nkubeconfig CA\n-----END CERTIFICATE-----\n"
FLAG_CA = b"-----BEGIN CERTIFICATE-----\nflag CA\n-----END CERTIFICATE-----\n"


def _resolve(
    tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any], **flags: Any
) -> Connection:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    return resolve(Selection(kubeconfig=str(path), overrides=Overrides(**flags)), {})


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


SECURE = {"server": "https://api:6443", "certificate-authority-data": _b64(CA)}


def test_flags_replace_the_kubeconfig_field_by_field(tmp_path: Path) -> None:
    conn = _resolve(
        tmp_path,
        {**SECURE, "tls-server-name": "kube", "proxy-url": "http://p:1"},
        {"token": "from-file", "as": "jane", "as-groups": ["g0"]},
        server="https://other:6443",
        token="from-flag",
        impersonate_groups=("g1", "g2"),
        disable_compression=True,
    )
    assert conn.server == "https://other:6443"
    assert conn.tls_server_name is None  # --server drops the kubeconfig's tls-server-name
    assert conn.token == "from-flag"
    assert conn.ca_data == CA and not conn.insecure
    assert conn.proxy_url == "http://p:1" and conn.disable_compression
    assert conn.impersonate is not None
    assert (conn.impersonate.user, conn.impersonate.groups) == ("jane", ("g1", "g2"))


def test_insecure_flag_drops_the_ca_and_a_ca_flag_turns_verification_on(tmp_path: Path) -> None:
    insecure = _resolve(tmp_path, SECURE, {}, insecure_skip_tls_verify=True)
    assert insecure.insecure and insecure.ca_data is None
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(FLAG_CA)
    cluster = {"server": "https://api", "insecure-skip-tls-verify": True}
    verified = _resolve(tmp_path, cluster, {}, certificate_authority=str(ca_file))
    assert not verified.insecure and verified.ca_data == FLAG_CA


def test_a_ca_with_insecure_skip_tls_verify_is_refused_as_kubectl_does(tmp_path: Path) -> None:
    """kubectl 1.36.3 on such a kubeconfig: `error: specifying a root certificates file with the
    insecure flag is not allowed` (exit 1); with --insecure-skip-tls-verify it works."""
    cluster = {**SECURE, "insecure-skip-tls-verify": True}
    with pytest.raises(ConfigError, match="^specifying a root certificates file with the insecure"):
        _resolve(tmp_path, cluster, {})
    assert _resolve(tmp_path, cluster, {}, insecure_skip_tls_verify=True).ca_data is None


def test_client_certificate_flags_replace_the_users_data(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    cert.write_bytes(b"flag cert")
    key.write_bytes(b"flag key")
    user = {"client-certificate-data": _b64(b"old"), "client-key-data": _b64(b"old key")}
    conn = _resolve(
        tmp_path, SECURE, user, client_certificate=str(cert), client_key=str(key), token="t"
    )
    assert (conn.client_cert_data, conn.client_key_data) == (b"flag cert", b"flag key")
    assert conn.token == "t"  # both are sent, as kubectl sends both


def test_token_and_basic_auth_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"more than one authentication method found for u"):
        _resolve(tmp_path, SECURE, {"token": "t"}, username="jane", password="pw")


@pytest.mark.parametrize(
    "flags",
    [{"impersonate_groups": ("g",)}, {"impersonate_uid": "1"}, {"impersonate_extra": ("k=v",)}],
)
def test_impersonation_details_need_a_user(tmp_path: Path, flags: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="without impersonating a user"):
        _resolve(tmp_path, SECURE, {"token": "t"}, **flags)


def test_user_extra_flags_split_at_the_first_equals_and_add_to_the_kubeconfigs(
    tmp_path: Path,
) -> None:
    user = {"as": "jane", "as-user-extra": {"reason": ["file"], "team": ["a"]}}
    conn = _resolve(tmp_path, SECURE, user, impersonate_extra=("reason=x=y", "reason=z", "novalue"))
    assert conn.impersonate is not None
    assert dict(conn.impersonate.extra) == {"reason": ("x=y", "z"), "team": ("a",)}


def test_no_credentials_to_an_http_server_but_impersonation(tmp_path: Path) -> None:
    conn = _resolve(tmp_path, {"server": "http://api:8080"}, {"token": "t"}, impersonate="jane")
    assert conn.token is None and conn.impersonate is not None


def test_server_without_scheme_is_http_even_with_tls_settings(tmp_path: Path) -> None:
    """As kubectl 1.36.3: `-s 127.0.0.1:PORT` with --insecure-skip-tls-verify or a CA still
    sends http:// (and so no credentials)."""
    secure = _resolve(tmp_path, {**SECURE, "server": "api:6443"}, {"token": "t"})
    assert (secure.server, secure.token) == ("http://api:6443", None)
    assert _resolve(tmp_path, {"server": "api:8080"}, {}).server == "http://api:8080"


def test_server_flag_does_not_stand_in_for_a_cluster_named_with_the_cluster_flag(
    tmp_path: Path,
) -> None:
    """kubectl 1.36.3: `--cluster nope -s URL` -> error: cluster "nope" does not exist."""
    _resolve(tmp_path, SECURE, {})  # writes tmp_path / "config"
    overrides = Overrides(server="https://other:6443")
    named = Selection(kubeconfig=str(tmp_path / "config"), cluster="nope", overrides=overrides)
    with pytest.raises(ConfigError, match='cluster "nope" does not exist'):
        resolve(named, {})


def test_server_flag_works_without_any_kubeconfig(tmp_path: Path) -> None:
    selection = Selection(
        kubeconfig=None,
        namespace=None,
        overrides=Overrides(server="https://api:6443", token="t", insecure_skip_tls_verify=True),
    )
    conn = resolve(selection, {"HOME": str(tmp_path)})
    assert (conn.server, conn.token, conn.insecure, conn.namespace) == (
        "https://api:6443",
        "t",
        True,
        "default",
    )


def _config(current: str, server: str, token: str, namespace: str) -> dict[str, Any]:
    """A kubeconfig whose cluster, user and context named `shared` point at server."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "shared", "cluster": {"server": server, "insecure-skip-tls-verify": True}}
        ],
        "users": [{"name": "shared", "user": {"token": token}}],
        "contexts": [
            {
                "name": "shared",
                "context": {"cluster": "shared", "user": "shared", "namespace": namespace},
            },
            {"name": current, "context": {"cluster": "shared", "user": "shared"}},
        ],
        "current-context": current,
    }


def test_kubeconfig_files_merge_in_order_the_first_to_set_a_value_wins(tmp_path: Path) -> None:
    """KUBECONFIG=a:b as kubectl merges it (clientcmd's precedence; e2e twin:
    tests/e2e/test_connection.py): the first file to set current-context or to name an entry
    wins, entries only in a later file are there too, a missing file is skipped, and
    --kubeconfig reads its file alone."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_text(yaml.safe_dump(_config("from-a", "https://a:1", "token-a", "ns-a")))
    later = _config("from-b", "https://b:2", "token-b", "ns-b")
    later["clusters"].append(
        {
            "name": "only-b",
            "cluster": {"server": "https://only-b:3", "insecure-skip-tls-verify": True},
        }
    )
    later["contexts"].append({"name": "only-b", "context": {"cluster": "only-b", "user": "shared"}})
    second.write_text(yaml.safe_dump(later))
    environ = {"KUBECONFIG": f"{first}:{tmp_path / 'missing'}:{second}", "HOME": str(tmp_path)}

    def connect(**selection: Any) -> tuple[str, str, str | None, str]:
        conn = resolve(Selection(**selection), environ)
        return conn.context, conn.server, conn.token, conn.namespace

    assert connect() == ("from-a", "https://a:1", "token-a", "default")
    assert connect(context="shared") == ("shared", "https://a:1", "token-a", "ns-a")
    assert connect(context="only-b") == ("only-b", "https://only-b:3", "token-a", "default")
    assert connect(context="from-b") == ("from-b", "https://a:1", "token-a", "default")
    environ["KUBECONFIG"] = f"{second}:{first}"
    assert connect() == ("from-b", "https://b:2", "token-b", "default")
    assert connect(kubeconfig=str(first)) == ("from-a", "https://a:1", "token-a", "default")
