"""Stuck situations built on the real control plane, one function each.

Shared by the end-to-end tests, `make demo` and the benchmarks. Each builds the objects,
deletes what must be terminating, plays the kubelet where one would act, and returns the
names the caller needs. Nothing here waits for our plugin; callers assert on its output.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tests.harness.api import (
    JSON,
    condition,
    create_event,
    create_namespace,
    delete,
    get,
    now,
    owner_ref,
)
from tests.harness.api_extensions import (
    create_apiservice,
    create_crd,
    create_custom_object,
    create_validating_webhook,
    webhook_rule,
)
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import (
    create_csinode,
    create_node,
    create_pod,
    csi_volume_name,
    pvc_volume,
    set_pod_status,
    stale_lease,
)
from tests.harness.storage import create_bound_volume, create_csidriver, create_volume_attachment

MISSING_DRIVER = "ebs.csi.example.com"


@dataclass(frozen=True)
class Stuck:
    """A pod a scenario left Terminating (the one class of that name)."""

    namespace: str
    name: str
    node: str | None = None


def pod_path(ns: str, name: str) -> str:
    return f"/api/v1/namespaces/{ns}/pods/{name}"


def wait_past_deadline(deleted: JSON) -> None:
    """Sleep until a just-deleted pod shows as past its deadline (overdue by at least 1s).

    deleted is the DELETE answer. deletionTimestamp has second precision, so the pod counts as
    overdue only a second after the timestamp the API shows.
    """
    shown = datetime.fromisoformat(deleted["metadata"]["deletionTimestamp"].replace("Z", "+00:00"))
    delay = (shown + timedelta(seconds=1.05) - now()).total_seconds()
    if delay > 0:
        time.sleep(delay)


def _deleted_pod(
    cp: ControlPlane,
    ns: str,
    name: str,
    state: str,
    phase: str = "Running",
    deletion_grace: int | None = None,
    **pod: Any,
) -> tuple[JSON, JSON]:
    """A pod (create_pod's keywords) whose kubelet reported `phase` with its container in
    `state`, then deleted: the pod as created and the DELETE answer."""
    created = create_pod(cp, ns, name, **pod)
    set_pod_status(cp, ns, name, phase, {"app": state})
    return created, delete(cp, pod_path(ns, name), grace_period=deletion_grace)


def _involved(pod: JSON) -> JSON:
    m = pod["metadata"]
    return {"kind": "Pod", "namespace": m["namespace"], "name": m["name"], "uid": m["uid"]}


def pod_on_missing_node(
    cp: ControlPlane, ns: str, name: str = "orphan-0", grace_period: int = 30
) -> Stuck:
    """The pod's node object is gone: no kubelet will ever confirm the deletion.

    With the default 30s grace period the pod is still inside it when this returns.
    """
    node = f"{ns}-gone"
    create_pod(cp, ns, name, node=node, grace_period=grace_period)
    delete(cp, pod_path(ns, name))
    return Stuck(ns, name, node)


def pod_on_dead_node(
    cp: ControlPlane, ns: str, name: str = "web-0", grace_period: int = 30
) -> Stuck:
    """The node stopped posting status: Ready=Unknown and a Lease not renewed for 10m.

    With the default 30s grace period the pod is still inside it when this returns.
    """
    node = f"{ns}-dead"
    create_node(
        cp,
        node,
        ready="Unknown",
        conditions=[
            condition(
                "Ready",
                "Unknown",
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
                now(-600),
            )
        ],
    )
    stale_lease(cp, node, 600)
    _deleted_pod(cp, ns, name, "running", node=node, grace_period=grace_period)
    return Stuck(ns, name, node)


def pod_with_running_containers(cp: ControlPlane, ns: str, name: str = "hung-0") -> Stuck:
    """A healthy node whose runtime never killed the container: FailedKillPod events."""
    node = f"{ns}-busy"
    create_node(cp, node)
    pod, _ = _deleted_pod(cp, ns, name, "running", node=node, grace_period=1)
    create_event(
        cp,
        ns,
        _involved(pod),
        "FailedKillPod",
        'error killing pod: failed to "KillContainer" for "app" with KillContainerError: '
        '"rpc error: code = DeadlineExceeded desc = context deadline exceeded"',
        count=12,
    )
    time.sleep(1.5)  # let the 1s grace period run out
    return Stuck(ns, name, node)


# The kubelet's event when the runtime times out stopping the pod's sandbox, as pasted in
# METR/vivaria#537 (containerd#6080): the runtime answers, but never finishes.
SANDBOX_KILL_TIMED_OUT = (
    'error killing pod: failed to "KillPodSandbox" for "{uid}" with KillPodSandboxError: '
    '"rpc error: code = DeadlineExceeded desc = context deadline exceeded"'
)


def pod_with_sandbox_kill_timed_out(cp: ControlPlane, ns: str, name: str = "box-0") -> Stuck:
    """A healthy node; the pod never got past ContainerCreating, and stopping its sandbox
    times out in the runtime: FailedKillPod with DeadlineExceeded, no container ever running."""
    node = f"{ns}-sandbox"
    create_node(cp, node)
    pod, deleted = _deleted_pod(
        cp, ns, name, "waiting:ContainerCreating", phase="Pending", node=node, grace_period=1
    )
    message = SANDBOX_KILL_TIMED_OUT.format(uid=pod["metadata"]["uid"])
    create_event(cp, ns, _involved(pod), "FailedKillPod", message, count=7)
    wait_past_deadline(deleted)
    return Stuck(ns, name, node)


# The kubelet's event when the CNI plugin's DEL fails, as pasted in projectcalico/calico#7647
# (the error) and spidernet-io/cni-plugins#47 (the event around it).
CNI_DEL_FAILED = (
    'error killing pod: failed to "KillPodSandbox" for "{uid}" with KillPodSandboxError: '
    '"rpc error: code = Unknown desc = failed to destroy network for sandbox '
    '\\"3bb433e9ee32e3402ad828c97ddfe322b9f2d88348cb004d01efd226aa0bfd5d\\": plugin '
    'type=\\"calico\\" failed (delete): netplugin failed with no error message: signal: killed"'
)


def pod_with_failing_network_teardown(cp: ControlPlane, ns: str, name: str = "dns-0") -> Stuck:
    """A healthy node; the container exited, but the CNI plugin fails to delete the pod's
    network, so the runtime cannot remove the sandbox: FailedKillPod events."""
    node = f"{ns}-cni"
    create_node(cp, node)
    pod, deleted = _deleted_pod(cp, ns, name, "terminated:0", node=node, grace_period=1)
    message = CNI_DEL_FAILED.format(uid=pod["metadata"]["uid"])
    create_event(cp, ns, _involved(pod), "FailedKillPod", message, count=42)
    wait_past_deadline(deleted)
    return Stuck(ns, name, node)


def pod_with_unreclaimed_volume(cp: ControlPlane, ns: str, name: str = "db-0") -> Stuck:
    """Containers exited, but the CSI driver that must unmount the volume is gone."""
    node = f"{ns}-storage"
    _unmount_fails_unregistered(cp, ns, name, node, MISSING_DRIVER)
    time.sleep(1.2)  # let the 1s grace period run out
    return Stuck(ns, name, node)


def _unmount_fails_unregistered(
    cp: ControlPlane, ns: str, name: str, node: str, driver: str
) -> JSON:
    """Pod `name` on `node`, its CSI volume (of `driver`, not registered on the node) in use,
    its containers exited, deleted with a 1s grace period, and the kubelet's FailedUnMount
    event; the DELETE answer."""
    handle = f"vol-{ns}"
    create_bound_volume(cp, ns, "data", f"pv-{ns}", driver, handle)
    create_node(cp, node, volumes_in_use=[csi_volume_name(driver, handle)])
    create_csinode(cp, node, drivers=[])  # the driver's node plugin is not registered
    # deleted with its grace period: grace 0 would remove it at once (no kubelet to wait for)
    volumes = [pvc_volume("data", "data")]
    pod, deleted = _deleted_pod(
        cp, ns, name, "terminated:0", node=node, volumes=volumes, grace_period=1
    )
    create_event(
        cp,
        ns,
        _involved(pod),
        "FailedUnMount",
        f'UnmountVolume.TearDown failed for volume "data": kubernetes.io/csi: '
        f"driver name {driver} not found in the list of registered CSI drivers",
    )
    return deleted


def _pod_held_by_finalizer(
    cp: ControlPlane, ns: str, name: str, node: str, finalizer: str, phase: str, state: str
) -> Stuck:
    """A finished pod on a healthy node, deleted at once: only its finalizer holds it."""
    create_node(cp, node)
    _deleted_pod(cp, ns, name, state, phase, 0, node=node, finalizers=[finalizer])
    return Stuck(ns, name, node)


def pod_with_finalizer(cp: ControlPlane, ns: str, name: str = "job-0") -> Stuck:
    """Containers done, node healthy: only a custom finalizer holds the pod."""
    return _pod_held_by_finalizer(
        cp, ns, name, f"{ns}-ok", "example.com/drain", "Succeeded", "terminated:0"
    )


def pod_in_grace_period(cp: ControlPlane, ns: str, name: str = "slow-0") -> Stuck:
    """Deleted with an hour of grace: listed, but not stuck."""
    node = f"{ns}-ok2"
    create_node(cp, node)
    _deleted_pod(cp, ns, name, "running", node=node, grace_period=3600)
    return Stuck(ns, name, node)


# Each scenario below returns once its pod is past its deadline (a 1s grace period), so the
# pod is stuck at once. Healthy nodes' Leases go stale 40s after creation (no kubelet renews
# them): call kubelet.renew_lease(cp, stuck.node) before asking the plugin about them.


def pod_on_silent_node(cp: ControlPlane, ns: str, name: str = "api-0") -> Stuck:
    """Ready=True is still the last word, but the node Lease was last renewed 10m ago."""
    node = f"{ns}-silent"
    create_node(cp, node)
    stale_lease(cp, node, 600)
    wait_past_deadline(_deleted_pod(cp, ns, name, "running", node=node, grace_period=1)[1])
    return Stuck(ns, name, node)


def pod_on_full_disk(cp: ControlPlane, ns: str, name: str = "logs-0") -> Stuck:
    """The runtime cannot remove the container: DiskPressure=True, "no space left on device"."""
    node = f"{ns}-full"
    disk = condition(
        "DiskPressure", "True", "KubeletHasDiskPressure", "kubelet has disk pressure", now(-900)
    )
    create_node(cp, node, conditions=[disk])
    pod, deleted = _deleted_pod(cp, ns, name, "running", node=node, grace_period=1)
    create_event(
        cp,
        ns,
        _involved(pod),
        "FailedSync",
        "error determining status: rpc error: code = Unknown desc = failed to remove container "
        '"3b1f": write /var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db: '
        "no space left on device",
        count=7,
    )
    wait_past_deadline(deleted)
    return Stuck(ns, name, node)


def pod_with_exec_hang(cp: ControlPlane, ns: str, name: str = "agent-0") -> Stuck:
    """hostPID and a postStart exec hook: the exec into an exited container hangs (docker)."""
    node = f"{ns}-exec"
    create_node(cp, node)
    _, deleted = _deleted_pod(
        cp, ns, name, "running", node=node, grace_period=1, host_pid=True, post_start=True
    )
    wait_past_deadline(deleted)
    return Stuck(ns, name, node)


def pod_with_unregistered_driver(cp: ControlPlane, ns: str, name: str = "db-1") -> Stuck:
    """The CSIDriver object exists, but its node plugin is not registered on the pod's node."""
    node = f"{ns}-csi"
    driver = f"{ns}.csi.example.com"
    create_csidriver(cp, driver)
    wait_past_deadline(_unmount_fails_unregistered(cp, ns, name, node, driver))
    return Stuck(ns, name, node)


MAINTENANCE_TAINT = {"key": "maintenance", "value": "true", "effect": "NoExecute"}


def _attached_volume(
    cp: ControlPlane,
    ns: str,
    node: str,
    registered: bool = True,
    taints: list[JSON] | None = None,
    detach_error: str | None = None,
) -> str:
    """Claim `data` bound to a CSI volume of driver <ns>.csi.example.com (installed), in use
    and attached on `node` (made with `taints`), the driver registered on its CSINode or not;
    the PV's name."""
    driver = f"{ns}.csi.example.com"
    handle = f"vol-{ns}"
    pv = f"pv-{ns}"
    create_csidriver(cp, driver)
    create_bound_volume(cp, ns, "data", pv, driver, handle)
    unique = csi_volume_name(driver, handle)
    create_node(cp, node, volumes_in_use=[unique], volumes_attached=[unique], taints=taints or [])
    create_csinode(cp, node, drivers=[driver] if registered else [])
    create_volume_attachment(cp, None, node, pv, attacher=driver, detach_error=detach_error)
    return pv


def pod_with_driver_evicted_by_taint(cp: ControlPlane, ns: str, name: str = "db-3") -> Stuck:
    """`kubectl taint node N maintenance=true:NoExecute` evicted the CSI node plugin with the
    workloads: the driver is gone from the node's CSINode, its volume still attached there,
    and the replacement pod waits on the attach/detach controller's Multi-Attach error."""
    node = f"{ns}-taint"
    # deregistered from the node's CSINode when its plugin pod was evicted
    pv = _attached_volume(cp, ns, node, registered=False, taints=[MAINTENANCE_TAINT])
    volumes = [pvc_volume("data", "data")]
    _, deleted = _deleted_pod(
        cp, ns, name, "terminated:0", node=node, volumes=volumes, grace_period=1
    )
    replacement = create_pod(cp, ns, f"{name}-new", node=f"{ns}-other", volumes=volumes)
    create_event(  # the attach/detach controller's words (pkg/controller/volume/attachdetach)
        cp,
        ns,
        _involved(replacement),
        "FailedAttachVolume",
        f'Multi-Attach error for volume "{pv}" Volume is already exclusively attached to one '
        "node and can't be attached to another",
        component="attachdetach-controller",
    )
    wait_past_deadline(deleted)
    return Stuck(ns, name, node)


DETACH_ERROR = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"


def pod_with_failing_detach(cp: ControlPlane, ns: str, name: str = "db-2") -> Stuck:
    """Driver installed and registered, containers exited, but detaching the volume fails."""
    node = f"{ns}-att"
    _attached_volume(cp, ns, node, detach_error=DETACH_ERROR)
    _, deleted = _deleted_pod(
        cp,
        ns,
        name,
        "terminated:0",
        node=node,
        volumes=[pvc_volume("data", "data")],
        grace_period=1,
    )
    wait_past_deadline(deleted)
    return Stuck(ns, name, node)


def pod_with_job_tracking_finalizer(cp: ControlPlane, ns: str, name: str = "job-1") -> Stuck:
    """A failed Job pod the job controller (not running here) never released."""
    return _pod_held_by_finalizer(
        cp, ns, name, f"{ns}-jobs", "batch.kubernetes.io/job-tracking", "Failed", "terminated:1"
    )


def pod_with_foreground_dependents(cp: ControlPlane, ns: str, name: str = "parent-0") -> Stuck:
    """Deleted with propagationPolicy Foreground; a dependent ConfigMap is held by its own
    finalizer, so the garbage collector never removes the pod's foregroundDeletion."""
    node = f"{ns}-fg"
    create_node(cp, node)
    pod = create_pod(cp, ns, name, node=node)
    set_pod_status(cp, ns, name, "Succeeded", {"app": "terminated:0"})
    dependent = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{name}-state",
            "finalizers": ["example.com/hold"],
            "ownerReferences": [owner_ref(pod)],
        },
        "data": {"k": "v"},
    }
    cp.api("POST", f"/api/v1/namespaces/{ns}/configmaps", dependent)
    delete(cp, pod_path(ns, name), propagation="Foreground")
    return Stuck(ns, name, node)


