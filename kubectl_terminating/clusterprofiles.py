"""A fleet from the cluster inventory (`--cluster-profiles[=SELECTOR]`): the ClusterProfiles
of the hub (the current context), each a cluster to read, reached through its access
provider's server and CA and the exec credential plugin the provider file names for it.

Upstream facts, from kubernetes-sigs/cluster-inventory-api v0.1.2 (commit 2b5fcd1):
apis/v1alpha1/clusterprofile_types.go and pkg/access/config.go (NewFromFile,
BuildConfigFromCP), the library Argo CD's cluster-profile controller and OCM's consumers use:

- ClusterProfile is `multicluster.x-k8s.io/v1alpha1`, namespaced. They are read from the hub
  context's own namespace, as Argo CD's controller reads its own (argo-cd
  cmd/argocd-clusterprofile-controller: `clientConfig.Namespace()`); OCM writes one per
  ManagedClusterSetBinding namespace, so all namespaces would repeat clusters.
- The provider file is JSON: `{"providers": [{"name", "execConfig", "profileSourcedCLIArgsPolicy",
  "profileSourcedEnvVarsPolicy"}]}`, execConfig being client-go's ExecConfig (`command`, `args`,
  `env` [{name, value}], `apiVersion`, `provideClusterInfo`).
- A profile's providers are `status.credentialProviders` (deprecated) and
  `status.accessProviders`, the latter winning on a shared name; the one used is the first
  provider of the FILE that the profile has.
- The connection takes the provider's `cluster.server`, `certificate-authority-data` and
  `proxy-url`, nothing else of it; the plugin runs with interactiveMode Never, and its
  `config` (spec.cluster.config with provideClusterInfo) is the cluster extension named
  `client.authentication.k8s.io/exec`.
- Extensions `clusterprofiles.multicluster.x-k8s.io/exec/additional-args` (a list: appended
  under policy Append) and `.../additional-envs` (a mapping: AppendIfNotExists, the file's
  value wins; Replace, the profile's wins); unset or Ignore: skipped; another policy: that
  profile cannot be built.

Every plugin passes kubectl's credential-plugin policy first (kubeconfig.run_exec_plugin
calls credential_policy.check with the profile's name).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from kubectl_terminating.errors import ConfigError, NotServed
from kubectl_terminating.kubeconfig import Connection, Overrides, entries_connection
from kubectl_terminating.options import Options

GROUP_VERSION = "multicluster.x-k8s.io/v1alpha1"
EXEC_EXTENSION = "client.authentication.k8s.io/exec"
ARGS_EXTENSION = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
ENVS_EXTENSION = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
ARGS_POLICIES = ("", "Ignore", "Append")
ENVS_POLICIES = ("", "Ignore", "AppendIfNotExists", "Replace")


@dataclass(frozen=True)
class Provider:
    """One entry of the provider file."""

    name: str
    exec_config: dict[str, Any] = field(default_factory=dict)
    args_policy: str = ""
    envs_policy: str = ""


@dataclass(frozen=True)
class Member:
    """A ClusterProfile as a cluster to read: its connection, or why there is none."""

    name: str
    connection: Connection | None = None
    error: str | None = None


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string")
    return value


def _provider(item: Any, number: int) -> Provider:
    where = f"providers[{number}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected an object")
    name = _text(item.get("name", ""), f"{where}.name")
    exec_config = item.get("execConfig")
    if exec_config is not None and not isinstance(exec_config, dict):
        raise ValueError(f"{where}.execConfig: expected an object")
    for key in ("command", "apiVersion"):
        _text((exec_config or {}).get(key, ""), f"{where}.execConfig.{key}")
    args = (exec_config or {}).get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"{where}.execConfig.args: expected a list of strings")
    env = (exec_config or {}).get("env") or []
    if not isinstance(env, list) or not all(isinstance(e, dict) for e in env):
        raise ValueError(f"{where}.execConfig.env: expected a list of {{name, value}}")
    return Provider(
        name,
        exec_config or {},
        _text(item.get("profileSourcedCLIArgsPolicy", ""), f"{where}.profileSourcedCLIArgsPolicy"),
        _text(item.get("profileSourcedEnvVarsPolicy", ""), f"{where}.profileSourcedEnvVarsPolicy"),
    )


def load_providers(path: str) -> list[Provider]:
    """The provider file's providers, in its order; unreadable or malformed: one line."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ConfigError(f"clusterprofile provider file {path}: {reason}") from None
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("providers", []), list):
            raise ValueError('expected {"providers": [...]}')
        return [_provider(item, i) for i, item in enumerate(data.get("providers") or [])]
    except ValueError as error:  # json's decode errors are ValueErrors too
        raise ConfigError(f"clusterprofile provider file {path}: {error}") from None


