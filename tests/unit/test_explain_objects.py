"""explain_object (`all --explain`): dispatch by kind, metadata-only input, extra checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    CONVERSION_WEBHOOK,
    FINALIZER,
    GRACE_PERIOD,
    PROTECTION_IN_USE,
    UNKNOWN,
    WEBHOOK,
)
from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import CRDS, NAMESPACES, PODS, PVCS, PVS, SERVICES, Resource
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import NAMESPACES_NOW as NOW
from tests.unit.builders import WIDGETS, types
from tests.unit.nsfixtures import at, scenario


def widget(finalizers: list[str], labels: dict[str, str] | None = None, **extra: Any) -> JSON:
    metadata: JSON = {
        "name": "w1",
        "namespace": "shop",
        "uid": "uid-w1",
        "deletionTimestamp": at(-600),
        "finalizers": finalizers,
        "labels": labels or {},
    }
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata, **extra}


def metadata_only(obj: JSON) -> JSON:
    """What `all` lists: PartialObjectMetadata, kind and apiVersion set from the resource."""
    return {
        "kind": obj["kind"],
        "apiVersion": obj.get("apiVersion", "v1"),
        "metadata": obj["metadata"],
    }


def broken_webhook(object_selector: JSON | None = None) -> JSON:
    hook: JSON = {
        "name": "guard.example.com",
        "failurePolicy": "Fail",
        "clientConfig": {"service": {"namespace": "guard", "name": "guard-webhook"}},
        "rules": [
            {
                "apiGroups": ["example.com"],
                "apiVersions": ["*"],
                "operations": ["UPDATE"],
                "resources": ["widgets"],
            }
        ],
    }
    if object_selector is not None:
        hook["objectSelector"] = object_selector
    return {
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "guard"},
        "webhooks": [hook],
    }


def crd(finalizers: list[str] | None = None) -> JSON:
    metadata: JSON = {"name": "widgets.example.com", "uid": "uid-crd"}
    if finalizers is not None:
        metadata.update(finalizers=finalizers, deletionTimestamp=at(-300))
    spec = {
        "group": "example.com",
        "names": {"plural": "widgets", "kind": "Widget"},
        "scope": "Namespaced",
        "conversion": {
            "strategy": "Webhook",
            "webhook": {"clientConfig": {"service": {"namespace": "op", "name": "op-webhook"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": spec,
    }


def test_bound_volume_listed_metadata_only_is_read_in_full() -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": "pvc-1234",
            "uid": "uid-pv",
            "deletionTimestamp": at(-60),
            "finalizers": ["kubernetes.io/pv-protection"],
        },
        "spec": {"claimRef": {"namespace": "shop", "name": "data-web-0"}},
        "status": {"phase": "Bound"},
    }
    finding = explain_object(metadata_only(pv), PVS, StaticView([pv], NOW))
    assert (finding.kind, finding.api_version, finding.namespace) == (
        "PersistentVolume",
        "v1",
        None,
    )
    assert types(finding) == [PROTECTION_IN_USE]
    assert finding.blockers[0].summary == "pv-protection: bound to claim shop/data-web-0"


def test_webhook_rejecting_the_finalizer_removal_ranks_first() -> None:
    target = widget(["example.com/cleanup"])
    finding = explain_object(target, WIDGETS, StaticView([target, broken_webhook()], NOW))
    assert types(finding) == [WEBHOOK, FINALIZER]
    assert "guard.example.com" in finding.blockers[0].summary


def test_webhook_object_selector_is_matched_against_the_objects_labels() -> None:
    target = widget(["example.com/cleanup"], labels={"tier": "web"})
    hook = broken_webhook({"matchLabels": {"tier": "db"}})
    finding = explain_object(target, WIDGETS, StaticView([target, hook], NOW))
    assert types(finding) == [FINALIZER]


class LiveLikeView(StaticView):
    """Objects as a live server answers them: whole (an object read live is never cut)."""

    in_memory = False


def test_no_update_is_needed_without_finalizers() -> None:
    target = widget([])
    view = LiveLikeView([target, broken_webhook()], NOW)
    finding = explain_object(target, WIDGETS, view)
    assert types(finding) == [UNKNOWN]
    assert (
        finding.blockers[0].summary
        == "no finalizer or other blocker found: deletion should complete"
    )


def test_a_file_without_finalizers_says_they_are_not_in_it() -> None:
    """A live server removes a deleted object once no finalizer is left: a pasted one shown
    without them lost them in the paste, and "deletion should complete" would be a guess."""
    finding = explain_object(widget([]), WIDGETS, StaticView([widget([])], NOW))
    (main,) = finding.blockers
    assert main.type == FINALIZER
    assert "not in the file" in main.summary
    assert main.confidence == "possible"
    assert "should complete" not in json.dumps(finding.to_json(lambda _: {}))


def claim(**status: Any) -> JSON:
    metadata = {"name": "data", "namespace": "shop", "deletionTimestamp": at(-600)}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata, **status}


def test_a_claim_pasted_without_finalizers_names_pvc_protection() -> None:
    """pvc-protection usually holds a claim: likely when the file shows a pod using it,
    possible when it does not (the pod may be there all the same)."""
    alone = explain_object(claim(), PVCS, StaticView([claim()], NOW))
    assert [(b.type, b.confidence) for b in alone.blockers] == [(FINALIZER, "possible")]
    assert "kubernetes.io/pvc-protection" in alone.blockers[0].summary
    user = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "shop"},
        "spec": {
            "nodeName": "worker-1",
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    }
    used = explain_object(claim(), PVCS, StaticView([claim(), user], NOW))
    assert [(b.type, b.confidence) for b in used.blockers] == [(FINALIZER, "likely")]


def test_a_load_balancer_service_pasted_without_finalizers_names_its_cleanup() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop", "deletionTimestamp": at(-600)},
        "spec": {"type": "LoadBalancer"},
    }
    finding = explain_object(service, SERVICES, StaticView([service], NOW))
    (main,) = finding.blockers
    assert "service.kubernetes.io/load-balancer-cleanup" in main.summary
    assert main.confidence == "likely"


def test_a_services_failed_load_balancer_deletion_is_read_from_its_event() -> None:
    """The service controller's event (cloud-provider controllers/service) names the step that
    fails; a paste from `kubectl describe` carries no uid."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "deletionTimestamp": at(-600),
            "finalizers": ["service.kubernetes.io/load-balancer-cleanup"],
        },
        "spec": {"type": "LoadBalancer"},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "shop"},
        "involvedObject": {"kind": "Service", "name": "web", "namespace": "shop"},
        "reason": "DeleteLoadBalancerFailed",
        "message": "Error deleting load balancer: DependencyViolation: resource has a dependent",
        "lastTimestamp": at(-60),
    }
    finding = explain_object(service, SERVICES, StaticView([service, event], NOW))
    said = json.dumps(finding.to_json(lambda _: {}))
    assert "DependencyViolation" in said
    assert any("cannot be deleted" in b.summary for b in finding.blockers)


