"""Play the kubelet (and other absent components) through the API, with plain JSON dicts.

The control plane has no kubelet, scheduler, CSI drivers or webhook backends. These helpers
write what those would write: Node status and Leases, pod status, CSINode objects,
VolumeAttachments, Events. Pods are created with spec.nodeName set, so no scheduler is
needed, and a deleted pod stays Terminating because no kubelet confirms it.

Cluster-wide objects (webhooks, APIServices) affect every test sharing the control plane:
scope webhooks with `namespace=` and delete APIServices when the test ends.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from tests.e2e.controlplane import ApiError, ControlPlane

JSON = dict[str, Any]
T = TypeVar("T")

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
LEASE_DURATION = 40  # kubelet default, seconds
NODE_LEASE_NS = "kube-node-lease"

# --- time and names ------------------------------------------------------------------------


def now(offset_seconds: float = 0) -> datetime:
    return datetime.now(timezone.utc) + timedelta(seconds=offset_seconds)


def rfc3339(when: datetime | None = None) -> str:
    """metav1.Time: second precision, Z suffix."""
    return (when or now()).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(when: datetime | None = None) -> str:
    """metav1.MicroTime (Lease renewTime, events.k8s.io eventTime)."""
    return (when or now()).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _time(when: datetime | str | None) -> str:
    return when if isinstance(when, str) else rfc3339(when)


def unique_ns(prefix: str) -> str:
    """A namespace name no other test uses: prefix plus 6 random hex digits (max 63 chars)."""
    return f"{prefix[:56].rstrip('-')}-{secrets.token_hex(3)}"


def wait_for(
    predicate: Callable[[], T | None],
    timeout: float = 30.0,
    interval: float = 0.2,
    message: str = "condition",
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll until predicate returns something truthy and return it; TimeoutError otherwise.

    Exceptions in `ignore` (e.g. ApiError while an object does not exist yet) count as falsy.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = predicate()
            if last:
                return last
        except ignore as e:
            last = e
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {message}; last: {last!r}")
        time.sleep(interval)


def get(cp: ControlPlane, path: str) -> JSON:
    return cp.api("GET", path)


def get_or_none(cp: ControlPlane, path: str) -> JSON | None:
    try:
        return cp.api("GET", path)
    except ApiError as e:
        if e.status == 404:
            return None
        raise


def delete(
    cp: ControlPlane,
    path: str,
    grace_period: int | None = None,
    propagation: str | None = None,
) -> JSON:
    """DELETE with DeleteOptions; returns the object (now with deletionTimestamp) or a Status."""
    options: JSON = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if grace_period is not None:
        options["gracePeriodSeconds"] = grace_period
    if propagation is not None:
        options["propagationPolicy"] = propagation  # Foreground, Background, Orphan
    return cp.api("DELETE", path, options)


def ref(obj: JSON) -> JSON:
    """An ObjectReference (involvedObject) to obj."""
    meta = obj["metadata"]
    out: JSON = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj["kind"]}
    for key in ("name", "namespace", "uid", "resourceVersion"):
        if key in meta:
            out[key] = meta[key]
    return out


def owner_ref(obj: JSON, controller: bool = True, block_owner_deletion: bool = True) -> JSON:
    """An ownerReferences entry pointing at obj."""
    return {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": block_owner_deletion,
    }


# --- namespaces ----------------------------------------------------------------------------


def create_namespace(
    cp: ControlPlane,
    name: str,
    finalizers: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    spec_finalizers: Sequence[str] | None = None,
    wait_for_service_account: bool = True,
) -> JSON:
    """A namespace; `finalizers` go to metadata, `spec_finalizers` next to "kubernetes".

    Waits for the `default` ServiceAccount by default, since pod admission needs it.
    """
    meta: JSON = {"name": name, "labels": dict(labels or {})}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    body: JSON = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    if spec_finalizers:
        body["spec"] = {"finalizers": ["kubernetes", *spec_finalizers]}
    ns = cp.api("POST", "/api/v1/namespaces", body)
    if wait_for_service_account:
        wait_for(
            lambda: get_or_none(cp, f"/api/v1/namespaces/{name}/serviceaccounts/default"),
            message=f"serviceaccount {name}/default",
        )
    return ns


def namespace_conditions(cp: ControlPlane, name: str) -> dict[str, JSON]:
    """The namespace's status.conditions by type ({} before the controller's first pass)."""
    status = get(cp, f"/api/v1/namespaces/{name}").get("status", {})
    return {c["type"]: c for c in status.get("conditions") or []}


def create_configmap(
    cp: ControlPlane,
    ns: str,
    name: str,
    finalizers: Sequence[str] | None = None,
    annotations: dict[str, str] | None = None,
) -> JSON:
    """A ConfigMap: the simplest namespaced content to hold a namespace with a finalizer."""
    meta: JSON = {"name": name}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if annotations:
        meta["annotations"] = annotations
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}
    return cp.api("POST", f"/api/v1/namespaces/{ns}/configmaps", body)


# --- nodes and leases ----------------------------------------------------------------------


def condition(
    type_: str,
    status: str,
    reason: str = "",
    message: str = "",
    last_transition: datetime | str | None = None,
    heartbeat: datetime | str | None = None,
) -> JSON:
    """A NodeCondition (also fine for most other condition lists)."""
    out: JSON = {
        "type": type_,
        "status": status,
        "lastHeartbeatTime": _time(heartbeat),
        "lastTransitionTime": _time(last_transition),
    }
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


_READY_REASONS = {
    "True": ("KubeletReady", "kubelet is posting ready status"),
    "False": ("KubeletNotReady", "container runtime is down"),
    "Unknown": ("NodeStatusUnknown", "Kubelet stopped posting node status."),
}


def _ready_condition(
    status: str, reason: str | None, message: str | None, last_transition: datetime | str | None
) -> JSON:
    default_reason, default_message = _READY_REASONS[status]
    return condition(
        "Ready", status, reason or default_reason, message or default_message, last_transition
    )


def csi_volume_name(driver: str, handle: str) -> str:
    """The unique volume name the kubelet reports in node.status.volumesInUse for CSI."""
    return f"kubernetes.io/csi/{driver}^{handle}"


def create_node(
    cp: ControlPlane,
    name: str,
    ready: bool | str = True,
    conditions: Sequence[JSON] = (),
    volumes_in_use: Sequence[str] = (),
    volumes_attached: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    taints: Sequence[JSON] = (),
    lease: bool = True,
) -> JSON:
    """A Node with kubelet-like status, plus its Lease in kube-node-lease (renewed now).

    `ready` is True/False or "True"/"False"/"Unknown"; `conditions` add or replace by type
    (e.g. condition("DiskPressure", "True")).
    """
    node_labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        **(labels or {}),
    }
    body: JSON = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels},
        "spec": {"taints": list(taints)} if taints else {},
    }
    node = cp.api("POST", "/api/v1/nodes", body)
    status = _node_status(name, ready, conditions, volumes_in_use, volumes_attached)
    node = cp.api("PATCH", f"/api/v1/nodes/{name}/status", {"status": status}, MERGE)
    if lease:
        _create_lease(cp, node)
    return node


def _node_status(
    name: str,
    ready: bool | str,
    conditions: Sequence[JSON],
    volumes_in_use: Sequence[str],
    volumes_attached: Sequence[str],
) -> JSON:
    ready_status = ready if isinstance(ready, str) else ("True" if ready else "False")
    by_type = {
        "MemoryPressure": condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        "DiskPressure": condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        "PIDPressure": condition("PIDPressure", "False", "KubeletHasSufficientPID"),
        "Ready": _ready_condition(ready_status, None, None, None),
    }
    by_type.update({c["type"]: c for c in conditions})
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "conditions": list(by_type.values()),
        "addresses": [
            {"type": "InternalIP", "address": "192.0.2.10"},
            {"type": "Hostname", "address": name},
        ],
        "capacity": capacity,
        "allocatable": capacity,
        "nodeInfo": {
            "kubeletVersion": "v1.36.3",
            "containerRuntimeVersion": "containerd://2.1.0",
            "kernelVersion": "6.1.0",
            "osImage": "Test Linux",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
            "kubeProxyVersion": "",
        },
        "volumesInUse": list(volumes_in_use),
        "volumesAttached": [{"name": v, "devicePath": ""} for v in volumes_attached],
    }


def _create_lease(cp: ControlPlane, node: JSON) -> JSON:
    name = node["metadata"]["name"]
    body: JSON = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        # The kubelet makes the Node own its Lease, so the GC removes it with the node.
        "metadata": {
            "name": name,
            "ownerReferences": [owner_ref(node, controller=False, block_owner_deletion=False)],
        },
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": LEASE_DURATION,
            "renewTime": micro_time(),
        },
    }
    return cp.api("POST", f"/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NS}/leases", body)


def set_node_ready(
    cp: ControlPlane,
    name: str,
    status: str = "True",
    reason: str | None = None,
    message: str | None = None,
    last_transition: datetime | str | None = None,
) -> JSON:
    """Set the Ready condition ("True", "False" or "Unknown"); other conditions stay."""
    cond = _ready_condition(status, reason, message, last_transition)
    patch = {"status": {"conditions": [cond]}}  # strategic merge: merges by condition type
    return cp.api("PATCH", f"/api/v1/nodes/{name}/status", patch, STRATEGIC)


def set_node_conditions(cp: ControlPlane, name: str, conditions: Sequence[JSON]) -> JSON:
    """Add or replace conditions by type (e.g. DiskPressure=True)."""
    patch = {"status": {"conditions": list(conditions)}}
    return cp.api("PATCH", f"/api/v1/nodes/{name}/status", patch, STRATEGIC)


def set_node_volumes(
    cp: ControlPlane, name: str, in_use: Sequence[str] = (), attached: Sequence[str] = ()
) -> JSON:
    status = {
        "volumesInUse": list(in_use),
        "volumesAttached": [{"name": v, "devicePath": ""} for v in attached],
    }
    return cp.api("PATCH", f"/api/v1/nodes/{name}/status", {"status": status}, MERGE)


def taint_node(cp: ControlPlane, name: str, taints: Sequence[JSON]) -> JSON:
    """Replace spec.taints, e.g. [{"key": "node.kubernetes.io/out-of-service", ...}]."""
    return cp.api("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": list(taints)}}, MERGE)


def renew_lease(cp: ControlPlane, name: str, when: datetime | None = None) -> JSON:
    """Set the node Lease's renewTime (now by default), as the kubelet does every 10 s."""
    patch = {"spec": {"renewTime": micro_time(when)}}
    return cp.api(
        "PATCH",
        f"/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NS}/leases/{name}",
        patch,
        MERGE,
    )


