"""Admission webhooks that would reject the writes deletion needs, over JSON fixtures."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_terminating.explain.webhooks import (
    matching_webhooks,
    ready_endpoints,
    resource_matches,
    rule_operations,
    selector_matches,
    unverified_webhooks,
    webhook_blockers,
)
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import NAMESPACES, PODS
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import ReadFailed
from tests.unit.builders import PODS_NOW as NOW
from tests.unit.builders import WIDGETS, pod_fixture

SERVICE = "policy-system/policy-webhook"


def config(**hook: Any) -> JSON:
    """The policy webhook configuration with its one webhook's keys replaced."""
    obj = pod_fixture("webhook-policy")
    obj["webhooks"][0].update(hook)
    return obj


def ready(value: bool | None) -> JSON:
    slice_ = pod_fixture("endpointslice-policy-webhook")
    conditions = slice_["endpoints"][0]["conditions"]
    if value is None:
        del conditions["ready"]
    else:
        conditions["ready"] = value
    return slice_


def view(*objects: JSON, unreadable: dict[str, str] | None = None) -> StaticView:
    base = [pod_fixture("namespace-shop"), pod_fixture("service-policy-webhook"), ready(False)]
    return StaticView([*objects, *base], NOW, unreadable=unreadable)


def rule(**keys: Any) -> JSON:
    base: JSON = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"]}
    return {**base, "resources": ["pods"], **keys}


# -- rules -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resources", "subresource", "expected"),
    [
        (["pods"], "", True),
        (["*"], "", True),
        (["*/*"], "", True),
        (["*/*"], "status", True),
        (["pods/*"], "status", True),
        (["pods/status"], "", False),
        (["pods/status"], "status", True),
        (["*"], "status", False),
        (["deployments", "services"], "", False),
        ("pods", "", False),  # malformed: not a list
    ],
)
def test_resource_matching_follows_the_api_server(
    resources: Any, subresource: str, expected: bool
) -> None:
    assert resource_matches(resources, "pods", subresource) is expected


def test_operations_and_wildcards() -> None:
    assert rule_operations(rule(), PODS, ["UPDATE", "DELETE"]) == ("UPDATE",)
    assert rule_operations(rule(operations=["*"]), PODS, ["UPDATE", "DELETE"]) == (
        "UPDATE",
        "DELETE",
    )
    assert rule_operations(rule(operations=["CREATE"]), PODS, ["UPDATE"]) == ()
    assert rule_operations(rule(apiGroups=["*"]), WIDGETS, ["UPDATE"]) == ()  # resources differ
    widgets = rule(apiGroups=["*"], resources=["widgets"])
    assert rule_operations(widgets, WIDGETS, ["UPDATE"]) == ("UPDATE",)
    assert rule_operations(rule(apiGroups=["apps"]), PODS, ["UPDATE"]) == ()


def test_versions_matter_only_under_exact_match_policy() -> None:
    old = rule(apiGroups=["example.com"], apiVersions=["v1beta1"], resources=["widgets"])
    assert rule_operations(old, WIDGETS, ["UPDATE"]) == ("UPDATE",)
    assert rule_operations(old, WIDGETS, ["UPDATE"], exact_version=True) == ()
    assert rule_operations({**old, "apiVersions": ["*"]}, WIDGETS, ["UPDATE"], exact_version=True)


def test_scope() -> None:
    namespaced = rule(scope="Namespaced", resources=["*"])
    assert rule_operations(namespaced, PODS, ["UPDATE"]) == ("UPDATE",)
    assert rule_operations(namespaced, NAMESPACES, ["UPDATE"]) == ()
    assert rule_operations(rule(scope="Cluster", resources=["*"]), NAMESPACES, ["UPDATE"])


# -- selectors ---------------------------------------------------------------------------------

