"""explain_namespace over realistic cluster dumps (tests/fixtures/namespaces)."""

from __future__ import annotations

import shlex
from datetime import datetime, timezone
from typing import Any

import pytest

from kubectl_terminating import causes
from kubectl_terminating.explain.namespaces import (
    MAX_MERGED,
    SUMMARY_WIDTH,
    condition_summary,
    explain_namespace,
    merge_blockers,
)
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Blocker, Evidence, Finding, Remedy
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import ContentListing, ReadFailed
from tests.unit.builders import messages
from tests.unit.nsfixtures import scenario

FIXTURES = [
    "discovery-failure",
    "operator-gone",
    "webhook-old-release",
    "conversion-webhook",
    "controller-silent",
    "own-finalizers",
    "pods-left",
]


def explained(name: str, **kw: Any) -> Finding:
    found = scenario(name)
    return explain_namespace(found.namespace, found.view, **kw)


def of_type(finding: Finding, kind: str) -> list[Blocker]:
    return [b for b in finding.blockers if b.type == kind]


def one(finding: Finding, kind: str) -> Blocker:
    found = of_type(finding, kind)
    assert len(found) == 1, [b.summary for b in finding.blockers]
    return found[0]


def assert_safest_first(blocker: Blocker) -> None:
    flags = [r.destructive for r in blocker.remedy]
    assert flags == sorted(flags), blocker.summary
    for remedy in blocker.remedy:
        if remedy.destructive:
            assert remedy.when and remedy.command, blocker.summary


@pytest.mark.parametrize("name", FIXTURES)
def test_every_blocker_is_one_line_and_orders_its_remedies(name: str) -> None:
    finding = explained(name)
    assert finding.blockers, name
    for blocker in finding.blockers:
        assert "\n" not in blocker.summary
        assert_safest_first(blocker)
        if blocker.type != causes.WEBHOOK:  # webhooks.py words its own
            assert len(blocker.summary) <= SUMMARY_WIDTH + 10, blocker.summary  # long finalizers


# -- discovery and APIServices ---------------------------------------------------------------


def test_unavailable_apiservice_is_the_main_blocker() -> None:
    finding = explained("discovery-failure")
    assert [b.type for b in finding.blockers] == [
        causes.APISERVICE_UNAVAILABLE,
        causes.NAMESPACE_CONDITION,
    ]  # not "finalizer kubernetes left with no content": the discovery failure holds it
    api = finding.blockers[0]
    assert api.summary == "APIService v1beta1.metrics.k8s.io unavailable: MissingEndpoints"
    fields = api.evidence[0].fields
    assert fields["reason"] == "MissingEndpoints"
    assert fields["service"] == "kube-system/metrics-server"
    assert 'have no addresses with port name "https"' in fields["message"]
    fix, delete = api.remedy
    assert not fix.destructive
    assert fix.command == (
        "kubectl get endpointslices -n kube-system -l kubernetes.io/service-name=metrics-server"
    )
    assert (
        delete.destructive and delete.command == "kubectl delete apiservice v1beta1.metrics.k8s.io"
    )


def test_discovery_condition_names_the_failing_group() -> None:
    finding = explained("discovery-failure")
    condition = one(finding, causes.NAMESPACE_CONDITION)
    assert condition.summary == "discovery failed for metrics.k8s.io/v1beta1"
    assert condition.evidence[0].fields["reason"] == "DiscoveryFailed"


def test_conditions_are_copied_with_their_five_fields() -> None:
    finding = explained("discovery-failure")
    assert finding.conditions is not None
    assert [c["type"] for c in finding.conditions] == [
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure",
        "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining",
    ]
    assert set(finding.conditions[0]) == {
        "type",
        "status",
        "reason",
        "message",
        "lastTransitionTime",
    }


def test_empty_namespace_with_the_kubernetes_finalizer_left() -> None:
    found = scenario("discovery-failure")
    for condition in found.namespace["status"]["conditions"]:
        condition["status"] = "False"  # discovery works again: the controller is only behind
    finding = explain_namespace(found.namespace, found.view)
    assert finding.remaining == []
    left = one(finding, causes.NAMESPACE_FINALIZER)
    assert left.summary == "finalizer kubernetes left with no content (controller behind?)"
    finalize = left.remedy[-1]
    assert finalize.destructive
    assert finalize.command == (
        "kubectl get namespace shop -o json | jq '.spec.finalizers -= [\"kubernetes\"]' | "
        "kubectl replace --raw /api/v1/namespaces/shop/finalize -f -"
    )