def stale_lease(cp: ControlPlane, name: str, age_seconds: float) -> JSON:
    """Make the Lease look last renewed `age_seconds` ago (a kubelet that went silent)."""
    return renew_lease(cp, name, now(-age_seconds))


def delete_node(cp: ControlPlane, name: str) -> JSON:
    return delete(cp, f"/api/v1/nodes/{name}")


# --- pods ----------------------------------------------------------------------------------


def pvc_volume(name: str, claim: str) -> JSON:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


def empty_dir_volume(name: str) -> JSON:
    return {"name": name, "emptyDir": {}}


def create_pod(
    cp: ControlPlane,
    ns: str,
    name: str,
    node: str | None = None,
    containers: Sequence[str | JSON] = ("app",),
    volumes: Sequence[JSON] = (),
    finalizers: Sequence[str] | None = None,
    grace_period: int = 30,
    host_pid: bool = False,
    post_start: bool = False,
    pre_stop: bool = False,
    owner_refs: Sequence[JSON] | None = None,
    labels: Mapping[str, str] | None = None,
    init_containers: Sequence[str | JSON] = (),
    share_process_namespace: bool = False,
) -> JSON:
    """A pod bound to `node` (spec.nodeName set at creation: no scheduler needed).

    `containers` are names or full container dicts; each volume is mounted in the first
    container at /mnt/<volume name>.
    """
    lifecycle: JSON = {}
    if post_start:
        lifecycle["postStart"] = {"exec": {"command": ["/bin/sh", "-c", "sleep 1"]}}
    if pre_stop:
        lifecycle["preStop"] = {"exec": {"command": ["/bin/sh", "-c", "sleep 30"]}}
    specs = [_container(c, lifecycle) for c in containers]
    if volumes and specs:
        specs[0].setdefault("volumeMounts", []).extend(
            {"name": v["name"], "mountPath": f"/mnt/{v['name']}"} for v in volumes
        )
    spec: JSON = {
        "containers": specs,
        "terminationGracePeriodSeconds": grace_period,
        "restartPolicy": "Always",
    }
    if init_containers:
        spec["initContainers"] = [_container(c, {}) for c in init_containers]
    if node:
        spec["nodeName"] = node
    if volumes:
        spec["volumes"] = list(volumes)
    if host_pid:
        spec["hostPID"] = True
    if share_process_namespace:
        spec["shareProcessNamespace"] = True
    meta: JSON = {"name": name, "labels": dict(labels or {"app": name})}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if owner_refs:
        meta["ownerReferences"] = list(owner_refs)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    return cp.api("POST", f"/api/v1/namespaces/{ns}/pods", body)


