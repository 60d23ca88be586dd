"""A real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager) for tests.

No kubelet and no scheduler: tests play those parts through the API (see kubelet.py).
Everything listens on 127.0.0.1 with random ports and lives in one state directory.

    python -m tests.harness.controlplane up --state-dir DIR    # detached; prints the kubeconfig
    python -m tests.harness.controlplane down --state-dir DIR  # stops exactly what `up` started
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "hack" / "build-control-plane.sh"
GO_TOOL_SCRIPT = REPO_ROOT / "hack" / "build-go-tool.sh"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kubectl")
# Another Kubernetes than the pinned one (make test-matrix): the script's K8S_VERSION. The
# control plane is built without the kubelet then (the real node runs on the pinned one only).
K8S_VERSION_ENV = "K8S_VERSION"

# nodelifecycle and podgc stay off: they would taint, evict or collect pods on fake nodes.
DEFAULT_CONTROLLERS = (
    "namespace",
    "garbagecollector",
    "serviceaccount",
    "serviceaccount-token",
    "root-ca-cert-publisher",
    "endpoint",
    "endpointslice",
)
PLAIN_USERS = ("alice", "bob", "carol", "dave")
KCM_USER = "system:kube-controller-manager"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 15.0
STATE_FILE = "controlplane.json"
PR_SET_PDEATHSIG = 1  # linux/prctl.h

JSON = dict[str, Any]


class ControlPlaneError(RuntimeError):
    """The control plane could not be built, started or reached."""


class ApiError(RuntimeError):
    """The API server answered with a non-2xx status."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        self.method, self.path, self.status, self.body = method, path, status, body
        super().__init__(f"{method} {path} -> HTTP {status}: {body[:2000]}")

    def json(self) -> JSON:
        """The error body (usually a metav1.Status), or {} if it is not JSON."""
        with contextlib.suppress(ValueError):
            data = json.loads(self.body)
            if isinstance(data, dict):
                return data
        return {}


class KubectlError(subprocess.CalledProcessError):
    """CalledProcessError that shows kubectl's stderr (the stock one hides it)."""

    def __str__(self) -> str:
        return f"{super().__str__()}\nstdout: {self.stdout}\nstderr: {self.stderr}"


# --- binaries ----------------------------------------------------------------------------


def _run_build(script: Path, *args: str, env: dict[str, str] | None = None) -> Path:
    """Run a build script (a no-op once cached) and return the path it prints last."""
    with open(os.devnull, "rb") as devnull:
        proc = subprocess.run(
            ["bash", str(script), *args],
            stdin=devnull,
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
    if proc.returncode != 0:
        raise ControlPlaneError(
            f"{script} failed with exit code {proc.returncode}:\n{_tail(proc.stderr, 60)}"
        )
    lines = proc.stdout.strip().splitlines()
    return Path(lines[-1]) if lines else Path()


def build_binaries(script: Path = BUILD_SCRIPT) -> Path:
    """Run the build script (a no-op once cached) and return the directory it prints."""
    env = dict(os.environ)
    if env.get(K8S_VERSION_ENV):
        env.setdefault("BINARIES", " ".join(BINARIES))
    bin_dir = _run_build(script, env=env)
    missing = [b for b in BINARIES if not (bin_dir / b).is_file()]
    if missing:
        raise ControlPlaneError(f"{script} printed {bin_dir!s}, which lacks {missing}")
    return bin_dir


def go_tool(name: str) -> Path:
    """helm or k9s, built once from the Go module proxy and cached (hack/build-go-tool.sh)."""
    binary = _run_build(GO_TOOL_SCRIPT, name)
    if not binary.is_file():
        raise ControlPlaneError(f"{GO_TOOL_SCRIPT} printed {binary!s}, which is not a file")
    return binary


# --- small utilities ---------------------------------------------------------------------


def kubeconfig_document(
    cluster: JSON,
    user: JSON,
    context_name: str,
    namespace: str | None = None,
    cluster_name: str = "c",
    user_name: str = "u",
) -> JSON:
    """A kubeconfig with one cluster, one user and one context, the current one."""
    context: JSON = {"cluster": cluster_name, "user": user_name}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
        "contexts": [{"name": context_name, "context": context}],
        "current-context": context_name,
        "preferences": {},
    }


