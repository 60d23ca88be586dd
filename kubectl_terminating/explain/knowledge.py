"""Who removes a finalizer, what it waits for, and what removing it by hand leaves behind.

Every string below was checked against the owning project's public source (each entry's `source`
names the repository or file that defines it); a finalizer that is not here is reported as "owner
unknown" rather than guessed. `runs_as` says how to tell the owner runs (its workload in a default
install), `risk` what removing the finalizer by hand skips. Patterns use shell-style
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
    runs_as: str = ""  # how to tell it runs: the workload (default install) that removes it
    source: str = ""  # where the owning project defines the finalizer (checked against it)
    # the owner's release from which nothing removes it any more ("Gatekeeper 3.15"): restoring
    # the owner is then no remedy, whether or not it runs
    removed_by_nobody_since: str = ""


_K8S = "https://github.com/kubernetes/kubernetes/blob/master/"
_KCM_RUNS_AS = "kube-controller-manager (kube-system; part of the managed control plane)"


def _kcm(
    pattern: str, owner: str, waits_for: str, remedy: str, source: str, risk: str = ""
) -> FinalizerOwner:
    return FinalizerOwner(
        pattern,
        owner,
        waits_for,
        remedy,
        risk=risk,
        lease_names=(KCM_LEASE,),
        built_in=True,
        runs_as=_KCM_RUNS_AS,
        source=_K8S + source,
    )


def _aliases(entry: FinalizerOwner, *patterns: str) -> tuple[FinalizerOwner, ...]:
    """The same owner under other names (a project that renamed its finalizer)."""
    return (entry, *(replace(entry, pattern=p) for p in patterns))


def _aws_lbc(
    pattern: str, waits_for: str, risk: str = "the load balancer keeps running (and costing)"
) -> FinalizerOwner:
    """A finalizer of the AWS Load Balancer Controller (one controller, four finalizers)."""
    return FinalizerOwner(
        pattern,
        "AWS Load Balancer Controller",
        waits_for,
        "restore the AWS Load Balancer Controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk=risk,
        runs_as="Deployment kube-system/aws-load-balancer-controller",
        source="https://github.com/kubernetes-sigs/aws-load-balancer-controller",
    )


_CSI_STRANDS = "the volume stays provisioned or attached in the storage backend"
_CAPI = "https://github.com/kubernetes-sigs/cluster-api/blob/main/"
_KUBERAY_CONSTANTS = (
    "https://github.com/ray-project/kuberay/blob/master/ray-operator/controllers/ray/utils/"
    "constant.go"
)
_KUBEVIRT_TYPES = (
    "https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/types.go"
)


def _crossplane(pattern: str, waits_for: str, risk: str, source: str) -> FinalizerOwner:
    """A finalizer of Crossplane core (its Lease from cmd/crossplane/core/core.go)."""
    return FinalizerOwner(
        pattern,
        "Crossplane core",
        waits_for,
        "restore Crossplane (Deployment crossplane-system/crossplane), then retry",
        risk=risk,
        lease_names=("crossplane-leader-election-core",),
        runs_as="Deployment crossplane-system/crossplane",
        source="https://github.com/crossplane/crossplane/blob/main/internal/controller/" + source,
    )


def _capi(
    pattern: str, waits_for: str, risk: str, source: str, strands: bool = True
) -> FinalizerOwner:
    """A finalizer of Cluster API core (one controller manager; its Lease from core/main.go)."""
    return FinalizerOwner(
        pattern,
        "Cluster API (controller manager)",
        waits_for,
        "restore the Cluster API controllers and the infrastructure provider, then retry",
        strands_infrastructure=strands,
        risk=risk,
        lease_names=("controller-leader-election-capi",),
        runs_as="Deployment capi-system/capi-controller-manager",
        source=_CAPI + source,
    )


def _fleet(
    pattern: str,
    owner: str,
    deployment: str,
    waits_for: str,
    source: str,
    lease: str = "fleet-controller-leader-election-shard*",
) -> FinalizerOwner:
    """A Rancher Fleet finalizer (Leases: LeaderElectionID in internal/cmd/controller/...)."""
    return FinalizerOwner(
        pattern,
        owner,
        waits_for,
        f"restore Deployment cattle-fleet-system/{deployment}, then retry",
        risk="bundle deployments and the resources they deployed stay in downstream clusters",
        lease_names=(lease,),
        runs_as=f"Deployment cattle-fleet-system/{deployment} ({deployment}-shard-<id> when "
        "sharded)",
        source="https://github.com/rancher/fleet/blob/main/internal/cmd/controller/" + source,
    )


def _openebs_node(pattern: str, kind: str, short: str, waits_for: str, risk: str) -> FinalizerOwner:
    """An OpenEBS LocalPV node plugin's finalizer. Its DaemonSet is `<fullname>-node`: the Helm
    chart's fullname is `<release>-<short>-localpv` (openebs-<short>-localpv-node in the openebs
    umbrella chart), the older operator YAML's openebs-<short>-node; its pods keep the label
    app=openebs-<short>-node either way (deploy/helm/charts/templates/<short>-node.yaml)."""
    node = f"openebs-{short}-localpv-node"
    return FinalizerOwner(
        pattern,
        f"OpenEBS {kind} LocalPV node plugin (on the volume's node)",
        waits_for,
        f"restore the node plugin pod on that node (DaemonSet {node}; pods labelled "
        f"app=openebs-{short}-node), then retry",
        strands_infrastructure=True,
        risk=risk,
        runs_as=f"DaemonSet {node} (Helm; <release>-{short}-localpv-node), openebs-{short}-node "
        f"(older operator YAML), in openebs or kube-system, on the volume's node",
        source=f"https://github.com/openebs/{short}-localpv/blob/develop/pkg/{short}/volume.go",
    )


def _gce_service_controller(pattern: str, kind: str, source: str) -> FinalizerOwner:
    """The legacy L4 finalizers of the GCE cloud provider's own service controller
    (cloud-provider-gcp providers/gce; ingress-gce's v2/v3 controllers use other names)."""
    return FinalizerOwner(
        pattern,
        "GCE cloud provider's service controller (cloud-controller-manager)",
        f"the Google Cloud {kind} load balancer of the Service to be deleted",
        "check the Service's events; the cloud-controller-manager runs it (managed on GKE)",
        strands_infrastructure=True,
        risk="the forwarding rule and backend service keep running (and costing)",
        lease_names=(CCM_LEASE,),
        runs_as="cloud-controller-manager (GKE-managed)",
        source="https://github.com/kubernetes/cloud-provider-gcp/blob/master/providers/gce/"
        + source,
    )


def _arangodb(pattern: str, waits_for: str, risk: str) -> FinalizerOwner:
    """A kube-arangodb finalizer on a member's pod or PVC (pkg/util/constants/constants.go;
    runPodFinalizers drops them once the member's server container is dead)."""
    return FinalizerOwner(
        pattern,
        "ArangoDB operator (kube-arangodb deployment operator)",
        waits_for,
        "restore the ArangoDB deployment operator, then retry (it removes it by itself once "
        "the member's server container is dead)",
        risk=risk,
        lease_names=("arango-deployment-operator",),
        runs_as="Deployment arango-<release>-operator (Helm chart), arango-deployment-operator "
        "(manifests)",
        source="https://github.com/arangodb/kube-arangodb/blob/master/pkg/util/constants/"
        "constants.go",
    )


def _percona(pattern: str, waits_for: str, remedy: str, risk: str) -> FinalizerOwner:
    """A Percona operator's percona.com/delete-* finalizer (PXC pkg/naming/naming.go, PSMDB
    pkg/naming/naming.go, PS pkg/naming/naming.go, PG percona/naming/finalizers.go)."""
    return FinalizerOwner(
        pattern,
        "Percona operator (XtraDB Cluster, Server for MongoDB, Server for MySQL or PostgreSQL)",
        waits_for,
        remedy,
        risk=risk,
        # LeaderElectionID of each operator's cmd/manager/main.go (PG: percona/runtime)
        lease_names=(
            "08db1feb.percona.com",
            "08db0feb.percona.com",
            "08db2feb.percona.com",
            "08db3feb.percona.com",
        ),
        runs_as="Deployment percona-xtradb-cluster-operator, percona-server-mongodb-operator, "
        "percona-server-mysql-operator or percona-postgresql-operator",
        source="https://github.com/percona/percona-xtradb-cluster-operator/blob/main/pkg/naming/"
        "naming.go",
    )


_TABLE: tuple[FinalizerOwner, ...] = (
    # -- Kubernetes itself ---------------------------------------------------------------------
    _kcm(
        "kubernetes",
        "namespace controller (kube-controller-manager)",
        "every object in the namespace to be deleted",
        "fix what keeps the namespace's content from being deleted; the controller then removes it",
        "pkg/controller/namespace/deletion/namespaced_resources_deleter.go",
        risk="objects left in the namespace stay in etcd and reappear if the name is reused",
    ),
    _kcm(
        "kubernetes.io/pvc-protection",
        "pvc-protection controller (kube-controller-manager)",
        "no scheduled pod to reference the claim any more",
        "delete (or let finish) the pods that use the claim",
        "pkg/controller/volume/pvcprotection/pvc_protection_controller.go",
        risk="the volume can be released and deleted while a pod still uses it",
    ),
    _kcm(
        "kubernetes.io/pv-protection",
        "pv-protection controller (kube-controller-manager)",
        "the volume to be no longer Bound to a claim",
        "delete the claim bound to the volume first",
        "pkg/controller/volume/pvprotection/pv_protection_controller.go",
        risk="a bound claim is left pointing at a volume that no longer exists",
    ),
    _kcm(
        "foregroundDeletion",
        "garbage collector (kube-controller-manager)",
        "every dependent with blockOwnerDeletion to be deleted",
        "find out why the dependents are not deleted",
        "pkg/controller/garbagecollector/garbagecollector.go",
    ),
    _kcm(
        "orphan",
        "garbage collector (kube-controller-manager)",
        "the ownerReferences to this object to be removed from its dependents",
        "make sure kube-controller-manager (garbage collector) is running",
        "pkg/controller/garbagecollector/garbagecollector.go",
        # the dependents keep their ownerReferences to an owner that is then gone
        risk="the garbage collector then deletes the dependents you meant to keep",
    ),
    _kcm(
        "batch.kubernetes.io/job-tracking",
        "job controller (kube-controller-manager)",
        "the Job to have counted this pod's completion",
        "make sure kube-controller-manager (job controller) is running",
        "pkg/controller/job/job_controller.go",
        risk="the Job may miscount succeeded or failed pods",
    ),
    _kcm(
        "kubernetes.io/pv-controller",
        "persistentvolume controller (kube-controller-manager)",
        "the in-tree volume plugin to delete the backing volume",
        "fix the volume plugin's access to the storage backend",
        "pkg/controller/volume/persistentvolume/pv_controller.go",
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
        runs_as="cloud-controller-manager (the cloud provider's; managed on hosted clusters)",
        source="https://github.com/kubernetes/cloud-provider/blob/master/controllers/service/controller.go",
    ),
    FinalizerOwner(
        "customresourcecleanup.apiextensions.k8s.io",
        "CRD finalizer (kube-apiserver)",
        "every instance of the custom resource to be deleted",
        "find out what holds each instance left (`kubectl terminating all -A --explain`)",
        risk="instances stay in etcd and reappear if the CRD is created again",
        in_apiserver=True,
        built_in=True,
        runs_as="kube-apiserver",
        source="https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiextensions-apiserver/pkg/controller/finalizer/crd_finalizer.go",
    ),
    FinalizerOwner(
        "external-provisioner.volume.kubernetes.io/finalizer",
        "CSI external-provisioner (of the volume's driver)",
        "the driver to delete the volume in the storage backend",
        "restore the CSI driver's controller (provisioner sidecar)",
        strands_infrastructure=True,
        risk=_CSI_STRANDS,
        built_in=True,
        runs_as="csi-provisioner sidecar in the CSI driver's controller Deployment",
        source="https://github.com/kubernetes-csi/external-provisioner",
    ),
    FinalizerOwner(
        "external-attacher/*",
        "CSI external-attacher (of that driver)",
        "the volume to be detached from the node",
        "restore the CSI driver's controller (attacher sidecar)",
        strands_infrastructure=True,
        risk="the disk stays attached to the node's machine",
        built_in=True,
        runs_as="csi-attacher sidecar in the CSI driver's controller Deployment",
        source="https://github.com/kubernetes-csi/external-attacher",
    ),
    FinalizerOwner(
        "provisioner.storage.kubernetes.io/*",
        "CSI external-provisioner",
        "provisioning that uses this object as its source (clone, snapshot) to finish",
        "restore the CSI driver's controller (provisioner sidecar)",
        risk="a volume still being provisioned from this source may be corrupted",
        built_in=True,
        runs_as="csi-provisioner sidecar in the CSI driver's controller Deployment",
        source="https://github.com/kubernetes-csi/external-provisioner",
    ),
    FinalizerOwner(
        "snapshot.storage.kubernetes.io/*",
        "CSI snapshot-controller (external-snapshotter)",
        "the snapshot to be unbound, unused as a source, or deleted in the backend",
        "make sure the snapshot-controller and the driver's snapshotter sidecar run",
        strands_infrastructure=True,
        risk="the snapshot stays in the storage backend",
        built_in=True,
        runs_as="Deployment kube-system/snapshot-controller, the driver's csi-snapshotter",
        source="https://github.com/kubernetes-csi/external-snapshotter",
    ),
    FinalizerOwner(
        "groupsnapshot.storage.kubernetes.io/*",
        "CSI snapshot-controller (external-snapshotter, volume group snapshots)",
        "the group snapshot to be unbound from its content, or the content deleted in the "
        "backend",
        "make sure the snapshot-controller and the driver's snapshotter sidecar run",
        strands_infrastructure=True,
        risk="the group snapshot stays in the storage backend",
        built_in=True,
        runs_as="Deployment kube-system/snapshot-controller, the driver's csi-snapshotter",
        source="https://github.com/kubernetes-csi/external-snapshotter/blob/master/pkg/utils/"
        "util.go",
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
            runs_as="Deployment cert-manager/cert-manager",
            source="https://github.com/cert-manager/cert-manager",
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
        runs_as="StatefulSet argocd/argocd-application-controller",
        source="https://github.com/argoproj/argo-cd",
    ),
    FinalizerOwner(
        "post-delete-finalizer.argocd.argoproj.io*",
        "Argo CD (application controller)",
        "the Application's PostDelete hooks to succeed",
        "restore the Argo CD application controller and fix the failing hook",
        risk="the PostDelete cleanup never runs",
        runs_as="StatefulSet argocd/argocd-application-controller",
        source="https://github.com/argoproj/argo-cd",
    ),
    FinalizerOwner(
        "pre-delete-finalizer.argocd.argoproj.io*",
        "Argo CD (application controller)",
        "the Application's PreDelete hooks to succeed",
        "restore the Argo CD application controller and fix the failing hook",
        risk="the PreDelete cleanup never runs",
        runs_as="StatefulSet argocd/argocd-application-controller",
        source="https://github.com/argoproj/argo-cd",
    ),
    FinalizerOwner(
        "finalizers.fluxcd.io",
        "Flux (the controller of this kind)",
        "its cleanup (garbage collection of applied objects, artifacts)",
        "restore the Flux controllers, then retry",
        strands_infrastructure=True,
        risk="objects the Flux object applied may stay in the cluster",
        lease_names=("{group0}*-controller-leader-election",),
        runs_as="Deployments in flux-system (source-, kustomize-, helm-controller, ...)",
        source="https://github.com/fluxcd/pkg",
    ),
    FinalizerOwner(
        "finalizer.managedresource.crossplane.io",
        "Crossplane provider (of this resource's group)",
        "the external (cloud) resource to be deleted",
        "restore the provider and its credentials (ProviderConfig), then retry",
        strands_infrastructure=True,
        risk="the cloud resource keeps running (and costing)",
        runs_as="Deployment of the provider in crossplane-system (provider-<name>-...)",
        source="https://github.com/crossplane/crossplane-runtime",
    ),
    FinalizerOwner(
        "in-use.crossplane.io",
        "Crossplane provider (ProviderConfig controller of crossplane-runtime)",
        "no ProviderConfigUsage to reference the ProviderConfig (status.users 0)",
        "delete the managed resources that use it first "
        "(kubectl get providerconfigusages -A shows them)",
        risk="managed resources left using it can no longer reach their cloud: they "
        "cannot be deleted and their external resources stay",
        runs_as="Deployment of the provider in crossplane-system (provider-<name>-...)",
        source="https://github.com/crossplane/crossplane-runtime",  # pkg/reconciler/providerconfig
    ),
    FinalizerOwner(
        "composite.apiextensions.crossplane.io",
        "Crossplane core",
        "its composed resources to be deleted",
        "restore Crossplane, then retry",
        risk="composed resources may be left without their composite",
        lease_names=("crossplane-leader-election-core",),
        runs_as="Deployment crossplane-system/crossplane",
        source="https://github.com/crossplane/crossplane",
    ),
    _crossplane(
        # claim/reconciler.go: the delete of the composite is requested, then the finalizer goes
        # at once unless compositeDeletePolicy is Foreground (then it waits for the composite)
        "finalizer.apiextensions.crossplane.io",
        "its composite resource's delete to be requested (the default, Background: removed at "
        "once after that); with spec.compositeDeletePolicy Foreground, the composite resource to "
        "finish deleting",
        "the composite resource (and what it composed) may be left without its claim",
        "apiextensions/claim/reconciler.go",
    ),
    _crossplane(
        "defined.apiextensions.crossplane.io",
        "every composite resource of the definition (XRD) to be deleted, then its CRD",
        "composite resources are left of a type whose definition is gone",
        "apiextensions/definition/reconciler.go",
    ),
    _crossplane(
        "offered.apiextensions.crossplane.io",
        "every claim the definition (XRD) offers to be deleted, then the claim CRD",
        "claims are left of a type whose definition is gone",
        "apiextensions/offered/reconciler.go",
    ),
    _crossplane(
        "usage.apiextensions.crossplane.io",
        "the using resource to be deleted first (a Usage composed with it)",
        "the resource it protects can be deleted while still in use",
        "protection/usage/reconciler.go",
    ),
    _crossplane(
        "lock.pkg.crossplane.io",
        "no package to be left in the Lock",
        "package dependency resolution loses track of installed packages",
        "pkg/resolver/reconciler.go",
    ),
    _crossplane(
        "revision.pkg.crossplane.io",
        "the package revision to be taken out of the Lock",
        "the Lock keeps a revision that no longer exists",
        "pkg/revision/reconciler.go",
    ),
    FinalizerOwner(
        "ceph.rook.io/disaster-protection",
        "Rook Ceph operator",
        "the CephCluster to be deleted (protects what recovering the cluster needs)",
        "delete the CephCluster through the operator (see Rook's teardown guide)",
        strands_infrastructure=True,
        risk="the data needed to recover the Ceph cluster (mon keys, endpoints) is lost",
        runs_as="Deployment rook-ceph/rook-ceph-operator",
        source="https://github.com/rook/rook",
    ),
    FinalizerOwner(
        "*.ceph.rook.io",
        "Rook Ceph operator",
        "the Ceph resources behind this object to be removed",
        "restore the Rook operator, then retry",
        strands_infrastructure=True,
        risk="pools, filesystems or data stay in the Ceph cluster",
        runs_as="Deployment rook-ceph/rook-ceph-operator",
        source="https://github.com/rook/rook",
    ),
    FinalizerOwner(
        "longhorn.io",
        "Longhorn manager",
        "Longhorn to clean up the volume, engine or replica data",
        "restore longhorn-manager, then retry",
        strands_infrastructure=True,
        risk="replica data and disks stay on the nodes",
        runs_as="DaemonSet longhorn-system/longhorn-manager",
        source="https://github.com/longhorn/longhorn-manager",
    ),
    FinalizerOwner(
        "restores.velero.io/external-resources-finalizer",
        "Velero server",
        "the Restore's external resources (data movers, snapshots) to be cleaned up",
        "restore the Velero server, then retry",
        risk="data-mover or snapshot resources of the restore may be left behind",
        runs_as="Deployment velero/velero",
        source="https://github.com/vmware-tanzu/velero",
    ),
    FinalizerOwner(
        "velero.io/*",
        "Velero (server or node-agent)",
        "its backup/restore data path to be cleaned up",
        "restore the Velero server and node-agent, then retry",
        risk="volume snapshots or data-mover resources may be left behind",
        runs_as="Deployment velero/velero and DaemonSet velero/node-agent",
        source="https://github.com/vmware-tanzu/velero",
    ),
    FinalizerOwner(
        "strimzi.io/topic-operator",
        "Strimzi topic operator (in the Kafka cluster's entity operator)",
        "the topic to be deleted in Kafka",
        "restore the Kafka cluster's entity operator, then retry",
        strands_infrastructure=True,
        risk="the topic stays in Kafka",
        runs_as="the topic-operator container of Deployment <cluster>-entity-operator",
        source="https://github.com/strimzi/strimzi-kafka-operator",
    ),
    FinalizerOwner(
        "monitoring.coreos.com/status-cleanup",
        "Prometheus operator",
        "status bindings on configuration resources to be removed",
        "restore the Prometheus operator, then retry",
        risk="stale status bindings stay on ServiceMonitors and similar objects",
        runs_as="Deployment prometheus-operator",
        source="https://github.com/prometheus-operator/prometheus-operator",
    ),
    FinalizerOwner(
        "karpenter.sh/termination",
        "Karpenter",
        "the node to be drained and its cloud instance terminated",
        "restore the Karpenter controller, then retry",
        strands_infrastructure=True,
        risk="the cloud instance keeps running (and costing)",
        runs_as="Deployment karpenter (kube-system or karpenter namespace)",
        source="https://github.com/kubernetes-sigs/karpenter",
    ),
    _aws_lbc("ingress.k8s.aws/resources", "the ALB and its target groups to be deleted"),
    _aws_lbc("group.ingress.k8s.aws/*", "the ingress group's ALB to be updated or deleted"),
    _aws_lbc("service.k8s.aws/resources", "the NLB and its target groups to be deleted"),
    # Gateway API support (LBC >= 2.13, pkg/shared_constants/finalizers.go): gateway.k8s.aws/alb,
    # .../nlb on Gateways; .../gatewayclass and .../*configurations on what they use
    _aws_lbc("gateway.k8s.aws/alb", "the Gateway's ALB to be deleted"),
    _aws_lbc("gateway.k8s.aws/nlb", "the Gateway's NLB to be deleted"),
    _aws_lbc(
        "gateway.k8s.aws/gatewayclass",
        "no Gateway of the class to be left",
        risk="Gateways are left referring to a class that no longer exists",
    ),
    _aws_lbc(
        "gateway.k8s.aws/*configurations",
        "no Gateway or route to use the configuration any more",
        risk="Gateways keep settings from a configuration that no longer exists",
    ),
    _aws_lbc(
        "aga.k8s.aws/resources",
        "the GlobalAccelerator's AWS Global Accelerator (listeners, endpoint groups) to be "
        "deleted",
        risk="the AWS Global Accelerator keeps running (and costing)",
    ),
    _aws_lbc(
        "elbv2.k8s.aws/resources",
        "the pods to be deregistered from the target group",
        risk="stale targets stay registered in the target group",
    ),
    FinalizerOwner(
        "finalizer.keda.sh",
        "KEDA operator",
        # also set on TriggerAuthentications and CloudEventSources (their own bookkeeping)
        "a ScaledObject's or ScaledJob's scaling loop to stop and its HPA to be removed",
        "restore the KEDA operator, then retry",
        risk="an orphaned HPA may keep scaling the workload",
        runs_as="Deployment keda/keda-operator",
        source="https://github.com/kedacore/keda",
    ),
    _capi(
        "cluster.cluster.x-k8s.io",
        "the workload cluster's machines and infrastructure to be deleted",
        "the workload cluster's machines keep running (and costing)",
        "api/core/v1beta2/cluster_types.go",
    ),
    _capi(
        "machine.cluster.x-k8s.io",
        "the node to be drained and the machine's infrastructure deleted",
        "the machine keeps running (and costing)",
        "api/core/v1beta2/machine_types.go",
    ),
    _capi(
        "machinepool.cluster.x-k8s.io",
        "the pool's nodes and infrastructure to be deleted",
        "the pool's machines keep running (and costing)",
        "api/core/v1beta2/machinepool_types.go",
    ),
    _capi(
        "cluster.x-k8s.io/machineset",
        "the MachineSet's Machines to be deleted first (ordered cleanup)",
        "its Machines are orphaned: their nodes and infrastructure keep running",
        "api/core/v1beta2/machineset_types.go",
    ),
    _capi(
        "cluster.x-k8s.io/machinedeployment",
        "the MachineDeployment's MachineSets to be deleted first (ordered cleanup)",
        "its MachineSets and Machines are orphaned: their infrastructure keeps running",
        "api/core/v1beta2/machinedeployment_types.go",
    ),
    _capi(
        "*.topology.cluster.x-k8s.io",
        "the templates the topology controller created for it to be cleaned up",
        "the referenced infrastructure and bootstrap templates stay behind",
        "api/core/v1beta2/machineset_types.go",
    ),
    _capi(
        "addons.cluster.x-k8s.io",
        "its ClusterResourceSetBindings to be cleaned up",
        "stale ClusterResourceSetBindings stay behind (the applied resources stay in the "
        "workload clusters either way)",
        "api/addons/v1beta2/clusterresourceset_types.go",
        strands=False,
    ),
    FinalizerOwner(
        "kubeadm.controlplane.cluster.x-k8s.io",
        "Cluster API kubeadm control plane provider",
        "the control plane's Machines to be deleted (after the workers)",
        "restore the kubeadm control plane controller (and Cluster API core), then retry",
        strands_infrastructure=True,
        risk="the control plane's machines keep running (and costing)",
        lease_names=("kubeadm-control-plane-manager-leader-election-capi",),
        runs_as="Deployment capi-kubeadm-control-plane-system/"
        "capi-kubeadm-control-plane-controller-manager",
        source=_CAPI + "api/controlplane/kubeadm/v1beta2/kubeadm_control_plane_types.go",
    ),
    FinalizerOwner(
        # CAPD's dockercluster.infrastructure..., CAPA's awscluster..., CAPZ, CAPV, ...
        "*.infrastructure.cluster.x-k8s.io",
        "the Cluster API infrastructure provider of this kind",
        "the cloud infrastructure behind the object (machine, network, load balancer) to be "
        "deleted",
        "restore the infrastructure provider's controller and its cloud credentials, then retry",
        strands_infrastructure=True,
        risk="the cloud infrastructure keeps running (and costing)",
        runs_as="the provider's Deployment (capa-system/capa-controller-manager, "
        "capz-system/capz-controller-manager, ...)",
        source=_CAPI + "test/infrastructure/docker/api/v1beta2/devmachine_types.go",
    ),
    FinalizerOwner(
        "cnrm.cloud.google.com/deletion-defender",
        "Config Connector deletion defender",
        "the object's deletion to be judged: removed alone (the resource is then deleted in "
        "Google Cloud), or with cnrm.cloud.google.com/finalizer and the abandon policy when "
        "its CRD is being uninstalled",
        "restore StatefulSet cnrm-system/cnrm-deletiondefender, then retry",
        strands_infrastructure=True,
        risk="removed by hand while Config Connector is being uninstalled, the controller may "
        "delete the Google Cloud resource instead of abandoning it",
        runs_as="StatefulSet cnrm-system/cnrm-deletiondefender",
        source="https://github.com/GoogleCloudPlatform/k8s-config-connector/blob/master/pkg/"
        "controller/deletiondefender/controller.go",
    ),
    FinalizerOwner(
        "cnrm.cloud.google.com/*",
        "Config Connector",
        "the Google Cloud resource to be deleted (unless abandoned)",
        "restore Config Connector and its Google Cloud access, then retry",
        strands_infrastructure=True,
        risk="the Google Cloud resource keeps running (and costing)",
        # namespaced mode: one StatefulSet per watched namespace, named from the per-namespace
        # template cnrm-controller-manager-${NAMESPACE?} with the namespace's id from ConfigMap
        # cnrm-system/namespace-id (operator/pkg/controllers/configconnectorcontext/namespaced.go)
        runs_as="StatefulSet cnrm-system/cnrm-controller-manager (cluster mode); in namespaced "
        "mode one StatefulSet per watched namespace, cnrm-system/cnrm-controller-manager-<id> "
        "(<id> from ConfigMap cnrm-system/namespace-id; labelled "
        "cnrm.cloud.google.com/scoped-namespace=<namespace>)",
        source="https://github.com/GoogleCloudPlatform/k8s-config-connector/blob/master/pkg/k8s/"
        "constants.go",
    ),
    FinalizerOwner(
        "istio-finalizer.install.istio.io",
        "Istio in-cluster operator (deprecated in 1.23, removed in 1.24)",
        "the Istio control plane it installed to be removed",
        "restore the in-cluster operator of the Istio release that installed it (1.23 or "
        "older), then retry; from Istio 1.24 nothing removes it: uninstall Istio with "
        "istioctl uninstall or Helm, then remove the finalizer",
        strands_infrastructure=True,
        risk="Istio components stay installed in the cluster",
        runs_as="Deployment istio-operator/istio-operator (Istio 1.23 or older)",
        # the in-cluster operator's last release branch; its fork after the removal:
        # github.com/istio-ecosystem/classic-operator-controller
        source="https://github.com/istio/istio/blob/release-1.23/operator/pkg/controller/"
        "istiocontrolplane/istiocontrolplane_controller.go",
    ),
    # -- added from the finalizers people get stuck on (public threads), each checked in the
    # -- owning project's source: the URL on each entry is where the string is defined -------
    FinalizerOwner(
        "controller.cattle.io/namespace-auth",
        "Rancher (namespace-auth lifecycle handler)",
        "the namespace's project role bindings to be removed",
        "restore Rancher's agent in this cluster (or re-import the cluster), then retry",
        risk="Rancher project role bindings for this namespace stay behind",
        # Rancher's leader election: Lease kube-system/cattle-controllers (rancher/rancher)
        lease_names=("cattle-controllers",),
        # norman lifecycle: finalizerKey = "controller.cattle.io/" + handler name
        runs_as="Deployment cattle-system/cattle-cluster-agent (Rancher in cattle-system upstream)",
        source="https://github.com/rancher/norman/blob/master/lifecycle/object.go",
    ),
    FinalizerOwner(
        "controller.cattle.io/*",
        "Rancher (the lifecycle handler named after the slash)",
        "that Rancher handler's cleanup",
        "restore Rancher (or its cattle-cluster-agent in a downstream cluster), then retry",
        risk="Rancher's records of the object (RBAC, projects) stay behind",
        lease_names=("cattle-controllers",),
        runs_as="Deployment cattle-system/rancher or cattle-system/cattle-cluster-agent",
        source="https://github.com/rancher/norman/blob/master/lifecycle/object.go",
    ),
    FinalizerOwner(
        "clusterscoped.controller.cattle.io/*",
        "Rancher (cluster-scoped lifecycle handler)",
        "that Rancher handler's cleanup for the named cluster",
        "restore Rancher, then retry",
        risk="Rancher's per-cluster records of the object stay behind",
        lease_names=("cattle-controllers",),
        runs_as="Deployment cattle-system/rancher",
        source="https://github.com/rancher/norman/blob/master/lifecycle/object.go",
    ),
    FinalizerOwner(
        "wrangler.cattle.io/on-helm-chart-remove",
        "helm-controller (k3s / RKE2)",
        "the helm uninstall Job of the HelmChart to finish",
        "make sure the k3s/RKE2 server (its embedded helm-controller) runs and the Job can run",
        strands_infrastructure=True,
        risk="the chart's release and workloads stay installed",
        runs_as="embedded in the k3s / RKE2 server process",
        source="https://github.com/k3s-io/helm-controller",
    ),
    FinalizerOwner(
        "wrangler.cattle.io/*",
        "a wrangler-based controller (Rancher, k3s/RKE2, Harvester, Fleet)",
        "the OnRemove handler named after the slash to finish",
        "restore the controller that registered that handler, then retry",
        risk="whatever that handler cleans up stays behind",
        # wrangler pkg/generic: finalizerKey = "wrangler.cattle.io/" + handler name
        runs_as="Rancher, the k3s/RKE2 server, Harvester or Fleet (named by the handler)",
        source="https://github.com/rancher/wrangler",
    ),
    *_aliases(
        FinalizerOwner(
            "kubevirt.io/foregroundDeleteVirtualMachine",
            "KubeVirt (virt-controller, VirtualMachineInstance controller)",
            "the instance's virt-launcher pod to be gone and the deletion processed",
            "if the instance's node is unreachable: fence the node (power it off), then "
            "force-delete its virt-launcher pod (kubectl delete pod --force --grace-period=0); "
            "virt-controller then removes it. Otherwise restore virt-controller in the kubevirt "
            "namespace (and virt-handler on the instance's node), then retry",
            strands_infrastructure=True,
            risk="fence the node and force-delete the virt-launcher pod first: a VM with "
            "runStrategy Always is started again at once, without a check for a launcher pod "
            "still terminating on an unreachable node (vm.go start path), so two VMs can write "
            "one ReadWriteMany disk (kubevirt#9830); the launcher pod, its volumes and hotplug "
            "attachments may also be left",
            lease_names=("virt-controller",),  # leader election in the kubevirt namespace
            runs_as="Deployment kubevirt/virt-controller",
            # the VM controller's start path: pkg/virt-controller/watch/vm/vm.go (syncRunStrategy,
            # RunStrategyAlways, startVMI)
            source=_KUBEVIRT_TYPES,
        ),
        "foregroundDeleteVirtualMachine",  # its name before KubeVirt #15096 (migrated on sync)
    ),
    FinalizerOwner(
        "kubevirt.io/migrationJobFinalize",
        "KubeVirt (virt-controller, migration controller)",
        "the migration to reach a final phase (its target pod cleaned up)",
        "restore virt-controller in the kubevirt namespace, then retry",
        risk="the migration's target pod and the instance's migration state may be left",
        lease_names=("virt-controller",),  # leader election in the kubevirt namespace
        runs_as="Deployment kubevirt/virt-controller",
        source=_KUBEVIRT_TYPES,
    ),
    FinalizerOwner(
        "kubevirt.io/virtOperatorFinalizer",
        "KubeVirt (virt-operator)",
        "every KubeVirt custom resource to be deleted before its CRDs go (KubeVirt being "
        "uninstalled)",
        "restore virt-operator in the kubevirt namespace, then retry",
        risk="KubeVirt's CRDs go while instances may still exist",
        lease_names=("virt-operator",),  # leader election in the kubevirt namespace
        runs_as="Deployment kubevirt/virt-operator",
        source=_KUBEVIRT_TYPES,
    ),
    FinalizerOwner(
        "kubevirt.io/virtualMachineControllerFinalize",
        "KubeVirt (virt-controller)",
        "the VirtualMachine controller to have seen the instance go (VM status, volumes)",
        "restore virt-controller in the kubevirt namespace, then retry",
        risk="the VirtualMachine's status and DataVolumes may not be reconciled",
        lease_names=("virt-controller",),  # leader election in the kubevirt namespace
        runs_as="Deployment kubevirt/virt-controller",
        source=_KUBEVIRT_TYPES,
    ),
    FinalizerOwner(
        "*.knative.dev",
        "Knative (the controller of this kind: serving, eventing, the networking layer "
        "net-istio / net-kourier / net-gateway-api, imc-controller for in-memory channels)",
        "the reconciler's FinalizeKind to finish (routes, subscriptions, sinks)",
        "restore the Knative controller (knative-serving / knative-eventing), then retry",
        risk="routes, subscriptions or external sources of the object may stay behind",
        # knative.dev/pkg injection-gen: defaultFinalizerName = "<plural>.<group>"
        runs_as="Deployment knative-serving/controller or net-istio-controller / "
        "net-kourier-controller / net-gateway-api-controller, knative-eventing/eventing-controller "
        "or imc-controller",
        source="https://github.com/knative/pkg/blob/main/codegen/cmd/injection-gen/generators/reconciler/reconciler_controller.go",
    ),
    FinalizerOwner(
        "chains.tekton.dev*",
        "Tekton Chains",
        "the run to be signed and its provenance stored",
        "restore the tekton-chains controller, then retry",
        risk="the run's signature and provenance are never recorded",
        runs_as="Deployment tekton-chains/tekton-chains-controller",
        source="https://github.com/tektoncd/chains",
    ),
    # Tekton Pipelines' own reconcilers implement no FinalizeKind (none adds a finalizer to runs);
    # the knative injection-gen finalizers "<plural>.<group>" are the Tekton Operator's.
    FinalizerOwner(
        "*.operator.tekton.dev",
        "Tekton Operator (the reconciler of this kind: TektonConfig, TektonPipeline, ...)",
        "the component it installed (CRDs, TektonInstallerSets) to be removed",
        "restore Deployment tekton-operator/tekton-operator, then retry",
        strands_infrastructure=True,
        risk="the Tekton component and its CRDs stay installed",
        runs_as="Deployment tekton-operator/tekton-operator",
        source="https://github.com/tektoncd/operator/blob/main/pkg/reconciler/kubernetes/"
        "tektonpipeline/finalize.go",
    ),
    FinalizerOwner(
        "pipelinesascode.tekton.dev/finalizer",
        "Pipelines-as-Code watcher",
        "the PipelineRun to be reported cancelled to the git provider and taken out of its "
        "Repository's concurrency queue",
        "restore Deployment pipelines-as-code/pipelines-as-code-watcher, then retry",
        risk="the git provider shows the run as still running, and runs queued behind it "
        "may not start",
        runs_as="Deployment pipelines-as-code/pipelines-as-code-watcher",
        source="https://github.com/openshift-pipelines/pipelines-as-code/blob/main/pkg/"
        "reconciler/finalizer.go",
    ),
    # Gatekeeper's releases before 3.1 added these; 3.1 to 3.14 only remove them (when the object
    # is reconciled); 3.15 dropped that code: nothing removes a leftover any more.
    FinalizerOwner(
        "constrainttemplate.finalizers.gatekeeper.sh",
        "OPA Gatekeeper 3.1-3.14 (removes it; no release since 3.1 adds it)",
        "nothing: a leftover of a Gatekeeper release older than 3.1",
        "remove the finalizer: restoring Gatekeeper 3.15 or later never does (3.1 to 3.14 "
        "removed it when reconciling the template)",
        risk="nothing since Gatekeeper 3.1: the cleanup it guarded no longer exists",
        runs_as="Deployment gatekeeper-system/gatekeeper-controller-manager (3.1-3.14)",
        source="https://github.com/open-policy-agent/gatekeeper/blob/v3.14.0/pkg/controller/"
        "constrainttemplate/constrainttemplate_controller.go",
        removed_by_nobody_since="Gatekeeper 3.15",
    ),
    FinalizerOwner(
        "finalizers.gatekeeper.sh/*",
        "OPA Gatekeeper 3.1-3.14 (removes it; no release since 3.1 adds it)",
        "nothing: a leftover of a Gatekeeper release older than 3.1",
        "remove the finalizer: restoring Gatekeeper 3.15 or later never does (3.1 to 3.14 "
        "removed it when reconciling the object)",
        risk="nothing since Gatekeeper 3.1: the cleanup it guarded no longer exists",
        runs_as="Deployment gatekeeper-system/gatekeeper-controller-manager (3.1-3.14)",
        source="https://github.com/open-policy-agent/gatekeeper/blob/v3.14.0/pkg/controller/"
        "config/config_controller.go",
        removed_by_nobody_since="Gatekeeper 3.15",
    ),
    FinalizerOwner(
        "externalsecrets.external-secrets.io/externalsecret-cleanup",
        "External Secrets Operator",
        "the target Secret to be deleted per its deletion policy",
        "restore the external-secrets controller (its webhook must answer too), then retry",
        # a target Secret it owns is garbage-collected anyway; a generic target is not owned
        risk="objects its generic target wrote (not owned by the ExternalSecret) may stay behind",
        lease_names=("external-secrets-controller",),
        runs_as="Deployment external-secrets/external-secrets",
        source="https://github.com/external-secrets/external-secrets",
    ),
    FinalizerOwner(
        "externalsecrets.external-secrets.io/clusterexternalsecret-cleanup",
        "External Secrets Operator (ClusterExternalSecret controller)",
        "the ExternalSecrets it created in the selected namespaces to be deleted",
        "restore the external-secrets controller, then retry",
        risk="the ExternalSecrets it created stay in their namespaces",
        lease_names=("external-secrets-controller",),
        runs_as="Deployment external-secrets/external-secrets",
        source="https://github.com/external-secrets/external-secrets",
    ),
    FinalizerOwner(
        "externalsecrets.external-secrets.io/ces-*",
        "External Secrets Operator (ClusterExternalSecret named after `ces-`)",
        "the ClusterExternalSecret's ExternalSecret in this namespace to be cleaned up",
        "restore the external-secrets controller, or delete that ClusterExternalSecret first",
        risk="the ClusterExternalSecret keeps a record of a namespace that is gone",
        lease_names=("external-secrets-controller",),
        runs_as="Deployment external-secrets/external-secrets",
        source="https://github.com/external-secrets/external-secrets",
    ),
    FinalizerOwner(
        "olm.operatorframework.io/cleanup-*",
        "OLM v1 operator-controller",
        "the extension's unpack and content caches to be cleaned up",
        "restore operator-controller (olmv1-system), then retry",
        risk="cached bundle content stays on the controller's volume",
        runs_as="Deployment olmv1-system/operator-controller-controller-manager",
        source="https://github.com/operator-framework/operator-controller",
    ),
    FinalizerOwner(
        # Two uses of one string: trident-controller's CRD controller removes it from Trident's
        # custom resources (nodes, volumes, snapshots, ...) as soon as their deletion starts
        # (frontend/crd/controller/crd_controller.go); the operator's installer (and tridentctl
        # install) puts it on Trident's CustomResourceDefinitions (AddFinalizerToCRDs), where only
        # `tridentctl obliviate crd` or an uninstall with TridentOrchestrator spec.wipeout: [crds]
        # removes it. No TridentOrchestrator carries it.
        "trident.netapp.io",
        "NetApp Trident (trident-controller on its custom resources; on Trident's CRDs only "
        "tridentctl obliviate crd)",
        "nothing on a Trident custom resource (removed as its deletion starts: one left means "
        "trident-controller is not running); on a Trident CRD, Trident's deliberate removal "
        "(tridentctl obliviate crd, or an operator uninstall with spec.wipeout [crds])",
        "on a Trident custom resource: restore Deployment trident/trident-controller, then "
        "retry. On a Trident CustomResourceDefinition restoring trident-controller never helps: "
        "only if Trident is going away for good, run tridentctl obliviate crd (or uninstall "
        "with TridentOrchestrator spec.wipeout: [crds])",
        risk="on a custom resource, Trident's own record of the object goes (the volume itself "
        "follows its PV); on a CRD, the CRD goes with every Trident record of its kind "
        "(backends, volumes, snapshots): Trident loses track of what it provisioned",
        runs_as="Deployment trident/trident-controller (custom resources); nothing runs for the "
        "CRDs' finalizer (tridentctl obliviate crd)",
        source="https://github.com/NetApp/trident/blob/master/operator/controllers/orchestrator/"
        "installer/installer.go",
    ),
    FinalizerOwner(
        "networking.gke.io/ingress-finalizer*",
        "GKE Ingress controller (ingress-gce)",
        "the Google Cloud load balancer of the Ingress to be deleted",
        "check the Ingress's events; GKE runs the controller in its control plane",
        strands_infrastructure=True,
        risk="forwarding rules, URL maps and backends keep running (and costing)",
        runs_as="GKE-managed (l7-lb-controller in the control plane)",
        source="https://github.com/kubernetes/ingress-gce/blob/master/pkg/utils/common/finalizer.go",
    ),
    FinalizerOwner(
        "networking.gke.io/neg-finalizer",
        "GKE NEG controller (ingress-gce)",
        "the network endpoint groups in Google Cloud to be deleted",
        "check the ServiceNetworkEndpointGroup's events; GKE runs the controller",
        strands_infrastructure=True,
        risk="network endpoint groups stay in the Google Cloud project",
        runs_as="GKE-managed (neg controller in the control plane)",
        source="https://github.com/kubernetes/ingress-gce/blob/master/pkg/utils/common/finalizer.go",
    ),
    *(
        _gce_service_controller(pattern, kind, source)
        for pattern, kind, source in (
            ("gke.networking.io/l4-ilb-v1", "internal", "gce_loadbalancer_internal.go"),
            ("gke.networking.io/l4-netlb-v1", "external", "gce_loadbalancer_external.go"),
        )
    ),
    FinalizerOwner(
        "gke.networking.io/l4-*",
        "GKE L4 load balancer controller (ingress-gce)",
        "the Google Cloud L4 load balancer of the Service to be deleted",
        "check the Service's events; GKE runs the controller in its control plane",
        strands_infrastructure=True,
        risk="the forwarding rule and backend service keep running (and costing)",
        runs_as="GKE-managed (l4 controller in the control plane)",
        source="https://github.com/kubernetes/ingress-gce/blob/master/pkg/utils/common/finalizer.go",
    ),
    FinalizerOwner(
        "finalizers.*.services.k8s.aws/*",
        "AWS Controllers for Kubernetes (the service's controller)",
        "the AWS resource to be deleted (unless its deletion policy retains it)",
        "restore the ACK controller of that service and its IAM access, then retry",
        strands_infrastructure=True,
        risk="the AWS resource keeps running (and costing)",
        runs_as="Deployment ack-system/ack-<service>-controller",
        source="https://github.com/aws-controllers-k8s/runtime",
    ),
    FinalizerOwner(
        "serviceoperator.azure.com/finalizer",
        "Azure Service Operator v2",
        "the Azure resource to be deleted (unless reconcile-policy is skip/manage)",
        "restore azureserviceoperator-controller-manager and its Azure credentials, then retry",
        strands_infrastructure=True,
        risk="the Azure resource keeps running (and costing)",
        runs_as="Deployment azureserviceoperator-system/azureserviceoperator-controller-manager",
        source="https://github.com/Azure/azure-service-operator",
    ),
    FinalizerOwner(
        "gateway-exists-finalizer.gateway.networking.k8s.io",
        "the Gateway API implementation of this GatewayClass (spec.controllerName)",
        "no Gateway to use the GatewayClass any more",
        "delete the Gateways of this class first (kubectl get gateways -A)",
        risk="Gateways are left referring to a class that no longer exists",
        runs_as="the controller named in the GatewayClass's spec.controllerName",
        source="https://github.com/kubernetes-sigs/gateway-api/blob/main/apis/v1/gatewayclass_types.go",
    ),
    FinalizerOwner(
        "karpenter.k8s.aws/termination",
        "Karpenter (AWS provider)",
        "the EC2NodeClass's instance profile to be removed, with no NodeClaim using it",
        "restore the Karpenter controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk="the IAM instance profile stays in the AWS account",
        runs_as="Deployment karpenter (kube-system or karpenter namespace)",
        source="https://github.com/aws/karpenter-provider-aws",
    ),
    _kcm(
        "resource.kubernetes.io/delete-protection",
        "resourceclaim controller (kube-controller-manager)",
        "no pod to reserve the ResourceClaim and its devices to be deallocated",
        "delete (or let finish) the pods in the claim's status.reservedFor",
        "pkg/controller/resourceclaim/controller.go",
        risk="devices may be handed out again while a pod still uses them",
    ),
    _kcm(
        "networking.k8s.io/service-cidr-finalizer",
        "service-cidr controller (kube-controller-manager)",
        "no Service ClusterIP (IPAddress) to be allocated from the range",
        "delete the Services whose ClusterIPs are in this ServiceCIDR",
        "pkg/controller/servicecidrs/servicecidrs_controller.go",
        risk="Services keep ClusterIPs from a range the cluster no longer claims",
    ),
    FinalizerOwner(
        "workflows.argoproj.io/artifact-gc",
        "Argo Workflows controller (artifact garbage collection)",
        "the workflow's artifacts to be deleted by its artifact-GC pods",
        "restore workflow-controller and check the artifact-GC pods' logs and RBAC",
        strands_infrastructure=True,
        risk="the workflow's artifacts stay in the artifact repository (S3, GCS, ...)",
        runs_as="Deployment argo/workflow-controller",
        source="https://github.com/argoproj/argo-workflows",
    ),
    FinalizerOwner(
        # on the workflow's pods with ARGO_POD_STATUS_CAPTURE_FINALIZER=true
        "workflows.argoproj.io/status",
        "Argo Workflows controller (pod status capture)",
        "the pod's exit status to be recorded in its Workflow",
        "restore Deployment argo/workflow-controller, then retry",
        risk="the Workflow may never learn how the step ended (it can stay Running or fail "
        "the node)",
        runs_as="Deployment argo/workflow-controller",
        source="https://github.com/argoproj/argo-workflows/blob/main/workflow/common/common.go",
    ),
    FinalizerOwner(
        "ray.io/gcs-ft-redis-cleanup-finalizer",
        "KubeRay operator",
        "a Job to clean the RayCluster's keys out of the external Redis",
        "restore kuberay-operator and make sure the cleanup Job can run and reach Redis",
        risk="the cluster's GCS fault-tolerance data stays in Redis",
        lease_names=("ray-operator-leader",),
        runs_as="Deployment kuberay-operator",
        source=_KUBERAY_CONSTANTS,
    ),
    FinalizerOwner(
        "ray.io/rayjob-finalizer",
        "KubeRay operator (RayJob controller)",
        "the job to be stopped on its RayCluster (tried once; removed whether it stopped or not)",
        "restore kuberay-operator, then retry",
        risk="the Ray job may keep running on a RayCluster that outlives the RayJob",
        lease_names=("ray-operator-leader",),
        runs_as="Deployment kuberay-operator",
        source=_KUBERAY_CONSTANTS,
    ),
    FinalizerOwner(
        "ray.io/rayservice-finalizer",
        "KubeRay operator (RayService controller)",
        "the RayService's RayClusters to be cleaned up",
        "restore kuberay-operator, then retry",
        risk="the RayService's RayClusters (and their pods) may stay behind",
        lease_names=("ray-operator-leader",),
        runs_as="Deployment kuberay-operator",
        source=_KUBERAY_CONSTANTS,
    ),
    FinalizerOwner(
        "opentelemetrycollector.opentelemetry.io/finalizer",
        "OpenTelemetry Operator",
        "the collector's cluster-scoped objects (ClusterRoles, bindings) to be deleted",
        "restore opentelemetry-operator-controller-manager, then retry",
        risk="the collector's cluster-scoped RBAC stays behind",
        runs_as="Deployment opentelemetry-operator-controller-manager (its system namespace)",
        source="https://github.com/open-telemetry/opentelemetry-operator",
    ),
    FinalizerOwner(
        "finalizer.stack.pulumi.com",
        "Pulumi Kubernetes Operator",
        "the stack to be destroyed when spec.destroyOnFinalize is set",
        "restore pulumi-kubernetes-operator and the stack's credentials, then retry",
        strands_infrastructure=True,
        risk="the stack's cloud resources keep running (and costing)",
        lease_names=("operator.pulumi.com",),  # v2's LeaderElectionID (operator/cmd/main.go)
        runs_as="Deployment pulumi-kubernetes-operator/controller-manager (v2 kustomize), "
        "<release>-controller-manager (v2 Helm chart), pulumi-kubernetes-operator (v1)",
        source="https://github.com/pulumi/pulumi-kubernetes-operator/blob/master/operator/"
        "internal/controller/pulumi/stack_controller.go",
    ),
    *_aliases(
        FinalizerOwner(
            "gateway.kusk.io/apifinalizer",
            "Kusk Gateway manager",
            "the API's or StaticRoute's Envoy configuration to be removed",
            "restore kusk-gateway-manager (kusk-system), then retry",
            risk="stale routes stay in the Envoy fleet's configuration",
            runs_as="Deployment kusk-system/kusk-gateway-manager",
            source="https://github.com/kubeshop/kusk-gateway",
        ),
        "gateway.kusk.io/srfinalizer",  # StaticRoute; apifinalizer is on API objects
    ),
    # Kyverno 1.13.0-1.17.x with --autoDeleteWebhooks (chart: webhooksCleanup.autoDeleteWebhooks):
    # the chart and each component's webhook controllers (pkg/controllers/webhook/cleanup.go,
    # WebhookCleanupSetup/Handler) put the finalizers on that component's own Deployment,
    # `<role>:core` ClusterRole, Role, RoleBinding and ServiceAccount, and remove them once its
    # Deployment goes (kyverno#10782, v1.13.0; stuck uninstalls: kyverno#11592). v1.18.0 dropped
    # the feature (kyverno#15260, cce31df0a6): nothing removes a leftover any more (the cleanup
    # controller's --autoDeleteWebhooks flag came back in 1.18 unused, kyverno#14770).
    *_aliases(
        FinalizerOwner(
            "kyverno.io/policywebhooks",
            "Kyverno cleanup controller 1.13-1.17 with --autoDeleteWebhooks "
            "(policy and TTL webhook controllers)",
            "its cleanup and TTL webhook configurations to be deleted before it goes",
            "restore Deployment kyverno/kyverno-cleanup-controller (1.13-1.17, "
            "--autoDeleteWebhooks), then retry; from Kyverno 1.18 nothing removes it: delete "
            "kyverno-cleanup-validating-webhook-cfg and kyverno-ttl-validating-webhook-cfg if "
            "Kyverno is going away, then remove the finalizer",
            risk="the cleanup controller's webhook configurations stay behind",
            # its Lease: leaderelection.New in cmd/cleanup-controller/main.go (v1.17.2, v1.19.0)
            lease_names=("kyverno-cleanup-controller",),
            runs_as="Deployment kyverno/kyverno-cleanup-controller",
            source="https://github.com/kyverno/kyverno/blob/v1.17.2/cmd/cleanup-controller/main.go",
        ),
        "kyverno.io/ttlwebhooks",
    ),
    FinalizerOwner(
        # kyverno.io/webhooks, exceptionwebhooks, celexceptionwebhooks (1.14+),
        # globalcontextwebhooks
        "kyverno.io/*webhooks",
        "Kyverno admission controller 1.13-1.17 with --autoDeleteWebhooks "
        "(its webhook controllers)",
        "Kyverno's webhook configurations to be deleted before its Deployment goes",
        "restore Deployment kyverno/kyverno-admission-controller (1.13-1.17, "
        "--autoDeleteWebhooks), then retry; from Kyverno 1.18 nothing removes it: delete the "
        "webhook configurations labelled webhook.kyverno.io/managed-by=kyverno if Kyverno is "
        "going away, then remove the finalizer",
        risk="Kyverno's webhook configurations stay and reject writes once its service is gone",
        # its Lease: leaderelection.New in cmd/kyverno/main.go (v1.17.2); they run as the leader
        lease_names=("kyverno",),
        runs_as="Deployment kyverno/kyverno-admission-controller",
        source="https://github.com/kyverno/kyverno/blob/v1.17.2/cmd/kyverno/main.go",
    ),
    FinalizerOwner(
        "cluster.open-cluster-management.io/api-resource-cleanup",
        "Open Cluster Management registration controller (hub)",
        "the managed cluster's hub-side RBAC and namespace resources to be removed",
        "restore cluster-manager-registration-controller on the hub, then retry",
        risk="the managed cluster's hub-side roles and work stay behind",
        runs_as="Deployment open-cluster-management-hub/cluster-manager-registration-controller",
        source="https://github.com/open-cluster-management-io/ocm",
    ),
    FinalizerOwner(
        "gateway.k8s.aws/resources",
        "AWS Gateway API Controller (Amazon VPC Lattice)",
        "the VPC Lattice service network, service or target group of the object to be deleted",
        "restore the gateway-api-controller and its IAM access, then retry",
        strands_infrastructure=True,
        risk="the VPC Lattice resources keep running (and costing)",
        runs_as="Deployment aws-application-networking-system/gateway-api-controller",
        source="https://github.com/aws/aws-application-networking-k8s",
    ),
    FinalizerOwner(
        "extensions-finalizer.argocd.argoproj.io",
        "argocd-extensions controller (argoproj-labs/argocd-extensions, deprecated)",
        "the extension's files to be removed from the Argo CD server's extensions directory",
        "restore the argocd-extensions sidecar of argocd-server, or, if it was never "
        "installed, remove the finalizer (nothing else removes it)",
        risk="the extension's files may stay in the argocd-server pod's extensions emptyDir "
        "until the pod restarts",
        runs_as="the argocd-extensions sidecar container of Deployment argocd-server",
        source="https://github.com/argoproj-labs/argocd-extensions/blob/main/manifests/"
        "argocd-server-patch/argocd-server-deployment-patch.yaml",
    ),
    *_aliases(
        FinalizerOwner(
            "kopf.zalando.org/KopfFinalizerMarker",
            "an operator built with Kopf (a framework: many operators use this finalizer)",
            "that operator's @kopf.on.delete handlers for this kind to succeed",
            "find the operator that handles this kind (the Deployment whose pods run `kopf run` "
            "and whose RBAC grants this kind), restore it, then retry",
            risk="that operator's deletion handlers never run (whatever they clean up stays)",
            runs_as="the Deployment running `kopf run` for this kind (look for the object's "
            "group in the operators' ClusterRoles)",
            source="https://github.com/nolar/kopf",
        ),
        "KopfFinalizerMarker",  # Kopf's legacy (unprefixed) marker
    ),
    FinalizerOwner(
        "kueue.x-k8s.io/managed",
        "Kueue (controller manager: pod integration)",
        "the pod's workload to be finalized (its usage released from the quota)",
        "restore Deployment kueue-system/kueue-controller-manager, then retry",
        risk="the ClusterQueue may keep counting the pod's quota as used",
        runs_as="Deployment kueue-system/kueue-controller-manager",
        source="https://github.com/kubernetes-sigs/kueue",
    ),
    FinalizerOwner(
        "kueue.x-k8s.io/resource-in-use",
        "Kueue (controller manager)",
        "nothing to use the object any more: no workload reserving quota in a ClusterQueue, "
        "no ClusterQueue naming a ResourceFlavor or AdmissionCheck, a Workload finished",
        "delete (or let finish) the workloads or ClusterQueues that use it; "
        "kueue-controller-manager then removes it",
        risk="admitted workloads keep quota or flavors that no longer exist in Kueue's cache",
        runs_as="Deployment kueue-system/kueue-controller-manager",
        source="https://github.com/kubernetes-sigs/kueue/blob/main/apis/kueue/v1beta2/"
        "constants.go",
    ),
    FinalizerOwner(
        "tigera.io/operator-cleanup",
        "Tigera operator (Calico)",
        "its finalization of the Installation (calico-system resources, CNI RBAC) to complete",
        "restore Deployment tigera-operator/tigera-operator, then retry",
        risk="calico-system resources and CNI RBAC stay behind",
        # OperatorCompleteFinalizer in the operator's Installation controller
        runs_as="Deployment tigera-operator/tigera-operator",
        source="https://github.com/tigera/operator",
    ),
    FinalizerOwner(
        "tigera.io/cni-protector",
        "Tigera operator (Calico)",
        "the CNI plugin to no longer need this ServiceAccount or role (Calico being removed)",
        "restore Deployment tigera-operator/tigera-operator, then retry",
        risk="pods on nodes still running Calico CNI may fail to start or be torn down",
        runs_as="Deployment tigera-operator/tigera-operator",
        source="https://github.com/tigera/operator",
    ),
    FinalizerOwner(
        "operator.tigera.io/*",
        "Tigera operator (Calico; the controller named after the slash)",
        "that controller's cleanup (e.g. the Calico API server) to finish",
        "restore Deployment tigera-operator/tigera-operator, then retry",
        risk="the component that controller manages stays installed",
        runs_as="Deployment tigera-operator/tigera-operator",
        source="https://github.com/tigera/operator",
    ),
    # -- issue 32: families checked in their owners' source -------------------------------------
    FinalizerOwner(
        "sailoperator.io/sail-operator",
        "Sail operator (Istio)",
        "the Istio component of the object (istiod revision, CNI, ztunnel, revision tag) to be "
        "uninstalled",
        "restore Deployment sail-operator (in the namespace it was installed to), then retry",
        strands_infrastructure=True,
        risk="istiod, the CNI DaemonSet or ztunnel stays installed",
        lease_names=("sail-operator-lock",),
        runs_as="Deployment sail-operator (Helm chart; the namespace it was installed to)",
        source="https://github.com/istio-ecosystem/sail-operator/blob/main/pkg/constants/"
        "constants.go",
    ),
    # gitrepo-, helmop-, bundle-, bundle-deployment-, cluster-, schedule-finalizer; from Fleet
    # 0.10 the GitRepo's is the gitjob Deployment's (gitops reconciler), from 0.13 the HelmOp's
    # the helmops Deployment's (charts/fleet/templates/deployment_gitjob.yaml, _helmops.yaml)
    _fleet(
        "fleet.cattle.io/*-finalizer",
        "Rancher Fleet controller",
        "fleet-controller",
        "the object's bundles and bundle deployments to be purged (what was deployed from it "
        "removed from the downstream clusters)",
        "finalize/finalize.go",
    ),
    _fleet(
        "fleet.cattle.io/gitrepo-finalizer",
        "Rancher Fleet gitjob controller (Fleet 0.10+; fleet-controller before)",
        "gitjob",
        "the GitRepo's bundles (and image scans) to be deleted, what they deployed removed from "
        "the downstream clusters",
        "gitops/reconciler/gitjob_controller.go",
        lease="fleet-gitops-leader-election-shard*",
    ),
    _fleet(
        "fleet.cattle.io/helmop-finalizer",
        "Rancher Fleet helmops controller",
        "helmops",
        "the HelmOp's bundles to be purged, what they deployed removed from the downstream "
        "clusters",
        "helmops/reconciler/helmop_controller.go",
        lease="fleet-helmops-leader-election-shard*",
    ),
    FinalizerOwner(
        "operator.libopenstorage.org/delete",
        "Portworx Operator (StorageCluster controller)",
        "Portworx to be uninstalled per the StorageCluster's deleteStrategy (Uninstall, or "
        "UninstallAndWipe that also wipes its disks)",
        "restore Deployment portworx-operator, then retry",
        strands_infrastructure=True,
        risk="Portworx pods, its configuration and, with UninstallAndWipe, the data on its "
        "disks are left as they are",
        runs_as="Deployment portworx-operator (kube-system, or the namespace OLM put it in)",
        source="https://github.com/libopenstorage/operator/blob/master/pkg/controller/"
        "storagecluster/storagecluster.go",
    ),
    _openebs_node(
        "zfs.openebs.io/finalizer",
        "ZFS",
        "zfs",
        "the ZFS dataset (or snapshot, backup) to be destroyed on the node in spec.ownerNodeID",
        "the ZFS dataset stays on the node's pool and keeps its space",
    ),
    _openebs_node(
        "lvm.openebs.io/finalizer",
        "LVM",
        "lvm",
        "the logical volume (or snapshot) to be removed on the node in spec.ownerNodeID",
        "the logical volume stays in the node's volume group and keeps its space",
    ),
    # -- issue 37: leftovers nothing removes any more, each from its owner's source ------------
    FinalizerOwner(
        # v0.3.x's sync controller put it on every object it synced; 3.1 dropped that controller,
        # and no release since removes it (3.1-3.14 remove only .../config and .../constraint)
        "finalizers.gatekeeper.sh/sync",
        "OPA Gatekeeper before 3.1 (sync controller; no release since removes it)",
        "nothing: a leftover of a Gatekeeper release older than 3.1",
        "remove the finalizer: no Gatekeeper release since 3.1 removes it, so restoring "
        "Gatekeeper never does",
        risk="nothing: the sync cache it guarded went with Gatekeeper 3.1",
        runs_as="Deployment gatekeeper-system/gatekeeper-controller-manager (before 3.1)",
        source="https://github.com/open-policy-agent/gatekeeper/blob/v3.0.4-beta.2/pkg/"
        "controller/sync/sync_controller.go",
        removed_by_nobody_since="Gatekeeper 3.1",
    ),
    FinalizerOwner(
        # v0.12-v0.35 named the watcher's knative finalizer after the group alone; v0.36
        # (a0bcb6f3) renamed it .../finalizer, and nothing removes the old name
        "pipelinesascode.tekton.dev",
        "Pipelines-as-Code watcher 0.12-0.35 (0.36 renamed it; nothing removes the old name)",
        "the PipelineRun to be reported to the git provider and taken out of its Repository's "
        "concurrency queue (by 0.35 or older)",
        "restore a Pipelines-as-Code watcher of 0.35 or older, or remove the finalizer: from "
        "0.36 nothing removes it",
        risk="the git provider may show the run as still running",
        runs_as="Deployment pipelines-as-code/pipelines-as-code-watcher (0.35 or older)",
        source="https://github.com/openshift-pipelines/pipelines-as-code/blob/v0.35.0/pkg/"
        "reconciler/controller.go",
        removed_by_nobody_since="Pipelines-as-Code 0.36",
    ),
    FinalizerOwner(
        # Triggers <= 0.16 deleted the namespace's logging ConfigMap in FinalizeKind; 0.17
        # (a6b12769) drops the finalizer only from EventListeners not being deleted (ReconcileKind)
        "eventlisteners.triggers.tekton.dev",
        "Tekton Triggers 0.16 or older (its EventListener reconciler)",
        "the namespace's logging ConfigMap to be deleted with its last EventListener",
        "remove the finalizer: from Triggers 0.17 nothing removes it from an EventListener "
        "being deleted",
        risk="at most the EventListener's logging ConfigMap (config-logging-triggers) stays in "
        "the namespace",
        runs_as="Deployment tekton-pipelines/tekton-triggers-controller (0.16 or older)",
        source="https://github.com/tektoncd/triggers/blob/v0.16.0/pkg/reconciler/eventlistener/"
        "eventlistener.go",
        removed_by_nobody_since="Tekton Triggers 0.17",
    ),
    FinalizerOwner(
        # ECK 1.0 dropped its finalizers (#2195) and removes the old ones whenever it reconciles
        # Elasticsearch, Kibana or APM Server (common/finalizer/finalizers.go: RemoveAll)
        "finalizer.*.k8s.elastic.co/*",
        "ECK operator 1.0+ (removes the pre-1.0 finalizers when it reconciles the object)",
        "nothing: a leftover of ECK before 1.0, dropped on the next reconcile",
        "restore StatefulSet elastic-system/elastic-operator (it drops the finalizer unless the "
        "object is annotated eck.k8s.elastic.co/managed=false), or remove the finalizer",
        risk="nothing since ECK 1.0: the cleanup it guarded no longer exists",
        lease_names=("elastic-operator-leader",),
        runs_as="StatefulSet elastic-system/elastic-operator",
        source="https://github.com/elastic/cloud-on-k8s/blob/main/pkg/controller/common/"
        "finalizer/finalizers.go",
    ),
    # -- issue 37: families users get stuck on, each from its owner's source --------------------
    FinalizerOwner(
        "chaos-mesh/records",
        "Chaos Mesh controller manager",
        "every target's chaos to be recovered (each record in status.experiment.records back "
        "to NotInjected)",
        "restore Deployment chaos-mesh/chaos-controller-manager so it recovers the targets; if "
        "a target is gone for good (its pod or node), annotate the object "
        "chaos-mesh.chaos-mesh.org/cleanFinalizer=forced: the controller then drops it",
        strands_infrastructure=True,
        risk="the injected faults (network rules, stress, IO or time chaos) may stay in the "
        "target pods or nodes",
        lease_names=("chaos-mesh",),
        runs_as="Deployment chaos-mesh/chaos-controller-manager",
        source="https://github.com/chaos-mesh/chaos-mesh/blob/master/controllers/common/"
        "finalizers/controller.go",
    ),
    FinalizerOwner(
        # on its custom resources (VMSingle, VMAgent, VMCluster, ...) and on objects it created
        # for them (ServiceAccounts, Secrets, PVCs, RBAC, ...): factory/finalize/*.go remove it
        # from those when their custom resource is deleted
        "apps.victoriametrics.com/finalizer",
        "VictoriaMetrics operator",
        "on a custom resource: its objects (Deployments, Services, ServiceAccounts, Secrets, "
        "RBAC, PVCs) to be released; on one of those: its custom resource to be deleted",
        "restore the VictoriaMetrics operator; on a ServiceAccount, Secret or PVC it created, "
        "delete its owning custom resource (ownerReferences), then retry",
        risk="objects the operator created keep its finalizer and stay terminating (a PVC kept "
        "by removePvcAfterDelete: false stays as it should)",
        lease_names=("57410f0d.victoriametrics.com",),  # default --leader-elect-id
        runs_as="Deployment <release>-victoria-metrics-operator (Helm chart), vm/operator "
        "(release manifests)",
        source="https://github.com/VictoriaMetrics/operator/blob/master/internal/controller/"
        "operator/factory/finalize/common.go",
    ),
    FinalizerOwner(
        "hive.openshift.io/deprovision",
        "OpenShift Hive (hive-controllers, ClusterDeployment controller)",
        "the ClusterDeprovision (uninstall job) to destroy the cluster's cloud resources",
        "restore Deployment hive/hive-controllers and the deprovision job's cloud credentials, "
        "then retry; to keep the cluster's cloud resources, set spec.preserveOnDelete: true "
        "(the controller then drops it)",
        strands_infrastructure=True,
        risk="the cluster's cloud resources (machines, networks, load balancers) keep running "
        "(and costing)",
        lease_names=("hive-controllers-leader",),
        runs_as="Deployment hive/hive-controllers",
        source="https://github.com/openshift/hive/blob/master/pkg/controller/clusterdeployment/"
        "clusterdeployment_controller.go",
    ),
    FinalizerOwner(
        # hypershift.openshift.io/finalizer on HostedClusters and NodePools (hypershift-operator)
        # and on HostedControlPlanes (control-plane-operator), and platform-specific ones
        "hypershift.openshift.io/*",
        "HyperShift (hypershift-operator; control-plane-operator for a HostedControlPlane)",
        "the hosted cluster's node pools, machines, endpoint services and control-plane "
        "namespace to be deleted",
        "restore Deployment hypershift/operator (and the control-plane-operator in the hosted "
        "control plane's namespace) with its cloud credentials, then retry",
        strands_infrastructure=True,
        risk="the hosted cluster's machines and cloud resources keep running (and costing)",
        lease_names=("hypershift-operator-leader-elect", "control-plane-operator-leader-elect"),
        runs_as="Deployment hypershift/operator; Deployment control-plane-operator in the hosted "
        "control plane's namespace",
        source="https://github.com/openshift/hypershift/blob/main/hypershift-operator/"
        "controllers/hostedcluster/hostedcluster_controller.go",
    ),
    FinalizerOwner(
        "karmada.io/*",
        "Karmada controller manager (the controller named after the slash)",
        "the object's Works or the resources they propagated to member clusters to be deleted",
        "restore Deployment karmada-system/karmada-controller-manager (karmada-agent in a "
        "pull-mode member); for the Works of a member cluster gone for good, "
        "karmadactl unjoin <cluster> --force removes them",
        strands_infrastructure=True,
        risk="resources propagated to member clusters stay there, unmanaged",
        # LeaderElectionID: cmd/controller-manager, cmd/agent (karmada-agent-<cluster>)
        lease_names=("karmada-controller-manager", "karmada-agent-*"),
        runs_as="Deployment karmada-system/karmada-controller-manager (host cluster), "
        "karmada-agent (pull-mode members)",
        source="https://github.com/karmada-io/karmada/blob/master/pkg/util/constants.go",
    ),
    *(
        _arangodb(pattern, waits_for, risk)
        for pattern, waits_for, risk in (
            (
                "agent.database.arangodb.com/agency-serving",
                "enough healthy agents to remain for the agency's quorum without this one",
                "the agency can lose its quorum: the whole ArangoDB cluster stops",
            ),
            (
                "dbserver.database.arangodb.com/drain",
                "the DB server's shards to be moved to other DB servers (cleaned out)",
                "shards with no other replica on a running DB server become unavailable or lost",
            ),
            (
                "pvc.database.arangodb.com/member-exists",
                "the member that uses the claim to be gone from the deployment",
                "the member's data volume can be deleted while the member still needs it",
            ),
            (
                # graceful-shutdown, pod .../delay, gateway tls-keyfile, remove-child-finalizers
                "*database.arangodb.com/*",
                "the member's server container to stop (graceful shutdown, delay) or its "
                "cleanup to finish",
                "the server may be killed before it shut down cleanly",
            ),
        )
    ),
    *(
        _percona(pattern, waits_for, remedy, risk)
        for pattern, waits_for, remedy, risk in (
            (
                # delete-pxc-pvc, delete-proxysql-pvc, delete-psmdb-pvc, delete-mysql-pvc, PG's
                # delete-pvc: deleteStatefulSet(deletePVC) / deletePVCAndSecrets
                "percona.com/delete-*pvc",
                "the operator to DELETE the cluster's PVCs (its data) and Secrets",
                "this finalizer deletes the data when it runs: to keep it, remove the finalizer "
                "instead; to delete it, restore the operator, then retry",
                "nothing is deleted: the PVCs (the data) and Secrets stay",
            ),
            (
                # delete-backup (PXC, PSMDB, PS backups), PG's delete-backups, PSMDB's
                # delete-pitr-chunks
                "percona.com/delete-*backup*",
                "the operator to DELETE the backup's files in its storage (S3, GCS, Azure, PVC)",
                "this finalizer deletes the backup data when it runs: to keep it, remove the "
                "finalizer instead; to delete it, restore the operator and the storage "
                "credentials, then retry",
                "nothing is deleted: the backup files stay in the storage",
            ),
            (
                "percona.com/delete-pitr-chunks",
                "the operator to DELETE the point-in-time-recovery oplog chunks in the backup "
                "storage",
                "this finalizer deletes PITR data when it runs: to keep it, remove the finalizer "
                "instead; to delete it, restore the operator, then retry",
                "nothing is deleted: the PITR chunks stay in the storage",
            ),
            (
                "percona.com/delete-ssl",
                "the operator to delete the cluster's TLS Secrets and cert-manager objects",
                "restore the Percona operator, then retry",
                "the TLS Secrets (and cert-manager Issuers, Certificates) stay",
            ),
            (
                "percona.com/delete-*pods-in-order",
                "the operator to scale the cluster down in order (primary last)",
                "restore the Percona operator, then retry",
                "the pods are deleted all at once, not in order (no data is deleted either way)",
            ),
        )
    ),
    *_aliases(
        FinalizerOwner(
            "kubevirt.io/foregroundDeleteKubeVirt",
            "KubeVirt (virt-operator)",
            "everything KubeVirt installed (virt-api, virt-controller, virt-handler, CRDs, "
            "install strategies) to be deleted",
            "restore Deployment kubevirt/virt-operator, then retry",
            strands_infrastructure=True,
            risk="KubeVirt's components and CRDs stay installed",
            lease_names=("virt-operator",),  # leader election in the kubevirt namespace
            runs_as="Deployment kubevirt/virt-operator",
            source="https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-operator/util/"
            "client.go",
        ),
        "foregroundDeleteKubeVirt",  # its name before the kubevirt.io/ prefix
    ),
    FinalizerOwner(
        "operator.cdi.kubevirt.io",
        "KubeVirt CDI operator",
        "everything CDI installed (cdi-deployment, cdi-apiserver, cdi-uploadproxy, CRDs) to be "
        "deleted",
        "restore Deployment cdi/cdi-operator, then retry",
        strands_infrastructure=True,
        risk="CDI's components and CRDs stay installed",
        lease_names=("cdi-operator-leader-election-helper",),
        runs_as="Deployment cdi/cdi-operator",
        source="https://github.com/kubevirt/containerized-data-importer/blob/main/pkg/operator/"
        "controller/controller.go",
    ),
    FinalizerOwner(
        # cloneSource, importImageStream, clonePopulator, dataVolumeFinalizer, objectTransfer
        "cdi.kubevirt.io/*",
        "KubeVirt CDI controller (cdi-deployment)",
        "its import, clone or transfer of the volume to finish or be cleaned up (source pods, "
        "temporary claims)",
        "restore Deployment cdi/cdi-deployment, then retry",
        risk="clone source pods, temporary claims or transfer objects may be left",
        lease_names=("cdi-controller-leader-election-helper",),
        runs_as="Deployment cdi/cdi-deployment",
        source="https://github.com/kubevirt/containerized-data-importer/blob/main/pkg/"
        "controller/populators/clone-populator.go",
    ),
    FinalizerOwner(
        "cluster.open-cluster-management.io/manifest-work-cleanup",
        "Open Cluster Management work agent (klusterlet, on the managed cluster)",
        "the resources the ManifestWork applied to the managed cluster to be deleted there "
        "(its AppliedManifestWork gone)",
        "restore the klusterlet's work agent on the managed cluster, then retry; if the managed "
        "cluster is gone for good, what it applied went with it",
        strands_infrastructure=True,
        risk="the resources the ManifestWork applied stay on the managed cluster",
        runs_as="Deployment open-cluster-management-agent/klusterlet-work-agent (or "
        "klusterlet-agent in singleton mode) on the managed cluster",
        source="https://github.com/open-cluster-management-io/api/blob/main/work/v1/types.go",
    ),
    FinalizerOwner(
        "cluster.open-cluster-management.io/applied-manifest-work-cleanup",
        "Open Cluster Management work agent (klusterlet, this cluster)",
        "the resources the AppliedManifestWork records to be deleted",
        "restore the klusterlet's work agent (open-cluster-management-agent), then retry",
        strands_infrastructure=True,
        risk="the resources the work applied stay, unmanaged",
        runs_as="Deployment open-cluster-management-agent/klusterlet-work-agent (or "
        "klusterlet-agent in singleton mode)",
        source="https://github.com/open-cluster-management-io/api/blob/main/work/v1/types.go",
    ),
    FinalizerOwner(
        "azure.microsoft.com/finalizer",
        "Azure Service Operator v1 (deprecated)",
        "the Azure resource to be deleted",
        "restore Deployment azureoperator-system/azureoperator-controller-manager and its Azure "
        "credentials, then retry; to keep the Azure resource, annotate the object "
        "skipreconcile=true (the operator then drops the finalizer without deleting it)",
        strands_infrastructure=True,
        risk="the Azure resource keeps running (and costing)",
        runs_as="Deployment azureoperator-system/azureoperator-controller-manager",
        source="https://github.com/Azure/azure-service-operator/blob/"
        "e565996173d38a0df7627e6b3a4b95a3958ef3ce/controllers/async_controller.go",
    ),
    FinalizerOwner(
        # cluster.kubeblocks.io/finalizer: transformer_cluster_deletion.go
        "cluster.kubeblocks.io/finalizer",
        "KubeBlocks (cluster controller)",
        "the cluster's components and objects to be deleted per spec.terminationPolicy "
        "(DoNotTerminate never does: a DoNotTerminate event says so)",
        "if the cluster's terminationPolicy is DoNotTerminate, change it to Delete (or WipeOut "
        "to drop its backups too); otherwise restore Deployment kb-system/kubeblocks, then retry",
        strands_infrastructure=True,
        risk="the cluster's components, pods and PVCs (its data) are left",
        runs_as="Deployment kb-system/kubeblocks",
        source="https://github.com/apecloud/kubeblocks/blob/main/controllers/apps/cluster/"
        "transformer_cluster_deletion.go",
    ),
    FinalizerOwner(
        "dataprotection.kubeblocks.io/finalizer",
        "KubeBlocks data protection controller",
        "the backup's data to be deleted from its backup repository (per its deletion policy)",
        "restore Deployment kb-system/kubeblocks-dataprotection and the repository's "
        "credentials, then retry",
        strands_infrastructure=True,
        risk="the backup's files stay in the backup repository",
        runs_as="Deployment kb-system/kubeblocks-dataprotection",
        source="https://github.com/apecloud/kubeblocks/blob/main/pkg/dataprotection/types/"
        "constant.go",
    ),
    FinalizerOwner(
        # componentdefinition., componentversion., opsrequest., instanceset.workloads., ...
        "*.kubeblocks.io/finalizer",
        "KubeBlocks (the controller of this kind)",
        "that controller's cleanup of the object",
        "restore Deployment kb-system/kubeblocks, then retry",
        risk="objects the controller created for it may be left",
        runs_as="Deployment kb-system/kubeblocks",
        source="https://github.com/apecloud/kubeblocks/blob/main/pkg/constant/finalizer.go",
    ),
    FinalizerOwner(
        # results.tekton.dev/pipelinerun, /taskrun, /customrun: removed once the run is stored,
        # or after --store_deadline (10 minutes by default) past its completion
        "results.tekton.dev/*",
        "Tekton Results watcher",
        "the finished run (and its logs) to be stored in Tekton Results, at most --store_deadline "
        "(10m) after it completed",
        "restore Deployment tekton-pipelines/tekton-results-watcher, then retry",
        risk="the run's record and logs may never reach Tekton Results",
        runs_as="Deployment tekton-pipelines/tekton-results-watcher",
        source="https://github.com/tektoncd/results/blob/main/pkg/watcher/reconciler/filter.go",
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