def _container(c: str | JSON, lifecycle: JSON) -> JSON:
    if not isinstance(c, str):
        return dict(c)
    out: JSON = {"name": c, "image": PAUSE_IMAGE}
    if lifecycle:
        out["lifecycle"] = lifecycle
    return out


def container_state(spec: str | JSON) -> JSON:
    """A ContainerState from a short form, or a dict passed through.

    "running" | "waiting[:Reason]" | "terminated[:exitCode[:Reason]]",
    e.g. "waiting:ContainerCreating", "terminated:137", "terminated:0:Completed".
    """
    if not isinstance(spec, str):
        return dict(spec)
    kind, *rest = spec.split(":")
    started = rfc3339(now(-300))
    if kind == "running":
        return {"running": {"startedAt": started}}
    if kind == "waiting":
        return {"waiting": {"reason": rest[0] if rest else "ContainerCreating"}}
    if kind == "terminated":
        code = int(rest[0]) if rest else 0
        reason = rest[1] if len(rest) > 1 else ("Completed" if code == 0 else "Error")
        return {
            "terminated": {
                "exitCode": code,
                "reason": reason,
                "startedAt": started,
                "finishedAt": rfc3339(),
                "containerID": _container_id(),
            }
        }
    raise ValueError(f"unknown container state {spec!r}")


