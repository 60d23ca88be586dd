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

from kubectl_terminating.explain.leader import (
    holder_survives,
    hostnames,
    lease_holder,
    pod_names,
)
from kubectl_terminating.model import JSON, Evidence, ObjectRef
from kubectl_terminating.preflight.doomed import Doomed
from kubectl_terminating.resources import (
    APISERVICES,
    ENDPOINT_SLICES,
    LEASES,
    NAMESPACES,
    PODS,
    SERVICES,
    Resource,
    as_dict,
    list_of,
    meta,
    text,
)
from kubectl_terminating.view import EVERYTHING, ClusterView, ContentListing, Discovery, Selectors


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
        self._hosts: frozenset[str] | None = None

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
        """A Lease in a doomed namespace, or whose holder (leader.lease_holder: any namespace,
        any identity its owners write) is only doomed pods, is released. The holder is looked
        up only when one of its hostnames is a doomed pod's name or the node of a doomed
        hostNetwork pod: every Lease is listed, few concern the deletion."""
        spec = as_dict(lease.get("spec"))
        namespace, name = text(meta(lease).get("namespace")), text(meta(lease).get("name"))
        identity = text(spec.get("holderIdentity"))
        if not identity:
            return lease
        holder = (
            lease_holder(lease, self.inner)
            if set(hostnames(identity)) & self._doomed_hosts()
            else None
        )
        if holder is None or holder_survives(holder, self._pod_doomed) is not False:
            if namespace not in self.doomed.namespaces:
                return lease
            said = f"Lease {namespace}/{name} is deleted with its namespace, so its leader goes"
            evidence = Evidence(said, ObjectRef("Lease", name, namespace, LEASES.api_version))
            return self._released(lease, evidence)
        first = holder.pods[0]
        said = (
            f"Lease {namespace}/{name} is held by {identity}: "
            + ", ".join(f"pod {n}" for n in pod_names(holder.pods[:3]))
            + " is deleted with it, so its leader goes"
        )
        fields = {"holder": identity, "holderFoundBy": holder.found_by}
        return self._released(lease, Evidence(said, holder.pod_ref(first), fields))

    def _released(self, lease: JSON, evidence: Evidence) -> JSON:
        m = meta(lease)
        self._note("Lease", text(m.get("namespace")), text(m.get("name")), evidence)
        after = copy.deepcopy(lease)
        after["spec"] = dict(as_dict(lease.get("spec")), holderIdentity="")
        return after

    def _pod_doomed(self, pod: JSON) -> bool:
        return self.doomed.has_pod(text(meta(pod).get("namespace")), text(meta(pod).get("name")))

    def _doomed_hosts(self) -> frozenset[str]:
        """Names a doomed pod answers to as a Lease holder: its own, and for a hostNetwork pod
        its node's (the doomed pods read whole once per namespace, as the judges read them)."""
        with self._lock:
            if self._hosts is not None:
                return self._hosts
        pods = [k for k in self.doomed.items if k[:2] == ("", "Pod")]
        names = {name for _, _, _, name in pods}
        for namespace in sorted({ns for _, _, ns, _ in pods}):
            for pod in self.inner.list(PODS, namespace):
                spec = as_dict(pod.get("spec"))
                if spec.get("hostNetwork") is True and self._pod_doomed(pod):
                    names.add(text(spec.get("nodeName")))
        hosts = frozenset(n for n in names if n)
        with self._lock:
            self._hosts = hosts
        return hosts

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
