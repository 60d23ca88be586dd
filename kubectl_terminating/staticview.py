"""A ClusterView served from objects already in memory (unit fixtures, saved dumps).

Objects are plain API JSON with `kind` and `apiVersion` set. A kind whose objects were never
captured can be marked unreadable, so the explainers report the check as not possible.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

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
    Resource,
)
from kubectl_terminating.view import ContentListing, Discovery, ReadFailed

NODE_LEASE_NAMESPACE = "kube-node-lease"


def _meta(obj: JSON) -> JSON:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


class StaticView:
    def __init__(
        self,
        objects: Iterable[JSON],
        now: datetime,
        discovery: Discovery | None = None,
        unreadable: dict[str, str] | None = None,
        content: dict[str, list[ContentListing]] | None = None,
    ) -> None:
        """unreadable maps a kind ("Node") to why it could not be read; content optionally
        overrides namespace_content per namespace (as listed at capture time)."""
        self._now = now
        self._by_kind: dict[str, list[JSON]] = defaultdict(list)
        for obj in objects:
            self._by_kind[str(obj.get("kind", ""))].append(obj)
        self._discovery = discovery or Discovery(resources=[r for r in _KNOWN if r.namespaced])
        self._unreadable = dict(unreadable or {})
        self._content = content

    @property
    def now(self) -> datetime:
        return self._now

    # -- helpers ---------------------------------------------------------------------------
    def _all(self, resource: Resource) -> list[JSON]:
        reason = self._unreadable.get(resource.kind)
        if reason is not None:
            raise ReadFailed(resource.qualified, reason)
        return self._by_kind.get(resource.kind, [])

    def _find(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        for obj in self._all(resource):
            m = _meta(obj)
            if m.get("name") == name and (namespace is None or m.get("namespace") == namespace):
                return obj
        return None

    def _in(self, resource: Resource, namespace: str) -> list[JSON]:
        return [o for o in self._all(resource) if _meta(o).get("namespace") == namespace]

    # -- ClusterView -----------------------------------------------------------------------
    def namespace(self, name: str) -> JSON | None:
        return self._find(NAMESPACES, None, name)

    def pod(self, namespace: str, name: str) -> JSON | None:
        return self._find(PODS, namespace, name)

    def pods(self, namespace: str) -> list[JSON]:
        return self._in(PODS, namespace)

    def node(self, name: str) -> JSON | None:
        return self._find(NODES, None, name)

    def node_lease(self, node_name: str) -> JSON | None:
        return self._find(LEASES, NODE_LEASE_NAMESPACE, node_name)

    def leases(self) -> list[JSON]:
        return list(self._all(LEASES))

    def pvc(self, namespace: str, name: str) -> JSON | None:
        return self._find(PVCS, namespace, name)

    def pv(self, name: str) -> JSON | None:
        return self._find(PVS, None, name)

    def csi_driver(self, name: str) -> JSON | None:
        return self._find(CSI_DRIVERS, None, name)

    def csi_node(self, name: str) -> JSON | None:
        return self._find(CSI_NODES, None, name)

    def volume_attachments(self) -> list[JSON]:
        return list(self._all(VOLUME_ATTACHMENTS))

    def events_for(self, namespace: str, uid: str) -> list[JSON]:
        return [
            e
            for e in self._in(EVENTS, namespace)
            if isinstance(e.get("involvedObject"), dict) and e["involvedObject"].get("uid") == uid
        ]

    def webhook_configurations(self) -> list[JSON]:
        return list(self._all(VALIDATING_WEBHOOKS)) + list(self._all(MUTATING_WEBHOOKS))

    def service(self, namespace: str, name: str) -> JSON | None:
        return self._find(SERVICES, namespace, name)

    def endpoint_slices(self, namespace: str, service: str) -> list[JSON]:
        return [
            s
            for s in self._in(ENDPOINT_SLICES, namespace)
            if (_meta(s).get("labels") or {}).get("kubernetes.io/service-name") == service
        ]

    def apiservices(self) -> list[JSON]:
        return list(self._all(APISERVICES))

    def crds(self) -> list[JSON]:
        return list(self._all(CRDS))

    def discovery(self) -> Discovery:
        return self._discovery

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        if self._content is not None and namespace in self._content:
            return self._content[namespace]
        listings = []
        for resource in self._discovery.resources:
            if not resource.namespaced:
                continue
            reason = self._unreadable.get(resource.kind)
            if reason is not None:
                listings.append(ContentListing(resource=resource, error=reason))
                continue
            items = tuple(self._in(resource, namespace))
            if items:
                listings.append(ContentListing(resource=resource, items=items))
        return listings

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        return self._find(resource, namespace, name)


_KNOWN = (
    PODS,
    EVENTS,
    SERVICES,
    PVCS,
    LEASES,
    ENDPOINT_SLICES,
)
