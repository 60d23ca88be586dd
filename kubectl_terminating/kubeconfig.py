"""Where to connect and as whom, resolved the way kubectl does.

Precedence: --kubeconfig > $KUBECONFIG (several files: the first file to set a value wins,
`current-context` included, which the Python client gets wrong) > ~/.kube/config > the
in-cluster service account. Token, token file, basic auth and client certificates are handled
here without importing the `kubernetes` package (start-up time); exec credential plugins go
through the package's own ExecProvider, imported only when a kubeconfig uses one.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubectl_terminating.errors import ConfigError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")

# Fields of clusters and users that name files, resolved relative to the kubeconfig that
# set them (as kubectl does).
_PATH_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


@dataclass(frozen=True)
class Selection:
    """What the user asked for on the command line."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None


@dataclass
class Connection:
    """Everything the HTTP client needs, secrets included (never print this object)."""

    server: str
    context: str
    namespace: str
    ca_data: bytes | None = None
    insecure: bool = False
    disable_compression: bool = False  # the cluster's `disable-compression` (kubectl 1.26+)
    tls_server_name: str | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec_config: dict[str, Any] | None = None
    proxy_url: str | None = None
    config_dir: str = field(default_factory=os.getcwd)

    def __repr__(self) -> str:  # keep secrets out of tracebacks and debug output
        return f"Connection(server={self.server!r}, context={self.context!r})"


def kubeconfig_paths(explicit: str | None, environ: dict[str, str] | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"stat {explicit}: no such file or directory")
        return [path]
    value = env.get("KUBECONFIG", "")
    if value:
        return [Path(p).expanduser() for p in value.split(os.pathsep) if p]
    home = Path(env.get("HOME", "~")).expanduser()
    return [home / ".kube" / "config"]