def pod_webhook_name(ns: str) -> str:
    return f"{ns}-pod-guard"


def pod_blocked_by_webhook(cp: ControlPlane, ns: str, name: str = "guarded-0") -> Stuck:
    """A webhook (failurePolicy Fail, no Service) rejects the UPDATE that removes the pod's
    finalizer. Scoped to ns; delete ValidatingWebhookConfiguration pod_webhook_name(ns) after."""
    node = f"{ns}-wh"
    create_node(cp, node)
    _deleted_pod(
        cp, ns, name, "terminated:0", "Succeeded", 0, node=node, finalizers=["example.com/audit"]
    )
    create_validating_webhook(
        cp,
        pod_webhook_name(ns),
        service_ns=ns,
        service_name="pod-guard",
        rules=[webhook_rule(["UPDATE"], ["pods"])],
        namespace=ns,
    )
    return Stuck(ns, name, node)


# -- namespaces --------------------------------------------------------------------------------


def namespace_with_orphaned_custom_resource(cp: ControlPlane, ns: str, group: str) -> Stuck:
    """A custom resource whose finalizer's operator is not running."""
    create_namespace(cp, ns)
    create_crd(cp, group, "Widget", "widgets")
    create_custom_object(
        cp, group, "v1", "widgets", "Widget", "gadget", ns=ns, finalizers=[f"{group}/cleanup"]
    )
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, "gadget")


