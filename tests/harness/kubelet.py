"""Play the kubelet through the API, with plain JSON dicts.

The control plane has no kubelet and no scheduler. These helpers write what a kubelet would:
Node status and Leases, pod status, CSINode objects. Pods are created with spec.nodeName set,
so no scheduler is needed, and a deleted pod stays Terminating because no kubelet confirms it.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime

from tests.harness.api import (
    JSON,
    MERGE,
    STRATEGIC,
    condition,
    created_in,
    delete,
    get,
    get_or_none,
    micro_time,
    now,
    owner_ref,
    rfc3339,
)
from tests.harness.controlplane import ControlPlane

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
LEASE_DURATION = 40  # kubelet default, seconds
NODE_LEASE_NS = "kube-node-lease"

# --- nodes and leases ----------------------------------------------------------------------


_READY_REASONS = {
    "True": ("KubeletReady", "kubelet is posting ready status"),
    "False": ("KubeletNotReady", "container runtime is down"),
    "Unknown": ("NodeStatusUnknown", "Kubelet stopped posting node status."),
}


def _ready_condition(
    status: str,
    reason: str | None,
    message: str | None,
    last_transition: datetime | str | None,
    heartbeat: datetime | str | None = None,
) -> JSON:
    default_reason, default_message = _READY_REASONS[status]
    return condition(
        "Ready",
        status,
        reason or default_reason,
        message or default_message,
        last_transition,
        heartbeat,
    )


def node_conditions(
    ready: str,
    heartbeat: datetime | str | None = None,
    since: datetime | str | None = None,
    ready_since: datetime | str | None = None,
) -> list[JSON]:
    """The conditions a kubelet posts: no memory, disk or PID pressure, and Ready `ready`
    ("True", "False" or "Unknown"), last posted at `heartbeat`, unchanged since `since`
    (Ready since `ready_since`, default `since`); None is now."""
    pressure = [
        condition(kind, "False", reason, "", since, heartbeat)
        for kind, reason in (
            ("MemoryPressure", "KubeletHasSufficientMemory"),
            ("DiskPressure", "KubeletHasNoDiskPressure"),
            ("PIDPressure", "KubeletHasSufficientPID"),
        )
    ]
    ready_since = since if ready_since is None else ready_since
    return [*pressure, _ready_condition(ready, None, None, ready_since, heartbeat)]


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
    by_type = {c["type"]: c for c in node_conditions(ready_status)}
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
    body = lease_body(node)
    return cp.api("POST", f"/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NS}/leases", body)


def lease_body(node: JSON, renewed: datetime | None = None) -> JSON:
    """The node's Lease in kube-node-lease, last renewed at `renewed` (None: now)."""
    name = node["metadata"]["name"]
    return {
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
            "renewTime": micro_time(renewed),
        },
    }


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


def pod_body(
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
    """A Pod bound to `node`. `containers` are names or full container dicts; each volume is
    mounted in the first container at /mnt/<volume name>."""
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
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


# A pod bound to `node` (spec.nodeName set at creation: no scheduler needed): create_pod(cp,
# ns, then pod_body's arguments).
create_pod = created_in("/api/v1/namespaces/{ns}/pods", pod_body)


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


# --- volumes on the node ---------------------------------------------------------------------


def csi_volume_name(driver: str, handle: str) -> str:
    """The unique volume name the kubelet reports in node.status.volumesInUse for CSI."""
    return f"kubernetes.io/csi/{driver}^{handle}"


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