def _load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        line = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            line = f" (line {mark.line + 1})"
        raise ConfigError(f"error loading kubeconfig {path}: not valid YAML{line}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"error loading kubeconfig {path}: not a kubeconfig (not a mapping)")
    return data


def _absolutise(entry: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(entry)
    for key in _PATH_FIELDS:
        value = out.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            out[key] = str((base / os.path.expanduser(value)).resolve())
    exec_cfg = out.get("exec")
    if isinstance(exec_cfg, dict):
        command = exec_cfg.get("command")
        # kubectl resolves a relative command that contains a separator against the file
        if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
            exec_cfg = dict(exec_cfg, command=str((base / command).resolve()))
        out["exec"] = dict(exec_cfg, _dir=str(base))
    return out


def merge_kubeconfigs(paths: Sequence[Path]) -> dict[str, Any]:
    """Merge kubeconfig files: the first file to set a value (or a named entry) wins."""
    merged: dict[str, Any] = {"clusters": {}, "users": {}, "contexts": {}}
    current: str | None = None
    for path in paths:
        if not path.exists():
            continue
        data = _load_yaml(path)
        base = path.resolve().parent
        if current is None and data.get("current-context"):
            current = str(data["current-context"])
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise ConfigError(f"error loading kubeconfig {path}: {section} is not a list")
            for item in entries:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    raise ConfigError(
                        f"error loading kubeconfig {path}: {section} entry has no name"
                    )
                body = item.get(inner) or {}
                if not isinstance(body, dict):
                    raise ConfigError(
                        f"error loading kubeconfig {path}: {section} {item['name']!r} is malformed"
                    )
                merged[section].setdefault(item["name"], _absolutise(body, base))
    merged["current-context"] = current
    return merged


def _file_or_data(entry: dict[str, Any], file_key: str, data_key: str) -> bytes | None:
    data = entry.get(data_key)
    if isinstance(data, str) and data:
        try:
            return base64.b64decode(data, validate=False)
        except ValueError:
            raise ConfigError(f"{data_key} is not valid base64") from None
    path = entry.get(file_key)
    if isinstance(path, str) and path:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(f"unable to read {file_key} {path}: {exc.strerror}") from None
    return None


def in_cluster(namespace: str | None, environ: dict[str, str] | None = None) -> Connection | None:
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    token_path = SERVICE_ACCOUNT_DIR / "token"
    if not host or not port or not token_path.exists():
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    ns_file = SERVICE_ACCOUNT_DIR / "namespace"
    default_ns = ns_file.read_text().strip() if ns_file.exists() else "default"
    ca = SERVICE_ACCOUNT_DIR / "ca.crt"
    return Connection(
        server=f"https://{host}:{port}",
        context="in-cluster",
        namespace=namespace or default_ns,
        ca_data=ca.read_bytes() if ca.exists() else None,
        token_file=str(token_path),
    )


def resolve(selection: Selection, environ: dict[str, str] | None = None) -> Connection:
    paths = kubeconfig_paths(selection.kubeconfig, environ)
    if not any(p.exists() for p in paths):
        found = in_cluster(selection.namespace, environ)
        if found is not None:
            return found
        where = ", ".join(str(p) for p in paths)
        raise ConfigError(
            f"no kubeconfig found (looked at {where}) and not running inside a cluster; "
            "use --kubeconfig or set KUBECONFIG"
        )
    config = merge_kubeconfigs(paths)
    context_name = selection.context or config["current-context"]
    context: dict[str, Any] = {}
    if context_name:
        if context_name not in config["contexts"]:
            raise ConfigError(f'context "{context_name}" does not exist')
        context = config["contexts"][context_name]
    elif not (selection.cluster and selection.user is not None):
        raise ConfigError(
            "current-context is not set; use --context (kubectl config get-contexts lists them)"
        )
    cluster_name = selection.cluster or context.get("cluster")
    user_name = selection.user if selection.user is not None else context.get("user")
    if not cluster_name or cluster_name not in config["clusters"]:
        raise ConfigError(f'cluster "{cluster_name or ""}" does not exist in the kubeconfig')
    cluster = config["clusters"][cluster_name]
    user: dict[str, Any] = {}
    if user_name:
        if user_name not in config["users"]:
            raise ConfigError(f'user "{user_name}" does not exist in the kubeconfig')
        user = config["users"][user_name]
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise ConfigError(f'cluster "{cluster_name}" has no server address')
    return _connection(
        server.rstrip("/"),
        context_name or "",
        selection.namespace or context.get("namespace") or "default",
        cluster,
        user,
    )


def _connection(
    server: str, context: str, namespace: str, cluster: dict[str, Any], user: dict[str, Any]
) -> Connection:
    token = user.get("token") if isinstance(user.get("token"), str) else None
    auth_provider = user.get("auth-provider")
    if token is None and isinstance(auth_provider, dict):
        token = _auth_provider_token(auth_provider)
    return Connection(
        server=server,
        context=context,
        namespace=namespace,
        ca_data=_file_or_data(cluster, "certificate-authority", "certificate-authority-data"),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        disable_compression=cluster.get("disable-compression") is True,
        tls_server_name=cluster.get("tls-server-name") or None,
        client_cert_data=_file_or_data(user, "client-certificate", "client-certificate-data"),
        client_key_data=_file_or_data(user, "client-key", "client-key-data"),
        token=token,
        token_file=user.get("tokenFile") or None,
        username=user.get("username") or None,
        password=user.get("password") or None,
        exec_config=user.get("exec") if isinstance(user.get("exec"), dict) else None,
        proxy_url=cluster.get("proxy-url") or None,
    )


def _auth_provider_token(provider: dict[str, Any]) -> str:
    """The legacy auth-provider stanza: only a stored OIDC id-token can be used as is."""
    name = provider.get("name", "?")
    config = provider.get("config") or {}
    token = config.get("id-token") if isinstance(config, dict) else None
    if name == "oidc" and isinstance(token, str) and token:
        return token
    raise ConfigError(
        f'auth provider "{name}" is not supported (removed from kubectl as well); '
        "use an exec credential plugin such as kubelogin or gke-gcloud-auth-plugin"
    )


def run_exec_plugin(connection: Connection) -> dict[str, Any]:
    """Run the exec credential plugin; its status has a token and/or a client certificate."""
    assert connection.exec_config is not None
    exec_config = dict(connection.exec_config)
    cwd = exec_config.pop("_dir", None)
    try:
        from kubernetes.config.config_exception import ConfigException
        from kubernetes.config.exec_provider import ExecProvider
        from kubernetes.config.kube_config import ConfigNode
    except ImportError:  # pragma: no cover - kubernetes is a dependency
        raise ConfigError("exec credential plugins need the kubernetes package") from None
    command = exec_config.get("command", "?")
    try:
        provider = ExecProvider(ConfigNode("exec", exec_config), cwd, None)
        status: dict[str, Any] = provider.run()
    except ConfigException as exc:
        raise ConfigError(f"exec credential plugin {command!r} failed: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"exec credential plugin {command!r} failed: {exc.strerror}") from None
    return status
