"""A fleet from the cluster inventory (clusterprofiles.py): each ClusterProfile's connection
built as the cluster-inventory-api's BuildConfigFromCP builds it, the provider file read as
its NewFromFile reads it, and the flag rules. The hub and members are read for real in
tests/e2e/test_cluster_profiles.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.clusterprofiles import (
    ARGS_EXTENSION,
    ENVS_EXTENSION,
    EXEC_EXTENSION,
    Provider,
    load_providers,
    member_connection,
)
from kubectl_terminating.errors import ConfigError
from kubectl_terminating.kubeconfig import Overrides
from tests.unit.test_fleet import assert_usage_error

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
PLUGIN = {"apiVersion": "client.authentication.k8s.io/v1", "command": "cp-creds"}


def provider(name: str, server: str, **cluster: Any) -> dict[str, Any]:
    return {"name": name, "cluster": {"server": server, **cluster}}


def profile(*providers: dict[str, Any], deprecated: tuple[dict[str, Any], ...] = ()) -> Any:
    return {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "member-a", "namespace": "fleet"},
        "status": {"accessProviders": list(providers), "credentialProviders": list(deprecated)},
    }


def build(cp: Any, *providers: Provider, overrides: Overrides | None = None) -> Any:
    return member_connection(cp, providers, overrides or Overrides(), "shop")


def test_the_connection_is_the_provider_s_server_and_ca_and_the_file_s_plugin() -> None:
    ca = base64.b64encode(CA).decode()
    extension = {"name": EXEC_EXTENSION, "extension": {"clusterName": "member-a"}}
    cp = profile(
        provider(
            "open-cluster-management",
            "https://10.0.0.1:6443/",
            **{
                "certificate-authority-data": ca,
                "proxy-url": "http://proxy:3128",
                "tls-server-name": "ignored.example",  # BuildConfigFromCP does not take it
                "extensions": [extension],
            },
        )
    )
    plugin = dict(PLUGIN, args=["--sa=reader"], env=[{"name": "A", "value": "1"}])
    connection = build(cp, Provider("open-cluster-management", plugin))
    assert (connection.server, connection.context, connection.namespace) == (
        "https://10.0.0.1:6443",
        "member-a",
        "shop",
    )
    assert connection.ca_data == CA
    assert connection.proxy_url == "http://proxy:3128"
    assert connection.tls_server_name is None
    assert connection.token is None  # the plugin gives it, when the client first connects
    exec_config = connection.exec_config
    assert exec_config["command"] == "cp-creds"
    assert exec_config["args"] == ["--sa=reader"]
    assert exec_config["env"] == [{"name": "A", "value": "1"}]
    assert exec_config["interactiveMode"] == "Never"
    # provideClusterInfo's spec.cluster: the extension is the plugin's config
    assert exec_config["_cluster"] == {
        "server": "https://10.0.0.1:6443/",
        "certificate-authority-data": ca,
        "proxy-url": "http://proxy:3128",
        "config": {"clusterName": "member-a"},
    }


def test_the_file_s_order_chooses_among_the_profile_s_providers() -> None:
    cp = profile(provider("b", "https://b.example"), provider("a", "https://a.example"))
    connection = build(cp, Provider("a", PLUGIN), Provider("b", PLUGIN))
    assert connection.server == "https://a.example"
    connection = build(cp, Provider("c", PLUGIN), Provider("b", PLUGIN))
    assert connection.server == "https://b.example"


def test_access_providers_win_over_the_deprecated_credential_providers() -> None:
    cp = profile(
        provider("ocm", "https://new.example"),
        deprecated=(provider("ocm", "https://old.example"), provider("old", "https://o.example")),
    )
    assert build(cp, Provider("ocm", PLUGIN)).server == "https://new.example"
    assert build(cp, Provider("old", PLUGIN)).server == "https://o.example"


def test_a_profile_without_a_provider_of_the_file_says_which_it_has() -> None:
    cp = profile(provider("gke", "https://g.example"), provider("eks", "https://e.example"))
    with pytest.raises(ConfigError) as refused:
        build(cp, Provider("ocm", PLUGIN))
    assert refused.value.message == (
        "none of its access providers (eks, gke) is in the provider file"
    )
    with pytest.raises(ConfigError, match='no execConfig for provider "gke"'):
        build(cp, Provider("gke"))


def extended(**extensions: Any) -> Any:
    named = [{"name": name, "extension": value} for name, value in extensions.items()]
    return profile(provider("p", "https://m.example", extensions=named))


ARGS, ENVS = ARGS_EXTENSION, ENVS_EXTENSION


@pytest.mark.parametrize(
    ("args_policy", "envs_policy", "args", "env"),
    [
        ("", "", ["--fixed"], {"SHARED": "file", "FILE": "1"}),
        ("Ignore", "Ignore", ["--fixed"], {"SHARED": "file", "FILE": "1"}),
        (
            "Append",
            "AppendIfNotExists",
            ["--fixed", "--audience", "member-a"],
            {"SHARED": "file", "FILE": "1", "PROFILE": "2"},
        ),
        (
            "Append",
            "Replace",
            ["--fixed", "--audience", "member-a"],
            {"SHARED": "profile", "FILE": "1", "PROFILE": "2"},
        ),
    ],
)
def test_profile_sourced_args_and_env_follow_the_provider_s_policies(
    args_policy: str, envs_policy: str, args: list[str], env: dict[str, str]
) -> None:
    cp = extended(
        **{
            ARGS: ["--audience", "member-a"],
            ENVS: {"SHARED": "profile", "PROFILE": 2},
        }
    )
    plugin = dict(
        PLUGIN,
        args=["--fixed"],
        env=[{"name": "SHARED", "value": "file"}, {"name": "FILE", "value": "1"}],
    )
    connection = build(cp, Provider("p", plugin, args_policy, envs_policy))
    assert connection.exec_config["args"] == args
    assert {e["name"]: e["value"] for e in connection.exec_config["env"]} == env


def test_an_unsupported_policy_or_a_malformed_extension_refuses_that_profile() -> None:
    cp = extended(**{ARGS: ["--x"]})
    with pytest.raises(ConfigError, match='unsupported profileSourcedCLIArgsPolicy "Prepend"'):
        build(cp, Provider("p", PLUGIN, args_policy="Prepend"))
    with pytest.raises(ConfigError, match="is not a list of arguments"):
        build(extended(**{ARGS: {"a": "b"}}), Provider("p", PLUGIN, args_policy="Append"))
    with pytest.raises(ConfigError, match="is not a mapping"):
        build(extended(**{ENVS: ["A=1"]}), Provider("p", PLUGIN, envs_policy="Replace"))


def test_the_impersonation_flags_apply_to_every_member() -> None:
    cp = profile(provider("p", "https://m.example"))
    connection = build(cp, Provider("p", PLUGIN), overrides=Overrides(impersonate="auditor"))
    assert connection.impersonate is not None and connection.impersonate.user == "auditor"


def test_the_provider_file_is_read_in_its_order(tmp_path: Path) -> None:
    path = tmp_path / "providers.json"
    path.write_text(
        json.dumps(
            {
                "providers": [
                    {"name": "b", "execConfig": PLUGIN, "profileSourcedCLIArgsPolicy": "Append"},
                    {"name": "a", "execConfig": PLUGIN},
                ]
            }
        )
    )
    assert load_providers(str(path)) == [
        Provider("b", PLUGIN, "Append", ""),
        Provider("a", PLUGIN, "", ""),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "Expecting property name"),
        ("[]", 'expected {"providers": [...]}'),
        ('{"providers": [{"name": 1}]}', "providers[0].name: expected a string"),
        ('{"providers": [{"name": "a", "execConfig": []}]}', "providers[0].execConfig: expected"),
        (
            '{"providers": [{"name": "a", "execConfig": {"command": "x", "args": "-v"}}]}',
            "providers[0].execConfig.args: expected a list of strings",
        ),
    ],
)
def test_a_broken_provider_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "providers.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_providers(str(path))
    assert refused.value.message.startswith(f"clusterprofile provider file {path}: ")
    assert message in refused.value.message
    assert "\n" not in refused.value.message
    with pytest.raises(ConfigError, match="No such file or directory"):
        load_providers(str(tmp_path / "missing.json"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cluster-profiles"], "--cluster-profiles needs --clusterprofile-provider-file"),
        (
            ["--cluster-profiles", "--all-contexts", "--clusterprofile-provider-file", "p"],
            "--cluster-profiles cannot be combined with --contexts/--all-contexts",
        ),
        (
            ["--cluster-profiles=env=prod", "--token", "t", "--clusterprofile-provider-file=p"],
            "--token cannot be combined with --cluster-profiles",
        ),
        (["--clusterprofile-provider-file", "p"], "only applies with --cluster-profiles"),
        # pflag: a value only after `=`; the word after it is the command's argument
        (
            ["--cluster-profiles", "env=prod", "--clusterprofile-provider-file", "p"],
            "give --cluster-profiles its selector after `=`",
        ),
        (
            ["--cluster-profiles", "-w", "--clusterprofile-provider-file", "p"],
            "--cluster-profiles cannot be combined with --watch",
        ),
    ],
)
def test_the_inventory_flags_rules(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_usage_error(["pods", *args], message, capsys)


def test_preflight_and_fix_refuse_the_inventory(capsys: pytest.CaptureFixture[str]) -> None:
    assert_usage_error(
        ["--cluster-profiles", "preflight", "ns", "x"],
        "preflight reads kubeconfig contexts",
        capsys,
    )
    assert_usage_error(["--cluster-profiles", "fix", "pods"], "fix works on one cluster", capsys)