@pytest.mark.parametrize(
    ("reason", "message", "summary"),
    [
        (
            "DiscoveryFailed",
            "Discovery failed for some groups, 2 failing: unable to retrieve the complete list "
            "of server APIs: custom.metrics.k8s.io/v1beta1: the server is currently unable to "
            "handle the request, metrics.k8s.io/v1beta1: the server is currently unable to "
            "handle the request",
            "discovery failed for custom.metrics.k8s.io/v1beta1 (+1 more)",
        ),
        ("DiscoveryFailed", "something odd", "discovery failed for some groups"),
        (
            "ContentDeletionFailed",
            "Failed to delete all resource types, 1 remaining: Internal error occurred: "
            'failed calling webhook "v.kyverno.svc": x',
            "content deletion failed: webhook v.kyverno.svc",
        ),
        (
            "ContentDeletionFailed",
            "Failed to delete all resource types, 1 remaining: widgets.example.com is forbidden",
            "content deletion failed: widgets.example.com is forbidden",
        ),
        (
            "GroupVersionParsingFailed",
            "bad/version/x",
            "group-version parsing failed: bad/version/x",
        ),
    ],
)
def test_condition_summaries(reason: str, message: str, summary: str) -> None:
    assert condition_summary(reason, message) == summary


# -- content, operators, webhooks ------------------------------------------------------------


def test_custom_resources_whose_operator_is_gone() -> None:
    finding = explained("operator-gone")
    main = finding.main_blocker
    assert main is not None and main.type == causes.FINALIZER
    assert main.summary == "finalizer widgets.example.com/cleanup (owner: unknown, not running)"
    objects = [e.object.name for e in main.evidence if e.object and e.object.kind == "Widget"]
    assert objects == ["checkout", "ledger"]
    stale = next(e for e in main.evidence if e.object and e.object.kind == "Lease")
    assert stale.fields["lease"] == "widget-system/8d3a5f1e.widgets.example.com"
    # one safe step each, then one by-hand removal per object, last
    assert [r.destructive for r in main.remedy] == [False, False, True, True]
    targets = [shlex.split(r.command or "")[3] for r in main.remedy if r.destructive]
    assert targets == ["checkout", "ledger"]


def test_remaining_content_by_type_with_finalizers_and_owners() -> None:
    finding = explained("operator-gone")
    assert finding.remaining is not None
    (widgets,) = finding.remaining
    assert (widgets.resource, widgets.kind, widgets.count, widgets.error) == (
        "widgets.widgets.example.com",
        "Widget",
        2,
        None,
    )
    assert widgets.objects[0] == {
        "name": "checkout",
        "deletionTimestamp": "2026-03-01T10:00:01Z",
        "finalizers": ["widgets.example.com/cleanup"],
        "owners": {"widgets.example.com/cleanup": "unknown"},
    }
    content = one(finding, causes.CONTENT_REMAINING)
    assert content.summary == (
        "finalizer widgets.example.com/cleanup; left: widgets.widgets.example.com (2)"
    )
    assert "SomeResourcesRemain" in [e.fields.get("reason") for e in content.evidence]
    assert not of_type(
        finding, causes.NAMESPACE_FINALIZER
    )  # content is left: `kubernetes` is expected
    assert finding.to_json(json_extras)["remaining"][0]["count"] == 2


def test_broken_webhook_old_reason_strings_and_a_running_owner() -> None:
    finding = explained("webhook-old-release")
    assert finding.main_blocker is not None and finding.main_blocker.type == causes.WEBHOOK
    assert "validate.policy.example.com" in finding.main_blocker.summary
    assert one(finding, causes.NAMESPACE_CONDITION).summary == (
        "content deletion failed: webhook validate.policy.example.com"
    )
    content = one(finding, causes.CONTENT_REMAINING)
    # the older, singular reason is matched too
    assert "SomeFinalizerRemain" in [e.fields.get("reason") for e in content.evidence]
    challenge = one(finding, causes.FINALIZER)
    assert challenge.summary == (
        "finalizer acme.cert-manager.io/finalizer (owner: cert-manager, running)"
    )


