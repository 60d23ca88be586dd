"""Who removes a finalizer, what it waits for, and what removing it by hand leaves behind.

Every string below was checked against the owning project's public source or docs; a finalizer
that is not here is reported as "owner unknown" rather than guessed. Patterns use shell-style
wildcards (fnmatch) for families such as `external-attacher/<driver>`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

KCM_LEASE = "kube-controller-manager"  # kube-system, the default --leader-elect-resource-name
CCM_LEASE = "cloud-controller-manager"


@dataclass(frozen=True)
class FinalizerOwner:
    pattern: str  # the finalizer, or an fnmatch pattern for a family of them
    owner: str  # the controller that removes it
    waits_for: str  # what that controller waits for before removing it
    remedy: str  # the safe way to get it removed
    strands_infrastructure: bool = False  # removing it by hand leaves real resources behind
    risk: str = ""  # what removing it by hand skips
    # Leader-election Lease names (fnmatch) of the owner; `{group0}` is the first DNS label of
    # the object's API group (Flux runs one controller per group: kustomize-, helm-, ...).
    lease_names: tuple[str, ...] = ()
    in_apiserver: bool = False  # run by kube-apiserver itself: alive whenever it answers
    built_in: bool = False  # part of Kubernetes (kube-controller-manager and friends)


def _kcm(pattern: str, owner: str, waits_for: str, remedy: str, risk: str = "") -> FinalizerOwner:
    return FinalizerOwner(
        pattern, owner, waits_for, remedy, risk=risk, lease_names=(KCM_LEASE,), built_in=True
    )


def _aliases(entry: FinalizerOwner, *patterns: str) -> tuple[FinalizerOwner, ...]:
    """The same owner under other names (a project that renamed its finalizer)."""
    return (entry, *(replace(entry, pattern=p) for p in patterns))


_CSI_STRANDS = "the volume stays provisioned or attached in the storage backend"

_TABLE: tuple[FinalizerOwner, ...] = (
    # -- Kubernetes itself ---------------------------------------------------------------------
    _kcm(
        "kubernetes",
        "namespace controller (kube-controller-manager)",
        "every object in the namespace to be deleted",
        "fix what keeps the namespace's content from being deleted; the controller then removes it",
        risk="objects left in the namespace stay in etcd and reappear if the name is reused",
    ),
    _kcm(
        "kubernetes.io/pvc-protection",
        "pvc-protection controller (kube-controller-manager)",
        "no scheduled pod to reference the claim any more",
        "delete (or let finish) the pods that use the claim",
        risk="the volume can be released and deleted while a pod still uses it",
    ),
    _kcm(
        "kubernetes.io/pv-protection",
        "pv-protection controller (kube-controller-manager)",
        "the volume to be no longer Bound to a claim",
        "delete the claim bound to the volume first",
        risk="a bound claim is left pointing at a volume that no longer exists",
    ),
    _kcm(
        "foregroundDeletion",
        "garbage collector (kube-controller-manager)",
        "every dependent with blockOwnerDeletion to be deleted",
        "find out why the dependents are not deleted",
    ),
    _kcm(
        "orphan",
        "garbage collector (kube-controller-manager)",
        "the ownerReferences to this object to be removed from its dependents",
        "make sure kube-controller-manager (garbage collector) is running",
    ),
    _kcm(
        "batch.kubernetes.io/job-tracking",
        "job controller (kube-controller-manager)",
        "the Job to have counted this pod's completion",
        "make sure kube-controller-manager (job controller) is running",
        risk="the Job may miscount succeeded or failed pods",
    ),
    _kcm(
        "kubernetes.io/pv-controller",
        "persistentvolume controller (kube-controller-manager)",
        "the in-tree volume plugin to delete the backing volume",
        "fix the volume plugin's access to the storage backend",
        risk=_CSI_STRANDS,
    ),
    FinalizerOwner(
        "service.kubernetes.io/load-balancer-cleanup",
        "service controller (cloud-controller-manager)",
        "the cloud load balancer to be deleted",
        "make sure the cloud-controller-manager runs and can reach the cloud API",
        strands_infrastructure=True,
        risk="the cloud load balancer keeps running (and costing)",
        lease_names=(CCM_LEASE,),
        built_in=True,
    ),
    FinalizerOwner(
        "customresourcecleanup.apiextensions.k8s.io",
        "CRD finalizer (kube-apiserver)",
        "every instance of the custom resource to be deleted",
        "find out what holds each instance left (`kubectl terminating all -A --explain`)",
        risk="instances stay in etcd and reappear if the CRD is created again",
        in_apiserver=True,
        built_in=True,
    ),
    FinalizerOwner(
        "external-provisioner.volume.kubernetes.io/finalizer",
        "CSI external-provisioner (of the volume's driver)",
        "the driver to delete the volume in the storage backend",
        "restore the CSI driver's controller (provisioner sidecar)",
        strands_infrastructure=True,
        risk=_CSI_STRANDS,
        built_in=True,
    ),
    FinalizerOwner(
        "external-attacher/*",
        "CSI external-attacher (of that driver)",
        "the volume to be detached from the node",
        "restore the CSI driver's controller (attacher sidecar)",
        strands_infrastructure=True,
        risk="the disk stays attached to the node's machine",
        built_in=True,
    ),
    FinalizerOwner(
        "provisioner.storage.kubernetes.io/*",
        "CSI external-provisioner",
        "provisioning that uses this object as its source (clone, snapshot) to finish",
        "restore the CSI driver's controller (provisioner sidecar)",
        risk="a volume still being provisioned from this source may be corrupted",
        built_in=True,
    ),
    FinalizerOwner(
        "snapshot.storage.kubernetes.io/*",
        "CSI snapshot-controller (external-snapshotter)",
        "the snapshot to be unbound, unused as a source, or deleted in the backend",
        "make sure the snapshot-controller and the driver's snapshotter sidecar run",
        strands_infrastructure=True,
        risk="the snapshot stays in the storage backend",
        built_in=True,
    ),
    # -- widely used operators -----------------------------------------------------------------
    *_aliases(
        FinalizerOwner(
            "acme.cert-manager.io/finalizer",
            "cert-manager",
            "the ACME challenge to be cleaned up (solver pod, DNS record)",
            "restore the cert-manager controller",
            risk="a DNS TXT record or solver resources may be left behind",
            lease_names=("cert-manager-controller",),
        ),
        "finalizer.acme.cert-manager.io",  # its name before the UseDomainQualifiedFinalizer gate
    ),
    FinalizerOwner(
        "resources-finalizer.argocd.argoproj.io*",
        "Argo CD (application controller)",
        "every resource the Application manages to be deleted (cascade)",
        "restore the Argo CD application controller, then retry",
        strands_infrastructure=True,
        risk="the Application's workloads keep running, unmanaged",
    ),
    FinalizerOwner(
        "post-delete-finalizer.argocd.argoproj.io*",
        "Argo CD (application controller)",
        "the Application's PostDelete hooks to succeed",
        "restore the Argo CD application controller and fix the failing hook",
        risk="the PostDelete cleanup never runs",
    ),
    FinalizerOwner(
        "pre-delete-finalizer.argocd.argoproj.io*",
        "Argo CD (application controller)",
        "the Application's PreDelete hooks to succeed",
        "restore the Argo CD application controller and fix the failing hook",
        risk="the PreDelete cleanup never runs",
    ),
    FinalizerOwner(
        "finalizers.fluxcd.io",
        "Flux (the controller of this kind)",
        "its cleanup (garbage collection of applied objects, artifacts)",
        "restore the Flux controllers, then retry",
        strands_infrastructure=True,
        risk="objects the Flux object applied may stay in the cluster",
        lease_names=("{group0}*-controller-leader-election",),
    ),
    FinalizerOwner(
        "finalizer.managedresource.crossplane.io",
        "Crossplane provider (of this resource's group)",
        "the external (cloud) resource to be deleted",
        "restore the provider and its credentials (ProviderConfig), then retry",
        strands_infrastructure=True,
        risk="the cloud resource keeps running (and costing)",
    ),
    FinalizerOwner(
        "composite.apiextensions.crossplane.io",
        "Crossplane core",
        "its composed resources to be deleted",
        "restore Crossplane, then retry",
        risk="composed resources may be left without their composite",
        lease_names=("crossplane-leader-election-core",),
    ),
    FinalizerOwner(
        "ceph.rook.io/disaster-protection",
        "Rook Ceph operator",
        "the CephCluster to be deleted (protects what recovering the cluster needs)",
        "delete the CephCluster through the operator (see Rook's teardown guide)",
        strands_infrastructure=True,
        risk="the data needed to recover the Ceph cluster (mon keys, endpoints) is lost",
    ),
    FinalizerOwner(
        "*.ceph.rook.io",
        "Rook Ceph operator",
        "the Ceph resources behind this object to be removed",
        "restore the Rook operator, then retry",
        strands_infrastructure=True,
        risk="pools, filesystems or data stay in the Ceph cluster",
    ),
    FinalizerOwner(
        "longhorn.io",
        "Longhorn manager",
        "Longhorn to clean up the volume, engine or replica data",
        "restore longhorn-manager, then retry",
        strands_infrastructure=True,
        risk="replica data and disks stay on the nodes",
    ),
    FinalizerOwner(
        "restores.velero.io/external-resources-finalizer",
        "Velero server",
        "the Restore's external resources (data movers, snapshots) to be cleaned up",
        "restore the Velero server, then retry",
        risk="data-mover or snapshot resources of the restore may be left behind",
    ),
    FinalizerOwner(
        "velero.io/*",
        "Velero (server or node-agent)",
        "its backup/restore data path to be cleaned up",
        "restore the Velero server and node-agent, then retry",
        risk="volume snapshots or data-mover resources may be left behind",
    ),
    FinalizerOwner(
        "strimzi.io/topic-operator",
        "Strimzi topic operator (in the Kafka cluster's entity operator)",
        "the topic to be deleted in Kafka",
        "restore the Kafka cluster's entity operator, then retry",
        strands_infrastructure=True,
        risk="the topic stays in Kafka",
    ),
    FinalizerOwner(
        "monitoring.coreos.com/status-cleanup",
        "Prometheus operator",
        "status bindings on configuration resources to be removed",
        "restore the Prometheus operator, then retry",
        risk="stale status bindings stay on ServiceMonitors and similar objects",
    ),
    FinalizerOwner(
        "karpenter.sh/termination",
        "Karpenter",
        "the node to be drained and its cloud instance terminated",
        "restore the Karpenter controller, then retry",
        strands_infrastructure=True,
        risk="the cloud instance keeps running (and costing)",
    ),
    FinalizerOwner(
        "ingress.k8s.aws/resources",
        "AWS Load Balancer Controller",
        "the ALB and its target groups to be deleted",
        "restore the AWS Load Balancer Controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk="the load balancer keeps running (and costing)",
    ),
    FinalizerOwner(
        "group.ingress.k8s.aws/*",
        "AWS Load Balancer Controller",
        "the ingress group's ALB to be updated or deleted",
        "restore the AWS Load Balancer Controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk="the load balancer keeps running (and costing)",
    ),
    FinalizerOwner(
        "service.k8s.aws/resources",
        "AWS Load Balancer Controller",
        "the NLB and its target groups to be deleted",
        "restore the AWS Load Balancer Controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk="the load balancer keeps running (and costing)",
    ),
    FinalizerOwner(
        "elbv2.k8s.aws/resources",
        "AWS Load Balancer Controller",
        "the pods to be deregistered from the target group",
        "restore the AWS Load Balancer Controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk="stale targets stay registered in the target group",
    ),
    FinalizerOwner(
        "finalizer.keda.sh",
        "KEDA operator",
        "the scaling loop to stop and its HPA to be removed",
        "restore the KEDA operator, then retry",
        risk="an orphaned HPA may keep scaling the workload",
    ),
    FinalizerOwner(
        "cluster.cluster.x-k8s.io",
        "Cluster API (controller manager)",
        "the workload cluster's machines and infrastructure to be deleted",
        "restore the Cluster API controllers and the infrastructure provider, then retry",
        strands_infrastructure=True,
        risk="the workload cluster's machines keep running (and costing)",
    ),
    FinalizerOwner(
        "machine.cluster.x-k8s.io",
        "Cluster API (controller manager)",
        "the node to be drained and the machine's infrastructure deleted",
        "restore the Cluster API controllers and the infrastructure provider, then retry",
        strands_infrastructure=True,
        risk="the machine keeps running (and costing)",
    ),
    FinalizerOwner(
        "cnrm.cloud.google.com/*",
        "Config Connector",
        "the Google Cloud resource to be deleted (unless abandoned)",
        "restore Config Connector and its Google Cloud access, then retry",
        strands_infrastructure=True,
        risk="the Google Cloud resource keeps running (and costing)",
    ),
    FinalizerOwner(
        "istio-finalizer.install.istio.io",
        "Istio operator",
        "the Istio control plane it installed to be removed",
        "restore the Istio operator, then retry",
        strands_infrastructure=True,
        risk="Istio components stay installed in the cluster",
    ),
)


def _is_pattern(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


_EXACT = {entry.pattern: entry for entry in _TABLE if not _is_pattern(entry.pattern)}
_PATTERNS = tuple(entry for entry in _TABLE if _is_pattern(entry.pattern))


def lookup(finalizer: str) -> FinalizerOwner | None:
    """The owner of a finalizer: an exact entry first, then the first pattern that matches."""
    exact = _EXACT.get(finalizer)
    if exact is not None:
        return exact
    return next((entry for entry in _PATTERNS if fnmatchcase(finalizer, entry.pattern)), None)


def entries() -> tuple[FinalizerOwner, ...]:
    return _TABLE
