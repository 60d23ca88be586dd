"""The named reads the explainers make over the generic view, and the one declaration of
each related kind they read (RELATED: why, and whether `-w` watches it), from which a file's
missing kinds and the watch list are derived.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from kubectl_terminating import resources
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import Resource
from kubectl_terminating.selectors import escape_field_value
from kubectl_terminating.view import EVERYTHING, ClusterView, ReadFailed, Selectors

# Where each kubelet renews its node's heartbeat Lease, named after the node.
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass(frozen=True)
class Related:
    """A kind the explainers read besides the object explained, and why."""

    resource: Resource
    why: str
    # -w follows its changes (not Leases and Events: they change all the time; nor pods and
    # namespaces, the commands' own kinds)
    watched: bool = True
    # read for every object, so a file without it is named in the "kinds not in the file"
    # warning (not so the workloads only a user's knowledge entry names)
    expected: bool = True


RELATED: list[Related] = []


def related(resource: Resource, why: str, watched: bool = True, expected: bool = True) -> Related:
    """Declare a related kind: every read below goes through its declaration."""
    declared = Related(resource, why, watched, expected)
    RELATED.append(declared)
    return declared


NODES = related(resources.NODES, "a pod's node: missing, NotReady, runtime down, volumesInUse")
LEASES = related(
    resources.LEASES, "a node's heartbeat; controllers alive (leader election)", watched=False
)
EVENTS = related(resources.EVENTS, "what the kubelet and controllers said of an object", False)
PVCS = related(resources.PVCS, "a pod's volume claims (PVC -> PV -> CSI driver)")
PVS = related(resources.PVS, "the volumes behind a pod's claims")
CSI_DRIVERS = related(resources.CSI_DRIVERS, "whether a volume's CSI driver is installed")
CSI_NODES = related(resources.CSI_NODES, "whether a CSI driver is registered on the pod's node")
VOLUME_ATTACHMENTS = related(
    resources.VOLUME_ATTACHMENTS, "a volume still attached to the node, or failing to detach"
)
VALIDATING_WEBHOOKS = related(
    resources.VALIDATING_WEBHOOKS, "admission webhooks on the writes deletion needs"
)
MUTATING_WEBHOOKS = related(
    resources.MUTATING_WEBHOOKS, "admission webhooks on the writes deletion needs"
)
SERVICES = related(resources.SERVICES, "the backend of a webhook, APIService or operator")
ENDPOINT_SLICES = related(resources.ENDPOINT_SLICES, "whether that backend has ready endpoints")
APISERVICES = related(resources.APISERVICES, "an unavailable APIService stalls namespace deletion")
CRDS = related(resources.CRDS, "conversion webhooks; which CRD serves a remaining type")
NAMESPACES = related(
    resources.NAMESPACES, "whether a pod's namespace is terminating too", watched=False
)
# Dynamic Resource Allocation (resource.k8s.io/v1: served from 1.34)
RESOURCE_CLAIMS = related(
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim"),
    "a pod's DRA claims: allocated, still reserved for it",
)
RESOURCE_SLICES = related(
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", namespaced=False),
    "whether a DRA driver is registered on the pod's node (the kubelet publishes its slices)",
)
PODS = related(resources.PODS, "an operator's pods; the pods left in a namespace", watched=False)
# the workload a user's knowledge file names as a finalizer's owner (docs/knowledge.md)
WORKLOADS = {
    r.kind: related(
        r, "the workload of a finalizer's owner: scaled to 0, not ready, gone", False, False
    )
    for r in (resources.DEPLOYMENTS, resources.STATEFULSETS, resources.DAEMONSETS)
}


def related_kinds() -> list[Resource]:
    return [r.resource for r in RELATED]


def expected_kinds() -> list[Resource]:
    """The related kinds every diagnosis may read: a file without one is said to lack it."""
    return [r.resource for r in RELATED if r.expected]


def watched_kinds() -> list[Resource]:
    return [r.resource for r in RELATED if r.watched]


def _get(view: ClusterView, kind: Related, namespace: str | None, name: str) -> JSON | None:
    return view.get(kind.resource, namespace, name)


def _list(
    view: ClusterView,
    kind: Related,
    namespace: str | None = None,
    selectors: Selectors = EVERYTHING,
) -> list[JSON]:
    return view.list(kind.resource, namespace, selectors)


T = TypeVar("T")


def namespace(view: ClusterView, name: str) -> JSON | None:
    return _get(view, NAMESPACES, None, name)


def pod(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return _get(view, PODS, namespace, name)


def pods(view: ClusterView, namespace: str) -> list[JSON]:
    """Full pod objects of one namespace."""
    return _list(view, PODS, namespace)


def pods_labelled(view: ClusterView, namespace: str | None, selector: str) -> list[JSON]:
    """The pods a label selector picks, in one namespace or (None) all."""
    return _list(view, PODS, namespace, Selectors(labels=selector))


def workload(view: ClusterView, kind: str, namespace: str, name: str) -> JSON | None:
    """A Deployment, StatefulSet or DaemonSet by name."""
    return _get(view, WORKLOADS[kind], namespace, name)


def pods_named(view: ClusterView, name: str) -> list[JSON]:
    """The pods of that name in any namespace (a Lease holder's, its namespace unknown)."""
    return _list(view, PODS, None, Selectors(fields=f"metadata.name={escape_field_value(name)}"))


def pods_on_node(view: ClusterView, node_name: str) -> list[JSON]:
    """The pods bound to a node, in any namespace (a hostNetwork Lease holder names its node)."""
    on_node = Selectors(fields=f"spec.nodeName={escape_field_value(node_name)}")
    return _list(view, PODS, None, on_node)


def node(view: ClusterView, name: str) -> JSON | None:
    return _get(view, NODES, None, name)


def node_lease(view: ClusterView, node_name: str) -> JSON | None:
    """The node's heartbeat Lease in kube-node-lease, read by name."""
    return _get(view, LEASES, NODE_LEASE_NAMESPACE, node_name)


def leases(view: ClusterView) -> list[JSON]:
    """Every Lease but the nodes' (leader election shows which controllers are alive); a node's
    Lease is read by name (node_lease), and a cluster of 5,000 nodes has 5,000 of them."""
    not_nodes = Selectors(fields=f"metadata.namespace!={NODE_LEASE_NAMESPACE}")
    return _list(view, LEASES, None, not_nodes)


def pvc(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return _get(view, PVCS, namespace, name)


def all_pvcs(view: ClusterView) -> list[JSON]:
    """Every claim, in any namespace (a VolumeAttributesClass is cluster-scoped)."""
    return _list(view, PVCS)


def pvs(view: ClusterView) -> list[JSON]:
    return _list(view, PVS)


def pv(view: ClusterView, name: str) -> JSON | None:
    return _get(view, PVS, None, name)


def csi_driver(view: ClusterView, name: str) -> JSON | None:
    return _get(view, CSI_DRIVERS, None, name)


def csi_node(view: ClusterView, name: str) -> JSON | None:
    return _get(view, CSI_NODES, None, name)


def volume_attachments(view: ClusterView) -> list[JSON]:
    return _list(view, VOLUME_ATTACHMENTS)


def events_for(view: ClusterView, namespace: str | None, uid: str) -> list[JSON]:
    """core/v1 Events whose involvedObject.uid is uid (the server indexes that field); None:
    in any namespace (a cluster-scoped object's are recorded in `default`)."""
    # escaped: a uid read from a file may hold a comma or `=` (the server's are UUIDs)
    selector = f"involvedObject.uid={escape_field_value(uid)}"
    return _list(view, EVENTS, namespace, Selectors(fields=selector))


def events_named(view: ClusterView, namespace: str | None, kind: str, name: str) -> list[JSON]:
    """core/v1 Events whose involvedObject is the `kind` named `name` (a pasted event may carry
    no uid; the server serves these field selectors too)."""
    selector = (
        f"involvedObject.kind={escape_field_value(kind)},"
        f"involvedObject.name={escape_field_value(name)}"
    )
    return _list(view, EVENTS, namespace, Selectors(fields=selector))


def node_events(view: ClusterView, name: str) -> list[JSON]:
    """core/v1 Events about Node `name`: the node controller and the kubelet record them in
    `default` (NodeNotReady, NodeReady)."""
    selector = f"involvedObject.kind=Node,involvedObject.name={escape_field_value(name)}"
    return _list(view, EVENTS, "default", Selectors(fields=selector))


def events_with_reason(view: ClusterView, namespace: str, reason: str) -> list[JSON]:
    """core/v1 Events of one namespace with one reason (another pod's FailedAttachVolume)."""
    selector = f"reason={escape_field_value(reason)}"
    return _list(view, EVENTS, namespace, Selectors(fields=selector))


def webhook_configurations(view: ClusterView) -> list[JSON]:
    """Validating and mutating webhook configurations; each item carries its `kind`."""
    return _list(view, VALIDATING_WEBHOOKS) + _list(view, MUTATING_WEBHOOKS)


def each(*loads: Callable[[], list[T]]) -> tuple[list[T], ReadFailed | None]:
    """What every read that could be made found, and the first failure of the others: one
    read that fails (a kind not in a file, forbidden) leaves the others' checks standing.
    Raises only when none could be made."""
    found: list[T] = []
    failures: list[ReadFailed] = []
    for load in loads:
        try:
            found += load()
        except ReadFailed as failed:
            failures.append(failed)
    if failures and len(failures) == len(loads):
        raise failures[0]
    return found, (failures[0] if failures else None)


def webhook_configurations_each(view: ClusterView) -> tuple[list[JSON], ReadFailed | None]:
    """Webhook configurations, each kind read on its own (each())."""
    return each(lambda: _list(view, VALIDATING_WEBHOOKS), lambda: _list(view, MUTATING_WEBHOOKS))


def service(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return _get(view, SERVICES, namespace, name)


def endpoint_slices(view: ClusterView, namespace: str, service: str) -> list[JSON]:
    """The EndpointSlices of one Service (by the label the EndpointSlice controller sets)."""
    return _list(
        view, ENDPOINT_SLICES, namespace, Selectors(labels=f"kubernetes.io/service-name={service}")
    )


def resource_claim(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return _get(view, RESOURCE_CLAIMS, namespace, name)


def resource_slices(view: ClusterView, driver: str, node: str) -> list[JSON]:
    """The ResourceSlices a DRA driver publishes for a node (both fields are indexed)."""
    fields = f"spec.driver={escape_field_value(driver)},spec.nodeName={escape_field_value(node)}"
    return _list(view, RESOURCE_SLICES, None, Selectors(fields=fields))


def apiservices(view: ClusterView) -> list[JSON]:
    return _list(view, APISERVICES)


def crds(view: ClusterView) -> list[JSON]:
    return _list(view, CRDS)
