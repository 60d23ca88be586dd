"""Where to connect and as whom, resolved the way kubectl does.

Precedence: --kubeconfig > $KUBECONFIG (several files: the first file to set a value wins,
`current-context` included, which the Python client gets wrong) > ~/.kube/config > the
in-cluster service account. Token, token file, basic auth and client certificates are handled
here without importing the `kubernetes` package (start-up time); exec credential plugins go
through the package's own ExecProvider, imported only when a kubeconfig uses one, once the
user's kuberc allows them (credential_policy.py).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kubectl_terminating import credential_policy
from kubectl_terminating.errors import ConfigError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")

# Fields of clusters and users that name files, resolved relative to the kubeconfig that
# set them (as kubectl does).
_PATH_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


@dataclass(frozen=True)
class Flag:
    """How a field of Overrides is spelt on the command line; cli.py makes its click option
    (an on/off flag when the field is a bool, repeatable when it is a tuple)."""

    opts: tuple[str, ...]
    help: str
    metavar: str | None = None
    one_cluster: bool = False  # names one cluster or credential: refused with --contexts


def _flag(
    *opts: str, help: str, metavar: str | None = None, one_cluster: bool = False
) -> dict[str, Flag]:
    return {"flag": Flag(opts, help, metavar, one_cluster)}


@dataclass(frozen=True)
class Overrides:
    """kubectl's connection flags: each one set replaces the kubeconfig's value (clientcmd's
    ConfigOverrides), field by field. Each field is its flag too (k8s.io/cli-runtime
    ConfigFlags' help texts), in --help order: a new connection flag is one field here."""

    server: str | None = field(
        default=None,
        metadata=_flag(
            "-s",
            "--server",
            metavar="URL",
            help="The address and port of the Kubernetes API server.",
            one_cluster=True,
        ),
    )
    token: str | None = field(
        default=None,
        metadata=_flag(
            "--token",
            metavar="TOKEN",
            help="Bearer token for authentication to the API server.",
            one_cluster=True,
        ),
    )
    impersonate: str | None = field(
        default=None,
        metadata=_flag(
            "--as",
            metavar="USER",
            help="Username to impersonate for the operation. User could be a regular user or a "
            "service account in a namespace.",
        ),
    )
    impersonate_groups: tuple[str, ...] = field(
        default=(),
        metadata=_flag(
            "--as-group",
            metavar="GROUP",
            help="Group to impersonate for the operation, this flag can be repeated to specify "
            "multiple groups.",
        ),
    )
    impersonate_uid: str | None = field(
        default=None,
        metadata=_flag("--as-uid", metavar="UID", help="UID to impersonate for the operation."),
    )
    impersonate_extra: tuple[str, ...] = field(  # KEY=VALUE, split at the first "="
        default=(),
        metadata=_flag(
            "--as-user-extra",
            metavar="KEY=VALUE",
            help="User extras to impersonate for the operation, this flag can be repeated to "
            "specify multiple values for the same key.",
        ),
    )
    username: str | None = field(
        default=None,
        metadata=_flag(
            "--username",
            metavar="NAME",
            help="Username for basic authentication to the API server.",
            one_cluster=True,
        ),
    )
    password: str | None = field(
        default=None,
        metadata=_flag(
            "--password",
            metavar="PASSWORD",
            help="Password for basic authentication to the API server.",
            one_cluster=True,
        ),
    )
    certificate_authority: str | None = field(
        default=None,
        metadata=_flag(
            "--certificate-authority",
            metavar="PATH",
            help="Path to a cert file for the certificate authority.",
            one_cluster=True,
        ),
    )
    client_certificate: str | None = field(
        default=None,
        metadata=_flag(
            "--client-certificate",
            metavar="PATH",
            help="Path to a client certificate file for TLS.",
            one_cluster=True,
        ),
    )
    client_key: str | None = field(
        default=None,
        metadata=_flag(
            "--client-key",
            metavar="PATH",
            help="Path to a client key file for TLS.",
            one_cluster=True,
        ),
    )
    insecure_skip_tls_verify: bool = field(
        default=False,
        metadata=_flag(
            "--insecure-skip-tls-verify",
            help="If true, the server's certificate will not be checked for validity. This will "
            "make your HTTPS connections insecure.",
        ),
    )
    tls_server_name: str | None = field(
        default=None,
        metadata=_flag(
            "--tls-server-name",
            metavar="NAME",
            help="Server name to use for server certificate validation. If it is not provided, "
            "the hostname used to contact the server is used.",
            one_cluster=True,
        ),
    )
    disable_compression: bool = field(
        default=False,
        metadata=_flag(
            "--disable-compression",
            help="If true, opt-out of response compression for all requests to the server.",
        ),
    )

    def one_cluster_flags(self) -> list[str]:
        """The flags given that name one cluster or credential (refused across contexts)."""
        return [
            f.metadata["flag"].opts[-1]
            for f in fields(self)
            if f.metadata["flag"].one_cluster and getattr(self, f.name)
        ]

    def cluster(self, cluster: dict[str, Any]) -> dict[str, Any]:
        """The kubeconfig cluster with the flags applied, as client-go's getCluster does."""
        out = dict(cluster)
        if self.server:
            out["server"] = self.server
        if self.disable_compression:
            out["disable-compression"] = True
        if self.insecure_skip_tls_verify or self.certificate_authority:
            # --insecure-skip-tls-verify drops the kubeconfig's CA; --certificate-authority
            # replaces it and turns verification back on
            out["insecure-skip-tls-verify"] = self.insecure_skip_tls_verify
            out.pop("certificate-authority-data", None)
            out["certificate-authority"] = self.certificate_authority
        if self.tls_server_name or self.server:
            # a --server from the flags takes the --tls-server-name from the flags too
            out["tls-server-name"] = self.tls_server_name
        return out

    def user(self, user: dict[str, Any]) -> dict[str, Any]:
        """The kubeconfig user with the flags applied, as client-go's getAuthInfo does."""
        out = dict(user)
        for key, value in (
            ("token", self.token),
            ("username", self.username),
            ("password", self.password),
            ("as", self.impersonate),
            ("as-uid", self.impersonate_uid),
        ):
            if value:
                out[key] = value
        if self.impersonate_groups:
            out["as-groups"] = list(self.impersonate_groups)
        extra: dict[str, list[str]] = {}
        for item in self.impersonate_extra:
            key, equals, value = item.partition("=")
            if equals:  # kubectl drops an item without "="
                extra.setdefault(key, []).append(value)
        if extra:  # added to the kubeconfig's keys
            existing = out.get("as-user-extra")
            out["as-user-extra"] = {**(existing if isinstance(existing, dict) else {}), **extra}
        for key, value in (
            ("client-certificate", self.client_certificate),
            ("client-key", self.client_key),
        ):
            if value:
                out[key] = value
                out.pop(f"{key}-data", None)
        return out


@dataclass(frozen=True)
class Selection:
    """What the user asked for on the command line."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    overrides: Overrides = field(default_factory=Overrides)


@dataclass(frozen=True)
class Impersonation:
    """Who the requests act as (the Impersonate-* headers): not a secret, shown by `-v 6`."""

    user: str
    uid: str | None = None
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def describe(self) -> str:
        parts = [f'user "{self.user}"']
        if self.uid:
            parts.append(f'uid "{self.uid}"')
        if self.groups:
            parts.append("groups " + ", ".join(f'"{g}"' for g in self.groups))
        for key, values in self.extra:
            parts.append(f'extra "{key}"=' + ",".join(f'"{v}"' for v in values))
        return ", ".join(parts)


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
    impersonate: Impersonation | None = None
    config_dir: str = field(default_factory=os.getcwd)
    # an exec plugin may prompt on the terminal (never in a run over several contexts)
    interactive: bool = True
    # the in-cluster configuration of a pod: the nodes' kubelets may be reachable directly
    in_pod: bool = False

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
        in_pod=True,
    )


def resolve(selection: Selection, environ: dict[str, str] | None = None) -> Connection:
    paths = kubeconfig_paths(selection.kubeconfig, environ)
    overrides = selection.overrides
    if not any(p.exists() for p in paths) and not overrides.server:
        found = in_cluster(selection.namespace, environ)
        if found is not None:
            return _in_cluster_overrides(found, overrides)
        where = ", ".join(str(p) for p in paths)
        raise ConfigError(
            f"no kubeconfig found (looked at {where}) and not running inside a cluster; "
            "use --kubeconfig or set KUBECONFIG, or --server"
        )
    config = merge_kubeconfigs(paths)
    context_name = selection.context or config["current-context"]
    context: dict[str, Any] = {}
    if context_name:
        if context_name not in config["contexts"]:
            raise ConfigError(f'context "{context_name}" does not exist')
        context = config["contexts"][context_name]
    elif not overrides.server and not (selection.cluster and selection.user is not None):
        raise ConfigError(
            "current-context is not set; use --context (kubectl config get-contexts lists them)"
        )
    cluster_name = selection.cluster or context.get("cluster")
    user_name = selection.user if selection.user is not None else context.get("user")
    cluster: dict[str, Any] = config["clusters"].get(cluster_name or "", {})
    # --server stands in for a missing cluster, never for one named with --cluster (client-go)
    if (cluster_name or "") not in config["clusters"] and (
        selection.cluster or not overrides.server
    ):
        raise ConfigError(f'cluster "{cluster_name or ""}" does not exist in the kubeconfig')
    user: dict[str, Any] = {}
    if user_name:
        if user_name not in config["users"]:
            raise ConfigError(f'user "{user_name}" does not exist in the kubeconfig')
        user = config["users"][user_name]
    return entries_connection(
        context_name or "",
        selection.namespace or context.get("namespace") or "default",
        (cluster_name or "", cluster),
        (user_name or "", user),
        overrides,
    )


def entries_connection(
    context: str,
    namespace: str,
    cluster: tuple[str, dict[str, Any]],
    user: tuple[str, dict[str, Any]],
    overrides: Overrides,
) -> Connection:
    """The connection of a kubeconfig-shaped cluster and user entry, each (name, entry), with
    the flags applied: a context's, or one built elsewhere (clusterprofiles.py)."""
    (cluster_name, cluster_entry), (user_name, user_entry) = cluster, user
    cluster_entry, user_entry = overrides.cluster(cluster_entry), overrides.user(user_entry)
    _validate_user(user_name, user_entry)
    server = cluster_entry.get("server")
    if not isinstance(server, str) or not server:
        raise ConfigError(f'cluster "{cluster_name}" has no server address')
    return _connection(server.rstrip("/"), context, namespace, cluster_entry, user_entry)


def _in_cluster_overrides(connection: Connection, overrides: Overrides) -> Connection:
    """In a pod kubectl takes only --token and --certificate-authority from the flags (and
    --server, which never gets here: with it the flags alone are the configuration)."""
    if overrides.token:
        connection.token = overrides.token
    if overrides.certificate_authority:
        connection.ca_data = _file_or_data(
            {"certificate-authority": overrides.certificate_authority},
            "certificate-authority",
            "certificate-authority-data",
        )
    return connection


def _validate_user(name: str, user: dict[str, Any]) -> None:
    """The checks of client-go's validateAuthInfo that concern the flags."""
    has_basic = bool(user.get("username") or user.get("password"))
    if user.get("token") and has_basic:
        raise ConfigError(
            f"more than one authentication method found for {name}; "
            "found [token basicAuth], only one is allowed"
        )
    wants_more = user.get("as-uid") or user.get("as-groups") or user.get("as-user-extra")
    if wants_more and not user.get("as"):
        raise ConfigError(
            f"requesting uid, groups or user-extra for {name} without impersonating a user"
        )


def _with_scheme(server: str) -> str:
    """A server without a scheme is http, whatever TLS settings the cluster has: client-go asks
    IsConfigTransportTLS of the bare host before it adds the CA or insecure-skip-tls-verify
    (kubectl 1.36.3 with `-s 127.0.0.1:PORT --insecure-skip-tls-verify` sends http://)."""
    return server if "://" in server else "http://" + server


def _impersonation(user: dict[str, Any]) -> Impersonation | None:
    name = user.get("as")
    if not isinstance(name, str) or not name:
        return None
    groups = user.get("as-groups") or []
    extra = user.get("as-user-extra") or {}
    if not isinstance(groups, list) or not isinstance(extra, dict):
        raise ConfigError("as-groups must be a list and as-user-extra a mapping of lists")
    return Impersonation(
        name,
        str(user.get("as-uid") or "") or None,
        tuple(str(g) for g in groups),
        tuple(
            (str(k), tuple(str(v) for v in (values if isinstance(values, list) else [values])))
            for k, values in extra.items()
        ),
    )


def _connection(
    server: str, context: str, namespace: str, cluster: dict[str, Any], user: dict[str, Any]
) -> Connection:
    ca_data = _file_or_data(cluster, "certificate-authority", "certificate-authority-data")
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    cert = _file_or_data(user, "client-certificate", "client-certificate-data")
    server = _with_scheme(server)
    if insecure and ca_data and server.startswith("https://"):
        # client-go's TLS set-up refuses it; --insecure-skip-tls-verify drops the CA instead
        raise ConfigError(
            "specifying a root certificates file with the insecure flag is not allowed"
        )
    connection = Connection(
        server=server,
        context=context,
        namespace=namespace,
        ca_data=ca_data,
        insecure=insecure,
        disable_compression=cluster.get("disable-compression") is True,
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=cluster.get("proxy-url") or None,
        impersonate=_impersonation(user),
    )
    if server.startswith("https://"):
        # As kubectl: credentials only travel over TLS, never to an http:// server.
        _credentials(connection, user, cert)
    return connection


def _credentials(connection: Connection, user: dict[str, Any], cert: bytes | None) -> None:
    token = user.get("token") if isinstance(user.get("token"), str) else None
    auth_provider = user.get("auth-provider")
    if token is None and isinstance(auth_provider, dict):
        token = _auth_provider_token(auth_provider)
    connection.client_cert_data = cert
    connection.client_key_data = _file_or_data(user, "client-key", "client-key-data")
    connection.token = token
    connection.token_file = user.get("tokenFile") or None
    connection.username = user.get("username") or None
    connection.password = user.get("password") or None
    connection.exec_config = user.get("exec") if isinstance(user.get("exec"), dict) else None


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
    # what client-go gives a plugin with provideClusterInfo (ExecCredential spec.cluster)
    cluster = exec_config.pop("_cluster", None)
    try:
        from kubernetes.config.config_exception import ConfigException
        from kubernetes.config.exec_provider import ExecProvider
        from kubernetes.config.kube_config import ConfigNode
    except ImportError:  # pragma: no cover - kubernetes is a dependency
        raise ConfigError("exec credential plugins need the kubernetes package") from None
    command = exec_config.get("command", "?")
    if isinstance(command, str):
        # the user's kuberc may forbid it: asked before anything runs, whoever connects
        exec_config["command"] = credential_policy.check(command, connection.context)
    try:
        about = ConfigNode("cluster", cluster) if isinstance(cluster, dict) else None
        provider = ExecProvider(ConfigNode("exec", exec_config), cwd, about)
        status: dict[str, Any] = provider.run() if connection.interactive else _quietly(provider)
    except ConfigException as exc:
        raise ConfigError(f"exec credential plugin {command!r} failed: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"exec credential plugin {command!r} failed: {exc.strerror}") from None
    return status


def _quietly(provider: Any) -> dict[str, Any]:
    """ExecProvider.run with `spec.interactive: false` and no terminal on stdin, whatever
    stdout is: several plugins run at once (--all-contexts) must never prompt."""
    import json
    import subprocess

    from kubernetes.config.config_exception import ConfigException

    spec: dict[str, Any] = {"interactive": False}
    if provider.cluster is not None:  # set only with provideClusterInfo
        spec["cluster"] = provider.cluster.value
    info = {"apiVersion": provider.api_version, "kind": "ExecCredential", "spec": spec}
    env = dict(provider.env, KUBERNETES_EXEC_INFO=json.dumps(info))
    done = subprocess.run(
        provider.args,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=provider.cwd,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise ConfigException(f"exec: process returned {done.returncode}. {done.stderr.strip()}")
    try:
        data = json.loads(done.stdout)
    except ValueError as error:
        raise ConfigException(f"exec: failed to decode process output: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("status"), dict):
        raise ConfigException("exec: malformed response. missing key 'status'")
    if data.get("apiVersion") != provider.api_version:
        raise ConfigException(
            f"exec: plugin api version {data.get('apiVersion')} does not match "
            f"{provider.api_version}"
        )
    status: dict[str, Any] = data["status"]
    return status