def test_broken_conversion_webhook_and_an_unlistable_type() -> None:
    finding = explained("conversion-webhook")
    conversion = one(finding, causes.CONVERSION_WEBHOOK)  # snapshots has nothing here: not reported
    assert finding.main_blocker is conversion
    assert conversion.summary == "conversion webhook of backups.storage.example.com is down"
    assert "service storage-system/storage-webhook does not exist" in messages(conversion)
    assert [r.destructive for r in conversion.remedy] == [False, True]
    assert finding.remaining is not None
    (backups,) = finding.remaining
    assert (
        backups.count == 0 and backups.error is not None and "conversion webhook" in backups.error
    )
    assert any(
        w.startswith("could not list backups.storage.example.com: ") for w in finding.warnings
    )
    assert (
        one(finding, causes.CONTENT_REMAINING).summary
        == "not listable: backups.storage.example.com"
    )
    assert not of_type(finding, causes.NAMESPACE_FINALIZER)  # unknown content is not "no content"


def test_a_type_it_may_not_list_does_not_blame_its_conversion_webhook() -> None:
    """Forbidden to list backups: that says nothing about conversion, and no condition names
    it, so the CRD's broken conversion webhook is not blamed (the type shows as not listable)."""
    found = scenario("conversion-webhook", unreadable={"Backup": "forbidden"})
    namespace = dict(found.namespace, status={"phase": "Terminating", "conditions": []})
    finding = explain_namespace(namespace, found.view)
    assert not of_type(finding, causes.CONVERSION_WEBHOOK)
    assert (
        one(finding, causes.CONTENT_REMAINING).summary
        == "not listable: backups.storage.example.com"
    )


def test_conversion_webhook_named_by_a_condition_holds_a_namespace_without_its_objects() -> None:
    # Seen on 1.36: once a CRD's conversion webhook fails, the watch cache of its served
    # version cannot start, so the controller's lists fail in every namespace ("storage is
    # (re)initializing"), though this one has no such object and lists it fine itself.
    found = scenario("conversion-webhook", unreadable=None)
    finding = explain_namespace(found.namespace, found.view)
    assert finding.remaining == []
    conversion = one(finding, causes.CONVERSION_WEBHOOK)
    assert conversion.summary == "conversion webhook of backups.storage.example.com is down"
    assert "none of its objects is here" in messages(conversion)
    # a CRD the condition does not name stays out
    assert "snapshots.storage.example.com" not in conversion.summary


def test_silent_namespace_controller() -> None:
    finding = explained("controller-silent")
    assert finding.conditions == []
    controller = one(finding, causes.NAMESPACE_CONTROLLER)
    assert finding.main_blocker is controller
    assert controller.summary == "no conditions 20m after delete: namespace controller down?"
    assert "not renewed for" in messages(controller)
    assert controller.remedy and all(not r.destructive for r in controller.remedy)


def test_a_fresh_delete_without_conditions_is_not_blamed_on_the_controller() -> None:
    found = scenario("controller-silent")
    view = StaticView(found.data["objects"], datetime(2026, 3, 1, 11, 42, tzinfo=timezone.utc))
    assert not of_type(explain_namespace(found.namespace, view), causes.NAMESPACE_CONTROLLER)


def test_the_namespaces_own_finalizers() -> None:
    finding = explained("own-finalizers")
    spec, metadata = of_type(finding, causes.NAMESPACE_FINALIZER)
    assert spec.summary == "spec finalizer edge.example.com/network (owner: unknown)"
    assert spec.remedy[-1].destructive
    assert "jq '.spec.finalizers -= [\"edge.example.com/network\"]'" in (
        spec.remedy[-1].command or ""
    )
    assert metadata.summary == "finalizer edge.example.com/dns (owner: unknown)"
    assert '"path":"/metadata/finalizers/0"' in (metadata.remedy[-1].command or "")
    assert (metadata.remedy[-1].command or "").startswith("kubectl patch namespaces edge ")


def test_remaining_pods_are_explained_as_children() -> None:
    finding = explained("pods-left")
    (pod,) = finding.children
    assert (pod.kind, pod.name) == ("Pod", "postgres-0")
    assert pod.main_blocker is not None and pod.main_blocker.type == "node-missing"
    held = one(finding, causes.PROTECTION_IN_USE)
    assert held.summary == "pvc-protection: claim in use by pod postgres-0"
    assert held.remedy[0].command == "kubectl terminating pods -n db postgres-0 --explain"
    assert finding.to_json(json_extras)["pods"][0]["name"] == "postgres-0"
    assert explained("pods-left", explain_pods=False).children == []


