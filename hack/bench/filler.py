"""Filling the benchmark's control plane: concurrent creates straight to the API as admin."""

from __future__ import annotations

import concurrent.futures
import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial

import urllib3

from hack.bench import objects
from hack.bench.objects import JSON
from hack.bench.settings import (
    APPS_PER_NAMESPACE,
    CRD_OBJECTS_PER_TYPE,
    PODS_PER_NAMESPACE,
    PODS_PER_NODE,
    STUCK_PER_DEAD_NODE,
    VIRTUAL_SHARE,
    log,
)
from tests.harness.api import STRATEGIC, namespace_body
from tests.harness.api_extensions import established
from tests.harness.controlplane import ControlPlane


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
        self.stuck: set[str] = set()  # "namespace/name" of the pods left Terminating
        self.virtual: str | None = None  # a node holding VIRTUAL_SHARE of the pods (if any)

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

    def create_namespaces(self, names: Sequence[str]) -> None:
        """Plain namespaces, ready for pods (their `default` ServiceAccount exists)."""
        for name in names:
            self.call("POST", "/api/v1/namespaces", namespace_body(name))
        self.wait_service_accounts(names)

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

    # -- nodes ------------------------------------------------------------------------------
    def add_nodes(self, total: int) -> None:
        work = [partial(self._node, i) for i in range(self.nodes, total)]
        self.run("nodes", work)
        self.nodes = max(self.nodes, total)

    def _node(self, index: int, dead: bool = False) -> int:
        """A node, its kubelet's status and Lease; `dead`: the kubelet stopped 10m ago."""
        self._register(objects.node(index, dead), objects.node_status(index, dead), dead)
        return 2

    def _register(self, body: JSON, status: JSON, dead: bool = False) -> str:
        created = self.call("POST", "/api/v1/nodes?fieldManager=kubelet", body)
        name = str(created["metadata"]["name"])
        patch = {"status": status}
        self.call("PATCH", f"/api/v1/nodes/{name}/status?fieldManager=kubelet", patch, STRATEGIC)
        lease = objects.node_lease(created, dead)
        self.call("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease)
        return name

    def add_virtual_node(self) -> str:
        """The virtual-kubelet node that most pods from now on are bound to (VIRTUAL_SHARE)."""
        self.virtual = self._register(*objects.virtual_node())
        return self.virtual

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
        self.call("POST", "/api/v1/namespaces", objects.app_namespace(index))
        return 1

    def _replicaset(self, ns_index: int, app_index: int) -> int:
        created = self.call(
            "POST",
            f"/apis/apps/v1/namespaces/app-{ns_index:04d}/replicasets",
            objects.replicaset(ns_index, app_index),
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

        nodes = [objects.node_name((first + i) // STUCK_PER_DEAD_NODE, True) for i in range(more)]
        self.add_stuck(nodes)

    def add_stuck(self, nodes: Sequence[str]) -> None:
        """One more pod on each of `nodes`, deleted with a 1s grace period: no kubelet
        confirms it, so it stays Terminating (in the pods that `add_pods` counts)."""

        def one(index: int, node: str) -> int:
            namespace, name = objects.pod_names(index)
            self._pod(index, node)
            self.call(
                "DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {"gracePeriodSeconds": 1}
            )
            with self.lock:
                self.stuck.add(f"{namespace}/{name}")
            return 1

        self.add_namespaces(-(-(self.pods + len(nodes)) // PODS_PER_NAMESPACE))
        work = [partial(one, self.pods + i, node) for i, node in enumerate(nodes)]
        self.run("stuck pods (create + status + delete)", work)
        self.pods += len(nodes)
        time.sleep(1.5)  # past their grace period

    def _pod(self, index: int, node: str | None = None) -> int:
        """Pod `index` created as the ReplicaSet controller does, then its kubelet's status."""
        rng = random.Random(index)
        ns_index, slot = divmod(index, PODS_PER_NAMESPACE)
        uid = self.replicasets[(ns_index, slot % APPS_PER_NAMESPACE)]
        if node is None and self.virtual and index % 100 < VIRTUAL_SHARE:
            node = self.virtual
        node = node or objects.node_name(rng.randrange(self.nodes))
        namespace, name = objects.pod_names(index)
        self.call(
            "POST",
            f"/api/v1/namespaces/{namespace}/pods?fieldManager=kube-controller-manager",
            objects.pod(index, node, uid),
        )
        self.call(
            "PATCH",
            f"/api/v1/namespaces/{namespace}/pods/{name}/status?fieldManager=kubelet",
            {"status": objects.pod_status(index, rng)},
            STRATEGIC,
        )
        return 1

    # -- CRDs -------------------------------------------------------------------------------
    def add_crds(self, count: int, namespaces: Sequence[str]) -> None:
        def crd(index: int) -> int:
            body = objects.crd(index)
            self.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
            return 1

        self.run("CRDs", [partial(crd, i) for i in range(count)])
        self.wait_crds_established(count)

        def custom(index: int) -> int:
            _, _, plural = objects.crd_names(index)
            for j in range(CRD_OBJECTS_PER_TYPE):
                ns = namespaces[(index * CRD_OBJECTS_PER_TYPE + j) % len(namespaces)]
                spec = {f"field{f}": f"value-{f}" for f in range(6)}
                self.create_custom(
                    index, ns, objects.custom_object(index, f"{plural}-{j}", spec=spec)
                )
            return CRD_OBJECTS_PER_TYPE

        self.run("custom objects", [partial(custom, i) for i in range(count)])

    def create_custom(self, index: int, ns: str, body: JSON) -> None:
        """body, an object of CRD `index`, in namespace ns."""
        group, _, plural = objects.crd_names(index)
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
            ready = sum(
                1
                for crd in listed.get("items") or []
                if crd["metadata"]["name"].endswith(".bench.example.com") and established(crd)
            )
            if ready >= count:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {ready}/{count} CRDs Established")
            time.sleep(0.5)
