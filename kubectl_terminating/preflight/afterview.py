"""The cluster as it will be once the deletion is done: a view that hides what is doomed.

The explainers' own checks (finalizer owners, webhook and APIService backends, a volume's
driver) then run unchanged over it. What a controller or the kubelet changes in other objects
as a result of the deletion is one list, REWRITES (which kind, what changes, who does it, why):
a leader-election Lease held by a doomed pod has no holder, a doomed pod is no endpoint of its
Service, an APIService whose Service is doomed is unavailable, a CSI driver whose node plugin
pods are doomed leaves its nodes' CSINode. Each such change is noted (`gone`), the evidence of
why an owner, backend or driver will be gone.

In the order the deletion runs: objects a protection finalizer keeps until no pod uses them
(PROTECTED: claims, volumes, a namespace's `kubernetes` finalizer) outlive the doomed pods. The
view at stage POD_TEARDOWN (what the kubelet meets while it tears the doomed pods down) still
shows them, so a chain pod -> claim -> volume -> driver is followed through them; the view
AFTER (the default) shows the cluster once everything doomed is gone, namespaces excepted (one
being deleted exists until it is gone).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass
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
    CSI_NODES,
    ENDPOINT_SLICES,
    LEASES,
    NAMESPACES,
    PODS,
    PVCS,
    PVS,
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


AFTER = "after"  # everything doomed is gone
POD_TEARDOWN = "pod teardown"  # the kubelets tear the doomed pods down


@dataclass(frozen=True)
class Protected:
    """Objects of a kind a protection finalizer keeps while the doomed pods are torn down."""

    resource: Resource
    finalizer: str
    component: str
    why: str


PROTECTED = (
    Protected(
        PVCS,
        "kubernetes.io/pvc-protection",
        "kube-controller-manager (pvc-protection controller)",
        "removes it only once no pod that names the claim is left: a claim outlives its pods",
    ),
    Protected(
        PVS,
        "kubernetes.io/pv-protection",
        "kube-controller-manager (pv-protection controller)",
        "removes it only once the volume is bound to no claim: a volume outlives its claim",
    ),
    Protected(
        NAMESPACES,
        "kubernetes",
        "kube-controller-manager (namespace controller)",
        "removes spec.finalizers' kubernetes only once the content is gone (never hidden here)",
    ),
)


def protected(resource: Resource, obj: JSON) -> Protected | None:
    """The row that keeps obj while pods are torn down: it carries that row's finalizer."""
    m = meta(obj)
    for row in PROTECTED:
        if same(resource, row.resource):
            held = [
                *list_of(m.get("finalizers")),
                *list_of(as_dict(obj.get("spec")).get("finalizers")),
            ]
            if row.finalizer in held:
                return row
    return None


# A pod that registers a CSI node plugin with the kubelet mounts the kubelet's plugin registry
# (node-driver-registrar, kubernetes-csi/node-driver-registrar's README deployment).
PLUGIN_REGISTRY = "/var/lib/kubelet/plugins_registry"


def _host_paths(pod: JSON) -> list[str]:
    volumes = list_of(as_dict(pod.get("spec")).get("volumes"))
    return [text(as_dict(as_dict(v).get("hostPath")).get("path")).rstrip("/") for v in volumes]


def registers_plugins(pod: JSON) -> bool:
    """pod mounts the kubelet's plugin registry: it registers a plugin (a CSI node plugin)."""
    return PLUGIN_REGISTRY in _host_paths(pod)


def node_plugin_of(pod: JSON, driver: str) -> bool:
    """pod is driver's node plugin: it registers plugins with the kubelet (mounts the plugin
    registry) and its spec names the driver (the registrar's --kubelet-registration-path
    /var/lib/kubelet/plugins/<driver>/csi.sock, a --drivername, an env value). A convention,
    so what follows from it is at most likely."""
    spec = as_dict(pod.get("spec"))
    if not registers_plugins(pod):
        return False
    said: list[str] = _host_paths(pod)
    for container in (*list_of(spec.get("containers")), *list_of(spec.get("initContainers"))):
        c = as_dict(container)
        said += [text(a) for a in (*list_of(c.get("args")), *list_of(c.get("command")))]
        said += [text(as_dict(e).get("value")) for e in list_of(c.get("env"))]
    return any(driver in word for word in said)


