"""The finalizer table: exact entries, families matched by pattern, unknown stays unknown."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_terminating.explain.knowledge import FinalizerOwner, entries, lookup
from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.render.style import Style
from kubectl_terminating.resources import Resource
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import PODS_NOW
from tests.unit.golden import assert_golden

TEMPLATES = Resource(
    "templates.gatekeeper.sh", "v1", "constrainttemplates", "ConstraintTemplate", False
)
BUCKETS = Resource("storage.cnrm.cloud.google.com", "v1beta1", "storagebuckets", "StorageBucket")


@pytest.mark.parametrize(
    ("finalizer", "owner"),
    [
        ("kubernetes", "namespace controller"),
        ("kubernetes.io/pvc-protection", "pvc-protection controller"),
        ("kubernetes.io/pv-protection", "pv-protection controller"),
        ("foregroundDeletion", "garbage collector"),
        ("orphan", "garbage collector"),
        ("batch.kubernetes.io/job-tracking", "job controller"),
        ("service.kubernetes.io/load-balancer-cleanup", "cloud-controller-manager"),
        ("customresourcecleanup.apiextensions.k8s.io", "kube-apiserver"),
        ("external-provisioner.volume.kubernetes.io/finalizer", "external-provisioner"),
        ("acme.cert-manager.io/finalizer", "cert-manager"),
        ("finalizer.acme.cert-manager.io", "cert-manager"),
        ("finalizers.fluxcd.io", "Flux"),
        ("finalizer.managedresource.crossplane.io", "Crossplane provider"),
        ("composite.apiextensions.crossplane.io", "Crossplane core"),
        ("ceph.rook.io/disaster-protection", "Rook"),
        ("longhorn.io", "Longhorn"),
        ("restores.velero.io/external-resources-finalizer", "Velero server"),
        ("strimzi.io/topic-operator", "Strimzi topic operator"),
        ("monitoring.coreos.com/status-cleanup", "Prometheus operator"),
        ("karpenter.sh/termination", "Karpenter"),
        ("finalizer.keda.sh", "KEDA"),
        # from the field: the finalizers public stuck-Terminating threads show most
        ("controller.cattle.io/namespace-auth", "Rancher"),
        ("wrangler.cattle.io/on-helm-chart-remove", "helm-controller"),
        ("kubevirt.io/virtualMachineControllerFinalize", "KubeVirt"),
        ("constrainttemplate.finalizers.gatekeeper.sh", "Gatekeeper"),
        ("externalsecrets.external-secrets.io/externalsecret-cleanup", "External Secrets"),
        ("trident.netapp.io", "Trident"),
        ("networking.gke.io/neg-finalizer", "GKE NEG controller"),
        ("serviceoperator.azure.com/finalizer", "Azure Service Operator"),
        ("gateway-exists-finalizer.gateway.networking.k8s.io", "Gateway API"),
        ("karpenter.k8s.aws/termination", "Karpenter"),
        ("resource.kubernetes.io/delete-protection", "resourceclaim controller"),
        ("networking.k8s.io/service-cidr-finalizer", "service-cidr controller"),
        ("workflows.argoproj.io/artifact-gc", "Argo Workflows"),
        ("ray.io/gcs-ft-redis-cleanup-finalizer", "KubeRay"),
        ("opentelemetrycollector.opentelemetry.io/finalizer", "OpenTelemetry Operator"),
        ("finalizer.stack.pulumi.com", "Pulumi"),
        ("cluster.open-cluster-management.io/api-resource-cleanup", "Open Cluster Management"),
        ("gateway.kusk.io/srfinalizer", "Kusk Gateway"),
        ("tigera.io/cni-protector", "Tigera operator"),
        ("tigera.io/operator-cleanup", "Tigera operator"),
        # frameworks and owners the issue-20 check found missing or wrong
        ("kopf.zalando.org/KopfFinalizerMarker", "built with Kopf"),
        ("KopfFinalizerMarker", "built with Kopf"),
        ("kueue.x-k8s.io/managed", "Kueue"),
        ("kyverno.io/policywebhooks", "Kyverno cleanup controller"),
        ("kyverno.io/ttlwebhooks", "Kyverno cleanup controller"),
        ("externalsecrets.external-secrets.io/clusterexternalsecret-cleanup", "External Secrets"),
        ("extensions-finalizer.argocd.argoproj.io", "argocd-extensions"),
        ("gateway.k8s.aws/resources", "AWS Gateway API Controller"),
        ("in-use.crossplane.io", "ProviderConfig controller"),
    ],
)
def test_exact_entries_name_their_owner(finalizer: str, owner: str) -> None:
    entry = lookup(finalizer)
    assert entry is not None
    assert owner in entry.owner


@pytest.mark.parametrize(
    ("finalizer", "pattern"),
    [
        ("external-attacher/ebs-csi-aws-com", "external-attacher/*"),
        ("external-attacher/rook-ceph-rbd-csi-ceph-com", "external-attacher/*"),
        ("resources-finalizer.argocd.argoproj.io", "resources-finalizer.argocd.argoproj.io*"),
        (
            "resources-finalizer.argocd.argoproj.io/background",
            "resources-finalizer.argocd.argoproj.io*",
        ),
        (
            "post-delete-finalizer.argocd.argoproj.io/cleanup",
            "post-delete-finalizer.argocd.argoproj.io*",
        ),
        ("cephblockpool.ceph.rook.io", "*.ceph.rook.io"),
        ("group.ingress.k8s.aws/shared-alb", "group.ingress.k8s.aws/*"),
        ("velero.io/pod-volume-finalizer", "velero.io/*"),
        (
            "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection",
            "snapshot.storage.kubernetes.io/*",
        ),
        ("cnrm.cloud.google.com/finalizer", "cnrm.cloud.google.com/*"),
        ("controller.cattle.io/mgmt-auth-users-controller", "controller.cattle.io/*"),
        (
            "clusterscoped.controller.cattle.io/project-namespace-auth_local",
            "clusterscoped.controller.cattle.io/*",
        ),
        ("wrangler.cattle.io/provisioning-cluster-remove", "wrangler.cattle.io/*"),
        ("routes.serving.knative.dev", "*.knative.dev"),
        ("triggers.eventing.knative.dev", "*.knative.dev"),
        ("tektonconfigs.operator.tekton.dev", "*.operator.tekton.dev"),
        ("chains.tekton.dev/taskrun", "chains.tekton.dev*"),
        ("finalizers.gatekeeper.sh/constraint", "finalizers.gatekeeper.sh/*"),
        ("olm.operatorframework.io/cleanup-unpack-cache", "olm.operatorframework.io/cleanup-*"),
        ("networking.gke.io/ingress-finalizer-V2", "networking.gke.io/ingress-finalizer*"),
        ("gke.networking.io/l4-ilb-v2", "gke.networking.io/l4-*"),
        ("finalizers.s3.services.k8s.aws/Bucket", "finalizers.*.services.k8s.aws/*"),
        ("kyverno.io/webhooks", "kyverno.io/*webhooks"),
        (
            "externalsecrets.external-secrets.io/ces-team-a",
            "externalsecrets.external-secrets.io/ces-*",
        ),
        ("gateway.k8s.aws/targetgroupconfigurations", "gateway.k8s.aws/*configurations"),
        ("gateway.k8s.aws/listenerruleconfigurations", "gateway.k8s.aws/*configurations"),
        ("dockermachine.infrastructure.cluster.x-k8s.io", "*.infrastructure.cluster.x-k8s.io"),
        ("awscluster.infrastructure.cluster.x-k8s.io", "*.infrastructure.cluster.x-k8s.io"),
        ("machineset.topology.cluster.x-k8s.io", "*.topology.cluster.x-k8s.io"),
        ("fleet.cattle.io/bundle-finalizer", "fleet.cattle.io/*-finalizer"),
        ("fleet.cattle.io/bundle-deployment-finalizer", "fleet.cattle.io/*-finalizer"),
        (
            "groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-bound-protection",
            "groupsnapshot.storage.kubernetes.io/*",
        ),
        ("gke.networking.io/l4-netlb-v3", "gke.networking.io/l4-*"),
        ("operator.tigera.io/apiserver-controller", "operator.tigera.io/*"),
    ],
)
def test_families_match_by_pattern(finalizer: str, pattern: str) -> None:
    entry = lookup(finalizer)
    assert entry is not None
    assert entry.pattern == pattern


def test_exact_entry_wins_over_a_matching_pattern() -> None:
    # ceph.rook.io/disaster-protection is not one of Rook's `<kind>.ceph.rook.io` finalizers
    disaster = lookup("ceph.rook.io/disaster-protection")
    assert disaster is not None and disaster.pattern == "ceph.rook.io/disaster-protection"
    restore = lookup("restores.velero.io/external-resources-finalizer")
    assert restore is not None and restore.pattern != "velero.io/*"


@pytest.mark.parametrize(
    "finalizer",
    [
        "example.com/cleanup",
        "kubernetes.io/something-new",
        "",
        "ceph.rook.io",
        "foo",
        "argocd.argoproj.io",
    ],
)
def test_unknown_finalizers_have_no_owner(finalizer: str) -> None:
    assert lookup(finalizer) is None


def test_owners_that_guard_real_infrastructure_say_so() -> None:
    strands = {
        f: entry.strands_infrastructure
        for f in (
            "service.kubernetes.io/load-balancer-cleanup",
            "external-attacher/ebs-csi-aws-com",
            "finalizer.managedresource.crossplane.io",
            "kubernetes.io/pvc-protection",
            "batch.kubernetes.io/job-tracking",
        )
        if (entry := lookup(f)) is not None
    }
    assert strands == {
        "service.kubernetes.io/load-balancer-cleanup": True,
        "external-attacher/ebs-csi-aws-com": True,
        "finalizer.managedresource.crossplane.io": True,
        "kubernetes.io/pvc-protection": False,
        "batch.kubernetes.io/job-tracking": False,
    }


def test_every_entry_is_complete_and_unique() -> None:
    patterns = [e.pattern for e in entries()]
    assert len(patterns) == len(set(patterns))
    assert len(patterns) >= 60
    for entry in entries():
        assert entry.owner and entry.waits_for and entry.remedy, entry.pattern
        # where the owning project defines it, and how to tell that its owner runs
        assert entry.source.startswith("https://github.com/"), entry.pattern
        assert entry.runs_as or entry.in_apiserver, entry.pattern
        # what removing it by hand skips
        assert entry.risk or entry.pattern == "foregroundDeletion", entry.pattern
        # a by-hand removal that strands infrastructure must say what it strands
        assert not entry.strands_infrastructure or entry.risk, entry.pattern


def known(finalizer: str) -> FinalizerOwner:
    entry = lookup(finalizer)
    assert entry is not None, finalizer
    return entry


def test_liveness_hints() -> None:
    assert known("customresourcecleanup.apiextensions.k8s.io").in_apiserver
    assert known("kubernetes").lease_names == ("kube-controller-manager",)
    assert known("acme.cert-manager.io/finalizer").lease_names == ("cert-manager-controller",)
    assert known("kubernetes.io/pvc-protection").built_in
    assert not known("finalizers.fluxcd.io").built_in


@given(st.text(max_size=80))
def test_lookup_never_fails_and_only_returns_matching_entries(finalizer: str) -> None:
    entry = lookup(finalizer)
    if entry is not None:
        assert entry.pattern == finalizer or fnmatchcase(finalizer, entry.pattern)


def test_kopf_is_named_as_a_framework_with_the_way_to_find_its_operator() -> None:
    kopf = known("kopf.zalando.org/KopfFinalizerMarker")
    assert "framework" in kopf.owner
    assert "kopf run" in kopf.runs_as and "kopf run" in kopf.remedy
    assert not kopf.lease_names  # one Lease name cannot stand for every Kopf operator


def test_details_the_source_check_found_wrong() -> None:
    # removing `orphan` by hand: the GC then deletes what the user meant to keep
    assert "deletes the dependents" in known("orphan").risk
    # Kyverno's cleanup controller, not the admission controller, owns its webhook finalizers
    cleanup = known("kyverno.io/ttlwebhooks")
    assert cleanup.runs_as == "Deployment kyverno/kyverno-cleanup-controller"
    assert cleanup.lease_names == ("kyverno-cleanup-controller",)
    # Knative's reconciler generator moved; the networking layer owns some finalizers
    knative = known("ingresses.networking.internal.knative.dev")
    assert "/generators/reconciler/reconciler_controller.go" in knative.source
    assert "net-istio" in knative.owner and "imc-controller" in knative.runs_as
    # an owned target Secret is garbage-collected: only a generic target's output can stay
    assert (
        "Secret may stay"
        not in known("externalsecrets.external-secrets.io/externalsecret-cleanup").risk
    )
    assert (
        "generic target" in known("externalsecrets.external-secrets.io/externalsecret-cleanup").risk
    )


def test_kyverno_webhook_finalizers_are_only_removed_by_1_13_to_1_17() -> None:
    # kyverno#15260 (v1.18.0) dropped --autoDeleteWebhooks and its finalizers: a newer Kyverno
    # running never removes a leftover, so the entries say which versions do and what then
    cleanup = known("kyverno.io/policywebhooks")
    admission = known("kyverno.io/celexceptionwebhooks")
    assert admission.pattern == "kyverno.io/*webhooks"
    for entry in (cleanup, admission):
        assert "1.13-1.17" in entry.owner and "--autoDeleteWebhooks" in entry.owner
        assert "from Kyverno 1.18 nothing removes it" in entry.remedy
    # the admission controller's Lease (cmd/kyverno/main.go), not the cleanup controller's
    assert admission.lease_names == ("kyverno",)
    assert admission.runs_as == "Deployment kyverno/kyverno-admission-controller"
    assert cleanup.lease_names == ("kyverno-cleanup-controller",)


def test_aws_gateway_finalizers_name_their_two_controllers() -> None:
    # the Load Balancer Controller's Gateway API support vs. the VPC Lattice controller
    assert known("gateway.k8s.aws/alb").owner == "AWS Load Balancer Controller"
    assert known("gateway.k8s.aws/nlb").owner == "AWS Load Balancer Controller"
    assert "VPC Lattice" in known("gateway.k8s.aws/resources").owner
    # LBC's own names have no -finalizer suffix (pkg/shared_constants/finalizers.go, v2.13-v2.17)
    assert lookup("gateway.k8s.aws/alb-finalizer") is None


# -- issue 32: the corrections a second source check found, and the missing families --------


def test_tekton_runs_carry_no_pipelines_finalizer_its_owners_are_the_operator_and_pac() -> None:
    assert lookup("pipelineruns.tekton.dev") is None  # Pipelines' reconcilers add none
    operator = known("tektonpipelines.operator.tekton.dev")
    assert "Tekton Operator" in operator.owner
    assert operator.runs_as == "Deployment tekton-operator/tekton-operator"
    pac = known("pipelinesascode.tekton.dev/finalizer")
    assert "Pipelines-as-Code" in pac.owner and "watcher" in pac.runs_as
    assert known("chains.tekton.dev/taskrun").owner == "Tekton Chains"


@pytest.mark.parametrize(
    "finalizer", ["constrainttemplate.finalizers.gatekeeper.sh", "finalizers.gatekeeper.sh/config"]
)
def test_gatekeeper_leftovers_are_removed_by_nobody_since_3_15(finalizer: str) -> None:
    entry = known(finalizer)
    assert entry.removed_by_nobody_since == "Gatekeeper 3.15"
    assert entry.remedy.startswith("remove the finalizer: restoring Gatekeeper 3.15")
    assert "/v3.14.0/" in entry.source  # the last release with the removal code
    assert not entry.strands_infrastructure


def test_config_connector_deletion_defender_belongs_to_its_own_statefulset() -> None:
    defender = known("cnrm.cloud.google.com/deletion-defender")
    assert defender.runs_as == "StatefulSet cnrm-system/cnrm-deletiondefender"
    assert "delete the Google Cloud resource instead of abandoning it" in defender.risk
    assert known("cnrm.cloud.google.com/finalizer").runs_as.startswith(
        "StatefulSet cnrm-system/cnrm-controller-manager (cluster mode)"
    )


def test_corrected_owners() -> None:
    istio = known("istio-finalizer.install.istio.io")
    assert "removed in 1.24" in istio.owner and "from Istio 1.24 nothing removes it" in istio.remedy
    legacy_ilb = known("gke.networking.io/l4-ilb-v1")
    assert "service controller" in legacy_ilb.owner and "ingress-gce" not in legacy_ilb.owner
    assert "cloud-provider-gcp" in legacy_ilb.source
    assert "ingress-gce" in known("gke.networking.io/l4-ilb-v2").owner
    assert "controller-manager" in known("finalizer.stack.pulumi.com").runs_as
    extensions = known("extensions-finalizer.argocd.argoproj.io")
    assert (
        extensions.runs_as == "the argocd-extensions sidecar container of Deployment argocd-server"
    )


@pytest.mark.parametrize(
    ("finalizer", "owner", "runs_as"),
    [
        ("finalizer.apiextensions.crossplane.io", "Crossplane core", "crossplane"),
        ("defined.apiextensions.crossplane.io", "Crossplane core", "crossplane"),
        ("offered.apiextensions.crossplane.io", "Crossplane core", "crossplane"),
        ("usage.apiextensions.crossplane.io", "Crossplane core", "crossplane"),
        ("lock.pkg.crossplane.io", "Crossplane core", "crossplane"),
        ("revision.pkg.crossplane.io", "Crossplane core", "crossplane"),
        ("machinepool.cluster.x-k8s.io", "Cluster API", "capi-controller-manager"),
        ("cluster.x-k8s.io/machineset", "Cluster API", "capi-controller-manager"),
        ("cluster.x-k8s.io/machinedeployment", "Cluster API", "capi-controller-manager"),
        ("addons.cluster.x-k8s.io", "Cluster API", "capi-controller-manager"),
        ("kubeadm.controlplane.cluster.x-k8s.io", "kubeadm control plane", "kubeadm-control"),
        ("dockercluster.infrastructure.cluster.x-k8s.io", "infrastructure provider", "capa"),
        ("foregroundDeleteVirtualMachine", "KubeVirt", "virt-controller"),
        ("kubevirt.io/foregroundDeleteVirtualMachine", "KubeVirt", "virt-controller"),
        ("kubevirt.io/virtOperatorFinalizer", "KubeVirt", "virt-operator"),
        ("kubevirt.io/migrationJobFinalize", "KubeVirt", "virt-controller"),
        ("workflows.argoproj.io/status", "Argo Workflows", "workflow-controller"),
        ("sailoperator.io/sail-operator", "Sail operator", "sail-operator"),
        ("fleet.cattle.io/cluster-finalizer", "Fleet", "fleet-controller"),
        ("operator.libopenstorage.org/delete", "Portworx", "portworx-operator"),
        ("zfs.openebs.io/finalizer", "ZFS LocalPV", "openebs-zfs-node"),
        ("lvm.openebs.io/finalizer", "LVM LocalPV", "openebs-lvm-node"),
        ("kueue.x-k8s.io/resource-in-use", "Kueue", "kueue-controller-manager"),
        ("ray.io/rayjob-finalizer", "KubeRay", "kuberay-operator"),
        ("ray.io/rayservice-finalizer", "KubeRay", "kuberay-operator"),
        ("aga.k8s.aws/resources", "AWS Load Balancer Controller", "aws-load-balancer-controller"),
        (
            "groupsnapshot.storage.kubernetes.io/volumegroupsnapshotcontent-bound-protection",
            "snapshot-controller",
            "snapshot-controller",
        ),
    ],
)
def test_the_missing_families_name_their_owner(finalizer: str, owner: str, runs_as: str) -> None:
    entry = known(finalizer)
    assert owner in entry.owner and runs_as in entry.runs_as
    # a true source link: a file of the owner's repository (or at least the repository)
    assert entry.source.startswith("https://github.com/")


def test_leader_election_leases_from_the_owners_main() -> None:
    assert known("defined.apiextensions.crossplane.io").lease_names == (
        "crossplane-leader-election-core",
    )
    assert known("cluster.cluster.x-k8s.io").lease_names == ("controller-leader-election-capi",)
    assert known("ray.io/rayjob-finalizer").lease_names == ("ray-operator-leader",)
    assert known("sailoperator.io/sail-operator").lease_names == ("sail-operator-lock",)


def terminating(api_version: str, kind: str, name: str, finalizers: list[str], **meta: str) -> JSON:
    """An object being deleted since 11:00, with the given finalizers."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "deletionTimestamp": "2026-01-01T11:00:00Z",
            "finalizers": finalizers,
            **meta,
        },
    }


