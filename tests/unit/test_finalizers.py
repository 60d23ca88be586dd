"""finalizer_blockers: owner, liveness evidence, special finalizers, remedies safest first."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from kubectl_terminating.causes import FINALIZER, OWNER_DEPENDENTS, PROTECTION_IN_USE
from kubectl_terminating.explain.finalizers import finalizer_blockers
from kubectl_terminating.model import JSON, Blocker
from kubectl_terminating.resources import CRDS, PODS, PVCS, PVS, Resource
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import Discovery
from tests.unit.builders import NAMESPACES_NOW as NOW
from tests.unit.builders import WIDGETS, apiservice, messages
from tests.unit.nsfixtures import at

REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
KUSTOMIZATIONS = Resource("kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization")
HELMRELEASES = Resource("helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease")
CERT_CHALLENGES = Resource("acme.cert-manager.io", "v1", "challenges", "Challenge")


def ago(seconds: int) -> str:
    return at(-seconds)


def obj(
    kind: str,
    name: str,
    namespace: str | None = "shop",
    finalizers: list[Any] | None = None,
    **extra: Any,
) -> JSON:
    metadata: JSON = {"name": name, "uid": f"uid-{name}", "deletionTimestamp": ago(600)}
    if namespace:
        metadata["namespace"] = namespace
    if finalizers is not None:
        metadata["finalizers"] = finalizers
    metadata.update(extra.pop("metadata", {}))
    return {"kind": kind, "metadata": metadata, **extra}


def lease(name: str, namespace: str, renewed: int, holder: str = "op-7d9c_1") -> JSON:
    spec = {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": ago(renewed)}
    return {"kind": "Lease", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def explain(target: JSON, resource: Resource, *objects: JSON, **view: Any) -> list[Blocker]:
    return finalizer_blockers(target, resource, StaticView([target, *objects], NOW, **view))


def only(blockers: list[Blocker]) -> Blocker:
    assert len(blockers) == 1, [b.summary for b in blockers]
    return blockers[0]


def patch_of(command: str) -> list[JSON]:
    args = shlex.split(command)
    patch = json.loads(args[args.index("-p") + 1])
    assert isinstance(patch, list)
    return patch


# -- the generic blocker ---------------------------------------------------------------------


def test_one_blocker_per_finalizer_with_its_real_index() -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/a", 7, "example.com/b"])
    first, second = explain(widget, WIDGETS)
    assert first.summary == "finalizer example.com/a (owner: unknown)"
    assert second.summary == "finalizer example.com/b (owner: unknown)"
    last = second.remedy[-1]
    assert last.command is not None
    assert last.command.startswith("kubectl patch widgets.example.com w1 -n shop --type=json")
    # index 2 (the number in between counts); the test op refuses a list that changed meanwhile
    assert patch_of(last.command) == [
        {"op": "test", "path": "/metadata/finalizers/2", "value": "example.com/b"},
        {"op": "remove", "path": "/metadata/finalizers/2"},
    ]


def test_remedies_are_safest_first_and_only_the_last_is_destructive() -> None:
    blocker = only(explain(obj("Widget", "w1", finalizers=["example.com/cleanup"]), WIDGETS))
    assert blocker.type == FINALIZER
    assert [r.destructive for r in blocker.remedy] == [False, False, True]
    assert blocker.remedy[-1].description.startswith("LAST RESORT")
    assert blocker.remedy[-1].when
    assert blocker.evidence[0].fields == {"finalizer": "example.com/cleanup", "index": 0}
    assert "cannot tell if it runs" in messages(blocker)


def test_known_owner_and_what_removing_it_strands() -> None:
    lb = obj("Service", "web", finalizers=["service.kubernetes.io/load-balancer-cleanup"])
    blocker = only(explain(lb, Resource("", "v1", "services", "Service")))
    assert blocker.summary.startswith(
        "finalizer service.kubernetes.io/load-balancer-cleanup (owner: service controller"
    )
    owner = blocker.evidence[1].fields
    assert owner["owner"] == "service controller (cloud-controller-manager)"
    assert owner["strandsInfrastructure"] is True
    assert "cloud load balancer keeps running" in blocker.remedy[-1].description


# -- is the owner alive? ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("renewed", "holder", "state"),
    [(5, "op-1", "running"), (7200, "op-1", "not running"), (5, "", "not running")],
)
def test_controller_runtime_lease_of_the_group(renewed: int, holder: str, state: str) -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    found = lease("8d3a5f1e.example.com", "widget-system", renewed, holder)
    blocker = only(explain(widget, WIDGETS, found))
    assert blocker.summary == f"finalizer example.com/cleanup (owner: unknown, {state})"
    lease_evidence = next(e for e in blocker.evidence if e.object and e.object.kind == "Lease")
    assert lease_evidence.fields["lease"] == "widget-system/8d3a5f1e.example.com"


def test_a_running_owner_is_asked_for_its_logs_first() -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    blocker = only(explain(widget, WIDGETS, lease("8d3a5f1e.example.com", "op", 5)))
    assert "logs" in blocker.remedy[0].description


def test_a_lease_of_another_domain_proves_nothing() -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    blocker = only(explain(widget, WIDGETS, lease("8d3a5f1e.example.org", "op", 7200)))
    assert blocker.summary == "finalizer example.com/cleanup (owner: unknown)"


@pytest.mark.parametrize(("renewed", "state"), [(10, "running"), (3600, "not running")])
def test_known_lease_name_of_an_operator(renewed: int, state: str) -> None:
    challenge = obj("Challenge", "c1", finalizers=["acme.cert-manager.io/finalizer"])
    found = lease("cert-manager-controller", "kube-system", renewed)
    blocker = only(explain(challenge, CERT_CHALLENGES, found))
    assert blocker.summary == (
        f"finalizer acme.cert-manager.io/finalizer (owner: cert-manager, {state})"
    )


def test_flux_lease_follows_the_objects_group() -> None:
    leases = (
        lease("kustomize-controller-leader-election", "flux-system", 7200),
        lease("helm-controller-leader-election", "flux-system", 3),
    )
    kustomization = obj("Kustomization", "apps", finalizers=["finalizers.fluxcd.io"])
    release = obj("HelmRelease", "redis", finalizers=["finalizers.fluxcd.io"])
    assert only(explain(kustomization, KUSTOMIZATIONS, *leases)).summary.endswith("not running)")
    assert only(explain(release, HELMRELEASES, *leases)).summary.endswith(", running)")


def test_unreadable_leases_leave_the_state_unknown_with_the_reason() -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    blocker = only(explain(widget, WIDGETS, unreadable={"Lease": "forbidden"}))
    assert blocker.summary == "finalizer example.com/cleanup (owner: unknown)"
    assert "could not read leases.coordination.k8s.io: forbidden" in messages(blocker)


def webhook_for(group: str) -> JSON:
    hook = {
        "name": "validate.example.com",
        "failurePolicy": "Ignore",
        "clientConfig": {"service": {"namespace": "op", "name": "op-webhook"}},
        "rules": [
            {
                "apiGroups": [group],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["*"],
            }
        ],
    }
    return {
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "op"},
        "webhooks": [hook],
    }


SERVICE = {"kind": "Service", "metadata": {"name": "op-webhook", "namespace": "op"}, "spec": {}}


def slice_with(ready: bool) -> JSON:
    return {
        "kind": "EndpointSlice",
        "metadata": {
            "name": "op-webhook-abcde",
            "namespace": "op",
            "labels": {"kubernetes.io/service-name": "op-webhook"},
        },
        "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": ready}}],
    }


@pytest.mark.parametrize(
    ("objects", "state"),
    [
        ((SERVICE, slice_with(True)), "running"),
        ((SERVICE, slice_with(False)), "not running"),
        ((), "not running"),  # the service itself is gone
    ],
)
def test_a_webhook_of_the_group_tells_whether_the_operator_runs(
    objects: tuple[JSON, ...], state: str
) -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    blocker = only(explain(widget, WIDGETS, webhook_for("example.com"), *objects))
    assert blocker.summary == f"finalizer example.com/cleanup (owner: unknown, {state})"


def test_a_webhook_of_another_group_proves_nothing() -> None:
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    blocker = only(explain(widget, WIDGETS, webhook_for("other.io"), SERVICE, slice_with(True)))
    assert blocker.summary == "finalizer example.com/cleanup (owner: unknown)"


@pytest.mark.parametrize(("available", "state"), [("True", "running"), ("False", "not running")])
def test_an_aggregated_api_of_the_group_tells_whether_its_server_runs(
    available: str, state: str
) -> None:
    api = apiservice("example.com", "v1", "op/api", available, "Passed")
    widget = obj("Widget", "w1", finalizers=["example.com/cleanup"])
    blocker = only(explain(widget, WIDGETS, api))
    assert blocker.summary == f"finalizer example.com/cleanup (owner: unknown, {state})"
    assert f"APIService v1.example.com Available={available} Passed" in messages(blocker)


# -- CRDs ------------------------------------------------------------------------------------


def crd(**status: Any) -> JSON:
    return obj(
        "CustomResourceDefinition",
        "widgets.example.com",
        namespace=None,
        finalizers=["customresourcecleanup.apiextensions.k8s.io"],
        spec={"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}},
        status=status,
    )


def test_crd_cleanup_names_the_instances_left() -> None:
    terminating = {
        "type": "Terminating",
        "status": "True",
        "reason": "InstanceDeletionCheck",
        "message": "could not confirm zero CustomResources remaining: timed out waiting",
    }
    blocker = only(explain(crd(conditions=[terminating]), CRDS))
    assert blocker.type == FINALIZER
    assert blocker.summary.endswith("(owner: CRD finalizer, running)")
    text = messages(blocker)
    assert "InstanceDeletionCheck: could not confirm zero CustomResources remaining" in text
    assert blocker.remedy[0].command == "kubectl get widgets.example.com -A"
    assert "kubectl terminating all -A --explain" in blocker.remedy[1].description


def test_metadata_only_crd_is_read_in_full() -> None:
    full = crd(
        conditions=[
            {
                "type": "Terminating",
                "reason": "InstanceDeletionFailed",
                "message": "could not issue all deletes",
            }
        ]
    )
    partial = {"kind": "CustomResourceDefinition", "metadata": full["metadata"]}
    blocker = only(finalizer_blockers(partial, CRDS, StaticView([full], NOW)))
    assert "InstanceDeletionFailed: could not issue all deletes" in messages(blocker)


# -- foregroundDeletion ----------------------------------------------------------------------


def owned_by(name: str, uid: str, block: bool, finalizers: list[Any] | None = None) -> JSON:
    ref = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": uid,
        "blockOwnerDeletion": block,
    }
    return obj("ReplicaSet", name, finalizers=finalizers, metadata={"ownerReferences": [ref]})


def content_view(*objects: JSON, **kw: Any) -> StaticView:
    return StaticView(objects, NOW, discovery=Discovery([PODS, REPLICASETS, DEPLOYMENTS]), **kw)


def test_foreground_deletion_lists_the_dependents_left() -> None:
    deployment = obj("Deployment", "web", finalizers=["foregroundDeletion"])
    dependent = owned_by("web-7d9c", "uid-web", True, ["example.com/x"])
    stranger = owned_by("api-5f4e", "uid-api", True)
    view = content_view(deployment, dependent, stranger)
    blocker = only(finalizer_blockers(deployment, DEPLOYMENTS, view))
    assert blocker.type == OWNER_DEPENDENTS
    assert blocker.summary == "foregroundDeletion: 1 dependents left"
    found = [e for e in blocker.evidence if e.object is not None and e.object.kind == "ReplicaSet"]
    assert [e.object.name for e in found if e.object] == ["web-7d9c"]
    assert found[0].fields["blockOwnerDeletion"] is True
    assert found[0].fields["finalizers"] == ["example.com/x"]
    assert blocker.remedy[0].command == "kubectl terminating all -n shop --explain"
    assert blocker.remedy[-1].destructive


def test_foreground_deletion_without_dependents_waits_for_the_garbage_collector() -> None:
    deployment = obj("Deployment", "web", finalizers=["foregroundDeletion"])
    blocker = only(finalizer_blockers(deployment, DEPLOYMENTS, content_view(deployment)))
    assert blocker.type == FINALIZER
    assert "(owner: garbage collector" in blocker.summary


def test_foreground_deletion_with_unlistable_types_says_so() -> None:
    deployment = obj("Deployment", "web", finalizers=["foregroundDeletion"])
    view = content_view(deployment, unreadable={"ReplicaSet": "forbidden"})
    blocker = only(finalizer_blockers(deployment, DEPLOYMENTS, view))
    assert blocker.type == OWNER_DEPENDENTS
    assert blocker.summary == (
        "foregroundDeletion: dependents not checked (could not list replicasets.apps: forbidden)"
    )
    assert blocker.unchecked == "could not list replicasets.apps: forbidden"  # ranks last
    assert "could not list replicasets.apps: forbidden" in messages(blocker)


def test_foreground_deletion_of_a_cluster_scoped_owner() -> None:
    owner = obj("Widget", "global", namespace=None, finalizers=["foregroundDeletion"])
    blocker = only(explain(owner, Resource("example.com", "v1", "widgets", "Widget", False)))
    assert blocker.type == OWNER_DEPENDENTS
    assert "cluster-scoped" in messages(blocker)


# -- pvc-protection and pv-protection --------------------------------------------------------


def claim(name: str = "data-web-0") -> JSON:
    return obj("PersistentVolumeClaim", name, finalizers=["kubernetes.io/pvc-protection"])


def pod(name: str, volumes: list[JSON], node: str = "worker-1", **meta: Any) -> JSON:
    spec: JSON = {"volumes": volumes, "containers": [{"name": "app", "image": "app:1"}]}
    if node:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", **meta},
        "spec": spec,
        "status": {"phase": "Running"},
    }


PVC_VOLUME = {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}


def test_pvc_in_use_by_a_pod_is_protection_in_use() -> None:
    blocker = only(explain(claim(), PVCS, pod("web-0", [PVC_VOLUME])))
    assert blocker.type == PROTECTION_IN_USE
    assert blocker.summary == "pvc-protection: claim in use by pod web-0"
    using = next(e for e in blocker.evidence if e.object and e.object.kind == "Pod")
    assert using.fields == {"phase": "Running", "nodeName": "worker-1", "deletionTimestamp": None}
    assert blocker.remedy[0].command == "kubectl delete pod -n shop web-0"
    assert blocker.remedy[-1].destructive and blocker.remedy[-1].when


def test_pvc_held_by_a_terminating_pod_points_at_the_pod() -> None:
    stuck = pod("web-0", [PVC_VOLUME], deletionTimestamp=ago(60))
    blocker = only(explain(claim(), PVCS, stuck, pod("web-1", [PVC_VOLUME])))
    assert blocker.summary == "pvc-protection: claim in use by pod web-0 (+1 more)"
    assert blocker.remedy[0].command == "kubectl delete pod -n shop web-0 web-1"
    alone = only(explain(claim(), PVCS, stuck))
    assert alone.remedy[0].command == "kubectl terminating pods -n shop web-0 --explain"


def test_an_unscheduled_pod_does_not_hold_the_claim() -> None:
    blocker = only(explain(claim(), PVCS, pod("web-0", [PVC_VOLUME], node="")))
    assert blocker.type == FINALIZER
    assert "(owner: pvc-protection controller" in blocker.summary


def test_ephemeral_volume_claims_count_until_the_pod_is_shut_down() -> None:
    scratch = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
    live = pod("web-0", [scratch])
    assert only(explain(claim("web-0-scratch"), PVCS, live)).type == PROTECTION_IN_USE
    gone = pod("web-0", [scratch], deletionTimestamp=ago(5), deletionGracePeriodSeconds=0)
    assert only(explain(claim("web-0-scratch"), PVCS, gone)).type == FINALIZER


def volume(phase: str) -> JSON:
    return obj(
        "PersistentVolume",
        "pvc-1234",
        namespace=None,
        finalizers=["kubernetes.io/pv-protection"],
        spec={"claimRef": {"namespace": "shop", "name": "data-web-0"}},
        status={"phase": phase},
    )


def test_bound_volume_is_protection_in_use_with_its_claim() -> None:
    blocker = only(explain(volume("Bound"), PVS))
    assert blocker.type == PROTECTION_IN_USE
    assert blocker.summary == "pv-protection: bound to claim shop/data-web-0"
    assert "claim shop/data-web-0 no longer exists" in messages(blocker)
    assert blocker.remedy[0].command == "kubectl delete persistentvolumeclaims -n shop data-web-0"


def test_metadata_only_volume_is_read_in_full() -> None:
    full = volume("Bound")
    partial = {"kind": "PersistentVolume", "metadata": full["metadata"]}
    existing = obj("PersistentVolumeClaim", "data-web-0")
    blocker = only(finalizer_blockers(partial, PVS, StaticView([full, existing], NOW)))
    assert blocker.type == PROTECTION_IN_USE
    assert "claim shop/data-web-0 is terminating" in messages(blocker)


def test_released_volume_waits_for_the_controller() -> None:
    blocker = only(explain(volume("Released"), PVS))
    assert blocker.type == FINALIZER
    assert "(owner: pv-protection controller" in blocker.summary


# -- vac-protection and podgroup-protection ------------------------------------------------

VACS = Resource("storage.k8s.io", "v1", "volumeattributesclasses", "VolumeAttributesClass", False)
PODGROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup")


def vac() -> JSON:
    return obj("VolumeAttributesClass", "gold", None, ["kubernetes.io/vac-protection"])


def test_a_class_named_by_a_claim_is_protection_in_use() -> None:
    # the claim asks for silver now, but its volume is still being modified to gold
    modifying = obj(
        "PersistentVolumeClaim",
        "data-web-0",
        spec={"volumeAttributesClassName": "silver"},
        status={"modifyVolumeStatus": {"targetVolumeAttributesClassName": "gold"}},
    )
    blocker = only(explain(vac(), VACS, modifying, obj("PersistentVolume", "pv-1", None)))
    assert blocker.type == PROTECTION_IN_USE
    assert blocker.summary == "vac-protection: class in use by claim shop/data-web-0"
    assert "status.modifyVolumeStatus.targetVolumeAttributesClassName" in messages(blocker)
    assert blocker.remedy[-1].destructive


def test_a_class_named_by_a_volume_only_is_in_use_too() -> None:
    pv = obj("PersistentVolume", "pv-1", None, spec={"volumeAttributesClassName": "gold"})
    blocker = only(explain(vac(), VACS, pv, obj("PersistentVolumeClaim", "other")))
    assert blocker.summary == "vac-protection: class in use by volume pv-1"


def test_an_unused_class_waits_for_its_controller() -> None:
    unused = obj("PersistentVolumeClaim", "data", spec={"volumeAttributesClassName": "silver"})
    blocker = only(explain(vac(), VACS, unused, obj("PersistentVolume", "pv-1", None)))
    assert blocker.type == FINALIZER


def test_a_podgroup_named_by_an_unfinished_pod_is_protection_in_use() -> None:
    group = obj("PodGroup", "train", finalizers=["scheduling.k8s.io/podgroup-protection"])

    def member(name: str, phase: str) -> JSON:
        return obj(
            "Pod",
            name,
            spec={"schedulingGroup": {"podGroupName": "train"}},
            status={"phase": phase},
        )

    blocker = only(explain(group, PODGROUPS, member("w-0", "Succeeded"), member("w-1", "Running")))
    assert blocker.type == PROTECTION_IN_USE
    assert blocker.summary == "podgroup-protection: group in use by pod w-1"
    assert blocker.remedy[0].command == "kubectl terminating pods -n shop w-1 --explain"
    done = only(explain(group, PODGROUPS, member("w-0", "Succeeded")))
    assert done.type == FINALIZER


# -- malformed input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        {},
        {"metadata": None},
        {"metadata": {"finalizers": "example.com/x"}},
        {"metadata": {"finalizers": [None, {"a": 1}, ""]}},
        {
            "metadata": {
                "name": 5,
                "finalizers": ["foregroundDeletion", "kubernetes.io/pv-protection"],
            }
        },
    ],
)
def test_malformed_objects_never_crash(target: JSON) -> None:
    blockers = explain(target, PVS)
    finalizers = target.get("metadata") or {}
    expected = [f for f in finalizers.get("finalizers") or [] if isinstance(f, str) and f]
    assert len(blockers) == (len(expected) if isinstance(finalizers.get("finalizers"), list) else 0)
