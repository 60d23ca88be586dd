"""Preflight in the order the deletion runs, then the real outcome (issue 38 item 3), on the
real control plane: the three cases once not judged. Each is predicted as the read-only user
(the audit log shows only reads), then deleted for real: the positive stays with `--explain`'s
main blocker of the predicted type, its twin (clear) is gone.

- a CSI driver's node plugin (a DaemonSet's pod) deleted with the pods that use its volumes:
  the test plays the node's kubelet, which confirms a deleted pod once its volumes are
  unmounted, tears a consumer down after its grace period, and unregisters a driver from the
  node's CSINode when its plugin pod goes (pkg/volume/csi: DeRegisterPlugin, then
  UninstallCSIDriver);
- a namespace's own spec.finalizers beyond `kubernetes`, whose owner is dead (and one whose
  owner runs in the namespace: a race it wins, predicted only possible);
- a dependent of a cluster-scoped object in another namespace (the garbage collector deletes
  it), whose finalizer's owner is dead.

Helpers, fixtures and the live operator come from tests/e2e/test_preflight.py.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_preflight import (
    OPERATORS,
    SETTLE,
    Group,
    Operator,
    admin,
    blocked,
    clear,
    main_blocker,
    namespace_gone,
    preflight,
    pvc_protection,
    reader,
    still_terminating,
    users,
)
from tests.harness.api import (
    MERGE,
    create_namespace,
    delete,
    get_or_none,
    micro_time,
    owner_ref,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.controlplane import ApiError, ControlPlane
from tests.harness.kubelet import (
    create_csinode,
    create_node,
    pod_body,
    pvc_volume,
    set_pod_status,
)
from tests.harness.storage import create_bound_volume, create_csidriver

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
# the module-scoped fixtures of test_preflight, used here by name
__all__ = ["admin", "pvc_protection", "reader", "users"]
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
KUBELETS: list[NodeKubelet] = []


@pytest.fixture(scope="module", autouse=True)
def stop_operators() -> Iterator[None]:
    yield
    for stopped in [*(o.stopped for o in OPERATORS), *(k.stopped for k in KUBELETS)]:
        stopped.set()


@pytest.fixture
def leftovers(control_plane: ControlPlane) -> Iterator[list[str]]:
    """Paths of what a positive left stuck: its finalizers removed at the end (spec finalizers
    of a namespace through /finalize), so the shared control plane stays clean."""
    paths: list[str] = []
    yield paths
    for path in reversed(paths):
        with contextlib.suppress(ApiError):
            if "/pods/" in path:
                delete(control_plane, path, grace_period=0)
            elif path.count("/") == 4 and path.startswith("/api/v1/namespaces/"):
                ns = get_or_none(control_plane, path)
                if ns is not None:
                    ns["spec"]["finalizers"] = []
                    control_plane.api("PUT", f"{path}/finalize", ns)
            else:
                remove_finalizers(control_plane, path)


def dead_owner(cp: ControlPlane, ns: str, group: Group) -> None:
    """The Lease of group's owner in ns, not renewed for years: its owner does not run."""
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": f"abc.{group.group}", "namespace": ns},
        "spec": {"holderIdentity": "gone_1", "leaseDurationSeconds": 15, "renewTime": micro_time()},
    }
    cp.api("POST", LEASES.format(ns=ns), lease)
    stale = {"spec": {"renewTime": "2020-01-01T00:00:00.000000Z"}}
    cp.api("PATCH", LEASES.format(ns=ns) + f"/abc.{group.group}", stale, MERGE)


# -- 1. a CSI driver's node plugin deleted with the pods that use its volumes -----------------

REGISTRY = "/var/lib/kubelet/plugins_registry/"


def plugin_body(name: str, node: str, driver: str) -> JSON:
    """A CSI node plugin pod as its DaemonSet runs it: node-driver-registrar mounts the
    kubelet's plugin registry and names the driver's socket (kubernetes-csi's deployment)."""
    body = pod_body(name, node=node, labels={"csi-driver": driver})
    registrar = body["spec"]["containers"][0]
    registrar["name"] = "node-driver-registrar"
    registrar["args"] = [f"--kubelet-registration-path=/var/lib/kubelet/plugins/{driver}/csi.sock"]
    body["spec"]["volumes"] = [
        {"name": "registration-dir", "hostPath": {"path": REGISTRY, "type": "Directory"}},
        {"name": "plugin-dir", "hostPath": {"path": f"/var/lib/kubelet/plugins/{driver}"}},
    ]
    return body