LABELS = {"team": "storefront", "kubernetes.io/metadata.name": "shop"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, True),
        ({}, True),
        ({"matchLabels": {"team": "storefront"}}, True),
        ({"matchLabels": {"team": "billing"}}, False),
        ({"matchExpressions": [{"key": "team", "operator": "In", "values": ["storefront"]}]}, True),
        (
            {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["storefront"]}]},
            False,
        ),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, True),
        ({"matchExpressions": [{"key": "team", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}, False),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}, False),
        ({"matchExpressions": [{"key": "team", "operator": "Weird"}]}, True),
        ({"matchExpressions": "garbage", "matchLabels": []}, True),
    ],
)
def test_label_selectors(selector: Any, expected: bool) -> None:
    assert selector_matches(selector, LABELS) is expected


# -- backends and blockers ---------------------------------------------------------------------


def test_webhook_without_ready_endpoints_blocks_finalizer_removal() -> None:
    blockers = webhook_blockers(PODS, ["UPDATE"], "shop", view(config()))
    assert len(blockers) == 1
    b = blockers[0]
    assert b.type == "webhook"
    assert (
        b.summary
        == f"webhook validate.pods.policy.example.com: service {SERVICE} has no ready endpoints"
    )
    hook, service = b.evidence
    assert hook.object is not None and hook.object.kind == "ValidatingWebhookConfiguration"
    assert hook.fields["failurePolicy"] == "Fail"
    assert hook.fields["operations"] == ["UPDATE"]
    assert service.fields == {"readyEndpoints": 0, "endpointSlices": 1}
    restore, delete = b.remedy
    assert not restore.destructive
    assert restore.command == (
        "kubectl get pods -n policy-system "
        "-l app.kubernetes.io/component=webhook,app.kubernetes.io/name=policy-engine -o wide"
    )
    assert delete.destructive and delete.when
    assert delete.command == "kubectl delete validatingwebhookconfiguration policy-validating"
    assert not any("failurePolicy" in (r.command or "") for r in b.remedy)


def test_missing_service() -> None:
    objects = [config(), pod_fixture("namespace-shop")]
    blockers = webhook_blockers(PODS, ["UPDATE"], "shop", StaticView(objects, NOW))
    assert [b.summary for b in blockers] == [
        f"webhook validate.pods.policy.example.com: service {SERVICE} missing"
    ]
    assert blockers[0].evidence[1].fields == {"exists": False}


@pytest.mark.parametrize("value", [True, None])  # a missing `ready` counts as ready
def test_ready_endpoint_means_healthy(value: bool | None) -> None:
    objects = [
        config(),
        pod_fixture("namespace-shop"),
        pod_fixture("service-policy-webhook"),
        ready(value),
    ]
    assert webhook_blockers(PODS, ["UPDATE"], "shop", StaticView(objects, NOW)) == []


def test_ready_endpoints_counts_only_ready_ones() -> None:
    assert ready_endpoints([ready(False), ready(True), ready(None), {"endpoints": "x"}]) == 2


def test_failure_policy_ignore_never_blocks_and_fail_is_the_default() -> None:
    assert webhook_blockers(PODS, ["UPDATE"], "shop", view(config(failurePolicy="Ignore"))) == []
    default = config()
    del default["webhooks"][0]["failurePolicy"]
    assert len(webhook_blockers(PODS, ["UPDATE"], "shop", view(default))) == 1


def test_operation_not_intercepted() -> None:
    assert webhook_blockers(PODS, ["DELETE"], "shop", view(config())) == []


def test_namespace_selector_excludes_namespace() -> None:
    selector = {"matchLabels": {"team": "billing"}}
    assert (
        webhook_blockers(PODS, ["UPDATE"], "shop", view(config(namespaceSelector=selector))) == []
    )


@pytest.mark.parametrize(
    ("namespace", "unreadable", "why"),
    [
        ("gone", None, "namespace gone not found"),
        ("shop", {"Namespace": "forbidden"}, "could not read namespaces: forbidden"),
    ],
)
def test_unknown_namespace_labels_are_assumed_to_match(
    namespace: str, unreadable: dict[str, str] | None, why: str
) -> None:
    selector = {"matchLabels": {"team": "storefront"}}
    v = view(config(namespaceSelector=selector), unreadable=unreadable)
    blockers = webhook_blockers(PODS, ["UPDATE"], namespace, v)
    assert len(blockers) == 1
    assumptions = blockers[0].evidence[0].fields["assumptions"]
    assert assumptions == [f"namespaceSelector not evaluated ({why}): assumed to match"]


