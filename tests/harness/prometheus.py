"""A real Prometheus for the exporter's tests, and the exporter run as a pod would run it.

Prometheus, promtool and libfaketime come from Debian's packages, fetched with `apt-get
download` and unpacked with `dpkg-deb -x` into the user's cache: nothing is installed
system-wide and no service starts. `parts()` says in one line why a machine cannot have them.

The exporter runs as a pod runs it (inpod.py: the in-cluster configuration, with a real token
of the ServiceAccount from deploy/). libfaketime moves its clock forward, so objects deleted a
moment ago are as overdue as after a real wait (the shipped alert needs 15 minutes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
import yaml

from tests.harness.controlplane import ControlPlane, _Proc, free_port
from tests.harness.inpod import in_pod_command

JSON = dict[str, Any]
PACKAGES = ("prometheus", "libfaketime")
CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "kubectl-terminating"
    / "prometheus"
)
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Parts:
    prometheus: Path
    promtool: Path
    faketime: Path  # libfaketimeMT.so.1 (the exporter is multithreaded)


def _found(root: Path) -> Parts | None:
    faketime = sorted(root.glob("usr/lib/*/faketime/libfaketimeMT.so.1"))
    binaries = root / "usr" / "bin"
    if not faketime or not (binaries / "prometheus").exists():
        return None
    return Parts(binaries / "prometheus", binaries / "promtool", faketime[0])


def _download(into: Path) -> str | None:
    """The packages' .debs in `into`, or why not (the last line apt-get said)."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    get = ["apt-get", "download", "-q", *PACKAGES]
    done = subprocess.run(get, cwd=into, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 and os.geteuid() == 0:  # a stale package list: refresh it once
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=False)
        done = subprocess.run(get, cwd=into, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"apt-get download {' '.join(PACKAGES)} failed: {lines[-1] if lines else '?'}"
    return None


def parts() -> Parts | str:
    """Prometheus, promtool and libfaketime, unpacked once into the cache; or why not."""
    root = CACHE / "root"
    found = _found(root)
    if found is not None:
        return found
    if sys.platform != "linux" or not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        return "Prometheus comes from Debian's packages: needs Linux with apt-get and dpkg-deb"
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as work:
        debs, unpacked = Path(work) / "debs", Path(work) / "root"
        debs.mkdir()
        why = _download(debs)
        if why is not None:
            return why
        for deb in sorted(debs.glob("*.deb")):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        shutil.rmtree(root, ignore_errors=True)
        unpacked.rename(root)  # whole or not at all: a half-unpacked cache is never used
    return _found(root) or f"the packages {PACKAGES} hold no prometheus or libfaketime"


def rules_file(rule_yaml: Path, out: Path, for_duration: str | None = None) -> Path:
    """The rules file inside a PrometheusRule (its spec); `for_duration` replaces each rule's
    `for` (a test cannot wait minutes), the expressions stay as shipped."""
    spec = yaml.safe_load(rule_yaml.read_text())["spec"]
    if for_duration is not None:
        for group in spec["groups"]:
            for rule in group["rules"]:
                rule["for"] = for_duration
    out.write_text(yaml.safe_dump(spec, sort_keys=False))
    return out


class Prometheus:
    """One Prometheus scraping `target` every second, evaluating `rules` every second."""

    def __init__(self, binary: Path, directory: Path, target: str, rules: Path) -> None:
        self.port = free_port()
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(rules)],
            "scrape_configs": [
                {"job_name": "kubectl-terminating", "static_configs": [{"targets": [target]}]}
            ],
        }
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.proc = _Proc(
            "prometheus",
            [
                str(binary),
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            directory / "prometheus.log",
        )
        self.http = urllib3.PoolManager(retries=False, timeout=10.0)

    def start(self) -> None:
        self.proc.start()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if not self.proc.running():
                raise self.proc.failure("exited")
            try:
                if self.http.request("GET", self._url("/-/ready")).status == 200:
                    return
            except urllib3.exceptions.HTTPError:
                pass
            time.sleep(0.2)
        raise self.proc.failure("not ready")

    def stop(self) -> None:
        self.proc.stop()

    def _url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _api(self, path: str, **fields: str) -> Any:
        answer = self.http.request("GET", self._url(path), fields=fields)
        body = yaml.safe_load(answer.data)  # JSON is YAML
        assert answer.status == 200 and body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> dict[frozenset[tuple[str, str]], float]:
        """An instant query: each series' labels (without its name, job and instance) and value."""
        data = self._api("/api/v1/query", query=expr)
        return {
            frozenset(
                (k, v) for k, v in r["metric"].items() if k not in ("__name__", "job", "instance")
            ): float(r["value"][1])
            for r in data["result"]
        }

    def alerts(self) -> list[JSON]:
        alerts: list[JSON] = self._api("/api/v1/alerts")["alerts"]
        return alerts


def service_account_token(cp: ControlPlane, namespace: str, name: str) -> str:
    """A token of the ServiceAccount, from the TokenRequest API (what the kubelet mounts)."""
    answer = cp.api(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    token: str = answer["status"]["token"]
    return token


def in_cluster_exporter(
    cp: ControlPlane,
    directory: Path,
    token: str,
    namespace: str,
    args: Sequence[str],
    faketime: Path,
    clock_offset: str,
    proxy: str | None = None,
) -> _Proc:
    """`kubectl-terminating ARGS` as a pod runs it (see the module's docstring), its clock
    moved by clock_offset (libfaketime's `+20m`); not started. proxy: an HTTPS proxy (a
    RecordingProxy that moves the API server's Date by as much: ages are counted on the
    server's clock) reached as https://kubernetes.default.svc, as in a pod."""
    host = "kubernetes.default.svc"  # not loopback: the proxy is used
    environ = {
        "LD_PRELOAD": str(faketime),
        "FAKETIME": clock_offset,
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        **({"HTTPS_PROXY": proxy, "KUBERNETES_SERVICE_HOST": host} if proxy else {}),
    }
    command = in_pod_command(cp, directory, token, namespace, args, environ)
    return _Proc("exporter", command, directory / "exporter.log")
