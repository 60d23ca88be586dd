"""`make bench`: kubectl terminating against kubectl, side by side, on a real loaded control plane.

    .venv/bin/python hack/bench.py         # defaults: sizes 2000,5000,20000; M=20; K=100
    BENCH_SIZES=500,1000 M=3 K=10 REPEAT=2 .venv/bin/python hack/bench.py   # a quick look
    N=50000 .venv/bin/python hack/bench.py              # sizes 2000,5000,20000,50000

A fresh control plane (etcd, kube-apiserver, kube-controller-manager) in .bench/ is filled
through the API with concurrent creates: N pods in N/100 namespaces on N/50 nodes (with
Leases), each pod with realistic labels, annotations, an owning ReplicaSet, two containers
(env, ports, probes, resources) and a kubelet-style status write, so the server keeps two
managedFields entries per pod; a few dozen pods stuck for different reasons
(tests/e2e/scenarios.py), M terminating namespaces held by a custom resource's finalizer and
a pod, and K extra CRD types with objects. The fill grows through the sizes; at each size
`pods -A` is timed next to the kubectl pipelines, and at the largest size every comparison
runs. Commands run as a plain user (bound to cluster-admin, not in system:masters), so API
Priority and Fairness applies to both tools as it would to a person.

Every command is started with subprocess.Popen and reaped with os.wait4: wall time from
spawn to exit, and ru_maxrss. For a shell pipeline ru_maxrss is the largest resident set of
any single process in it (the shell or one of its children), not their sum. Rounds
interleave the commands of a group (ours, theirs, ours, ...) so background load hits both.
Each command gets one untimed warm-up run (it also checks the answer), except the slow
recipes, whose time budget caps their runs (see BENCH_BUDGET).

Variables (environment or `make bench VAR=...`):
  BENCH_SIZES  pod counts to measure at, ascending (default 2000,5000,20000)
  N            largest size; default sizes below it are kept (N=50000: 2000,5000,20000,50000)
  M            terminating namespaces (default 20)
  K            extra CRD types (default 100)
  REPEAT       timed runs per command (default 5; the median is reported)
  BENCH_BIN    our executable (default .venv/bin/kubectl-terminating; e.g. the frozen dist/ one)
  BENCH_DIR    state directory (default .bench)
  BENCH_THREADS  concurrent creates while filling (default 16)
  BENCH_BUDGET   seconds a slow command may take in total before it stops repeating (default 90)
  BENCH_JSON_MAX largest size at which `kubectl get pods -A -o json | jq` runs (default 20000:
                 kubectl holds the whole list, about 0.25 GB of RSS per 1,000 pods)
  BENCH_SCENARIO=outage  the mass outage instead (make bench-outage): OUTAGE_SIZES stuck pods
                 on 1 dead node per 100 of them, among their healthy pods; `pods -A` and
                 `pods -A --summary` next to `kubectl get pods -A | grep Terminating`
  OUTAGE_SIZES   healthy:stuck pairs, growing (default 20000:2000,50000:20000)
  BENCH_KEEP=1   leave the control plane running at the end (stop it with
                 `.venv/bin/python -m tests.e2e.controlplane down --state-dir .bench/cluster`)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import os
import platform
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import urllib3

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e import scenarios  # noqa: E402
from tests.e2e.controlplane import STATE_FILE, ControlPlane, down  # noqa: E402

JSON = dict[str, Any]
DEFAULT_SIZES = (2000, 5000, 20000)
PODS_PER_NAMESPACE = 100
PODS_PER_NODE = 50
APPS_PER_NAMESPACE = 5
CRD_OBJECTS_PER_TYPE = 3
GROUP_SIZE = 5  # CRD kinds per API group
STUCK_COPIES = 3  # each stuck-pod scenario this many times, each in its own namespace
STUCK_SCENARIOS = (  # (function in tests/e2e/scenarios.py, short name)
    ("pod_on_missing_node", "missing"),
    ("pod_on_dead_node", "dead"),
    ("pod_on_silent_node", "silent"),
    ("pod_with_running_containers", "hung"),
    ("pod_on_full_disk", "disk"),
    ("pod_with_exec_hang", "exec"),
    ("pod_with_unreclaimed_volume", "vol"),
    ("pod_with_unregistered_driver", "csi"),
    ("pod_with_failing_detach", "detach"),
    ("pod_with_finalizer", "fin"),
    ("pod_with_job_tracking_finalizer", "job"),
    ("pod_with_foreground_dependents", "fg"),
    ("pod_blocked_by_webhook", "wh"),
    ("pod_in_grace_period", "grace"),
)
TARGET_PODS = {5000: 0.5, 20000: 0.25}  # the issue's targets: ratio to `get pods -A | grep`
# The mass outage: (healthy, stuck) -> targets of `pods -A` and of `pods -A --summary`.
OUTAGE_SIZES = ((20000, 2000), (50000, 20000))
TARGET_OUTAGE = {(20000, 2000): (0.3, 0.2), (50000, 20000): (0.2, 0.2)}
STUCK_PER_DEAD_NODE = 100
TARGET_NS_EXPLAIN = 0.05
NS_TARGET_TYPES = 120  # ns X --explain's target holds "with ~130 resource types"
TARGET_RSS_GROWTH = 1.5  # peak RSS of pods -A at RSS_SIZES[1] / at RSS_SIZES[0]
RSS_SIZES = (2000, 20000)


# --- settings ------------------------------------------------------------------------------


@dataclass
class Settings:
    sizes: tuple[int, ...]
    namespaces: int  # M
    crds: int  # K
    repeat: int
    binary: Path
    state: Path
    threads: int
    budget: float
    json_max: int
    keep: bool
    outage: tuple[tuple[int, int], ...] | None  # BENCH_SCENARIO=outage: (healthy, stuck)

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        if env.get("BENCH_SIZES"):
            sizes = tuple(sorted({int(s) for s in env["BENCH_SIZES"].split(",") if s.strip()}))
        elif env.get("N"):
            top = int(env["N"])
            sizes = (*[s for s in DEFAULT_SIZES if s < top], top)
        else:
            sizes = DEFAULT_SIZES
        binary = Path(env.get("BENCH_BIN") or REPO / ".venv" / "bin" / "kubectl-terminating")
        return cls(
            sizes=sizes,
            namespaces=int(env.get("M") or 20),
            crds=int(env.get("K") or 100),
            repeat=max(1, int(env.get("REPEAT") or 5)),
            binary=binary.resolve(),
            state=Path(env.get("BENCH_DIR") or REPO / ".bench").resolve(),
            threads=int(env.get("BENCH_THREADS") or 16),
            budget=float(env.get("BENCH_BUDGET") or 90),
            json_max=int(env.get("BENCH_JSON_MAX") or 20000),
            keep=env.get("BENCH_KEEP", "") not in ("", "0"),
            outage=cls.outage_sizes(env) if env.get("BENCH_SCENARIO") == "outage" else None,
        )

    @staticmethod
    def outage_sizes(env: os._Environ[str]) -> tuple[tuple[int, int], ...]:
        if not env.get("OUTAGE_SIZES"):
            return OUTAGE_SIZES
        pairs = [p.split(":") for p in env["OUTAGE_SIZES"].split(",") if p.strip()]
        return tuple(sorted((int(healthy), int(stuck)) for healthy, stuck in pairs))


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- filling the cluster -------------------------------------------------------------------


def ts(seconds_ago: float = 0) -> str:
    when = datetime.now(timezone.utc) - timedelta(seconds=seconds_ago)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def digest(*parts: object, length: int = 10) -> str:
    text = "/".join(str(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


APPS = ("api", "web", "worker", "cache", "gateway", "auth", "search", "billing", "notify", "cron")
TEAMS = ("payments", "platform", "growth", "data", "identity")


class Filler:
    """Concurrent creates straight to the API as admin: one PoolManager, a thread pool."""

    def __init__(self, cp: ControlPlane, threads: int) -> None:
        self.cp = cp
        self.threads = threads
        self.http = urllib3.PoolManager(
            maxsize=threads, block=True, cert_reqs="CERT_REQUIRED", ca_certs=str(cp.ca_file)
        )
        self.headers = {
            "Authorization": f"Bearer {cp.admin_token}",
            "Accept": "application/json",
        }
        self.requests = 0
        self.retried: dict[int, int] = {}  # status -> retries
        self.objects = 0
        self.seconds = 0.0
        self.lock = threading.Lock()
        self.nodes = 0
        self.namespaces = 0
        self.pods = 0
        self.replicasets: dict[tuple[int, int], str] = {}  # (namespace, app) -> uid
        self.dead_nodes = 0
        self.stuck: set[str] = set()  # "namespace/name" of the pods left on dead nodes

    def call(
        self,
        method: str,
        path: str,
        body: JSON | None = None,
        content_type: str = "application/json",
    ) -> JSON:
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        headers = dict(self.headers, **({"Content-Type": content_type} if data else {}))
        for attempt in range(8):
            try:
                response = self.http.request(
                    method, self.cp.server + path, body=data, headers=headers, timeout=60.0
                )
            except urllib3.exceptions.HTTPError:
                if attempt == 7:
                    raise
                with self.lock:
                    self.retried[0] = self.retried.get(0, 0) + 1
                time.sleep(0.2 * (attempt + 1))
                continue
            with self.lock:
                self.requests += 1
            if response.status == 409 and method == "POST" and attempt > 0 and body:
                # an earlier attempt was applied although its answer was lost: fetch it
                name = body["metadata"]["name"]
                return self.call("GET", f"{path.split('?')[0]}/{name}")
            if response.status in (429, 500, 503, 504) or (
                response.status == 403 and b"serviceaccount" in response.data
            ):
                with self.lock:
                    self.retried[response.status] = self.retried.get(response.status, 0) + 1
                time.sleep(min(0.1 * 2**attempt, 3.0))
                continue
            if response.status >= 300:
                raise RuntimeError(f"{method} {path}: {response.status} {response.data[:500]!r}")
            decoded = json.loads(response.data or b"{}")
            return decoded if isinstance(decoded, dict) else {}
        raise RuntimeError(f"{method} {path}: gave up after retries")

    def run(self, what: str, work: Sequence[Callable[[], int]]) -> None:
        """Run the callables concurrently; each returns how many objects it created."""
        started = time.monotonic()
        before = self.requests
        created = 0
        pool = concurrent.futures.ThreadPoolExecutor(self.threads)
        try:
            for future in concurrent.futures.as_completed([pool.submit(w) for w in work]):
                created += future.result()
        except BaseException:  # Ctrl-C or a failure: drop the queued work, do not wait for it
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        elapsed = time.monotonic() - started
        with self.lock:
            self.objects += created
            self.seconds += elapsed
        requests = self.requests - before
        if self.retried:
            log(f"retried (status: count, 0 = connection error): {self.retried}")
        if created:
            log(
                f"{what}: {created} objects, {requests} requests in {elapsed:.1f}s "
                f"({created / elapsed:.0f} objects/s, {requests / elapsed:.0f} requests/s)"
            )

    # -- nodes ------------------------------------------------------------------------------
    def add_nodes(self, total: int) -> None:
        work = [partial(self._node, i) for i in range(self.nodes, total)]
        self.run("nodes", work)
        self.nodes = max(self.nodes, total)

    def _node(self, index: int, dead: bool = False) -> int:
        """A node as its kubelet reports it; `dead`: the kubelet stopped posting 10m ago."""
        name = f"{'dead' if dead else 'node'}-{index:05d}"
        zone = f"zone-{'abc'[index % 3]}"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": "m6i.2xlarge",
            "topology.kubernetes.io/region": "bench-1",
            "topology.kubernetes.io/zone": zone,
            "node-role.kubernetes.io/worker": "",
        }
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            },
            "spec": {
                "podCIDR": f"10.{index // 256 % 256}.{index % 256}.0/24",
                "providerID": f"bench://{zone}/{name}",
            },
        }
        node = self.call("POST", "/api/v1/nodes?fieldManager=kubelet", body)
        capacity = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
        heartbeat = ts(600 if dead else 0)
        conditions = [
            {
                "type": t,
                "status": "False",
                "reason": r,
                "message": m,
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": ts(3600),
            }
            for t, r, m in (
                ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory"),
                ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID"),
            )
        ] + [
            {
                "type": "Ready",
                "status": "Unknown" if dead else "True",
                "reason": "NodeStatusUnknown" if dead else "KubeletReady",
                "message": "Kubelet stopped posting node status."
                if dead
                else "kubelet is posting ready status",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": ts(600 if dead else 3600),
            }
        ]
        images = [
            {
                "names": [
                    f"registry.example.com/{app}@sha256:{digest(app, length=64)}",
                    f"registry.example.com/{app}:1.{i}.0",
                ],
                "sizeBytes": 50_000_000 + i,
            }
            for i, app in enumerate(APPS)
        ]
        status = {
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": f"192.168.{index // 250}.{index % 250 + 1}"},
                {"type": "Hostname", "address": name},
            ],
            "capacity": capacity,
            "allocatable": capacity,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "kubeletVersion": "v1.36.3",
                "containerRuntimeVersion": "containerd://2.1.0",
                "kernelVersion": "6.1.0-bench",
                "osImage": "Bench Linux",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "machineID": digest(name, length=32),
                "systemUUID": digest("uuid", name, length=32),
                "bootID": digest("boot", name, length=32),
                "kubeProxyVersion": "",
            },
            "images": images,
        }
        self.call(
            "PATCH",
            f"/api/v1/nodes/{name}/status?fieldManager=kubelet",
            {"status": status},
            "application/strategic-merge-patch+json",
        )
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": name,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "name": name,
                        "uid": node["metadata"]["uid"],
                    }
                ],
            },
            "spec": {
                "holderIdentity": name,
                "leaseDurationSeconds": 40,
                "renewTime": (
                    datetime.now(timezone.utc) - timedelta(seconds=600 if dead else 0)
                ).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            },
        }
        self.call("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease)
        return 2

    # -- namespaces and their ReplicaSets ------------------------------------------------------
    def add_namespaces(self, total: int) -> None:
        first = self.namespaces
        work = [partial(self._namespace, i) for i in range(first, total)]
        self.run("namespaces", work)
        self.namespaces = max(self.namespaces, total)
        if total > first:
            self.wait_service_accounts([f"app-{i:04d}" for i in range(first, total)])
            work = [
                partial(self._replicaset, i, a)
                for i in range(first, total)
                for a in range(APPS_PER_NAMESPACE)
            ]
            self.run("replicasets", work)

    def _namespace(self, index: int) -> int:
        team = TEAMS[index % len(TEAMS)]
        body = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": f"app-{index:04d}",
                "labels": {
                    "team": team,
                    "environment": "production",
                    "pod-security.kubernetes.io/enforce": "baseline",
                },
            },
        }
        self.call("POST", "/api/v1/namespaces", body)
        return 1

    def wait_service_accounts(self, names: Iterable[str], timeout: float = 300.0) -> None:
        """Pod admission needs each namespace's `default` ServiceAccount."""
        wanted = set(names)
        deadline = time.monotonic() + timeout
        while wanted:
            listed = self.call(
                "GET", "/api/v1/serviceaccounts?fieldSelector=metadata.name%3Ddefault"
            )
            wanted -= {i["metadata"]["namespace"] for i in listed.get("items") or []}
            if wanted and time.monotonic() > deadline:
                raise RuntimeError(f"no default ServiceAccount in {sorted(wanted)[:5]}...")
            if wanted:
                time.sleep(0.5)

    def _app(self, ns_index: int, app_index: int) -> tuple[str, str, str]:
        app = APPS[(ns_index + app_index) % len(APPS)]
        template_hash = digest(ns_index, app_index)
        return app, template_hash, f"{app}-{template_hash}"

    def _labels(self, ns_index: int, app_index: int) -> dict[str, str]:
        app, template_hash, _ = self._app(ns_index, app_index)
        return {
            "app.kubernetes.io/name": app,
            "app.kubernetes.io/instance": f"{app}-prod",
            "app.kubernetes.io/version": f"1.{app_index}.{ns_index % 7}",
            "app.kubernetes.io/component": "server",
            "app.kubernetes.io/part-of": TEAMS[ns_index % len(TEAMS)],
            "app.kubernetes.io/managed-by": "Helm",
            "helm.sh/chart": f"{app}-4.2.{app_index}",
            "pod-template-hash": template_hash,
        }

    def _pod_spec(self, ns_index: int, app_index: int) -> JSON:
        app, _, _ = self._app(ns_index, app_index)
        env: list[JSON] = [
            {"name": f"{app.upper()}_{key}", "value": value}
            for key, value in (
                ("LOG_LEVEL", "info"),
                ("LOG_FORMAT", "json"),
                ("PORT", "8080"),
                ("METRICS_PORT", "9090"),
                ("DB_HOST", f"postgres.{TEAMS[ns_index % 5]}.svc"),
                ("CACHE_URL", "redis://redis-master:6379/0"),
                ("FEATURE_FLAGS", "a,b,c,d"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector.observability:4317"),
            )
        ]
        env += [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
            },
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        ]
        probe = {
            "httpGet": {"path": "/healthz", "port": "http"},
            "periodSeconds": 10,
            "timeoutSeconds": 2,
            "failureThreshold": 3,
        }
        return {
            "containers": [
                {
                    "name": app,
                    "image": f"registry.example.com/{app}:1.{app_index}.0",
                    "imagePullPolicy": "IfNotPresent",
                    "args": ["--config=/etc/app/config.yaml", "--listen=:8080"],
                    "ports": [
                        {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                    ],
                    "env": env,
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "limits": {"cpu": "1", "memory": "512Mi"},
                    },
                    "livenessProbe": probe,
                    "readinessProbe": dict(probe, httpGet={"path": "/ready", "port": "http"}),
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "readOnlyRootFilesystem": True,
                        "runAsNonRoot": True,
                        "runAsUser": 10001,
                        "capabilities": {"drop": ["ALL"]},
                    },
                },
                {
                    "name": "proxy",
                    "image": "registry.example.com/envoy:v1.31.2",
                    "args": ["-c", "/etc/envoy/envoy.yaml", "--log-level", "warn"],
                    "ports": [
                        {"name": "proxy", "containerPort": 15001, "protocol": "TCP"},
                        {"name": "admin", "containerPort": 15000, "protocol": "TCP"},
                    ],
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": {"cpu": "500m", "memory": "256Mi"},
                    },
                    "volumeMounts": [
                        {"name": "envoy", "mountPath": "/etc/envoy", "readOnly": True}
                    ],
                },
            ],
            "volumes": [
                {"name": "config", "configMap": {"name": f"{app}-config"}},
                {"name": "envoy", "configMap": {"name": "envoy-config"}},
            ],
            "terminationGracePeriodSeconds": 30,
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app}},
                            },
                        }
                    ]
                }
            },
        }

    def _replicaset(self, ns_index: int, app_index: int) -> int:
        app, template_hash, name = self._app(ns_index, app_index)
        labels = self._labels(ns_index, app_index)
        selector = {"app.kubernetes.io/name": app, "pod-template-hash": template_hash}
        body = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {"deployment.kubernetes.io/revision": "3"},
            },
            "spec": {
                "replicas": PODS_PER_NAMESPACE // APPS_PER_NAMESPACE,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": self._pod_spec(ns_index, app_index),
                },
            },
        }
        created = self.call(
            "POST", f"/apis/apps/v1/namespaces/app-{ns_index:04d}/replicasets", body
        )
        self.replicasets[(ns_index, app_index)] = created["metadata"]["uid"]
        return 1

    # -- pods -------------------------------------------------------------------------------
    def add_pods(self, total: int) -> None:
        """Pods up to `total`, with the namespaces and nodes they need."""
        self.add_nodes(max(1, -(-total // PODS_PER_NODE)))
        self.add_namespaces(-(-total // PODS_PER_NAMESPACE))
        work = [partial(self._pod, i) for i in range(self.pods, total)]
        self.run("pods (create + status)", work)
        self.pods = max(self.pods, total)

    def add_outage(self, stuck: int) -> None:
        """More pods, each bound to a dead node (STUCK_PER_DEAD_NODE a node) and deleted with a
        1s grace period: with no kubelet to confirm, they stay Terminating until `stuck`."""
        more = stuck - len(self.stuck)
        dead = -(-stuck // STUCK_PER_DEAD_NODE)
        self.run(
            "dead nodes",
            [partial(self._node, i, dead=True) for i in range(self.dead_nodes, dead)],
        )
        first = self.dead_nodes * STUCK_PER_DEAD_NODE
        self.dead_nodes = max(self.dead_nodes, dead)
        self.add_namespaces(-(-(self.pods + more) // PODS_PER_NAMESPACE))

        def one(index: int, node: int) -> int:
            namespace, name = self._pod_names(index)
            self._pod(index, f"dead-{node:05d}")
            self.call(
                "DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {"gracePeriodSeconds": 1}
            )
            with self.lock:
                self.stuck.add(f"{namespace}/{name}")
            return 1

        work = [
            partial(one, self.pods + i, (first + i) // STUCK_PER_DEAD_NODE) for i in range(more)
        ]
        self.run("stuck pods (create + status + delete)", work)
        self.pods += more
        time.sleep(1.5)  # past their grace period

    def _pod_names(self, index: int) -> tuple[str, str]:
        ns_index, slot = divmod(index, PODS_PER_NAMESPACE)
        _, _, rs_name = self._app(ns_index, slot % APPS_PER_NAMESPACE)
        # index * 2654435761 % 16**5 is a bijection: no collisions
        return f"app-{ns_index:04d}", f"{rs_name}-{index * 2654435761 % 16**5:05x}"

    def _pod(self, index: int, node: str | None = None) -> int:
        rng = random.Random(index)
        ns_index, slot = divmod(index, PODS_PER_NAMESPACE)
        app_index = slot % APPS_PER_NAMESPACE
        app, template_hash, rs_name = self._app(ns_index, app_index)
        namespace, name = self._pod_names(index)
        node = node or f"node-{rng.randrange(self.nodes):05d}"
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "generateName": f"{rs_name}-",
                "labels": self._labels(ns_index, app_index),
                "annotations": {
                    "kubectl.kubernetes.io/restartedAt": "2025-06-01T10:00:00Z",
                    "checksum/config": digest("config", ns_index, app_index, length=64),
                    "checksum/secret": digest("secret", ns_index, app_index, length=64),
                    "prometheus.io/scrape": "true",
                    "prometheus.io/port": "9090",
                    "prometheus.io/path": "/metrics",
                    "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
                },
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": rs_name,
                        "uid": self.replicasets[(ns_index, app_index)],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": dict(self._pod_spec(ns_index, app_index), nodeName=node),
        }
        self.call(
            "POST",
            f"/api/v1/namespaces/{namespace}/pods?fieldManager=kube-controller-manager",
            body,
        )
        started = ts(rng.randrange(600, 86400 * 7))
        container_statuses = [
            {
                "name": container,
                "ready": True,
                "started": True,
                "restartCount": rng.randrange(3),
                "image": image,
                "imageID": f"{image.split(':')[0]}@sha256:{digest(image, length=64)}",
                "containerID": f"containerd://{digest('c', index, container, length=64)}",
                "state": {"running": {"startedAt": started}},
            }
            for container, image in (
                (app, f"registry.example.com/{app}:1.{app_index}.0"),
                ("proxy", "registry.example.com/envoy:v1.31.2"),
            )
        ]
        conditions = [
            {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
            for t in (
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled",
            )
        ]
        pod_ip = f"10.{100 + index // 65536 % 100}.{index // 256 % 256}.{index % 256}"
        status = {
            "phase": "Running",
            "conditions": conditions,
            "hostIP": "192.168.0.1",
            "hostIPs": [{"ip": "192.168.0.1"}],
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "startTime": started,
            "containerStatuses": container_statuses,
        }
        self.call(
            "PATCH",
            f"/api/v1/namespaces/{namespace}/pods/{name}/status?fieldManager=kubelet",
            {"status": status},
            "application/strategic-merge-patch+json",
        )
        return 1

    # -- CRDs -------------------------------------------------------------------------------
    @staticmethod
    def crd_names(index: int) -> tuple[str, str, str]:
        group = f"g{index // GROUP_SIZE:03d}.bench.example.com"
        kind = f"Thing{index:04d}"
        return group, kind, f"things{index:04d}"

    def add_crds(self, count: int, namespaces: Sequence[str]) -> None:
        def crd(index: int) -> int:
            group, kind, plural = self.crd_names(index)
            properties = {
                f"field{j}": {"type": "string", "description": f"Field {j} of {kind}."}
                for j in range(12)
            }
            schema = {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "properties": properties,
                            "x-kubernetes-preserve-unknown-fields": True,
                        },
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                }
            }
            body = {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{plural}.{group}"},
                "spec": {
                    "group": group,
                    "names": {
                        "kind": kind,
                        "plural": plural,
                        "singular": kind.lower(),
                        "listKind": f"{kind}List",
                    },
                    "scope": "Namespaced",
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "schema": schema,
                            "subresources": {"status": {}},
                        }
                    ],
                },
            }
            self.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
            return 1

        self.run("CRDs", [partial(crd, i) for i in range(count)])
        self.wait_crds_established(count)

        def objects(index: int) -> int:
            group, kind, plural = self.crd_names(index)
            for j in range(CRD_OBJECTS_PER_TYPE):
                ns = namespaces[(index * CRD_OBJECTS_PER_TYPE + j) % len(namespaces)]
                body = {
                    "apiVersion": f"{group}/v1",
                    "kind": kind,
                    "metadata": {"name": f"{plural}-{j}"},
                    "spec": {f"field{f}": f"value-{f}" for f in range(6)},
                }
                self.create_custom(group, plural, ns, body)
            return CRD_OBJECTS_PER_TYPE

        self.run("custom objects", [partial(objects, i) for i in range(count)])

    def create_custom(self, group: str, plural: str, ns: str, body: JSON) -> None:
        # A CRD that just became Established can answer 404 for a moment on a busy server.
        for _ in range(50):
            try:
                self.call("POST", f"/apis/{group}/v1/namespaces/{ns}/{plural}", body)
                return
            except RuntimeError as error:
                if ": 404 " not in str(error):
                    raise
                time.sleep(0.2)
        raise RuntimeError(f"{group}/{plural} never became servable")

    def wait_crds_established(self, count: int, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            listed = self.call("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            established = sum(
                1
                for crd in listed.get("items") or []
                if crd["metadata"]["name"].endswith(".bench.example.com")
                and any(
                    c.get("type") == "Established" and c.get("status") == "True"
                    for c in (crd.get("status") or {}).get("conditions") or []
                )
            )
            if established >= count:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {established}/{count} CRDs Established")
            time.sleep(0.5)


# --- stuck objects -------------------------------------------------------------------------


@dataclass
class Seeded:
    stuck_pods: set[str] = field(default_factory=set)  # "namespace/name", every terminating pod
    terminating_namespaces: list[str] = field(default_factory=list)


def seed_stuck_pods(cp: ControlPlane, filler: Filler, seeded: Seeded) -> None:
    """STUCK_COPIES of each stuck-pod scenario, each in its own namespace, concurrently."""
    jobs: list[tuple[Callable[..., Any], str]] = []
    for function_name, short in STUCK_SCENARIOS:
        function = getattr(scenarios, function_name, None)
        if function is None:  # scenarios.py is shared: tolerate one being renamed
            log(f"scenario {function_name} not found in tests/e2e/scenarios.py, skipped")
            continue
        jobs.extend((function, f"stuck-{short}-{copy}") for copy in range(STUCK_COPIES))
    for _, ns in jobs:
        filler.call(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
    filler.wait_service_accounts(ns for _, ns in jobs)
    started = time.monotonic()

    def one(job: tuple[Callable[..., Any], str]) -> str:
        function, ns = job
        stuck = function(cp, ns)
        return f"{stuck.namespace}/{stuck.name}"

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        seeded.stuck_pods.update(pool.map(one, jobs))
    log(f"stuck pods: {len(jobs)} scenarios in {time.monotonic() - started:.1f}s")


def seed_terminating_namespaces(filler: Filler, seeded: Seeded, count: int, crds: int) -> None:
    """Each holds a pod on a node that is gone, and a custom resource with a finalizer whose
    controller does not exist; ConfigMaps, Secrets and a few other custom objects go."""
    if count == 0:
        return
    if crds == 0:
        raise SystemExit("M > 0 needs K > 0 (a custom resource holds each namespace)")
    names = [f"term-{i:03d}" for i in range(count)]
    for ns in names:
        filler.call(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
    filler.wait_service_accounts(names)

    def fill(index: int) -> int:
        ns = names[index]
        for j in range(3):
            filler.call(
                "POST",
                f"/api/v1/namespaces/{ns}/configmaps",
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"config-{j}"},
                    "data": {"app.yaml": "x: 1\n" * 20},
                },
            )
        filler.call(
            "POST",
            f"/api/v1/namespaces/{ns}/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "creds"},
                "stringData": {"password": "hunter2"},
            },
        )
        for j in range(3):
            group, kind, plural = filler.crd_names((index * 3 + j) % crds)
            meta: JSON = {"name": f"held-{ns}" if j == 0 else f"extra-{j}"}
            if j == 0:
                meta["finalizers"] = ["bench.example.com/cleanup"]
            filler.create_custom(
                group, plural, ns, {"apiVersion": f"{group}/v1", "kind": kind, "metadata": meta}
            )
        filler.call(
            "POST",
            f"/api/v1/namespaces/{ns}/pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "runner-0"},
                "spec": {
                    "nodeName": f"{ns}-gone",
                    "containers": [{"name": "runner", "image": "registry.example.com/ci:1"}],
                },
            },
        )
        filler.call("DELETE", f"/api/v1/namespaces/{ns}")
        return 9

    filler.run("terminating namespaces", [partial(fill, i) for i in range(count)])
    seeded.terminating_namespaces = names
    seeded.stuck_pods.update(f"{ns}/runner-0" for ns in names)


def wait_namespaces_settled(filler: Filler, names: Sequence[str], timeout: float = 600.0) -> None:
    """Until the namespace controller has been through each: a condition reports what is
    left, and the pod it deleted is terminating."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending:
        for ns in sorted(pending):
            status = filler.call("GET", f"/api/v1/namespaces/{ns}").get("status") or {}
            conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
            pod = filler.call("GET", f"/api/v1/namespaces/{ns}/pods/runner-0")
            if "True" in conditions.values() and pod.get("metadata", {}).get("deletionTimestamp"):
                pending.discard(ns)
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"namespaces never settled: {sorted(pending)}")
        if pending:
            time.sleep(1.0)


# --- measuring -----------------------------------------------------------------------------


@dataclass
class Sample:
    seconds: float
    rss_mb: float
    exit_code: int
    stdout: str
    stderr: str


@dataclass
class Command:
    key: str
    label: str  # how it reads in the report
    argv: list[str]
    ours: bool = False
    warm: bool = True  # one untimed warm-up run
    expect: int | None = None  # how many answers a correct run prints
    exact: set[str] | None = None  # for pods: exactly these namespace/name rows
    found: Callable[[str], int] = lambda out: 0
    samples: list[Sample] = field(default_factory=list)
    requests: int | None = None
    bytes: int | None = None
    retries: int = 0  # of the last run (each attempt also counts as a request)
    found_count: int | None = None


# The commands are started by a small launcher, not by this process: a child's ru_maxrss
# starts from the high-water mark of the memory it was forked from (Linux records the old
# mm's peak at exec), so forking from this process (which holds the fill's data) would
# inflate every number. The launcher is a bare interpreter started first thing.
LAUNCHER = r"""
import ctypes, json, os, signal, subprocess, sys, time
ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: die with the benchmark
child = None
def stop(*_):
    if child is not None and child.returncode is None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(1)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
for line in sys.stdin:
    job = json.loads(line)
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        started = time.monotonic()
        child = subprocess.Popen(job["argv"], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 env=job["env"], cwd=job["cwd"], start_new_session=True)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)
    print(json.dumps([elapsed, usage.ru_maxrss, child.returncode]), flush=True)
"""


class Launcher:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.dir = Path(tempfile.mkdtemp(prefix="kubectl-terminating-bench-"))

    def run(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> Sample:
        assert self.process.stdin is not None and self.process.stdout is not None
        out, err = self.dir / "stdout", self.dir / "stderr"
        job = {"argv": list(argv), "env": env, "cwd": str(cwd), "out": str(out), "err": str(err)}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("the launcher died")
        elapsed, maxrss_kb, exit_code = json.loads(answer)
        return Sample(
            seconds=elapsed,
            rss_mb=maxrss_kb / 1024,
            exit_code=exit_code,
            stdout=out.read_text(errors="replace"),
            stderr=err.read_text(errors="replace"),
        )

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()  # it kills a command still running
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


_launcher: list[Launcher] = []


def run_once(argv: Sequence[str], env: dict[str, str], cwd: Path) -> Sample:
    return _launcher[0].run(argv, env, cwd)


REQUESTS_RE = re.compile(r"requests: (\d+), bytes: (\d+), retries: (\d+)")


def check(command: Command, sample: Sample) -> None:
    if sample.exit_code not in (0, 1) or (sample.exit_code == 1 and command.ours):
        raise RuntimeError(f"{command.label} exited {sample.exit_code}\n{sample.stderr[-2000:]}")
    command.found_count = command.found(sample.stdout)
    if command.ours:
        match = REQUESTS_RE.search(sample.stderr)
        if match:
            command.requests, command.bytes = int(match.group(1)), int(match.group(2))
            command.retries = int(match.group(3))
        wrong = command.exact is not None and table_keys(sample.stdout) != command.exact
        if wrong or (command.expect is not None and command.found_count != command.expect):
            raise RuntimeError(
                f"{command.label}: found {command.found_count}, expected {command.expect}\n"
                f"{sample.stdout[-3000:]}\n{sample.stderr[-2000:]}"
            )


def measure(group: Sequence[Command], env: dict[str, str], cwd: Path, settings: Settings) -> None:
    """Warm up, then REPEAT interleaved rounds; a command past its time budget stops early."""
    for command in group:
        if command.warm:
            sample = run_once(command.argv, env, cwd)
            check(command, sample)
    for _ in range(settings.repeat):
        for command in group:
            spent = sum(s.seconds for s in command.samples)
            if command.samples and spent + command.samples[-1].seconds > settings.budget:
                continue
            sample = run_once(command.argv, env, cwd)
            check(command, sample)
            command.samples.append(sample)
        log("  " + "; ".join(f"{c.key} {c.samples[-1].seconds:.2f}s" for c in group if c.samples))


def count_kubectl_requests(argv: Sequence[str], env: dict[str, str], cwd: Path) -> int:
    """One extra, untimed run of a kubectl command line with -v=6: its GET requests."""
    sample = run_once(argv, env, cwd)
    return len(re.findall(r'verb="GET"|\bGET https?://', sample.stderr + sample.stdout))


# --- commands ------------------------------------------------------------------------------


def shell(script: str) -> list[str]:
    return ["bash", "-c", script]


PY_FILTER = shlex.quote(
    "import json, sys\n"
    "for p in json.load(sys.stdin)['items']:\n"
    "    m = p['metadata']\n"
    "    if m.get('deletionTimestamp'): print(m['namespace'] + '/' + m['name'])"
)


def table_keys(out: str) -> set[str]:
    """namespace/name from a table whose first two columns are NAMESPACE and NAME (up to the
    blank line before a summary)."""
    keys = set()
    for line in out.partition("\n\n")[0].splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] != "NAMESPACE":
            keys.add(f"{parts[0]}/{parts[1]}")
    return keys


def summarised(out: str) -> int:
    """The pods a --summary counts (its first line: `Summary: 2,000 pods, 1 cause`)."""
    match = re.match(r"Summary: ([\d,]+) pods?", out)
    return int(match[1].replace(",", "")) if match else 0


def held_markers(out: str) -> int:
    return len(set(re.findall(r"held-term-\d+", out)))


@dataclass
class Row:
    size: int
    label: str
    median: float
    best: float
    runs: int
    ratio: float | None
    rss: float
    requests: str
    found: str
    target: float | None

    @property
    def met(self) -> str:
        if self.target is None or self.ratio is None:
            return ""
        return "yes" if self.ratio <= self.target else "**no**"


def rows_for(
    size: int,
    ours: Command,
    baseline: Command | None,
    others: Sequence[Command],
    target: float | None,
    expect: int | None,
) -> list[Row]:
    rows = []
    base = statistics.median(s.seconds for s in baseline.samples) if baseline else None
    for command in [ours, *([baseline] if baseline else []), *others]:
        median = statistics.median(s.seconds for s in command.samples)
        if command.requests is not None and command.bytes is not None:
            retried = f", {command.retries} retried" if command.retries else ""
            requests = f"{command.requests} ({command.bytes / 1e6:.1f} MB{retried})"
        else:
            requests = "" if command.requests is None else f"{command.requests}"
        found = "" if command.found_count is None else str(command.found_count)
        if expect is not None and found:
            found += f"/{expect}"
        rows.append(
            Row(
                size=size,
                label=command.label,
                median=median,
                best=min(s.seconds for s in command.samples),
                runs=len(command.samples),
                ratio=(median / base) if base and command is not baseline else None,
                rss=max(s.rss_mb for s in command.samples),
                requests=requests,
                found=found,
                target=target if command is ours else None,
            )
        )
    return rows


def markdown(rows: Sequence[Row]) -> str:
    lines = [
        "| pods | command | median s | min s | runs | ratio | peak RSS MB | requests | found"
        " | target | met? |",
        "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.3f}"
        target = "" if r.target is None else f"≤ {r.target:g}"
        lines.append(
            f"| {r.size} | `{r.label}` | {r.median:.2f} | {r.best:.2f} | {r.runs} | {ratio} "
            f"| {r.rss:.0f} | {r.requests} | {r.found} | {target} | {r.met} |"
        )
    return "\n".join(lines)


# --- the run -------------------------------------------------------------------------------


class Bench:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cluster_dir = settings.state / "cluster"
        self.home = settings.state / "home"  # kubectl's discovery cache lives in ~/.kube/cache
        self.cp: ControlPlane | None = None
        self.rows: list[Row] = []
        self.notes: list[str] = []
        self.pods_requests: dict[int, str] = {}
        self.pods_rss: dict[int, float] = {}

    def start(self) -> ControlPlane:
        stopped = down(self.cluster_dir)  # what an earlier BENCH_KEEP=1 run left running
        if stopped:
            log(f"stopped {len(stopped)} processes a BENCH_KEEP=1 run left running")
        shutil.rmtree(self.settings.state, ignore_errors=True)
        self.settings.state.mkdir(parents=True)
        self.home.mkdir()
        started = time.monotonic()
        self.cp = ControlPlane(self.cluster_dir, die_with_parent=not self.settings.keep)
        self.cp.start()
        log(f"control plane up in {time.monotonic() - started:.1f}s at {self.cp.server}")
        return self.cp

    def stop(self) -> None:
        if self.cp is None:
            return
        if self.settings.keep:
            state = {
                "pids": self.cp.pids,
                "server": self.cp.server,
                "kubeconfig": str(self.cp.kubeconfig_path),
                "binaries_dir": str(self.cp.binaries_dir),
            }
            (self.cluster_dir / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")
            self.cp.detach()
            log(
                f"kept running; KUBECONFIG={self.settings.state / 'kubeconfig'}; stop with "
                f".venv/bin/python -m tests.e2e.controlplane down --state-dir {self.cluster_dir}"
            )
        else:
            self.cp.stop()
            log("control plane stopped")
        self.cp = None

    def user_kubeconfig(self, cp: ControlPlane) -> Path:
        """A person's credentials: cluster-admin through RBAC, but not system:masters, so
        API Priority and Fairness puts the requests in global-default, not exempt."""
        cp.api(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "bench-alice"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "cluster-admin",
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
                ],
            },
        )
        return cp.write_kubeconfig(self.settings.state / "kubeconfig", cp.tokens["alice"])

    def environment(self, cp: ControlPlane) -> dict[str, str]:
        kubeconfig = self.user_kubeconfig(cp)
        env = dict(
            os.environ,
            KUBECONFIG=str(kubeconfig),
            HOME=str(self.home),
            PATH=f"{cp.binaries_dir}:{os.environ.get('PATH', '')}",
        )
        env.pop("NO_COLOR", None)
        return env

    def run(self) -> int:
        s = self.settings
        if not s.binary.exists():
            raise SystemExit(f"BENCH_BIN {s.binary} does not exist")
        if s.outage:
            return self.run_outage(s.outage)
        cp = self.start()
        env = self.environment(cp)
        kubectl = str(Path(cp.binaries_dir) / "kubectl")
        filler = Filler(cp, s.threads)
        seeded = Seeded()
        fill_started = time.monotonic()
        filler.add_pods(s.sizes[0])  # namespaces for the CRD objects to live in
        seed_app_ns = [f"app-{i:04d}" for i in range(filler.namespaces)]
        filler.add_crds(s.crds, seed_app_ns)
        seed_stuck_pods(cp, filler, seeded)
        seed_terminating_namespaces(filler, seeded, s.namespaces, s.crds)
        # warm kubectl's discovery cache, as any user's ~/.kube/cache would be
        subprocess.run(
            [kubectl, "api-resources", "-o", "name"], env=env, check=True, capture_output=True
        )
        ours = str(s.binary)
        expected_pods = len(seeded.stuck_pods)
        for size in s.sizes:
            filler.add_pods(size)
            wait_namespaces_settled(filler, seeded.terminating_namespaces)
            log(
                f"cluster at {size} pods (+{expected_pods} terminating); fill so far "
                f"{filler.objects} objects in {filler.seconds:.0f}s of requests "
                f"({filler.objects / max(filler.seconds, 1e-9):.0f}/s)"
            )
            self.measure_pods(size, ours, kubectl, env, seeded)
        size = s.sizes[-1]
        if s.namespaces:
            self.measure_namespaces(size, ours, env, seeded)
        self.measure_all(size, ours, env)
        fill_total = time.monotonic() - fill_started
        setup = (
            f"sizes {','.join(map(str, s.sizes))}; M={s.namespaces} terminating namespaces; "
            f"K={s.crds} extra CRD types ({s.crds * CRD_OBJECTS_PER_TYPE} objects); "
            f"{len(seeded.stuck_pods)} terminating pods"
        )
        self.report(filler, fill_total, setup, self.pods_targets(), cp)
        return 0

    def run_outage(self, sizes: Sequence[tuple[int, int]]) -> int:
        """Healthy pods, then pods stuck on dead nodes, growing through `sizes`."""
        cp = self.start()
        env = self.environment(cp)
        kubectl = str(Path(cp.binaries_dir) / "kubectl")
        filler = Filler(cp, self.settings.threads)
        started = time.monotonic()
        targets = []
        for healthy, stuck in sizes:
            filler.add_pods(healthy + len(filler.stuck))
            filler.add_outage(stuck)
            log(f"cluster at {healthy} healthy pods, {stuck} stuck on {filler.dead_nodes} nodes")
            ours = str(self.settings.binary)
            targets += self.measure_outage(healthy, stuck, ours, kubectl, env, filler)
        setup = "outage: " + ", ".join(
            f"{stuck} pods stuck on {-(-stuck // STUCK_PER_DEAD_NODE)} dead nodes among "
            f"{healthy} healthy" for healthy, stuck in sizes
        )
        self.report(filler, time.monotonic() - started, setup, targets, cp)
        return 0

    def measure_outage(
        self,
        healthy: int,
        stuck: int,
        ours: str,
        kubectl: str,
        env: dict[str, str],
        filler: Filler,
    ) -> list[str]:
        size = healthy + stuck
        table = Command(
            "ours",
            f"kubectl terminating pods -A ({stuck} stuck)",
            [ours, "pods", "-A", "-v", "1"],
            ours=True,
            expect=stuck,
            exact=set(filler.stuck),
            found=lambda out: len(table_keys(out)),
        )
        summary = Command(
            "summary",
            f"kubectl terminating pods -A --summary ({stuck} stuck)",
            [ours, "pods", "-A", "--summary", "-v", "1"],
            ours=True,
            expect=stuck,
            found=summarised,
        )
        grep = Command(
            "grep",
            f"kubectl get pods -A | grep Terminating ({stuck} stuck)",
            shell(f"{kubectl} get pods -A | grep Terminating"),
            found=lambda out: len(table_keys(out)),
        )
        log(f"measuring the outage: {stuck} stuck among {size} pods")
        measure([table, grep, summary], env, REPO, self.settings)
        grep.requests = count_kubectl_requests(
            shell(f"{kubectl} get pods -A -v=6 2>&1 | grep -v Terminating"), env, REPO
        )
        table_target, summary_target = TARGET_OUTAGE.get((healthy, stuck), (None, None))
        rows = rows_for(size, table, grep, [], table_target, stuck)
        rows += rows_for(size, summary, grep, [], summary_target, stuck)[:1]
        self.rows += rows
        self.pods_requests[size] = str(table.requests)
        self.pods_rss[size] = max(x.rss_mb for x in table.samples)
        return [
            f"- {r.label} ≤ {r.target}x `get pods -A | grep` at {healthy} healthy: "
            f"{r.ratio:.3f} -> {'met' if r.met == 'yes' else 'NOT met'}"
            for r in (rows[0], rows[-1])
            if r.target is not None and r.ratio is not None
        ]

    def pods_targets(self) -> list[str]:
        lines = []
        for size, target in TARGET_PODS.items():
            row = next((r for r in self.rows if r.size == size and r.target == target), None)
            verdict = (
                "not measured"
                if row is None
                else (f"{row.ratio:.3f} -> {'met' if row.met == 'yes' else 'NOT met'}")
            )
            lines.append(f"- pods -A ≤ {target}x `get pods -A | grep` at {size}: {verdict}")
        ns_row = next((r for r in self.rows if r.target == TARGET_NS_EXPLAIN), None)
        if ns_row is None:
            lines.append(f"- ns X --explain: not measured with {NS_TARGET_TYPES}+ types")
        elif ns_row.ratio is not None:
            lines.append(
                f"- ns X --explain ≤ {TARGET_NS_EXPLAIN}x the recipe: {ns_row.ratio:.3f}"
                f" -> {'met' if ns_row.met == 'yes' else 'NOT met'}"
            )
        small, large = RSS_SIZES
        if small in self.pods_rss and large in self.pods_rss:
            growth = self.pods_rss[large] / self.pods_rss[small]
            lines.append(
                f"- pods -A peak RSS at {large} within {TARGET_RSS_GROWTH}x of {small}: "
                f"{self.pods_rss[large]:.0f} / {self.pods_rss[small]:.0f} MB = {growth:.2f}x"
                f" -> {'met' if growth <= TARGET_RSS_GROWTH else 'NOT met'}"
            )
        else:
            lines.append(f"- pods -A peak RSS at {large} vs {small}: not measured")
        return lines

    def measure_pods(
        self, size: int, ours: str, kubectl: str, env: dict[str, str], seeded: Seeded
    ) -> None:
        expect = len(seeded.stuck_pods)
        jq = (
            ".items[] | select(.metadata.deletionTimestamp != null) "
            '| .metadata.namespace + "/" + .metadata.name'
        )
        mine = Command(
            "ours",
            "kubectl terminating pods -A",
            [ours, "pods", "-A", "-v", "1"],
            ours=True,
            expect=expect,
            exact=seeded.stuck_pods,
            found=lambda out: len(table_keys(out)),
        )
        grep = Command(
            "grep",
            "kubectl get pods -A | grep Terminating",
            shell(f"{kubectl} get pods -A | grep Terminating"),
            found=lambda out: len(table_keys(out)),
        )
        if shutil.which("jq"):
            label, script = "jq", f"{kubectl} get pods -A -o json | jq -r '{jq}'"
        else:  # no jq here: the same filter in Python
            label = "python"
            script = f"{kubectl} get pods -A -o json | {shlex.quote(sys.executable)} -c {PY_FILTER}"
        as_json = Command(
            "json",
            f"kubectl get pods -A -o json | {label} (deletionTimestamp)",
            shell(script),
            found=lambda out: len(out.split()),
            warm=False,  # slow: its budget caps its runs
        )
        log(f"measuring pods -A at {size} pods")
        # kubectl -o json holds the whole list decoded (5 GB at 20,000 pods), jq the text too:
        # past json_max pods that would run a 24 GB machine out of memory
        with_json = size <= self.settings.json_max
        if not with_json:
            self.notes.append(
                f"`kubectl get pods -A -o json | ...` not run at {size} pods (BENCH_JSON_MAX="
                f"{self.settings.json_max}): its peak RSS grows by about 0.25 GB per 1,000 pods"
            )
        measure([mine, grep, *([as_json] if with_json else [])], env, REPO, self.settings)
        grep.requests = count_kubectl_requests(
            shell(f"{kubectl} get pods -A -v=6 2>&1 | grep -v Terminating"), env, REPO
        )
        as_json.requests = grep.requests  # the same chunked list (limit=500), as JSON
        target = TARGET_PODS.get(size)
        self.rows += rows_for(size, mine, grep, [as_json] if with_json else [], target, expect)
        self.pods_requests[size] = str(mine.requests)
        self.pods_rss[size] = max(x.rss_mb for x in mine.samples)

    def recipe(self, ns: str, verbose: bool = False) -> str:
        v = " -v=6" if verbose else ""
        return (
            f"kubectl api-resources --verbs=list --namespaced -o name{v} "
            f"| xargs -n 1 kubectl get --show-kind --ignore-not-found -n {ns}{v}"
        )

    def measure_namespaces(self, size: int, ours: str, env: dict[str, str], seeded: Seeded) -> None:
        names = seeded.terminating_namespaces
        one = names[0]
        mine = Command(
            "ours-ns",
            f"kubectl terminating ns {one} --explain",
            [ours, "ns", one, "--explain", "-v", "1"],
            ours=True,
            expect=1,
            found=held_markers,
        )
        recipe = Command(
            "recipe",
            f"api-resources | xargs -n 1 kubectl get -n {one}",
            shell(self.recipe(one)),
            found=held_markers,
            warm=False,
        )
        log(f"measuring ns {one} --explain")
        measure([mine, recipe], env, REPO, self.settings)
        recipe.requests = count_kubectl_requests(shell(self.recipe(one, True) + " 2>&1"), env, REPO)
        types = self.namespaced_types(env)
        self.notes.append(f"namespaced resource types served: {types}")
        # the target is stated for about 130 types (a real cluster's count): not for fewer
        target = TARGET_NS_EXPLAIN if types >= NS_TARGET_TYPES else None
        self.rows += rows_for(size, mine, recipe, [], target, 1)

        loop = "; ".join(f"{{ {self.recipe(ns)}; }}" for ns in names)
        every = Command(
            "ours-all-ns",
            f"kubectl terminating ns --explain ({len(names)} ns)",
            [ours, "ns", "--explain", "-v", "1"],
            ours=True,
            expect=len(names),
            found=held_markers,
        )
        loops = Command(
            "recipe-loop",
            f"the recipe once per namespace ({len(names)} ns)",
            shell(loop),
            found=held_markers,
            warm=False,
        )
        log(f"measuring ns --explain over {len(names)} namespaces")
        measure([every, loops], env, REPO, self.settings)
        self.rows += rows_for(size, every, loops, [], None, len(names))

    def namespaced_types(self, env: dict[str, str]) -> int:
        out = subprocess.run(
            ["kubectl", "api-resources", "--verbs=list", "--namespaced", "-o", "name"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return len(out.split())

    def measure_all(self, size: int, ours: str, env: dict[str, str]) -> None:
        mine = Command(
            "ours-all",
            "kubectl terminating all -A",
            [ours, "all", "-A", "-v", "1"],
            ours=True,
            found=lambda out: max(0, len(out.splitlines()) - 1),
        )
        log("measuring all -A")
        measure([mine], env, REPO, self.settings)
        self.rows += rows_for(size, mine, None, [], None, None)

    def report(
        self, filler: Filler, fill_total: float, setup: str, targets: list[str], cp: ControlPlane
    ) -> None:
        s = self.settings
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "kubectl_terminating"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        version = cp.api("GET", "/version").get("gitVersion")
        pod_bytes = self.pod_json_size(cp)
        lines = [
            f"## kubectl terminating benchmark ({time.strftime('%Y-%m-%d %H:%M')})",
            "",
            f"commit {commit}{' + uncommitted changes in kubectl_terminating/' if dirty else ''}"
            f"; kube-apiserver {version}; {os.cpu_count()} CPUs, load average "
            f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {platform.python_version()}; "
            f"ours: `{s.binary}`",
            f"{setup}; REPEAT={s.repeat} "
            f"(median; slow recipes stop repeating after {s.budget:.0f}s)",
            f"fill: {filler.objects} objects with {filler.requests} requests in "
            f"{filler.seconds:.0f}s of concurrent creates ({filler.objects / filler.seconds:.0f}"
            f" objects/s, {filler.requests / filler.seconds:.0f} requests/s, "
            f"{s.threads} threads); whole run {fill_total:.0f}s; a pod is "
            f"{pod_bytes / 1000:.1f} kB as JSON with managedFields",
            *self.notes,
            "",
            markdown(self.rows),
            "",
            "ratio: median time over the first kubectl row of the same group. peak RSS: "
            "ru_maxrss from wait4; for a pipeline, the largest single process in it. requests: "
            "ours from `-v 1`, kubectl's from a separate `-v=6` run. found: terminating pods "
            "(or held namespaces) printed / created.",
            "",
            "Targets:",
            *targets,
        ]
        lines.append(
            "- pods -A peak RSS per size: "
            + ", ".join(f"{n}: {r:.0f} MB" for n, r in self.pods_rss.items())
        )
        lines.append(
            "- pods -A requests per size: "
            + ", ".join(f"{n}: {r}" for n, r in self.pods_requests.items())
        )
        text = "\n".join(lines) + "\n"
        (s.state / "report.md").write_text(text)
        print(text)
        log(f"report written to {s.state / 'report.md'}")

    def pod_json_size(self, cp: ControlPlane) -> float:
        listed = cp.api("GET", "/api/v1/namespaces/app-0000/pods?limit=20")
        items = listed.get("items") or [{}]
        return sum(len(json.dumps(i, separators=(",", ":"))) for i in items) / len(items)


def main() -> int:
    settings = Settings.from_env()
    log(
        f"sizes {settings.sizes}, M={settings.namespaces}, K={settings.crds}, "
        f"REPEAT={settings.repeat}, ours {settings.binary}"
    )
    _launcher.append(Launcher())  # first, while this process is still small
    bench = Bench(settings)

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
    try:
        return bench.run()
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        _launcher[0].close()
        bench.stop()


if __name__ == "__main__":
    sys.exit(main())
