"""The named reads the explainers make, as functions over the generic view (view.py).

Every view serves only get, list, discovery, namespace_content and now; this module says once
which request answers which question (a node's Lease by name, the Leases of controllers
without the thousands of node Leases, an object's events by uid, a Service's EndpointSlices
by label), so the live view, a saved dump and a recording make the same reads. A live view
memoises each (resource, namespace, selectors), so asking twice costs one request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import (
    APISERVICES,
    CRDS,
    CSI_DRIVERS,
    CSI_NODES,
    ENDPOINT_SLICES,
    EVENTS,
    LEASES,
    MUTATING_WEBHOOKS,
    NAMESPACES,
    NODES,
    PODS,
    PVCS,
    PVS,
    SERVICES,
    VALIDATING_WEBHOOKS,
    VOLUME_ATTACHMENTS,
)
from kubectl_terminating.selectors import escape_field_value
from kubectl_terminating.view import ClusterView, ReadFailed, Selectors

# Where each kubelet renews its node's heartbeat Lease, named after the node.
NODE_LEASE_NAMESPACE = "kube-node-lease"
# The related kinds the explainers read (a file without one of them cannot answer its checks).
RELATED = (
    NODES,
    LEASES,
    EVENTS,
    PVCS,
    PVS,
    CSI_DRIVERS,
    CSI_NODES,
    VOLUME_ATTACHMENTS,
    VALIDATING_WEBHOOKS,
    MUTATING_WEBHOOKS,
    SERVICES,
    ENDPOINT_SLICES,
    APISERVICES,
    CRDS,
    NAMESPACES,
    PODS,
)


T = TypeVar("T")


def namespace(view: ClusterView, name: str) -> JSON | None:
    return view.get(NAMESPACES, None, name)


def pod(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return view.get(PODS, namespace, name)


def pods(view: ClusterView, namespace: str) -> list[JSON]:
    """Full pod objects of one namespace."""
    return view.list(PODS, namespace)


def node(view: ClusterView, name: str) -> JSON | None:
    return view.get(NODES, None, name)


def node_lease(view: ClusterView, node_name: str) -> JSON | None:
    """The node's heartbeat Lease in kube-node-lease, read by name."""
    return view.get(LEASES, NODE_LEASE_NAMESPACE, node_name)


def leases(view: ClusterView) -> list[JSON]:
    """Every Lease but the nodes' (leader election shows which controllers are alive); a node's
    Lease is read by name (node_lease), and a cluster of 5,000 nodes has 5,000 of them."""
    not_nodes = Selectors(fields=f"metadata.namespace!={NODE_LEASE_NAMESPACE}")
    return view.list(LEASES, None, not_nodes)


def pvc(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return view.get(PVCS, namespace, name)


def pv(view: ClusterView, name: str) -> JSON | None:
    return view.get(PVS, None, name)


def csi_driver(view: ClusterView, name: str) -> JSON | None:
    return view.get(CSI_DRIVERS, None, name)


def csi_node(view: ClusterView, name: str) -> JSON | None:
    return view.get(CSI_NODES, None, name)


def volume_attachments(view: ClusterView) -> list[JSON]:
    return view.list(VOLUME_ATTACHMENTS)


def events_for(view: ClusterView, namespace: str, uid: str) -> list[JSON]:
    """core/v1 Events whose involvedObject.uid is uid (the server indexes that field)."""
    # escaped: a uid read from a file may hold a comma or `=` (the server's are UUIDs)
    selector = f"involvedObject.uid={escape_field_value(uid)}"
    return view.list(EVENTS, namespace, Selectors(fields=selector))


def events_with_reason(view: ClusterView, namespace: str, reason: str) -> list[JSON]:
    """core/v1 Events of one namespace with one reason (another pod's FailedAttachVolume)."""
    selector = f"reason={escape_field_value(reason)}"
    return view.list(EVENTS, namespace, Selectors(fields=selector))


def webhook_configurations(view: ClusterView) -> list[JSON]:
    """Validating and mutating webhook configurations; each item carries its `kind`."""
    return view.list(VALIDATING_WEBHOOKS) + view.list(MUTATING_WEBHOOKS)


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
    return each(lambda: view.list(VALIDATING_WEBHOOKS), lambda: view.list(MUTATING_WEBHOOKS))


def service(view: ClusterView, namespace: str, name: str) -> JSON | None:
    return view.get(SERVICES, namespace, name)


def endpoint_slices(view: ClusterView, namespace: str, service: str) -> list[JSON]:
    """The EndpointSlices of one Service (by the label the EndpointSlice controller sets)."""
    return view.list(
        ENDPOINT_SLICES, namespace, Selectors(labels=f"kubernetes.io/service-name={service}")
    )


def apiservices(view: ClusterView) -> list[JSON]:
    return view.list(APISERVICES)


def crds(view: ClusterView) -> list[JSON]:
    return view.list(CRDS)