def test_custom_resource_whose_crd_conversion_webhook_is_down() -> None:
    target = widget(["example.com/cleanup"])
    finding = explain_object(target, WIDGETS, StaticView([target, crd()], NOW))
    assert types(finding) == [CONVERSION_WEBHOOK, FINALIZER]
    assert finding.blockers[0].summary == "conversion webhook of widgets.example.com is down"


def test_terminating_crd_with_its_own_conversion_webhook_down() -> None:
    target = crd(["customresourcecleanup.apiextensions.k8s.io"])
    finding = explain_object(target, CRDS, StaticView([target], NOW))
    assert types(finding) == [CONVERSION_WEBHOOK, FINALIZER]
    assert finding.blockers[1].summary.endswith("(owner: CRD finalizer, running)")


def test_namespace_listed_metadata_only_gets_the_full_namespace_explanation() -> None:
    found = scenario("operator-gone")
    finding = explain_object(metadata_only(found.namespace), NAMESPACES, found.view)
    assert finding.kind == "Namespace"
    assert finding.conditions and len(finding.conditions) == 5
    assert finding.main_blocker is not None and finding.main_blocker.type == FINALIZER
    assert finding.remaining is not None and finding.remaining[0].count == 2


def test_pods_go_to_the_pod_explainers() -> None:
    found = scenario("pods-left")
    pod = reads.pod(found.view, "db", "postgres-0")
    assert pod is not None
    finding = explain_object(pod, PODS, found.view)
    assert (finding.kind, finding.node) == ("Pod", "worker-3")
    assert finding.main_blocker is not None and finding.main_blocker.type == "node-missing"