def explained(*pairs: tuple[JSON, Resource]) -> str:
    """`--explain` of the objects, each read as its resource, with nothing else in the view."""
    view = StaticView([obj for obj, _ in pairs], PODS_NOW)
    findings = [explain_object(obj, resource, view) for obj, resource in pairs]
    return explain_text(findings, Style(color=False), json_extras)


def test_explain_of_corrected_owners() -> None:
    """A Gatekeeper leftover and Config Connector's two finalizers, as `--explain` says them."""
    template = terminating(
        "templates.gatekeeper.sh/v1",
        "ConstraintTemplate",
        "k8srequiredlabels",
        ["constrainttemplate.finalizers.gatekeeper.sh"],
    )
    bucket = terminating(
        "storage.cnrm.cloud.google.com/v1beta1",
        "StorageBucket",
        "shop-assets",
        ["cnrm.cloud.google.com/finalizer", "cnrm.cloud.google.com/deletion-defender"],
        namespace="shop",
    )
    text = explained((template, TEMPLATES), (bucket, BUCKETS))
    assert "restoring Gatekeeper 3.15 or later never does" in text
    assert "StatefulSet cnrm-system/cnrm-deletiondefender" in text
    assert_golden("knowledge/corrected-owners.txt", text)


# -- issue 37: a third source check's corrections, and the families users hit ---------------