class NodeKubelet(threading.Thread):
    """The kubelet of one node, for what these tests need: it renews the node's Lease; a
    deleted plugin pod goes at once and its driver leaves the node's CSINode; a deleted pod
    with a CSI volume is torn down once its grace period is over: its containers are killed
    (status terminated, phase Failed), then its volumes unmounted through the driver, which
    must still be registered on the node, else the pod stays (as the real kubelet leaves it,
    retrying); any other deleted pod is confirmed."""

    def __init__(self, cp: ControlPlane, node: str) -> None:
        super().__init__(daemon=True)
        self.cp, self.node = cp, node
        self.stopped = threading.Event()
        self.killed: set[str] = set()
        KUBELETS.append(self)
        self.start()

    def _drivers(self) -> list[str]:
        csinode = get_or_none(self.cp, f"/apis/storage.k8s.io/v1/csinodes/{self.node}") or {}
        return [d["name"] for d in (csinode.get("spec") or {}).get("drivers") or []]

    def _unregister(self, driver: str) -> None:
        kept = [{"name": d, "nodeID": self.node} for d in self._drivers() if d != driver]
        path = f"/apis/storage.k8s.io/v1/csinodes/{self.node}"
        self.cp.api("PATCH", path, {"spec": {"drivers": kept}}, MERGE)

    def _volume_drivers(self, pod: JSON) -> list[str]:
        ns, drivers = pod["metadata"]["namespace"], []
        for volume in pod["spec"].get("volumes") or []:
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            pvc = claim and get_or_none(
                self.cp, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{claim}"
            )
            name = pvc and pvc["spec"].get("volumeName")
            pv = name and get_or_none(self.cp, f"/api/v1/persistentvolumes/{name}")
            if pv:
                drivers.append(pv["spec"]["csi"]["driver"])
        return drivers

    def _tear_down(self, pod: JSON) -> None:
        meta = pod["metadata"]
        ns, name = meta["namespace"], meta["name"]
        path = f"/api/v1/namespaces/{ns}/pods/{name}"
        driver = meta.get("labels", {}).get("csi-driver")
        if driver:  # a node plugin: its socket goes, the kubelet unregisters the driver
            self._unregister(driver)
            delete(self.cp, path, grace_period=0)
            return
        drivers = self._volume_drivers(pod)
        if not drivers:
            delete(self.cp, path, grace_period=0)
            return
        deadline = datetime.fromisoformat(meta["deletionTimestamp"].replace("Z", "+00:00"))
        if datetime.now(timezone.utc) < deadline:
            return  # containers still stopping: the volumes come after them
        if name not in self.killed:  # marked only once written: a failed write is retried
            set_pod_status(self.cp, ns, name, "Failed", {"app": "terminated:137"})
            self.killed.add(name)
        if set(drivers) <= set(self._drivers()):
            delete(self.cp, path, grace_period=0)  # unmounted through the driver

    def run(self) -> None:
        pods = f"/api/v1/pods?fieldSelector=spec.nodeName%3D{self.node}"
        lease = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.node}"
        while not self.stopped.wait(0.3):
            try:
                self.cp.api("PATCH", lease, {"spec": {"renewTime": micro_time()}}, MERGE)
                for pod in self.cp.api("GET", pods).get("items") or []:
                    if pod["metadata"].get("deletionTimestamp"):
                        self._tear_down(pod)
            except Exception:  # the control plane restarting, a conflict: try again
                continue


def csi_setup(cp: ControlPlane, node: str, prefix: str, plugin_in: str, consumer_in: str) -> str:
    """A CSI driver of its own (CSIDriver, registered on node), its node plugin pod in
    plugin_in, and pod app-0 in consumer_in using a claim bound to a volume of it. The driver's
    name."""
    driver = f"{prefix}-{secrets.token_hex(3)}.csi.preflight.test"
    create_csidriver(cp, driver, attach_required=False)
    path = f"/apis/storage.k8s.io/v1/csinodes/{node}"
    csinode = get_or_none(cp, path)
    if csinode is None:
        create_csinode(cp, node, [driver])
    else:  # the kubelet registers one more driver
        drivers = [*(csinode["spec"].get("drivers") or []), {"name": driver, "nodeID": node}]
        cp.api("PATCH", path, {"spec": {"drivers": drivers}}, MERGE)
    plugin = plugin_body(f"csi-node-{secrets.token_hex(2)}", node, driver)
    cp.api("POST", f"/api/v1/namespaces/{plugin_in}/pods", plugin)
    pv = f"pv-{prefix}-{secrets.token_hex(3)}"
    claim, _ = create_bound_volume(cp, consumer_in, "data", pv, driver)
    assert "kubernetes.io/pvc-protection" in claim["metadata"]["finalizers"]
    consumer = pod_body("app-0", node=node, volumes=[pvc_volume("data", "data")], grace_period=2)
    cp.api("POST", f"/api/v1/namespaces/{consumer_in}/pods", consumer)
    set_pod_status(cp, consumer_in, "app-0", "Running")
    return driver