def _container_id() -> str:
    return f"containerd://{secrets.token_hex(32)}"


def _container_status(name: str, state: JSON) -> JSON:
    running = "running" in state
    status: JSON = {
        "name": name,
        "state": state,
        "ready": running,
        "started": running,
        "restartCount": 0,
        "image": PAUSE_IMAGE,
        "imageID": f"{PAUSE_IMAGE}@sha256:{'0' * 64}",
    }
    if "waiting" not in state:
        status["containerID"] = state.get("terminated", {}).get("containerID") or _container_id()
    return status


def set_pod_status(
    cp: ControlPlane,
    ns: str,
    name: str,
    phase: str = "Running",
    container_states: Mapping[str, str | JSON] | None = None,
    init_container_states: Mapping[str, str | JSON] | None = None,
    reason: str | None = None,
    message: str | None = None,
) -> JSON:
    """Write pod status as a kubelet would; container_states maps name -> short form.

    Containers not mentioned are "running" when phase is Running, else "waiting".
    Example: set_pod_status(cp, ns, "web", "Running", {"app": "terminated:137"}).
    """
    pod = get(cp, f"/api/v1/namespaces/{ns}/pods/{name}")
    default = "running" if phase == "Running" else "waiting"
    given = container_states or {}
    statuses = [
        _container_status(c["name"], container_state(given.get(c["name"], default)))
        for c in pod["spec"]["containers"]
    ]
    all_ready = all(s["ready"] for s in statuses)
    status: JSON = {
        "phase": phase,
        "hostIP": "192.0.2.10",
        "hostIPs": [{"ip": "192.0.2.10"}],
        "podIP": "10.244.0.10",
        "podIPs": [{"ip": "10.244.0.10"}],
        "startTime": rfc3339(now(-300)),
        "conditions": _pod_conditions(all_ready),
        "containerStatuses": statuses,
        "qosClass": "BestEffort",
    }
    if init_container_states:
        status["initContainerStatuses"] = [
            _container_status(n, container_state(s)) for n, s in init_container_states.items()
        ]
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    return cp.api("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status", {"status": status}, MERGE)


def _pod_conditions(ready: bool) -> list[JSON]:
    flag = "True" if ready else "False"
    return [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339()},
        {"type": "Initialized", "status": "True", "lastTransitionTime": rfc3339()},
        {"type": "ContainersReady", "status": flag, "lastTransitionTime": rfc3339()},
        {"type": "Ready", "status": flag, "lastTransitionTime": rfc3339()},
    ]


def remove_finalizers(cp: ControlPlane, path: str) -> JSON:
    """Empty metadata.finalizers (what the owning controller does when it is done)."""
    return cp.api("PATCH", path, {"metadata": {"finalizers": None}}, MERGE)


# --- storage -------------------------------------------------------------------------------