def namespace_with_blocking_webhook(cp: ControlPlane, ns: str, group: str) -> Stuck:
    """A webhook with a dead backend (failurePolicy Fail, UPDATE and DELETE of the kind) rejects
    the namespace controller's delete, and would reject the finalizer's removal too."""
    create_namespace(cp, ns, labels={"webhook-test": ns})
    create_crd(cp, group, "Gadget", "gadgets")
    create_custom_object(
        cp, group, "v1", "gadgets", "Gadget", "locked", ns=ns, finalizers=[f"{group}/cleanup"]
    )
    create_validating_webhook(
        cp,
        f"{ns}-guard",
        service_ns=ns,
        service_name="guard",
        rules=[webhook_rule(["UPDATE", "DELETE"], ["gadgets"], api_groups=[group])],
        namespace=ns,
    )
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, "locked")


def namespace_with_broken_conversion(cp: ControlPlane, ns: str, group: str) -> Stuck:
    """Listing the CRD's preferred version needs a conversion webhook that has no service."""
    create_namespace(cp, ns)
    create_crd(
        cp,
        group,
        "Gizmo",
        "gizmos",
        versions=("v1", "v2"),
        conversion_webhook_service=(ns, "converter"),
    )
    create_custom_object(cp, group, "v1", "gizmos", "Gizmo", "g1", ns=ns)
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, "g1")


