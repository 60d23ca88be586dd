"""Who holds a leader-election Lease, and which workload an owner runs as: the one answer
`--explain` (the running owner's ServiceAccount), `fix` (through `--explain`'s blockers) and
`preflight` (does the holder survive the deletion?) all use.

A Lease's `holderIdentity` is whatever the leader wrote; the owners in the knowledge table
write one of these (each read in its source):
- client-go's convention, and controller-runtime's default (`pkg/leaderelection`:
  `os.Hostname() + "_" + uuid`): `<hostname>_<uuid>`; kube-controller-manager and
  kube-scheduler the same;
- cert-manager (`cmd/controller/app`, Lease `cert-manager-controller` in its
  `--leader-election-namespace`, kube-system by default):
  `<hostname>-external-cert-manager-controller`;
- the bare hostname: Rancher's wrangler (`pkg/leader`, Lease `cattle-controllers`), the CSI
  sidecars (kubernetes-csi/csi-lib-utils), Kyverno (its pod's name).
A pod's hostname is its name (unless `spec.hostname` says otherwise); a hostNetwork pod's is
its node's name, so such a holder names a node, and the holder is among that node's
hostNetwork pods. The Lease may live in another namespace than its holder (controller-runtime's
LeaderElectionNamespace, cert-manager's kube-system), so the pod is looked for in any namespace.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kubectl_terminating import reads
from kubectl_terminating.explain.common import as_dict, meta, text
from kubectl_terminating.model import JSON, Evidence, ObjectRef
from kubectl_terminating.view import ClusterView, ReadFailed

CERT_MANAGER_SUFFIX = "-external-cert-manager-controller"
# the alphabet of apimachinery's rand.SafeEncodeString (no vowels: no words), which names a
# Deployment's ReplicaSets and the pods of a ReplicaSet or a DaemonSet
_SAFE = "[bcdfghjklmnpqrstvwxz2456789]"
# A Deployment's pod: `<deployment>-<pod-template-hash>-<5 characters>`, at the start of an
# identity that adds something of its own
POD_OF_DEPLOYMENT = re.compile(rf"^(.+?-{_SAFE}{{6,10}}-{_SAFE}{{5}})(?:[-_].*)?$")
# how a holder was found: its pod by name, or among its node's hostNetwork pods
BY_NAME, BY_NODE = "name", "node"


def hostnames(identity: str) -> tuple[str, ...]:
    """The hostnames a holder identity may carry, most literal first (see the module)."""
    candidates = [identity, identity.split("_", 1)[0], identity.removesuffix(CERT_MANAGER_SUFFIX)]
    shaped = POD_OF_DEPLOYMENT.match(identity)
    if shaped:
        candidates.append(shaped.group(1))
    return tuple(c for c in dict.fromkeys(candidates) if c)


@dataclass(frozen=True)
class Workload:
    """The workload a knowledge-table owner runs as in a default install (`runs_as`)."""

    kind: str  # Deployment, StatefulSet or DaemonSet
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def owns_name(self, pod_name: str) -> bool:
        """Whether a pod's name is one this workload's controller gives its pods."""
        base = re.escape(self.name)
        shape = {
            "Deployment": rf"{base}-{_SAFE}{{6,10}}-{_SAFE}{{5}}",
            "StatefulSet": rf"{base}-\d+",
            "DaemonSet": rf"{base}-{_SAFE}{{5}}",
        }[self.kind]
        return re.fullmatch(shape, pod_name) is not None

    def looks_like(self, obj: JSON, kind: str) -> bool:
        """An object of the owner's workload wherever it is installed: the workload by its name,
        or a pod named as its pods are or labelled with its name (Helm charts' labels)."""
        m = meta(obj)
        name = text(m.get("name"))
        if kind == self.kind:
            return name == self.name
        if kind != "Pod":
            return False
        labels = as_dict(m.get("labels"))
        named = {text(labels.get(k)) for k in ("app.kubernetes.io/name", "app")}
        return self.owns_name(name) or self.name in named


_RUNS_AS = re.compile(r"^(Deployment|StatefulSet|DaemonSet) ([a-z0-9.-]+)/([a-z0-9.-]+)\b")


def workload(runs_as: str) -> Workload | None:
    """The first `Kind namespace/name` of a knowledge-table `runs_as`; None when it names none."""
    found = _RUNS_AS.match(runs_as)
    return Workload(found[1], found[2], found[3]) if found else None


@dataclass(frozen=True)
class Holder:
    """The pods a Lease's holder may be: one found by name, or the hostNetwork pods of the node
    its identity names (`node`); none when it names neither."""

    identity: str
    lease: ObjectRef
    pods: tuple[JSON, ...] = ()
    node: str = ""
    found_by: str = ""  # BY_NAME, BY_NODE, or "" (names no pod)

    def pod_ref(self, pod: JSON) -> ObjectRef:
        return pod_ref(pod)

    def evidence(self) -> Evidence:
        lease = f"Lease {self.lease.namespace}/{self.lease.name}"
        fields = {"holder": self.identity, "holderFoundBy": self.found_by or None}
        if not self.pods:
            said = f"{lease} is held by {self.identity}, which names no pod"
            return Evidence(said, self.lease, fields)
        pods = ", ".join(pod_names(self.pods[:3]))
        if self.found_by == BY_NODE:
            said = f"{lease} is held by {self.identity}: node {self.node}'s hostNetwork pod {pods}"
        else:
            said = f"{lease} is held by {self.identity}: pod {pods}"
        return Evidence(said, self.pod_ref(self.pods[0]), fields)


def _on_node(view: ClusterView, node: str, lease: ObjectRef, owner: Workload | None) -> list[JSON]:
    """The hostNetwork pods of a node that may hold the Lease: the owner's where they can be
    told, else those of the Lease's namespace (where controller-runtime puts it by default)."""
    host = [
        p
        for p in reads.pods_on_node(view, node)
        if as_dict(p.get("spec")).get("hostNetwork") is True
    ]
    for narrower in (
        [p for p in host if owner is not None and owner.looks_like(p, "Pod")],
        [p for p in host if text(meta(p).get("namespace")) == lease.namespace],
    ):
        if narrower:
            return narrower
    return host


def lease_holder(lease: JSON, view: ClusterView, owner: Workload | None = None) -> Holder | None:
    """Who holds the Lease (see the module); None when it has no holder. A few reads by name:
    made per Lease asked about, never per object."""
    identity = text(as_dict(lease.get("spec")).get("holderIdentity"))
    if not identity:
        return None
    m = meta(lease)
    ref = ObjectRef(
        "Lease", text(m.get("name")), text(m.get("namespace")), "coordination.k8s.io/v1"
    )
    names = hostnames(identity)
    for name in names:
        pods = reads.pods_named(view, name)
        if pods:
            return Holder(identity, ref, tuple(pods), found_by=BY_NAME)
    try:
        for name in names:
            if reads.node(view, name) is not None:
                pods = _on_node(view, name, ref, owner)
                return Holder(identity, ref, tuple(pods), name, BY_NODE if pods else "")
    except ReadFailed:
        pass  # nodes (or their pods) unreadable: no pod is found, which proves nothing
    return Holder(identity, ref)


def holder_survives(holder: Holder, gone: Callable[[JSON], bool]) -> bool | None:
    """True when a pod that may hold it stays, False when every one goes, None when it names
    no pod. Several hostNetwork pods on its node, some staying: True (one of them may lead
    after the others go, and the Lease then says so)."""
    if not holder.pods:
        return None
    return not all(gone(p) for p in holder.pods)


def workload_pods(view: ClusterView, owner: Workload) -> list[JSON]:
    """The pods of the owner's workload where its default install puts them (one list of
    that namespace's pods), not being deleted."""
    return [
        p
        for p in reads.pods(view, owner.namespace)
        if owner.owns_name(text(meta(p).get("name"))) and not meta(p).get("deletionTimestamp")
    ]


def pod_ref(pod: JSON) -> ObjectRef:
    m = meta(pod)
    return ObjectRef("Pod", text(m.get("name")), text(m.get("namespace")), "v1")


def pod_names(pods: list[JSON] | tuple[JSON, ...]) -> list[str]:
    return [f"{text(meta(p).get('namespace'))}/{text(meta(p).get('name'))}" for p in pods]