def create_csinode(cp: ControlPlane, node: str, drivers: Sequence[str]) -> JSON:
    """The CSINode the kubelet registers: one entry per CSI driver running on the node."""
    body: JSON = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": node},
        "spec": {"drivers": [{"name": d, "nodeID": node, "topologyKeys": None} for d in drivers]},
    }
    node_obj = get_or_none(cp, f"/api/v1/nodes/{node}")
    if node_obj is not None:  # the kubelet makes the Node own it
        body["metadata"]["ownerReferences"] = [owner_ref(node_obj, controller=False)]
    return cp.api("POST", "/apis/storage.k8s.io/v1/csinodes", body)


def create_csidriver(cp: ControlPlane, name: str, attach_required: bool = True) -> JSON:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": {"attachRequired": attach_required, "podInfoOnMount": False},
    }
    return cp.api("POST", "/apis/storage.k8s.io/v1/csidrivers", body)


def create_pv(
    cp: ControlPlane,
    name: str,
    driver: str,
    handle: str | None = None,
    claim: JSON | None = None,
    storage: str = "1Gi",
) -> JSON:
    """A CSI PersistentVolume; with `claim` (a PVC object) it is Bound to it."""
    spec: JSON = {
        "capacity": {"storage": storage},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Delete",
        "storageClassName": "",
        "csi": {"driver": driver, "volumeHandle": handle or f"vol-{name}"},
    }
    if claim is not None:
        spec["claimRef"] = {**ref(claim), "kind": "PersistentVolumeClaim"}
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
    }
    cp.api("POST", "/api/v1/persistentvolumes", body)
    phase = "Bound" if claim is not None else "Available"
    return cp.api(
        "PATCH", f"/api/v1/persistentvolumes/{name}/status", {"status": {"phase": phase}}, MERGE
    )


def create_pvc(
    cp: ControlPlane, ns: str, name: str, volume_name: str | None = None, storage: str = "1Gi"
) -> JSON:
    """A PVC (storageClassName "" so no default class); with `volume_name` it is Bound."""
    spec: JSON = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}},
        "storageClassName": "",
    }
    if volume_name:
        spec["volumeName"] = volume_name
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }
    cp.api("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", body)
    if not volume_name:
        return get(cp, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")
    status = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": storage}}
    return cp.api(
        "PATCH",
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}/status",
        {"status": status},
        MERGE,
    )


def create_bound_volume(
    cp: ControlPlane, ns: str, pvc: str, pv: str, driver: str, handle: str | None = None
) -> tuple[JSON, JSON]:
    """A PVC and a CSI PV bound to each other; returns (pvc, pv)."""
    claim = create_pvc(cp, ns, pvc, volume_name=pv)
    volume = create_pv(cp, pv, driver, handle, claim=claim)
    return claim, volume


def volume_attachment_name(handle: str, attacher: str, node: str) -> str:
    """The name the attach/detach controller gives a CSI VolumeAttachment."""
    return "csi-" + hashlib.sha256(f"{handle}{attacher}{node}".encode()).hexdigest()


def create_volume_attachment(
    cp: ControlPlane,
    name: str | None,
    node: str,
    pv: str,
    attacher: str,
    attached: bool = True,
    detach_error: str | None = None,
) -> JSON:
    """A VolumeAttachment for PV `pv` on `node`; name None derives it as the controller does."""
    if name is None:
        handle = get(cp, f"/api/v1/persistentvolumes/{pv}")["spec"]["csi"]["volumeHandle"]
        name = volume_attachment_name(handle, attacher, node)
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {"attacher": attacher, "nodeName": node, "source": {"persistentVolumeName": pv}},
    }
    cp.api("POST", "/apis/storage.k8s.io/v1/volumeattachments", body)
    status: JSON = {"attached": attached}
    if detach_error:
        status["detachError"] = {"time": rfc3339(), "message": detach_error}
    return cp.api(
        "PATCH",
        f"/apis/storage.k8s.io/v1/volumeattachments/{name}/status",
        {"status": status},
        MERGE,
    )


# --- events --------------------------------------------------------------------------------


def create_event(
    cp: ControlPlane,
    ns: str,
    involved_object: JSON,
    reason: str,
    message: str,
    type: str = "Warning",
    count: int = 1,
    first_timestamp: datetime | str | None = None,
    last_timestamp: datetime | str | None = None,
    component: str = "kubelet",
    host: str | None = None,
) -> JSON:
    """A core/v1 Event about `involved_object` (an object dict or an ObjectReference)."""
    obj_ref = ref(involved_object) if "metadata" in involved_object else dict(involved_object)
    source: JSON = {"component": component}
    if host:
        source["host"] = host
    body: JSON = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{obj_ref['name']}.{secrets.token_hex(8)}", "namespace": ns},
        "involvedObject": obj_ref,
        "reason": reason,
        "message": message,
        "type": type,
        "count": count,
        "firstTimestamp": _time(first_timestamp),
        "lastTimestamp": _time(last_timestamp),
        "source": source,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }
    return cp.api("POST", f"/api/v1/namespaces/{ns}/events", body)


