"""The cluster as it will be once the deletion is done: a view that hides what is doomed.

The explainers' own checks (finalizer owners, webhook and APIService backends) then run
unchanged over it: a doomed Service is missing, a doomed pod is no ready endpoint, a
leader-election Lease held by a doomed pod has no holder, an APIService whose Service is doomed
is unavailable. Namespaces stay visible: a namespace being deleted exists until it is gone.
Each such change is noted (`gone`), the evidence of why an owner or backend will be gone.
"""

from __future__ import annotations

import copy
import threading
from datetime import datetime

from kubectl_terminating.model import JSON, Evidence, ObjectRef
from kubectl_terminating.preflight.doomed import Doomed
from kubectl_terminating.resources import (
    APISERVICES,
    ENDPOINT_SLICES,
    LEASES,
    NAMESPACES,
    SERVICES,
    Resource,
    as_dict,
    list_of,
    meta,
    text,
)
from kubectl_terminating.view import EVERYTHING, ClusterView, ContentListing, Discovery, Selectors


def holder_pods(holder: str) -> tuple[str, ...]:
    """Pod names a Lease holder may be: client-go's default is the hostname (the pod's name),
    controller-runtime's `<hostname>_<uuid>`."""
    return tuple(dict.fromkeys((holder.split("_", 1)[0], holder)))


def same(resource: Resource, other: Resource) -> bool:
    """The same type, whatever version discovery or a manifest named."""
    return (resource.group, resource.kind) == (other.group, other.kind)


class AfterView:
    """A ClusterView over another, without the doomed set (see the module's docstring)."""

    def __init__(self, inner: ClusterView, doomed: Doomed) -> None:
        self.inner = inner
        self.doomed = doomed
        self._lock = threading.Lock()
        self._gone: dict[tuple[str, str, str], Evidence] = {}

    @property
    def now(self) -> datetime:
        return self.inner.now

    def gone(self) -> dict[tuple[str, str, str], Evidence]:
        """kind, namespace, name of each object whose change was read -> why it changed."""
        with self._lock:
            return dict(self._gone)

    def _note(self, kind: str, namespace: str, name: str, evidence: Evidence) -> None:
        with self._lock:
            self._gone.setdefault((kind, namespace, name), evidence)

    def _hidden(self, resource: Resource, obj: JSON) -> bool:
        if same(resource, NAMESPACES) or same(resource, LEASES):
            return False  # a Lease in a doomed namespace shows as released instead (_lease)
        m = meta(obj)
        namespace, name = text(m.get("namespace")), text(m.get("name"))
        if not self.doomed.contains(resource, namespace, name):
            return False
        where = f"{namespace}/" if namespace else ""
        said = f"{resource.kind} {where}{name} is deleted with it"
        ref = ObjectRef(resource.kind, name, namespace or None, resource.api_version)
        self._note(resource.kind, namespace, name, Evidence(said, ref))
        return True

    def _after(self, resource: Resource, obj: JSON) -> JSON:
        if same(resource, LEASES):
            return self._lease(obj)
        if same(resource, ENDPOINT_SLICES):
            return self._slice(obj)
        if same(resource, APISERVICES):
            return self._apiservice(obj)
        return obj

    def _lease(self, lease: JSON) -> JSON:
        spec = as_dict(lease.get("spec"))
        namespace = text(meta(lease).get("namespace"))
        holder = text(spec.get("holderIdentity"))
        if not holder or not any(self.doomed.has_pod(namespace, p) for p in holder_pods(holder)):
            return lease
        name = text(meta(lease).get("name"))
        named = [p for p in holder_pods(holder) if ("", "Pod", namespace, p) in self.doomed.items]
        pod = (named or list(holder_pods(holder)))[0]
        said = (
            f"Lease {namespace}/{name} is held by {holder}: pod {namespace}/{pod} is deleted "
            "with it, so its leader goes"
        )
        self._note("Lease", namespace, name, Evidence(said, ObjectRef("Pod", pod, namespace, "v1")))
        after = copy.deepcopy(lease)
        after["spec"] = dict(spec, holderIdentity="")
        return after

    def _slice(self, slice_: JSON) -> JSON:
        namespace = text(meta(slice_).get("namespace"))
        endpoints = list_of(slice_.get("endpoints"))
        kept = []
        for endpoint in endpoints:
            target = as_dict(as_dict(endpoint).get("targetRef"))
            pod = text(target.get("name"))
            if text(target.get("kind")) == "Pod" and self.doomed.has_pod(
                text(target.get("namespace")) or namespace, pod
            ):
                said = f"pod {namespace}/{pod}, an endpoint of a backend, is deleted with it"
                service = text(
                    as_dict(meta(slice_).get("labels")).get("kubernetes.io/service-name")
                )
                self._note(
                    "Service", namespace, service, Evidence(said, ObjectRef("Pod", pod, namespace))
                )
                continue
            kept.append(endpoint)
        return slice_ if len(kept) == len(endpoints) else dict(slice_, endpoints=kept)

    def _apiservice(self, apiservice: JSON) -> JSON:
        service = as_dict(as_dict(apiservice.get("spec")).get("service"))
        namespace, name = text(service.get("namespace")), text(service.get("name"))
        if not name or not self.doomed.contains(SERVICES, namespace, name):
            return apiservice
        said = f"Service {namespace}/{name}, the APIService's backend, is deleted with it"
        gone_service = Evidence(said, ObjectRef("Service", name, namespace))
        self._note("APIService", "", text(meta(apiservice).get("name")), gone_service)
        after = copy.deepcopy(apiservice)
        condition = {"type": "Available", "status": "False", "reason": "ServiceNotFound"}
        after["status"] = {"conditions": [condition]}
        return after

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        obj = self.inner.get(resource, namespace, name)
        if obj is None or self._hidden(resource, obj):
            return None
        return self._after(resource, obj)

    def discovery(self) -> Discovery:
        return self.inner.discovery()

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        listings = []
        for listing in self.inner.namespace_content(namespace):
            items = tuple(i for i in listing.items if not self._hidden(listing.resource, i))
            if items or listing.error:
                listings.append(ContentListing(listing.resource, items, listing.error))
        return listings

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        return [
            self._after(resource, obj)
            for obj in self.inner.list(resource, namespace, selectors)
            if not self._hidden(resource, obj)
        ]