def _offered(profile: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The profile's access providers by name (accessProviders win over the deprecated
    credentialProviders)."""
    status = profile.get("status") or {}
    offered: dict[str, dict[str, Any]] = {}
    for key in ("credentialProviders", "accessProviders"):
        for item in status.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                offered[item["name"]] = item
    return offered


def _extensions(cluster: dict[str, Any]) -> dict[str, Any]:
    extensions = cluster.get("extensions") or []
    if not isinstance(extensions, list):
        raise ConfigError("its cluster's extensions are not a list")
    named = [e for e in extensions if isinstance(e, dict) and "name" in e]
    return {e["name"]: e.get("extension") for e in named}


def _scalar(value: Any) -> str:
    """A YAML scalar decoded into a Go string (yaml.v3 keeps its text)."""
    if isinstance(value, dict | list):
        raise ConfigError("a value of an exec extension is not a scalar")
    return value if isinstance(value, str) else json.dumps(value)


def _extra_args(provider: Provider, data: Any) -> list[str]:
    if provider.args_policy not in ARGS_POLICIES:
        raise ConfigError(f'unsupported profileSourcedCLIArgsPolicy "{provider.args_policy}"')
    if provider.args_policy != "Append" or data is None:
        return []
    if not isinstance(data, list):
        raise ConfigError(f"extension {ARGS_EXTENSION} is not a list of arguments")
    return [_scalar(arg) for arg in data]


def _env(provider: Provider, data: Any, env: list[dict[str, Any]]) -> list[dict[str, Any]]:
    policy = provider.envs_policy
    if policy not in ENVS_POLICIES:
        raise ConfigError(f'unsupported profileSourcedEnvVarsPolicy "{policy}"')
    if policy in ("", "Ignore"):
        return env
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"extension {ENVS_EXTENSION} is not a mapping")
    merged = {str(k): _scalar(v) for k, v in (data or {}).items()}
    for item in env:
        if policy == "AppendIfNotExists" or item.get("name") not in merged:
            merged[str(item.get("name"))] = str(item.get("value", ""))
    return [{"name": name, "value": value} for name, value in merged.items()]


def member_connection(
    profile: dict[str, Any], providers: Sequence[Provider], overrides: Overrides, namespace: str
) -> Connection:
    """The connection to the cluster of profile, as BuildConfigFromCP builds it; why it
    cannot be built: a ConfigError (one line, about this profile only)."""
    offered = _offered(profile)
    chosen = next((p for p in providers if p.name in offered), None)
    if chosen is None:
        names = ", ".join(sorted(offered)) or "none"
        raise ConfigError(f"none of its access providers ({names}) is in the provider file")
    if not chosen.exec_config:
        raise ConfigError(f'no execConfig for provider "{chosen.name}" in the provider file')
    cluster = offered[chosen.name].get("cluster") or {}
    if not isinstance(cluster, dict):
        raise ConfigError(f'access provider "{chosen.name}": its cluster is not an object')
    extensions = _extensions(cluster)
    exec_config = dict(chosen.exec_config)
    exec_config["args"] = [
        *(exec_config.get("args") or []),
        *_extra_args(chosen, extensions.get(ARGS_EXTENSION)),
    ]
    exec_config["env"] = _env(chosen, extensions.get(ENVS_EXTENSION), exec_config.get("env") or [])
    exec_config["interactiveMode"] = "Never"
    # what the plugin is told of the cluster with provideClusterInfo (client-go's
    # ConfigToExecCluster of the config BuildConfigFromCP returns)
    about = {
        key: cluster[key]
        for key in ("server", "certificate-authority-data", "proxy-url")
        if cluster.get(key)
    }
    if EXEC_EXTENSION in extensions:
        about["config"] = extensions[EXEC_EXTENSION]
    exec_config["_cluster"] = about
    entry = {k: v for k, v in about.items() if k != "config"}
    name = str((profile.get("metadata") or {}).get("name", ""))
    return entries_connection(
        name, namespace, (name, entry), (chosen.name, {"exec": exec_config}), overrides
    )


def members(options: Options, err: IO[str]) -> list[Member]:
    """The hub's ClusterProfiles (those the selector matches), each with its connection."""
    from kubectl_terminating.connection import connected

    assert options.cluster_profiles is not None and options.clusterprofile_provider_file
    providers = load_providers(options.clusterprofile_provider_file)
    # the hub: the context named (or current), in its own namespace (-n scopes the members)
    hub = replace(options, namespace=None, cluster_profiles=None, clusterprofile_provider_file=None)
    with connected(hub, err) as client:
        where = client.connection.namespace
        path = f"/apis/{GROUP_VERSION}/namespaces/{where}/clusterprofiles"
        params = {"labelSelector": options.cluster_profiles} if options.cluster_profiles else {}
        try:
            profiles = list(client.items(path, params))
        except NotServed:
            raise ConfigError(
                f'context "{client.connection.context}" serves no ClusterProfiles '
                f"({GROUP_VERSION}): is it the hub of a cluster inventory?"
            ) from None
    if not profiles:
        matching = f" matching {options.cluster_profiles!r}" if options.cluster_profiles else ""
        raise ConfigError(f'no ClusterProfiles{matching} in namespace "{where}" of the hub')
    found = []
    for profile in profiles:
        name = str((profile.get("metadata") or {}).get("name", ""))
        try:
            connection = member_connection(
                profile, providers, options.overrides, options.namespace or "default"
            )
            found.append(Member(name, connection))
        except ConfigError as error:
            found.append(Member(name, error=error.message))
    return found