# --- webhooks, aggregated APIs, CRDs -------------------------------------------------------


def webhook_rule(
    operations: Sequence[str],
    resources: Sequence[str],
    api_groups: Sequence[str] = ("",),
    api_versions: Sequence[str] = ("*",),
    scope: str = "*",
) -> JSON:
    return {
        "operations": list(operations),
        "apiGroups": list(api_groups),
        "apiVersions": list(api_versions),
        "resources": list(resources),
        "scope": scope,
    }


def create_validating_webhook(
    cp: ControlPlane,
    name: str,
    service_ns: str,
    service_name: str,
    rules: Sequence[JSON],
    failure_policy: str = "Fail",
    namespace: str | None = None,
    path: str = "/validate",
    timeout_seconds: int = 5,
) -> JSON:
    """A ValidatingWebhookConfiguration with one webhook backed by a Service.

    `namespace` limits it to that namespace: without it, a Fail webhook with no backend
    breaks every test sharing the cluster.
    """
    webhook: JSON = {
        "name": f"{name}.webhooks.test.example.com",
        "clientConfig": {
            "service": {"namespace": service_ns, "name": service_name, "path": path, "port": 443}
        },
        "rules": list(rules),
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": timeout_seconds,
    }
    if namespace:
        webhook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [webhook],
    }
    return cp.api(
        "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", body
    )


def create_apiservice(
    cp: ControlPlane,
    group: str,
    version: str,
    service_ns: str,
    service_name: str,
    port: int = 443,
) -> JSON:
    """An aggregated APIService. Unavailable ones block namespace deletion cluster-wide:
    delete it when the test ends."""
    body = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}"},
        "spec": {
            "group": group,
            "version": version,
            "service": {"namespace": service_ns, "name": service_name, "port": port},
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
        },
    }
    return cp.api("POST", "/apis/apiregistration.k8s.io/v1/apiservices", body)


def apiservice_condition(cp: ControlPlane, name: str, type_: str = "Available") -> JSON | None:
    svc = get(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")
    conds: list[JSON] = svc.get("status", {}).get("conditions") or []
    return next((c for c in conds if c.get("type") == type_), None)


def create_crd(
    cp: ControlPlane,
    group: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    conversion_webhook_service: tuple[str, str] | None = None,
    versions: Sequence[str] = ("v1",),
    timeout: float = 30.0,
) -> JSON:
    """A CRD with an open schema; waits until Established.

    versions[0] is the storage version; all are served. conversion_webhook_service is
    (namespace, name) of the Service that would convert between them.
    """
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    spec: JSON = {
        "group": group,
        "names": {
            "kind": kind,
            "plural": plural,
            "singular": kind.lower(),
            "listKind": f"{kind}List",
        },
        "scope": "Namespaced" if namespaced else "Cluster",
        "versions": [
            {"name": v, "served": True, "storage": i == 0, "schema": schema}
            for i, v in enumerate(versions)
        ],
    }
    if conversion_webhook_service:
        svc_ns, svc_name = conversion_webhook_service
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {"namespace": svc_ns, "name": svc_name, "path": "/convert"}
                },
            },
        }
    name = f"{plural}.{group}"
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": spec,
    }
    cp.api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
    return wait_for(
        lambda: _established(cp, name), timeout=timeout, message=f"CRD {name} Established"
    )


def _established(cp: ControlPlane, name: str) -> JSON | None:
    crd = get(cp, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    conds = crd.get("status", {}).get("conditions") or []  # null until the first update
    ok = any(c["type"] == "Established" and c["status"] == "True" for c in conds)
    return crd if ok else None


def create_custom_object(
    cp: ControlPlane,
    group: str,
    version: str,
    plural: str,
    kind: str,
    name: str,
    ns: str | None = None,
    finalizers: Sequence[str] | None = None,
    spec: JSON | None = None,
) -> JSON:
    meta: JSON = {"name": name}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    body = {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": meta, "spec": spec or {}}
    base = f"/apis/{group}/{version}" + (f"/namespaces/{ns}" if ns else "")
    return cp.api("POST", f"{base}/{plural}", body)