def namespace_with_metadata_finalizer(cp: ControlPlane, ns: str) -> Stuck:
    create_namespace(cp, ns, finalizers=["example.com/keep"])
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, ns)


def namespace_with_stuck_pod(cp: ControlPlane, ns: str, grace_period: int = 30) -> Stuck:
    """A pod on a node that is gone holds the namespace (its containers may still run)."""
    create_namespace(cp, ns)
    stuck = pod_on_missing_node(cp, ns, grace_period=grace_period)
    delete(cp, f"/api/v1/namespaces/{ns}")
    return stuck


def namespace_with_webhook_blocking_finalizer_removal(
    cp: ControlPlane, ns: str, group: str
) -> Stuck:
    """The namespace controller deletes the custom resource, but a webhook with a dead backend
    (failurePolicy Fail, UPDATE only) rejects the UPDATE that would remove its finalizer."""
    create_namespace(cp, ns)
    create_crd(cp, group, "Lock", "locks")
    create_custom_object(
        cp, group, "v1", "locks", "Lock", "held", ns=ns, finalizers=[f"{group}/release"]
    )
    guard_with_dead_webhook(cp, ns, group, "locks", "UPDATE", f"{ns}-finalizer-guard")
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, "held")


def guard_with_dead_webhook(
    cp: ControlPlane, ns: str, group: str, plural: str, operation: str, config: str
) -> None:
    """A Fail webhook on `operation` of the type in ns whose Service ns/guard does not exist."""
    create_validating_webhook(
        cp,
        config,
        service_ns=ns,
        service_name="guard",
        rules=[webhook_rule([operation], [plural], api_groups=[group])],
        namespace=ns,
    )