def test_removing_a_vmi_finalizer_says_fence_the_node_first() -> None:
    # vm.go: runStrategy Always starts a new instance as soon as the VMI is gone, with no check
    # for a launcher pod still terminating on an unreachable node (kubevirt#9830)
    for name in ("kubevirt.io/foregroundDeleteVirtualMachine", "foregroundDeleteVirtualMachine"):
        vmi = known(name)
        assert vmi.strands_infrastructure
        assert vmi.risk.startswith("fence the node and force-delete the virt-launcher pod first")
        assert "runStrategy Always" in vmi.risk and "kubevirt#9830" in vmi.risk
        assert vmi.remedy.index("fence the node") < vmi.remedy.index("restore virt-controller")


def test_trident_puts_its_finalizer_on_its_crds_not_on_a_tridentorchestrator() -> None:
    trident = known("trident.netapp.io")
    assert "TridentOrchestrator" not in trident.owner + trident.runs_as
    assert "tridentctl obliviate crd" in trident.owner
    assert "restoring trident-controller never helps" in trident.remedy
    assert trident.source.endswith("operator/controllers/orchestrator/installer/installer.go")


@pytest.mark.parametrize(
    ("finalizer", "runs_as", "lease"),
    [
        (
            "fleet.cattle.io/gitrepo-finalizer",
            "Deployment cattle-fleet-system/gitjob",
            "fleet-gitops-leader-election-shard*",
        ),
        (
            "fleet.cattle.io/helmop-finalizer",
            "Deployment cattle-fleet-system/helmops",
            "fleet-helmops-leader-election-shard*",
        ),
        (
            "fleet.cattle.io/cluster-finalizer",
            "Deployment cattle-fleet-system/fleet-controller",
            "fleet-controller-leader-election-shard*",
        ),
    ],
)
def test_fleet_finalizers_name_the_deployment_that_removes_them(
    finalizer: str, runs_as: str, lease: str
) -> None:
    entry = known(finalizer)
    assert entry.runs_as.startswith(runs_as + " ")
    assert entry.lease_names == (lease,)