def test_a_csi_node_plugin_deleted_with_the_pods_using_its_volumes(
    control_plane: ControlPlane,
    reader: Any,
    admin: Path,
    pvc_protection: None,
    leftovers: list[str],
) -> None:
    cp = control_plane
    node = f"pf-csi-{secrets.token_hex(3)}"
    create_node(cp, node)
    NodeKubelet(cp, node)
    doomed = create_namespace(cp, unique_ns("pf-csi"))["metadata"]["name"]
    csi_setup(cp, node, "same", doomed, doomed)
    # twin: the driver's node plugin runs in a namespace that stays
    home = create_namespace(cp, unique_ns("pf-csi-home"))["metadata"]["name"]
    twin = create_namespace(cp, unique_ns("pf-csi-twin"))["metadata"]["name"]
    csi_setup(cp, node, "other", home, twin)

    report, found = blocked(
        cp, reader, "ns", doomed, expect=("Pod", "app-0", "csi-driver-missing", "likely")
    )
    assert found["object"]["namespace"] == doomed
    said = " ".join(e["message"] for e in found["evidence"])
    assert "PVC data -> PV" in said and "the kubelet unregisters the driver" in said
    clear(cp, reader, "ns", twin)

    delete(cp, f"/api/v1/namespaces/{doomed}")
    delete(cp, f"/api/v1/namespaces/{twin}")
    wait_for(lambda: namespace_gone(cp, twin), timeout=SETTLE * 2, message="twin namespace gone")
    pod = f"/api/v1/namespaces/{doomed}/pods/app-0"
    leftovers += [f"/api/v1/namespaces/{doomed}/persistentvolumeclaims/data", pod]
    still_terminating(cp, pod, seconds=6)
    # what the user sees once the kubelet has stopped the containers (under load, after the
    # namespace controller reached the pod and its grace period ran out): only the volume stays
    wait_for(
        lambda: (get_or_none(cp, pod) or {}).get("status", {}).get("phase") == "Failed",
        timeout=SETTLE * 2,
        message="the kubelet stopped app-0's containers",
    )
    assert main_blocker(admin, doomed, "Pod", "app-0") == "csi-driver-missing"


# -- 2. a namespace's own spec finalizer whose owner is dead ----------------------------------


class NamespaceOwner(Operator):
    """A live operator that owns a namespace spec finalizer `<group>/guard`: it removes it
    through /finalize from a namespace being deleted, at once."""

    def _reconcile(self) -> None:
        guard = f"{self.group.group}/guard"
        for ns in self.cp.api("GET", "/api/v1/namespaces").get("items") or []:
            finalizers = ns.get("spec", {}).get("finalizers") or []
            if ns["metadata"].get("deletionTimestamp") and guard in finalizers:
                ns["spec"]["finalizers"] = [f for f in finalizers if f != guard]
                self.cp.api("PUT", f"/api/v1/namespaces/{ns['metadata']['name']}/finalize", ns)


def test_a_namespace_spec_finalizer_whose_owner_is_dead(
    control_plane: ControlPlane, reader: Any, admin: Path, leftovers: list[str]
) -> None:
    cp = control_plane
    node = f"pf-nsfin-{secrets.token_hex(3)}"
    create_node(cp, node)
    home = create_namespace(cp, unique_ns("pf-nsfin-home"))["metadata"]["name"]
    group = Group(cp, "ns-guard")
    dead_owner(cp, home, group)
    ns = unique_ns("pf-nsfin")
    create_namespace(cp, ns, spec_finalizers=[f"{group.group}/guard"])
    # twin: the same kind of finalizer, its owner running in a namespace that stays
    twin_group = Group(cp, "ns-guard-twin")
    NamespaceOwner(cp, home, twin_group, node)
    twin = unique_ns("pf-nsfin-twin")
    create_namespace(cp, twin, spec_finalizers=[f"{twin_group.group}/guard"])
    # a race: the owner runs in the namespace it guards; it sees the deletion before its pod
    # goes and removes its finalizer at once, so only `possible` is said (undecided)
    race_group = Group(cp, "ns-guard-race")
    race = unique_ns("pf-nsfin-race")
    create_namespace(cp, race, spec_finalizers=[f"{race_group.group}/guard"])
    NamespaceOwner(cp, race, race_group, node)

    _, found = blocked(
        cp, reader, "ns", ns, expect=("Namespace", ns, "namespace-finalizer", "likely")
    )
    assert found["evidence"][0]["message"] == f"spec.finalizers lists {group.group}/guard"
    clear(cp, reader, "ns", twin)
    code, raced = preflight(cp, reader, "ns", race)
    assert (code, raced["verdict"]) == (4, "undecided"), raced
    assert [(p["type"], p["confidence"]) for p in raced["predictions"]] == [
        ("namespace-finalizer", "possible")
    ]

    for name in (ns, twin, race):
        delete(cp, f"/api/v1/namespaces/{name}")
    leftovers.append(f"/api/v1/namespaces/{ns}")
    wait_for(lambda: namespace_gone(cp, twin), timeout=SETTLE * 2, message="twin namespace gone")
    wait_for(lambda: namespace_gone(cp, race), timeout=SETTLE * 2, message="the race was won")

    def emptied() -> bool:  # the content and `kubernetes` are gone, the guard is left
        got = get_or_none(cp, f"/api/v1/namespaces/{ns}") or {}
        return bool(got.get("spec", {}).get("finalizers") == [f"{group.group}/guard"])

    wait_for(emptied, timeout=SETTLE * 2, message="namespace emptied")
    still_terminating(cp, f"/api/v1/namespaces/{ns}", seconds=4)
    assert main_blocker(admin, ns, "Namespace", ns) == "namespace-finalizer"