def free_port() -> int:
    """A port that was free a moment ago (the kernel picks it; races are unlikely)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _file_tail(path: Path, lines: int = 40) -> str:
    try:
        return _tail(path.read_text(errors="replace"), lines)
    except OSError as e:
        return f"(cannot read {path}: {e})"


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ControlPlaneError(f"openssl {' '.join(args)} failed:\n{proc.stderr}")


def _pid_alive(pid: int) -> bool:
    """True if pid runs and is not a zombie (after `up` exits, nobody may reap our children)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _pid_cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _kill_group(pid: int, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the process group led by pid, then SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                return
            time.sleep(0.05)


# --- certificates ------------------------------------------------------------------------


def _make_ca(d: Path, name: str, cn: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "3650", "-subj", f"/CN={cn}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        cwd=d,
    )  # fmt: skip


def _make_leaf(d: Path, ca: str, name: str, cn: str, ext: str) -> None:
    """A key and a certificate signed by the CA `ca`; `ext` holds x509v3 extension lines."""
    (d / f"{name}.ext").write_text(ext)
    _openssl(
        "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}",
        cwd=d,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-days", "3650", "-extfile", f"{name}.ext", "-out", f"{name}.crt",
        cwd=d,
    )  # fmt: skip


def make_pki(d: Path) -> None:
    """Cluster CA, serving cert, front-proxy CA and client, service-account key pair."""
    d.mkdir(parents=True, exist_ok=True)
    _make_ca(d, "ca", "kubectl-terminating-test-ca")
    _make_leaf(
        d, "ca", "apiserver", "kube-apiserver",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc\n",
    )  # fmt: skip
    _make_ca(d, "front-proxy-ca", "front-proxy-ca")
    _make_leaf(
        d, "front-proxy-ca", "front-proxy-client", "front-proxy-client",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=clientAuth\n",
    )  # fmt: skip
    _openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "sa.key",
        cwd=d,
    )  # fmt: skip
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)


# --- processes ---------------------------------------------------------------------------


def _pdeathsig_hook() -> Callable[[], None] | None:
    """A preexec_fn that SIGKILLs the child when its parent dies (e.g. pytest killed with -9),
    so a crashed test run leaves no control plane behind. Not SIGTERM: the apiserver's
    graceful shutdown hangs once etcd is gone. prctl is looked up here, in the parent, so
    the child only makes one system call between fork and exec."""
    if sys.platform != "linux":
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    return hook


@dataclass
class _Proc:
    name: str
    args: list[str]
    log_path: Path
    die_with_parent: bool = True
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log, open(os.devnull, "rb") as devnull:
            # Own session = own process group: stop() signals exactly this tree, and a
            # detached `up` survives the terminal that ran it.
            self.popen = subprocess.Popen(
                self.args,
                stdin=devnull,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                # Only a prctl call, prepared in the parent: safe despite PLW1509's warning.
                preexec_fn=_pdeathsig_hook() if self.die_with_parent else None,  # noqa: PLW1509
            )

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self) -> None:
        if self.popen is None:
            return
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(STOP_TIMEOUT)
        self.popen = None

    def failure(self, what: str) -> ControlPlaneError:
        return ControlPlaneError(
            f"{self.name}: {what}\n--- last lines of {self.log_path} ---\n"
            f"{_file_tail(self.log_path)}"
        )


# --- the control plane -------------------------------------------------------------------


