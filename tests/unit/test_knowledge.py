"""The finalizer table: exact entries, families matched by pattern, unknown stays unknown."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_terminating.explain.knowledge import FinalizerOwner, entries, lookup


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
        ("cnrm.cloud.google.com/deletion-defender", "cnrm.cloud.google.com/*"),
        ("controller.cattle.io/mgmt-auth-users-controller", "controller.cattle.io/*"),
        (
            "clusterscoped.controller.cattle.io/project-namespace-auth_local",
            "clusterscoped.controller.cattle.io/*",
        ),
        ("wrangler.cattle.io/provisioning-cluster-remove", "wrangler.cattle.io/*"),
        ("routes.serving.knative.dev", "*.knative.dev"),
        ("triggers.eventing.knative.dev", "*.knative.dev"),
        ("pipelineruns.tekton.dev", "*.tekton.dev"),
        ("chains.tekton.dev/taskrun", "chains.tekton.dev*"),
        ("finalizers.gatekeeper.sh/sync", "finalizers.gatekeeper.sh/*"),
        ("olm.operatorframework.io/cleanup-unpack-cache", "olm.operatorframework.io/cleanup-*"),
        ("networking.gke.io/ingress-finalizer-V2", "networking.gke.io/ingress-finalizer*"),
        ("gke.networking.io/l4-ilb-v2", "gke.networking.io/l4-*"),
        ("finalizers.s3.services.k8s.aws/Bucket", "finalizers.*.services.k8s.aws/*"),
        ("kyverno.io/webhooks", "kyverno.io/*webhooks"),
        (
            "externalsecrets.external-secrets.io/ces-team-a",
            "externalsecrets.external-secrets.io/ces-*",
        ),
        ("gateway.k8s.aws/alb-finalizer", "gateway.k8s.aws/*-finalizer"),
        ("gateway.k8s.aws/nlb-finalizer", "gateway.k8s.aws/*-finalizer"),
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
    assert known("gateway.k8s.aws/alb-finalizer").owner == "AWS Load Balancer Controller"
    assert "VPC Lattice" in known("gateway.k8s.aws/resources").owner