@pytest.mark.parametrize(
    ("finalizer", "daemonset"),
    [
        ("zfs.openebs.io/finalizer", "DaemonSet openebs-zfs-localpv-node"),
        ("lvm.openebs.io/finalizer", "DaemonSet openebs-lvm-localpv-node"),
    ],
)
def test_openebs_node_plugins_by_their_helm_daemonset_names(finalizer: str, daemonset: str) -> None:
    entry = known(finalizer)
    assert entry.runs_as.startswith(daemonset)
    assert daemonset in entry.remedy


def test_a_crossplane_claim_waits_for_its_composite_only_in_foreground() -> None:
    claim = known("finalizer.apiextensions.crossplane.io")
    assert "Background: removed at once" in claim.waits_for
    assert "compositeDeletePolicy Foreground" in claim.waits_for


def test_the_legacy_gce_netlb_finalizer_is_the_cloud_providers() -> None:
    netlb = known("gke.networking.io/l4-netlb-v1")
    assert netlb.owner == known("gke.networking.io/l4-ilb-v1").owner
    assert netlb.lease_names == ("cloud-controller-manager",)
    assert netlb.source.endswith("providers/gce/gce_loadbalancer_external.go")
    assert "ingress-gce" in known("gke.networking.io/l4-netlb-v2").owner