def test_object_selector_uses_labels_when_given() -> None:
    hook = config(objectSelector={"matchLabels": {"app": "web"}})
    assert webhook_blockers(PODS, ["UPDATE"], "shop", view(hook), labels={"app": "db"}) == []
    assert webhook_blockers(PODS, ["UPDATE"], "shop", view(hook), labels={"app": "web"})
    unknown = webhook_blockers(PODS, ["UPDATE"], "shop", view(hook))
    assert unknown[0].evidence[0].fields["assumptions"] == [
        "objectSelector not evaluated: assumed to match"
    ]


def test_namespace_objects_match_their_own_labels() -> None:
    hook = config(
        rules=[rule(resources=["namespaces"])],
        namespaceSelector={"matchLabels": {"team": "storefront"}},
    )
    assert webhook_blockers(NAMESPACES, ["UPDATE"], "shop", view(hook))
    other = config(
        rules=[rule(resources=["namespaces"])], namespaceSelector={"matchLabels": {"team": "x"}}
    )
    assert webhook_blockers(NAMESPACES, ["UPDATE"], "shop", view(other)) == []


def test_content_types_of_a_namespace() -> None:
    hook = config(
        rules=[rule(apiGroups=["example.com"], resources=["widgets"], operations=["DELETE"])]
    )
    blockers = webhook_blockers(WIDGETS, ["DELETE", "UPDATE"], "shop", view(hook))
    assert blockers[0].evidence[0].fields["resource"] == "widgets.example.com"
    assert blockers[0].evidence[0].fields["operations"] == ["DELETE"]


def test_mutating_configuration_is_named_by_its_kind() -> None:
    hook = config()
    hook["kind"] = "MutatingWebhookConfiguration"
    (b,) = webhook_blockers(PODS, ["UPDATE"], "shop", view(hook))
    assert b.remedy[-1].command == "kubectl delete mutatingwebhookconfiguration policy-validating"


def test_url_webhooks_cannot_be_checked_and_are_only_listed() -> None:
    hook = config(clientConfig={"url": "https://policy.example.com/validate"})
    assert webhook_blockers(PODS, ["UPDATE"], "shop", view(hook)) == []
    (evidence,) = unverified_webhooks(matching_webhooks(PODS, ["UPDATE"], "shop", view(hook)), PODS)
    assert evidence.fields["url"] == "https://policy.example.com/validate"


def test_external_name_service_is_not_judged() -> None:
    service = pod_fixture("service-policy-webhook")
    service["spec"] = {"type": "ExternalName", "externalName": "policy.example.com"}
    v = StaticView([config(), pod_fixture("namespace-shop"), service], NOW)
    assert webhook_blockers(PODS, ["UPDATE"], "shop", v) == []


def test_unreadable_configurations_propagate_for_the_runner_to_warn() -> None:
    v = view(unreadable={"ValidatingWebhookConfiguration": "forbidden"})
    with pytest.raises(ReadFailed):
        webhook_blockers(PODS, ["UPDATE"], "shop", v)


def test_malformed_configurations_never_crash() -> None:
    broken = copy.deepcopy(config())
    broken["webhooks"] += [
        None,
        "x",
        {"rules": "x"},
        {"rules": [None, {"operations": "UPDATE"}], "clientConfig": []},
        {"rules": [rule()], "clientConfig": {"service": {"name": 5}}, "namespaceSelector": []},
    ]
    garbage = {"kind": "MutatingWebhookConfiguration", "metadata": [], "webhooks": {"a": 1}}
    hooks = matching_webhooks(PODS, ["UPDATE"], "shop", view(broken, garbage))
    assert [h.name for h in hooks] == ["validate.pods.policy.example.com", ""]
    assert len(webhook_blockers(PODS, ["UPDATE"], "shop", view(broken, garbage))) == 1