def test_an_object_that_cannot_be_read_in_full_is_explained_from_its_metadata() -> None:
    target = widget(["example.com/cleanup"])
    view = StaticView([target], NOW, unreadable={"Widget": "forbidden"})
    finding = explain_object(metadata_only(target), WIDGETS, view)
    assert "could not read widgets.example.com: forbidden" in finding.warnings
    assert types(finding) == [FINALIZER]


def test_inside_its_grace_period_it_is_not_stuck() -> None:
    target = widget([])
    target["metadata"]["deletionTimestamp"] = at(20)
    finding = explain_object(target, WIDGETS, StaticView([target], NOW))
    assert types(finding) == [GRACE_PERIOD]
    assert not finding.stuck


@pytest.mark.parametrize("target", [{}, {"metadata": None}, {"metadata": {"finalizers": {}}}])
def test_malformed_objects_never_crash(target: JSON) -> None:
    finding = explain_object(target, WIDGETS, StaticView([], NOW))
    assert finding.kind == "Widget"
    assert types(finding) == [UNKNOWN]


def test_a_secret_is_never_read_whole() -> None:
    """Its data is all a whole read would add: never read, so never in a finding (serve's API
    serves findings to whoever may use its service proxy)."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "db-password",
            "namespace": "shop",
            "uid": "uid-s",
            "deletionTimestamp": at(-600),
            "finalizers": ["example.com/keep"],
        },
        "data": {"password": "aHVudGVyMg=="},
    }
    secrets = Resource("", "v1", "secrets", "Secret")
    view = StaticView([secret], NOW, unreadable={"Secret": "forbidden"})
    finding = explain_object(metadata_only(secret), secrets, view)
    assert finding.warnings == []  # not even tried
    assert types(finding) == [FINALIZER]


CHALLENGES = Resource("acme.cert-manager.io", "v1", "challenges", "Challenge")


def challenge_with_event(seconds_ago: int) -> tuple[JSON, JSON]:
    """A Challenge held by cert-manager's finalizer and the controller's CleanUpError on it
    (pkg/controller/acmechallenges/sync.go), as `kubectl describe` pastes it (no uid)."""
    target = {
        "apiVersion": "acme.cert-manager.io/v1",
        "kind": "Challenge",
        "metadata": {
            "name": "web-tls-1",
            "namespace": "shop",
            "deletionTimestamp": at(-3600),
            "finalizers": ["finalizer.acme.cert-manager.io"],
        },
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web-tls-1.1", "namespace": "shop"},
        "involvedObject": {"kind": "Challenge", "name": "web-tls-1", "namespace": "shop"},
        "reason": "CleanUpError",
        "message": "Error cleaning up challenge: DNS provider credentials expired",
        "lastTimestamp": at(-seconds_ago),
    }
    return target, event


def test_a_fresh_event_from_the_owner_proves_it_runs_and_says_why() -> None:
    target, event = challenge_with_event(120)
    finding = explain_object(target, CHALLENGES, StaticView([target, event], NOW))
    (main,) = finding.blockers
    assert "(owner: cert-manager, running)" in main.summary
    assert any("credentials expired" in e.message for e in main.evidence)


def test_an_old_event_from_the_owner_says_why_but_not_that_it_runs() -> None:
    target, event = challenge_with_event(6 * 3600)
    finding = explain_object(target, CHALLENGES, StaticView([target, event], NOW))
    (main,) = finding.blockers
    assert "running" not in main.summary
    assert any("credentials expired" in e.message for e in main.evidence)


def test_an_owner_event_in_a_file_without_capture_time_proves_nothing_of_now() -> None:
    """Undated, the file's clock is its newest timestamp, often that very event: its age says
    nothing, so it is evidence of why, never that the owner runs."""
    target, event = challenge_with_event(120)
    view = StaticView([target, event], NOW, undated=True)
    (main,) = explain_object(target, CHALLENGES, view).blockers
    assert "running" not in main.summary
    assert any("credentials expired" in e.message for e in main.evidence)