@pytest.mark.parametrize(
    ("finalizer", "since"),
    [
        ("finalizers.gatekeeper.sh/sync", "Gatekeeper 3.1"),
        ("pipelinesascode.tekton.dev", "Pipelines-as-Code 0.36"),
        ("eventlisteners.triggers.tekton.dev", "Tekton Triggers 0.17"),
    ],
)
def test_old_strings_nothing_removes_any_more(finalizer: str, since: str) -> None:
    entry = known(finalizer)
    assert entry.removed_by_nobody_since == since
    assert "remove the finalizer" in entry.remedy
    assert not entry.strands_infrastructure


def test_config_connector_namespaced_mode_names_its_statefulsets() -> None:
    entry = known("cnrm.cloud.google.com/finalizer")
    assert "cnrm-system/cnrm-controller-manager-<id>" in entry.runs_as
    assert "cnrm.cloud.google.com/scoped-namespace=<namespace>" in entry.runs_as


@pytest.mark.parametrize(
    ("finalizer", "owner", "runs_as"),
    [
        ("chaos-mesh/records", "Chaos Mesh", "chaos-controller-manager"),
        ("apps.victoriametrics.com/finalizer", "VictoriaMetrics operator", "victoria-metrics"),
        ("hive.openshift.io/deprovision", "Hive", "hive/hive-controllers"),
        ("hypershift.openshift.io/finalizer", "HyperShift", "hypershift/operator"),
        ("karmada.io/execution-controller", "Karmada", "karmada-controller-manager"),
        ("karmada.io/binding-dependencies-distributor", "Karmada", "karmada-controller-manager"),
        ("agent.database.arangodb.com/agency-serving", "ArangoDB", "arango-"),
        ("dbserver.database.arangodb.com/drain", "ArangoDB", "arango-"),
        ("database.arangodb.com/graceful-shutdown", "ArangoDB", "arango-"),
        ("pvc.database.arangodb.com/member-exists", "ArangoDB", "arango-"),
        ("percona.com/delete-pxc-pvc", "Percona", "percona-xtradb-cluster-operator"),
        ("percona.com/delete-psmdb-pvc", "Percona", "percona-server-mongodb-operator"),
        ("percona.com/delete-backup", "Percona", "percona-server-mysql-operator"),
        ("percona.com/delete-ssl", "Percona", "percona-postgresql-operator"),
        ("kubevirt.io/foregroundDeleteKubeVirt", "virt-operator", "kubevirt/virt-operator"),
        ("foregroundDeleteKubeVirt", "virt-operator", "kubevirt/virt-operator"),
        ("operator.cdi.kubevirt.io", "CDI operator", "cdi/cdi-operator"),
        ("cdi.kubevirt.io/clonePopulator", "CDI controller", "cdi/cdi-deployment"),
        (
            "cluster.open-cluster-management.io/manifest-work-cleanup",
            "Open Cluster Management work agent",
            "klusterlet-work-agent",
        ),
        (
            "cluster.open-cluster-management.io/applied-manifest-work-cleanup",
            "Open Cluster Management work agent",
            "klusterlet-work-agent",
        ),
        ("azure.microsoft.com/finalizer", "Azure Service Operator v1", "azureoperator-"),
        ("cluster.kubeblocks.io/finalizer", "KubeBlocks", "kb-system/kubeblocks"),
        ("dataprotection.kubeblocks.io/finalizer", "KubeBlocks", "kubeblocks-dataprotection"),
        ("instanceset.workloads.kubeblocks.io/finalizer", "KubeBlocks", "kb-system/kubeblocks"),
        ("results.tekton.dev/pipelinerun", "Tekton Results", "tekton-results-watcher"),
        ("finalizer.elasticsearch.k8s.elastic.co/observer", "ECK", "elastic-operator"),
    ],
)
def test_issue_37_families_name_their_owner(finalizer: str, owner: str, runs_as: str) -> None:
    entry = known(finalizer)
    assert owner in entry.owner and runs_as in entry.runs_as
    # a file (or commit) of the owner's repository, not just the repository
    assert entry.source.startswith("https://github.com/") and "/blob/" in entry.source