# -- what could not be read ------------------------------------------------------------------


class NoContent(StaticView):
    def namespace_content(self, namespace: str) -> list[ContentListing]:
        raise ReadFailed("the API discovery", "timed out")


def test_content_that_cannot_be_listed_is_a_warning_not_an_empty_namespace() -> None:
    found = scenario("operator-gone")
    view = NoContent(found.data["objects"], found.view.now)
    finding = explain_namespace(found.namespace, view)
    assert finding.remaining is None
    assert "could not read the API discovery: timed out" in finding.warnings
    assert not of_type(finding, causes.NAMESPACE_FINALIZER)  # never "no content" when unknown
    assert of_type(finding, causes.NAMESPACE_CONDITION) == []  # conditions still read: none failing


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        ("APIService", "apiservices.apiregistration.k8s.io"),
        ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations"),
        ("CustomResourceDefinition", "customresourcedefinitions.apiextensions.k8s.io"),
    ],
)
def test_unreadable_cluster_objects_become_warnings(kind: str, what: str) -> None:
    found = scenario("webhook-old-release", unreadable={kind: "forbidden"})
    finding = explain_namespace(found.namespace, found.view)
    assert f"could not read {what}" in "\n".join(finding.warnings)
    assert of_type(finding, causes.CONTENT_REMAINING)  # the other checks still ran


def test_a_failure_condition_with_an_unknown_reason_still_counts() -> None:
    condition = {"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "New"}
    namespace = {
        "metadata": {"name": "x"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"conditions": [condition]},
    }
    finding = explain_namespace(
        namespace, StaticView([], datetime(2026, 3, 1, tzinfo=timezone.utc))
    )
    (blocker,) = of_type(finding, causes.NAMESPACE_CONDITION)
    assert (blocker.type, blocker.summary) == (
        causes.NAMESPACE_CONDITION,
        "discovery failed for some groups",
    )


@pytest.mark.parametrize(
    "namespace",
    [
        {},
        {"metadata": {"name": "x"}, "status": {"conditions": "not a list"}},
        {
            "metadata": {"name": "x", "deletionTimestamp": "yesterday", "finalizers": [None]},
            "spec": {"finalizers": [1, None, "kubernetes"]},
            "status": {"conditions": [None, "x", {"type": 5, "status": True, "reason": []}]},
        },
        {"metadata": {"name": "x", "deletionTimestamp": "2026-03-01T00:00:00Z"}, "spec": None},
    ],
)
def test_malformed_namespaces_never_crash(namespace: JSON) -> None:
    view = StaticView([], datetime(2026, 3, 1, 12, tzinfo=timezone.utc))
    finding = explain_namespace(namespace, view)
    assert finding.kind == "Namespace"
    assert all(b.type != causes.NAMESPACE_CONDITION for b in finding.blockers)


# -- merging ---------------------------------------------------------------------------------


def per_object(name: str) -> Blocker:
    return Blocker(
        causes.FINALIZER,
        "finalizer example.com/x (owner: unknown)",
        (Evidence(f"{name} has it"), Evidence("no known owner")),
        (
            Remedy("restore the owner"),
            Remedy("see events", f"kubectl describe widgets {name}"),
            Remedy("LAST RESORT", f"kubectl patch widgets {name}", destructive=True, when="gone"),
        ),
    )


def test_merging_keeps_one_safe_step_each_and_every_destructive_one() -> None:
    other = Blocker(causes.FINALIZER, "finalizer example.com/y (owner: unknown)")
    merged, kept = merge_blockers([per_object("a"), other, per_object("b")])
    assert kept is other
    assert [e.message for e in merged.evidence] == ["a has it", "no known owner", "b has it"]
    assert [r.command for r in merged.remedy] == [
        None,
        "kubectl describe widgets a",
        "kubectl patch widgets a",
        "kubectl patch widgets b",
    ]


def test_merging_many_objects_names_a_few_and_counts_the_rest() -> None:
    (merged,) = merge_blockers([per_object(str(i)) for i in range(MAX_MERGED + 5)])
    assert merged.evidence[-1].message == "and 5 more objects with the same cause"
    assert sum(r.destructive for r in merged.remedy) == MAX_MERGED