def whole_lines_after(data: bytes, starts_one_byte_early: bool) -> list[bytes]:
    """The complete lines of an append-only log read from a mark taken while it was written.

    The API server writes a long audit line in more than one write, so a mark taken by file
    size can fall inside a line (that line belongs before the mark) and the last line read can
    still be unfinished (the next read sees it whole).
    """
    if starts_one_byte_early:
        before, data = data[:1], data[1:]
        if before not in (b"", b"\n"):
            data = data.partition(b"\n")[2]
    complete = data.rpartition(b"\n")[0]
    return complete.splitlines()


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager on 127.0.0.1, state in `state_dir`."""

    def __init__(
        self,
        state_dir: Path | str,
        binaries_dir: Path | str | None = None,
        controllers: Sequence[str] = DEFAULT_CONTROLLERS,
        namespace_sync_period: str = "30s",
        extra_apiserver_args: Sequence[str] = (),
        extra_controller_manager_args: Sequence[str] = (),
        die_with_parent: bool = True,
    ) -> None:
        self.state_dir = Path(state_dir).resolve()
        self.binaries_dir = Path(binaries_dir) if binaries_dir else build_binaries()
        self.controllers = list(controllers)
        self.namespace_sync_period = namespace_sync_period
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.extra_controller_manager_args = list(extra_controller_manager_args)
        # False for `up`: the processes must outlive the command that started them.
        self.die_with_parent = die_with_parent
        self.pki_dir = self.state_dir / "pki"
        self.ca_file = self.pki_dir / "ca.crt"
        self.kubeconfig_path = self.state_dir / "kubeconfig"
        self.audit_log_path = self.state_dir / "audit.log"
        self.etcd_port = self.etcd_peer_port = self.port = self.kcm_port = 0
        self.tokens: dict[str, str] = {}
        self._procs: dict[str, _Proc] = {}
        self._http: urllib3.PoolManager | None = None
        self._version: tuple[int, int] | None = None

    # -- public attributes --

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def admin_token(self) -> str:
        return self.tokens["admin"]

    @property
    def ca_data_b64(self) -> str:
        return base64.b64encode(self.ca_file.read_bytes()).decode()

    @property
    def version(self) -> tuple[int, int]:
        """The server's (major, minor), from /version's gitVersion (the build script sets only
        that): what a test that differs by version compares (`cp.version >= (1, 33)`)."""
        if self._version is None:
            major, minor = str(self.api("GET", "/version")["gitVersion"]).lstrip("v").split(".")[:2]
            self._version = (int(major), int(minor))
        return self._version

    @property
    def pids(self) -> dict[str, int]:
        return {n: p.pid for n, p in self._procs.items() if p.pid is not None and p.running()}

    # -- lifecycle --

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Generate state, start all three processes and wait until the cluster is usable."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.state_dir / "etcd", ignore_errors=True)  # always a fresh cluster
        if not self.ca_file.exists():
            make_pki(self.pki_dir)
        self._write_auth_files()
        self.etcd_port, self.etcd_peer_port = free_port(), free_port()
        self.port, self.kcm_port = free_port(), free_port()
        self.write_kubeconfig(self.kubeconfig_path, self.admin_token, user_name="admin")
        self.write_kubeconfig(
            self.state_dir / "kcm.kubeconfig", self.tokens[KCM_USER], user_name="kcm"
        )
        deadline = time.monotonic() + timeout
        try:
            self._start_proc("etcd", self._etcd_args())
            self._wait_etcd(deadline)
            self._start_proc("kube-apiserver", self._apiserver_args())
            self._wait_apiserver(deadline)
            self._start_proc("kube-controller-manager", self._kcm_args())
            self._wait_controllers(deadline)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop what this object started (newest first). Safe to call twice."""
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
            proc = self._procs.get(name)
            if proc:
                proc.stop()
        if self._http is not None:
            self._http.clear()
            self._http = None

    def stop_apiserver(self) -> None:
        self._procs["kube-apiserver"].stop()
        if self._http is not None:
            self._http.clear()  # drop keep-alive connections to the dead server

    def start_apiserver(self, timeout: float = START_TIMEOUT) -> None:
        """Start the apiserver again on the same port (after stop_apiserver), then a fresh
        kube-controller-manager: its informers would otherwise sit in their reconnect backoff
        (up to 30 s), and the next test would wait on the controllers (seen in CI: a new
        namespace's default ServiceAccount took over 30 s after the watch test's restart)."""
        self._procs["kube-apiserver"].start()
        self._wait_apiserver(time.monotonic() + timeout)
        if "kube-controller-manager" in self._procs:
            self.start_controller_manager(timeout=timeout)

    def restart_apiserver(self, timeout: float = START_TIMEOUT) -> None:
        self.stop_apiserver()
        self.start_apiserver(timeout)

    def stop_controller_manager(self) -> None:
        self._procs["kube-controller-manager"].stop()

    def start_controller_manager(
        self, controllers: Sequence[str] | None = None, timeout: float = START_TIMEOUT
    ) -> None:
        """(Re)start kube-controller-manager, optionally with another controller list."""
        if controllers is not None:
            self.controllers = list(controllers)
        self.stop_controller_manager()
        self._start_proc("kube-controller-manager", self._kcm_args())
        self._wait_kcm_healthy(time.monotonic() + timeout)

    def detach(self) -> None:
        """Forget the processes without stopping them (they keep serving); close connections."""
        for proc in self._procs.values():
            if proc.popen is not None:
                proc.popen.returncode = 0  # never waited for: no "still running" warning
            proc.popen = None
        self._procs.clear()
        if self._http is not None:
            self._http.clear()
            self._http = None

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- clients --

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        kubeconfig: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120.0,
    ) -> subprocess.CompletedProcess[str]:
        """Run the built kubectl against this cluster (admin unless `kubeconfig` is given)."""
        cmd = [
            str(self.binaries_dir / "kubectl"),
            f"--kubeconfig={kubeconfig or self.kubeconfig_path}",
            f"--cache-dir={self.state_dir / 'kubectl-cache'}",
            *args,
        ]
        full_env = {**os.environ, **(env or {})}
        full_env.pop("KUBECONFIG", None)
        proc = subprocess.run(
            cmd,
            input=input,
            capture_output=True,
            text=True,
            env=full_env,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise KubectlError(proc.returncode, cmd, proc.stdout, proc.stderr)
        return proc

    def api(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        token: str | None = None,
        timeout: float = 30.0,
    ) -> JSON:
        """One JSON request as admin (or `token`); raises ApiError on a non-2xx answer."""
        headers = {
            "Authorization": f"Bearer {token or self.admin_token}",
            "Accept": "application/json",
        }
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        resp = self._pool().request(
            method,
            self.server + path,
            body=data,
            headers=headers,
            timeout=timeout,
            retries=_RETRIES,
        )
        text = resp.data.decode(errors="replace")
        if not 200 <= resp.status < 300:
            raise ApiError(method, path, resp.status, text)
        parsed = json.loads(text) if text.strip() else {}
        return parsed if isinstance(parsed, dict) else {"items": parsed}

    def api_raw(self, method: str, path: str, token: str | None = None) -> tuple[int, str]:
        """Status and body without raising (for /readyz, /version, probes of errors)."""
        resp = self.response(method, path, token)
        return resp.status, resp.data.decode(errors="replace")

    def response(
        self, method: str, path: str, token: str | None = None
    ) -> urllib3.BaseHTTPResponse:
        """The whole answer, headers too, without raising (e.g. through a service proxy)."""
        headers = {"Authorization": f"Bearer {token or self.admin_token}"}
        return self._pool().request(
            method, self.server + path, headers=headers, timeout=10.0, retries=False
        )

    def write_kubeconfig(
        self,
        path: Path | str,
        user_token: str,
        namespace: str | None = None,
        context_name: str = "test",
        user_name: str | None = None,
    ) -> Path:
        """A kubeconfig for this cluster with the CA embedded (e.g. for a restricted user)."""
        known = next((u for u, t in self.tokens.items() if t == user_token), None)
        user = user_name or known or "user"
        config = kubeconfig_document(
            {"server": self.server, "certificate-authority-data": self.ca_data_b64},
            {"token": user_token},
            context_name,
            namespace=namespace,
            cluster_name="test",
            user_name=user,
        )
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(yaml.safe_dump(config, sort_keys=False))
        out.chmod(0o600)
        return out

    # -- audit log --

    def audit_offset(self) -> int:
        """Mark the end of the audit log now; pass it to audit_events to see only what follows."""
        try:
            return self.audit_log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def audit_events(self, offset: int = 0, user: str | None = None) -> list[JSON]:
        """Audit events (one JSON object per line) written after `offset`, optionally by `user`."""
        with open(self.audit_log_path, "rb") as f:
            # one byte before the mark: it tells whether the mark fell between two lines
            f.seek(max(offset - 1, 0))
            data = f.read()
        events = [json.loads(line) for line in whole_lines_after(data, offset > 0) if line.strip()]
        if user is not None:
            events = [e for e in events if e.get("user", {}).get("username") == user]
        return events

    # -- internals --

    def _pool(self) -> urllib3.PoolManager:
        if self._http is None:
            self._http = urllib3.PoolManager(
                cert_reqs="CERT_REQUIRED", ca_certs=str(self.ca_file), maxsize=8
            )
        return self._http

    def _read_tokens(self) -> None:
        for line in (self.state_dir / "tokens.csv").read_text().splitlines():
            token, user = line.split(",")[:2]
            self.tokens[user] = token

    def _write_auth_files(self) -> None:
        token_file = self.state_dir / "tokens.csv"
        if token_file.exists():  # keep tokens stable across restarts of the same state dir
            self._read_tokens()
        else:
            users = ["admin", *PLAIN_USERS, KCM_USER]
            self.tokens = {u: secrets.token_hex(16) for u in users}
            rows = []
            for user, token in self.tokens.items():
                groups = "system:masters" if user in ("admin", KCM_USER) else ""
                rows.append(f'{token},{user},uid-{user.replace(":", "-")},"{groups}"')
            token_file.write_text("\n".join(rows) + "\n")
            token_file.chmod(0o600)
        (self.state_dir / "audit-policy.yaml").write_text(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
            "omitStages: [RequestReceived]\nrules:\n- level: Metadata\n"
        )

    def _start_proc(self, name: str, args: list[str]) -> None:
        proc = _Proc(name, args, self.state_dir / f"{name}.log", self.die_with_parent)
        self._procs[name] = proc
        proc.start()

    def _etcd_args(self) -> list[str]:
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        return [
            str(self.binaries_dir / "etcd"),
            "--name=test",
            f"--data-dir={self.state_dir / 'etcd'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=test={peer}",
            "--unsafe-no-fsync=true",  # test data: speed over durability
            "--log-level=warn",
        ]

    def _apiserver_args(self) -> list[str]:
        pki, state = self.pki_dir, self.state_dir
        return [
            str(self.binaries_dir / "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}",
            f"--cert-dir={state / 'apiserver-certs'}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--token-auth-file={state / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--endpoint-reconciler-type=none",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-username-headers=X-Remote-User",
            f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
            f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
            "--enable-aggregator-routing=true",
            f"--audit-policy-file={state / 'audit-policy.yaml'}",
            f"--audit-log-path={self.audit_log_path}",
            "--audit-log-maxsize=0",  # no rotation: tests read one file
            # Without it, stop waits ~60 s for the controller-manager's watches to drain.
            "--shutdown-watch-termination-grace-period=1s",
            *self.extra_apiserver_args,
        ]

    def _kcm_args(self) -> list[str]:
        pki, kcfg = self.pki_dir, self.state_dir / "kcm.kubeconfig"
        return [
            str(self.binaries_dir / "kube-controller-manager"),
            f"--kubeconfig={kcfg}",
            f"--authentication-kubeconfig={kcfg}",
            f"--authorization-kubeconfig={kcfg}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.kcm_port}",
            # Our CA-signed serving cert (SAN 127.0.0.1), so /healthz is checked with the CA.
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            "--leader-elect=false",
            "--use-service-account-credentials=false",
            f"--controllers={','.join(self.controllers)}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            # Resync terminating namespaces often, so a test that removes a blocker sees the
            # namespace go soon (the controller's own backoff grows to 60 s).
            f"--namespace-sync-period={self.namespace_sync_period}",
            "--concurrent-namespace-syncs=10",
            "--kube-api-qps=200",
            "--kube-api-burst=400",
            *self.extra_controller_manager_args,
        ]

    def _wait(self, proc_name: str, deadline: float, what: str, ready: Callable[[], bool]) -> None:
        """Poll `ready` until true; fail fast with the log tail if the process dies."""
        proc = self._procs[proc_name]
        last_error = ""
        while True:
            if not proc.running():
                raise proc.failure(f"exited while waiting for {what}")
            try:
                if ready():
                    return
            except Exception as e:  # not up yet: connection refused, 403, ...
                last_error = f"{type(e).__name__}: {e}"
            if time.monotonic() > deadline:
                raise proc.failure(f"timed out waiting for {what} (last error: {last_error})")
            time.sleep(0.1)

    def _wait_etcd(self, deadline: float) -> None:
        def healthy() -> bool:
            resp = self._pool().request(
                "GET", f"http://127.0.0.1:{self.etcd_port}/health", timeout=2.0, retries=False
            )
            return resp.status == 200 and b'"true"' in resp.data

        self._wait("etcd", deadline, "etcd /health", healthy)

    def _wait_apiserver(self, deadline: float) -> None:
        def ready() -> bool:
            status, _ = self.api_raw("GET", "/readyz")
            return status == 200

        self._wait("kube-apiserver", deadline, "kube-apiserver /readyz", ready)

    def _wait_kcm_healthy(self, deadline: float) -> None:
        def healthy() -> bool:
            resp = self._pool().request(
                "GET",
                f"https://127.0.0.1:{self.kcm_port}/healthz",
                timeout=2.0,
                retries=False,
            )
            return resp.status == 200

        self._wait("kube-controller-manager", deadline, "kube-controller-manager /healthz", healthy)

    def _wait_controllers(self, deadline: float) -> None:
        self._wait_kcm_healthy(deadline)

        def default_sa() -> bool:
            status, _ = self.api_raw("GET", "/api/v1/namespaces/default/serviceaccounts/default")
            return status == 200

        if "serviceaccount" in self.controllers:
            self._wait(
                "kube-controller-manager",
                deadline,
                "the serviceaccount controller to create default/default",
                default_sa,
            )


# Connection retries only: the request was never sent, so retrying is safe for any verb.
_RETRIES = urllib3.Retry(
    total=None, connect=3, read=0, redirect=0, status=0, other=0, backoff_factor=0.2
)


# --- detached mode (make demo) -------------------------------------------------------------


def up(state_dir: Path, binaries_dir: Path | None = None) -> Path:
    """Start a detached control plane in state_dir (or reuse a live one); return its kubeconfig."""
    state_dir = state_dir.resolve()
    live = _live_state(state_dir)
    if live is not None:
        return Path(live["kubeconfig"])
    down(state_dir)  # leftovers of a dead or half-dead one
    cp = ControlPlane(state_dir, binaries_dir, die_with_parent=False)
    start = time.monotonic()
    cp.start()
    state = {
        "pids": cp.pids,
        "server": cp.server,
        "kubeconfig": str(cp.kubeconfig_path),
        "binaries_dir": str(cp.binaries_dir),
    }
    (state_dir / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")
    print(f"control plane up in {time.monotonic() - start:.1f}s at {cp.server}", file=sys.stderr)
    cp.detach()
    return cp.kubeconfig_path


def _owned_pids(state_dir: Path) -> dict[str, int]:
    """Pids from the state file that still run one of our binaries on this state dir."""
    try:
        state = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    owned = {}
    for name, pid in state.get("pids", {}).items():
        cmdline = _pid_cmdline(int(pid))
        # Guard against pid reuse: the process must be ours and point at this state dir.
        if (
            _pid_alive(int(pid))
            and cmdline
            and cmdline[0].endswith(name)
            and any(f"{state_dir}/" in a for a in cmdline)
        ):
            owned[name] = int(pid)
    return owned


def attach(state_dir: Path) -> ControlPlane:
    """A client-side handle on the control plane `up` started in state_dir.

    api() and kubectl() work; stop() does nothing (use `down`); call detach() when done.
    """
    state_dir = state_dir.resolve()
    if set(_owned_pids(state_dir)) != {"etcd", "kube-apiserver", "kube-controller-manager"}:
        raise ControlPlaneError(f"no running control plane in {state_dir} (run `up` first)")
    state: JSON = json.loads((state_dir / STATE_FILE).read_text())
    cp = ControlPlane(state_dir, state["binaries_dir"])
    cp.port = int(state["server"].rsplit(":", 1)[1])
    cp._read_tokens()
    return cp


def _live_state(state_dir: Path) -> JSON | None:
    """The state file's contents if all its processes run and the apiserver is ready."""
    try:
        cp = attach(state_dir)
    except ControlPlaneError:
        return None
    try:
        status, _ = cp.api_raw("GET", "/readyz")
    except Exception:  # refused, TLS error, timeout: not live
        return None
    finally:
        cp.detach()
    if status != 200:
        return None
    state: JSON = json.loads((state_dir / STATE_FILE).read_text())
    return state


def down(state_dir: Path) -> list[int]:
    """Stop exactly the processes `up` recorded for state_dir; return the pids stopped."""
    state_dir = state_dir.resolve()
    owned = _owned_pids(state_dir)
    stopped = []
    for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
        if name in owned:
            _kill_group(owned[name])
            stopped.append(owned[name])
    with contextlib.suppress(FileNotFoundError):
        (state_dir / STATE_FILE).unlink()
    return stopped


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.controlplane")
    parser.add_argument("command", choices=["up", "down"])
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--binaries-dir", type=Path, help="skip the build script")
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            print(up(args.state_dir, args.binaries_dir))
        else:
            stopped = down(args.state_dir)
            print(f"stopped {len(stopped)} processes", file=sys.stderr)
    except ControlPlaneError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
