"""Stuck situations built on the real control plane, one function each.

Shared by the end-to-end tests, `make demo` and the benchmarks. Each builds the objects,
deletes what must be terminating, plays the kubelet where one would act, and returns the
names the caller needs. Nothing here waits for our plugin; callers assert on its output.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tests.e2e.controlplane import ControlPlane
from tests.e2e.kubelet import (
    condition,
    create_bound_volume,
    create_crd,
    create_csinode,
    create_custom_object,
    create_event,
    create_namespace,
    create_node,
    create_pod,
    create_validating_webhook,
    csi_volume_name,
    delete,
    now,
    pvc_volume,
    set_pod_status,
    stale_lease,
    webhook_rule,
)

MISSING_DRIVER = "ebs.csi.example.com"


@dataclass(frozen=True)
class Stuck:
    namespace: str
    name: str
    node: str | None = None


def pod_path(ns: str, name: str) -> str:
    return f"/api/v1/namespaces/{ns}/pods/{name}"


def pod_on_missing_node(cp: ControlPlane, ns: str, name: str = "orphan-0") -> Stuck:
    """The pod's node object is gone: no kubelet will ever confirm the deletion."""
    node = f"{ns}-gone"
    create_pod(cp, ns, name, node=node)
    delete(cp, pod_path(ns, name))
    return Stuck(ns, name, node)


def pod_on_dead_node(cp: ControlPlane, ns: str, name: str = "web-0") -> Stuck:
    """The node stopped posting status: Ready=Unknown and a Lease not renewed for 10m."""
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
    create_pod(cp, ns, name, node=node)
    set_pod_status(cp, ns, name, "Running", {"app": "running"})
    delete(cp, pod_path(ns, name))
    return Stuck(ns, name, node)


def pod_with_running_containers(cp: ControlPlane, ns: str, name: str = "hung-0") -> Stuck:
    """A healthy node whose runtime never killed the container: FailedKillPod events."""
    node = f"{ns}-busy"
    create_node(cp, node)
    pod = create_pod(cp, ns, name, node=node, grace_period=1)
    set_pod_status(cp, ns, name, "Running", {"app": "running"})
    delete(cp, pod_path(ns, name))
    create_event(
        cp,
        ns,
        {"kind": "Pod", "namespace": ns, "name": name, "uid": pod["metadata"]["uid"]},
        "FailedKillPod",
        'error killing pod: failed to "KillContainer" for "app" with KillContainerError: '
        '"rpc error: code = DeadlineExceeded desc = context deadline exceeded"',
        count=12,
    )
    time.sleep(1.5)  # let the 1s grace period run out
    return Stuck(ns, name, node)


def pod_with_unreclaimed_volume(cp: ControlPlane, ns: str, name: str = "db-0") -> Stuck:
    """Containers exited, but the CSI driver that must unmount the volume is gone."""
    node = f"{ns}-storage"
    handle = f"vol-{ns}"
    pv_name = f"pv-{ns}"
    create_bound_volume(cp, ns, "data", pv_name, MISSING_DRIVER, handle)
    create_node(cp, node, volumes_in_use=[csi_volume_name(MISSING_DRIVER, handle)])
    create_csinode(cp, node, drivers=[])  # the driver's node plugin is not registered
    pod = create_pod(cp, ns, name, node=node, volumes=[pvc_volume("data", "data")], grace_period=1)
    set_pod_status(cp, ns, name, "Running", {"app": "terminated:0"})
    delete(cp, pod_path(ns, name))  # grace 0 would remove it at once: no kubelet to wait for
    create_event(
        cp,
        ns,
        {"kind": "Pod", "namespace": ns, "name": name, "uid": pod["metadata"]["uid"]},
        "FailedUnMount",
        f'UnmountVolume.TearDown failed for volume "data": kubernetes.io/csi: '
        f"driver name {MISSING_DRIVER} not found in the list of registered CSI drivers",
    )
    time.sleep(1.2)  # let the 1s grace period run out
    return Stuck(ns, name, node)


def pod_with_finalizer(cp: ControlPlane, ns: str, name: str = "job-0") -> Stuck:
    """Containers done, node healthy: only a custom finalizer holds the pod."""
    node = f"{ns}-ok"
    create_node(cp, node)
    create_pod(cp, ns, name, node=node, finalizers=["example.com/drain"])
    set_pod_status(cp, ns, name, "Succeeded", {"app": "terminated:0"})
    delete(cp, pod_path(ns, name), grace_period=0)
    return Stuck(ns, name, node)


def pod_in_grace_period(cp: ControlPlane, ns: str, name: str = "slow-0") -> Stuck:
    """Deleted with an hour of grace: listed, but not stuck."""
    node = f"{ns}-ok2"
    create_node(cp, node)
    create_pod(cp, ns, name, node=node, grace_period=3600)
    set_pod_status(cp, ns, name, "Running", {"app": "running"})
    delete(cp, pod_path(ns, name))
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
    """The operator could remove its finalizer, but a webhook with a dead backend rejects it."""
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


def namespace_with_stuck_pod(cp: ControlPlane, ns: str) -> Stuck:
    create_namespace(cp, ns)
    stuck = pod_on_missing_node(cp, ns)
    delete(cp, f"/api/v1/namespaces/{ns}")
    return stuck