def test_escape_hatches_the_owners_document_are_offered() -> None:
    assert "chaos-mesh.chaos-mesh.org/cleanFinalizer=forced" in known("chaos-mesh/records").remedy
    assert "spec.preserveOnDelete: true" in known("hive.openshift.io/deprovision").remedy
    assert "karmadactl unjoin <cluster> --force" in known("karmada.io/binding-controller").remedy
    assert "skipreconcile=true" in known("azure.microsoft.com/finalizer").remedy
    assert "DoNotTerminate" in known("cluster.kubeblocks.io/finalizer").remedy


@pytest.mark.parametrize(
    ("finalizer", "kept"),
    [
        ("percona.com/delete-pxc-pvc", "the PVCs (the data) and Secrets stay"),
        ("percona.com/delete-proxysql-pvc", "the PVCs (the data) and Secrets stay"),
        ("percona.com/delete-mysql-pvc", "the PVCs (the data) and Secrets stay"),
        ("percona.com/delete-pvc", "the PVCs (the data) and Secrets stay"),
        ("percona.com/delete-backups", "the backup files stay"),
        ("percona.com/delete-pitr-chunks", "the PITR chunks stay"),
    ],
)
def test_percona_delete_finalizers_delete_data_and_removal_keeps_it(
    finalizer: str, kept: str
) -> None:
    entry = known(finalizer)
    assert entry.waits_for.startswith("the operator to DELETE")
    assert entry.remedy.startswith("this finalizer deletes")
    assert kept in entry.risk and not entry.strands_infrastructure