def namespace_with_spec_finalizer(
    cp: ControlPlane, ns: str, finalizer: str = "example.com/custom"
) -> Stuck:
    """Content all gone, but spec.finalizers lists one more than `kubernetes`: the namespace
    controller removes only its own, and nothing removes the other."""
    create_namespace(cp, ns, spec_finalizers=[finalizer])
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, finalizer)


def namespace_with_unavailable_apiservice(cp: ControlPlane, ns: str, group: str) -> Stuck:
    """An aggregated API whose Service does not exist: discovery fails, so the namespace
    controller never finishes ANY namespace. Stuck.name is the APIService: delete it when done."""
    create_namespace(cp, ns)
    apiservice = create_apiservice(cp, group, "v1alpha1", ns, "api")
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, apiservice["metadata"]["name"])


@dataclass(frozen=True)
class InUse:
    """A claim and its volume deleted while still in use (names for the caller)."""

    namespace: str
    claim: str
    volume: str
    pod: str
    node: str


def volume_in_use(cp: ControlPlane, ns: str, pod: str = "app-0") -> InUse:
    """A claim deleted while a running pod uses it (kubernetes.io/pvc-protection) and its volume
    deleted while still Bound (kubernetes.io/pv-protection). Admission adds both finalizers;
    the harness runs neither protection controller, so they stay even once the cause is gone."""
    node, claim, volume = f"{ns}-disk", f"data-{pod}", f"pv-{ns}-{pod}"
    create_node(cp, node)
    create_bound_volume(cp, ns, claim, volume, f"{ns}.csi.example.com")
    create_pod(cp, ns, pod, node=node, volumes=[pvc_volume(claim, claim)])
    set_pod_status(cp, ns, pod, "Running", {"app": "running"})
    delete(cp, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{claim}")
    delete(cp, f"/api/v1/persistentvolumes/{volume}")
    return InUse(ns, claim, volume, pod, node)


def finalize_by_hand(cp: ControlPlane, ns: str) -> None:
    """What the well-known recipe does: empty spec.finalizers through /finalize (drops
    `kubernetes` whatever the controller was still doing)."""
    body = get(cp, f"/api/v1/namespaces/{ns}")
    body["spec"]["finalizers"] = []
    cp.api("PUT", f"/api/v1/namespaces/{ns}/finalize", body)


def namespace_with_content_and_own_finalizer(cp: ControlPlane, ns: str, group: str) -> Stuck:
    """A custom resource held by a finalizer whose operator is gone, inside a namespace with
    a finalizer of its own (metadata.finalizers example.com/archive)."""
    create_namespace(cp, ns, finalizers=["example.com/archive"])
    create_crd(cp, group, "Widget", "widgets")
    create_custom_object(
        cp, group, "v1", "widgets", "Widget", "gadget", ns=ns, finalizers=[f"{group}/cleanup"]
    )
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, "gadget")


def namespace_with_terminating_content_and_delete_webhook(
    cp: ControlPlane, ns: str, group: str
) -> Stuck:
    """A custom resource already deleted (held by its finalizer) and then a DELETE-only webhook
    with a dead backend: the namespace controller's repeated DELETE is rejected, but the object
    needs no DELETE any more, only the UPDATE that removes its finalizer."""
    create_namespace(cp, ns)
    create_crd(cp, group, "Part", "parts")
    create_custom_object(
        cp, group, "v1", "parts", "Part", "bolt", ns=ns, finalizers=[f"{group}/cleanup"]
    )
    delete(cp, f"/apis/{group}/v1/namespaces/{ns}/parts/bolt")
    guard_with_dead_webhook(cp, ns, group, "parts", "DELETE", f"{ns}-delete-guard")
    delete(cp, f"/api/v1/namespaces/{ns}")
    return Stuck(ns, "bolt")