class AfterView:
    """A ClusterView over another, without the doomed set (see the module's docstring)."""

    def __init__(self, inner: ClusterView, doomed: Doomed, stage: str = AFTER) -> None:
        self.inner = inner
        self.doomed = doomed
        self.stage = stage
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
        if self.stage == POD_TEARDOWN and protected(resource, obj) is not None:
            return False  # still there while the kubelets tear the doomed pods down
        where = f"{namespace}/" if namespace else ""
        said = f"{resource.kind} {where}{name} is deleted with it"
        ref = ObjectRef(resource.kind, name, namespace or None, resource.api_version)
        self._note(resource.kind, namespace, name, Evidence(said, ref))
        return True

    def _after(self, resource: Resource, obj: JSON) -> JSON:
        for rewrite in REWRITES:
            if same(resource, rewrite.resource):
                return rewrite.apply(self, obj)
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

    def _csinode(self, csinode: JSON) -> JSON:
        """The drivers whose node plugin pods on this node are all doomed leave it."""
        node = text(meta(csinode).get("name"))
        drivers = [as_dict(d) for d in list_of(as_dict(csinode.get("spec")).get("drivers"))]
        kept = []
        for driver in drivers:
            name = text(driver.get("name"))
            plugins = self.node_plugins(node, name)
            if plugins and all(self._pod_doomed(p) for p in plugins):
                pods = ", ".join(
                    f"{text(meta(p).get('namespace'))}/{text(meta(p).get('name'))}"
                    for p in plugins[:3]
                )
                said = (
                    f"CSI driver {name}'s node plugin on {node} (pod {pods}) is deleted with it: "
                    "the kubelet unregisters the driver from the node"
                )
                first = meta(plugins[0])
                pod = ObjectRef("Pod", text(first.get("name")), text(first.get("namespace")), "v1")
                self._note("CSINode", "", node, Evidence(said, pod, {"driver": name, "node": node}))
                continue
            kept.append(driver)
        if len(kept) == len(drivers):
            return csinode
        return dict(csinode, spec=dict(as_dict(csinode.get("spec")), drivers=kept))

    def node_plugins(self, node: str, driver: str) -> list[JSON]:
        """The pods on node that are driver's node plugin (node_plugin_of), doomed or not."""
        on_node = self.inner.list(PODS, None, Selectors(fields=f"spec.nodeName={node}"))
        return [p for p in on_node if node_plugin_of(p, driver)]

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


@dataclass(frozen=True)
class Rewrite:
    """What a component changes in another object as a result of the deletion."""

    resource: Resource
    change: str  # what changes in it
    component: str  # who changes it
    why: str
    apply: Callable[[AfterView, JSON], JSON]


REWRITES = (
    Rewrite(
        LEASES,
        "spec.holderIdentity empty: no leader",
        "the holder (client-go leader election): a leader whose pod is doomed stops renewing",
        "its holder (explain/leader.py) is only doomed pods, or its namespace is doomed",
        AfterView._lease,
    ),
    Rewrite(
        ENDPOINT_SLICES,
        "the endpoints whose targetRef is a doomed pod are gone",
        "kube-controller-manager (endpointslice controller)",
        "it keeps a Service's slices to its pods: a webhook's or API's backend has no endpoint",
        AfterView._slice,
    ),
    Rewrite(
        APISERVICES,
        "condition Available False, reason ServiceNotFound",
        "kube-apiserver (the aggregator's APIService availability controller)",
        "its spec.service is doomed: discovery of its group fails for every namespace deletion",
        AfterView._apiservice,
    ),
    Rewrite(
        CSI_NODES,
        "the drivers whose node plugin pods on that node are all doomed leave spec.drivers",
        "the kubelet (plugin manager: DeRegisterPlugin, then UninstallCSIDriver) once the node "
        "plugin's registration socket goes with its pod",
        "a volume of that driver on that node can no longer be unmounted (csi-driver-missing)",
        AfterView._csinode,
    ),
)