def test_victoriametrics_finalizer_on_objects_it_created() -> None:
    vm = known("apps.victoriametrics.com/finalizer")
    assert "ServiceAccounts, Secrets" in vm.waits_for and "PVCs" in vm.waits_for
    assert vm.lease_names == ("57410f0d.victoriametrics.com",)


def test_the_readme_and_docs_count_the_table() -> None:
    root = Path(__file__).resolve().parents[2]
    for doc in ("README.md", "docs/explaining.md"):
        counts = re.findall(r"\((\d+) finalizer names:", (root / doc).read_text())
        assert counts == [str(len(entries()))], doc


VMIS = Resource("kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance")
CRDS = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False
)
PXCS = Resource("pxc.percona.com", "v1", "perconaxtradbclusters", "PerconaXtraDBCluster")
GITREPOS = Resource("fleet.cattle.io", "v1alpha1", "gitrepos", "GitRepo")
CHAOS = Resource("chaos-mesh.org", "v1alpha1", "networkchaos", "NetworkChaos")


def test_explain_of_issue_37_corrections() -> None:
    """What `--explain` says of a VMI, a Trident CRD, a Percona cluster, a Fleet GitRepo and a
    chaos experiment held by their finalizers."""
    vmi = terminating(
        "kubevirt.io/v1",
        "VirtualMachineInstance",
        "db-vm",
        [
            "kubevirt.io/virtualMachineControllerFinalize",
            "kubevirt.io/foregroundDeleteVirtualMachine",
        ],
        namespace="vms",
    )
    crd = terminating(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "tridentbackends.trident.netapp.io",
        ["trident.netapp.io"],
    )
    pxc = terminating(
        "pxc.percona.com/v1",
        "PerconaXtraDBCluster",
        "cluster1",
        ["percona.com/delete-pxc-pvc"],
        namespace="db",
    )
    gitrepo = terminating(
        "fleet.cattle.io/v1alpha1",
        "GitRepo",
        "apps",
        ["fleet.cattle.io/gitrepo-finalizer"],
        namespace="fleet-default",
    )
    chaos = terminating(
        "chaos-mesh.org/v1alpha1", "NetworkChaos", "delay", ["chaos-mesh/records"], namespace="demo"
    )
    text = explained((vmi, VMIS), (crd, CRDS), (pxc, PXCS), (gitrepo, GITREPOS), (chaos, CHAOS))
    assert "fence the node and force-delete the virt-launcher pod first" in text
    assert "restoring trident-controller never helps" in text
    assert "this finalizer deletes the data when it runs" in text
    assert "Deployment cattle-fleet-system/gitjob" in text
    assert "chaos-mesh.chaos-mesh.org/cleanFinalizer=forced" in text
    assert_golden("knowledge/issue-37.txt", text)


@pytest.mark.parametrize(
    ("finalizer", "lease"),
    [
        # pkg/virt-controller/leaderelectionconfig (DefaultLeaseName), virt-operator's VirtOperator
        ("kubevirt.io/foregroundDeleteVirtualMachine", "virt-controller"),
        ("kubevirt.io/virtualMachineControllerFinalize", "virt-controller"),
        ("kubevirt.io/migrationJobFinalize", "virt-controller"),
        ("kubevirt.io/virtOperatorFinalizer", "virt-operator"),
        ("kubevirt.io/foregroundDeleteKubeVirt", "virt-operator"),
        ("hive.openshift.io/deprovision", "hive-controllers-leader"),
        ("chaos-mesh/records", "chaos-mesh"),
    ],
)
def test_leases_from_the_owners_leader_election(finalizer: str, lease: str) -> None:
    assert lease in known(finalizer).lease_names


def test_karmada_agent_leases_are_named_after_their_member_cluster() -> None:
    # cmd/agent/app/agent.go: LeaderElectionID karmada-agent-<cluster name>
    assert known("karmada.io/execution-controller").lease_names == (
        "karmada-controller-manager",
        "karmada-agent-*",
    )