# -- 3. a dependent of a cluster-scoped object, in another namespace ---------------------------


class ConfigMapOwner(Operator):
    """A live operator whose finalizer `<group>/cleanup` is on ConfigMaps: it removes it from
    those being deleted, in any namespace."""

    def _reconcile(self) -> None:
        for cm in self.cp.api("GET", "/api/v1/configmaps").get("items") or []:
            meta = cm["metadata"]
            finalizers = meta.get("finalizers") or []
            if meta.get("deletionTimestamp") and self.group.finalizer in finalizers:
                kept = [f for f in finalizers if f != self.group.finalizer]
                path = f"/api/v1/namespaces/{meta['namespace']}/configmaps/{meta['name']}"
                self.cp.api("PATCH", path, {"metadata": {"finalizers": kept or None}}, MERGE)


def owned_configmap(cp: ControlPlane, ns: str, name: str, owner: JSON, finalizer: str) -> str:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "finalizers": [finalizer],
            "ownerReferences": [owner_ref(owner)],
        },
    }
    cp.api("POST", f"/api/v1/namespaces/{ns}/configmaps", body)
    return f"/api/v1/namespaces/{ns}/configmaps/{name}"


def cluster_role(cp: ControlPlane, name: str) -> JSON:
    body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": []}  # fmt: skip
    made: JSON = cp.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", body)
    return dict(made, apiVersion="rbac.authorization.k8s.io/v1", kind="ClusterRole")


def test_a_dependent_of_a_cluster_scoped_object_in_another_namespace(
    control_plane: ControlPlane, reader: Any, admin: Path, leftovers: list[str]
) -> None:
    cp = control_plane
    ns = create_namespace(cp, unique_ns("pf-csd"))["metadata"]["name"]
    dead = Group(cp, "csd-dead")
    dead_owner(cp, ns, dead)
    owner = cluster_role(cp, f"pf-owner-{secrets.token_hex(3)}")
    stuck = owned_configmap(cp, ns, "dependent", owner, dead.finalizer)
    # twin: its dependent's finalizer owner runs
    node = f"pf-csd-{secrets.token_hex(3)}"
    create_node(cp, node)
    live = Group(cp, "csd-live")
    ConfigMapOwner(cp, ns, live, node)
    twin_owner = cluster_role(cp, f"pf-twin-{secrets.token_hex(3)}")
    gone = owned_configmap(cp, ns, "twin-dependent", twin_owner, live.finalizer)
    name, twin_name = owner["metadata"]["name"], twin_owner["metadata"]["name"]

    report, _ = blocked(
        cp,
        reader,
        f"clusterrole/{name}",
        expect=("ConfigMap", "dependent", "finalizer", "likely"),
    )
    assert report["doomed"] == {"ClusterRole": 1, "ConfigMap": 1}
    twin_report = clear(cp, reader, f"clusterrole/{twin_name}")
    assert twin_report["doomed"] == {"ClusterRole": 1, "ConfigMap": 1}

    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    delete(cp, f"{roles}/{name}")
    delete(cp, f"{roles}/{twin_name}")
    leftovers.append(stuck)

    def collected() -> bool:  # the garbage collector deleted both dependents
        obj = get_or_none(cp, stuck)
        return get_or_none(cp, gone) is None and bool(
            obj and obj["metadata"].get("deletionTimestamp")
        )

    wait_for(collected, timeout=SETTLE * 3, message="dependents collected", ignore=(ApiError,))
    still_terminating(cp, stuck, seconds=4)
    assert main_blocker(admin, ns, "ConfigMap", "dependent") == "finalizer"
