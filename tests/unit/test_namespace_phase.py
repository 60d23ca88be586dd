"""The phase of a namespace's deletion decides what can still hold it, and the namespace
controller's current conditions are evidence the tool's own view must not overrule.

Condition messages are the formats of pkg/controller/namespace/deletion (namespaced_resources_
deleter.go, status_condition_utils.go) as pasted in public incident threads.
"""

from __future__ import annotations

from typing import Any

from kubectl_terminating import causes
from kubectl_terminating.explain.namespace_evidence import (
    failing_conversions,
    failing_group_versions,
    remaining_finalizers,
    remaining_types,
)
from kubectl_terminating.model import JSON, FailedCheck, Finding
from kubectl_terminating.render.style import Style
from kubectl_terminating.render.table import blocker_cell
from kubectl_terminating.resources import PODS
from kubectl_terminating.view import Discovery
from tests.unit.builders import WIDGETS, apiservice, explain_namespace_among, messages, types

DELETED = "2026-03-01T10:00:00Z"
UNAVAILABLE_API = apiservice(
    "metrics.k8s.io", "v1beta1", "kube-system/metrics-server", "False", "ServiceNotFound"
)
DISCOVERY_FAILED = {
    "type": "NamespaceDeletionDiscoveryFailure",
    "status": "True",
    "reason": "DiscoveryFailed",
    "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list "
    "of server APIs: metrics.k8s.io/v1beta1: the server is currently unable to handle the request",
}
CONTENT_REMAINING = {
    "type": "NamespaceContentRemaining",
    "status": "True",
    "reason": "SomeResourcesRemain",
    "message": "Some resources are remaining: pods. has 2 resource instances, "
    "staticroutes.gateway.kusk.io has 1 resource instances",
}
FINALIZERS_REMAINING = {
    "type": "NamespaceFinalizersRemaining",
    "status": "True",
    "reason": "SomeFinalizersRemain",
    "message": "Some content in the namespace has finalizers remaining: "
    "gateway.kusk.io/finalizer in 1 resource instances",
}


def namespace(spec_finalizers: list[str], finalizers: list[str], *conditions: JSON) -> JSON:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {
            "name": "archive",
            "uid": "u-1",
            "deletionTimestamp": DELETED,
            **({"finalizers": finalizers} if finalizers else {}),
        },
        "spec": {"finalizers": spec_finalizers} if spec_finalizers else {},
        "status": {"phase": "Terminating", "conditions": list(conditions)},
    }


def widget(name: str, finalizers: list[str]) -> JSON:
    return {
        "kind": "Widget",
        "apiVersion": "example.com/v1",
        "metadata": {
            "name": name,
            "namespace": "archive",
            "uid": f"w-{name}",
            "deletionTimestamp": DELETED,
            "finalizers": finalizers,
        },
    }


def explain(ns: JSON, *objects: JSON, complete: bool = True, **kw: Any) -> Finding:
    discovery = Discovery(resources=[WIDGETS], complete=complete)
    return explain_namespace_among(ns, list(objects), discovery=discovery, **kw)


# -- parsing the controller's words ----------------------------------------------------------


def test_the_conditions_name_types_finalizers_and_groups() -> None:
    ns = namespace(["kubernetes"], [], CONTENT_REMAINING, FINALIZERS_REMAINING, DISCOVERY_FAILED)
    assert [(n.name, n.count) for n in remaining_types(ns)] == [
        ("pods", 2),
        ("staticroutes.gateway.kusk.io", 1),
    ]
    assert [(n.name, n.count) for n in remaining_finalizers(ns)] == [
        ("gateway.kusk.io/finalizer", 1)
    ]
    assert [n.name for n in failing_group_versions(ns)] == ["metrics.k8s.io/v1beta1"]


def test_a_conversion_failure_names_kinds_with_dashes() -> None:
    # kubernetes/kubernetes#118357: the conformance suite's CRD kind has dashes
    failed = {
        "type": "NamespaceDeletionContentFailure",
        "status": "True",
        "reason": "ContentDeletionFailed",
        "message": "Failed to delete all resource types, 1 remaining: conversion webhook for "
        "stable.example.com/v1, Kind=e2e-test-crd-webhook-1786-crd failed: Post ...",
    }
    ((group, kind, named),) = failing_conversions(namespace(["kubernetes"], [], failed))
    assert (group, kind, named.name) == (
        "stable.example.com",
        "e2e-test-crd-webhook-1786-crd",
        "stable.example.com/v1",
    )


# -- bullet 1: phase first -------------------------------------------------------------------


def test_past_the_content_phase_only_its_own_finalizers_hold_it() -> None:
    """`kubernetes` gone from spec.finalizers: no APIService, stale condition or content can
    hold the namespace; its own finalizer is the blocker, the content a hazard."""
    ns = namespace([], ["example.com/archive"], DISCOVERY_FAILED, CONTENT_REMAINING)
    finding = explain(ns, UNAVAILABLE_API, widget("w1", ["example.com/cleanup"]))
    assert types(finding) == [causes.NAMESPACE_FINALIZER]
    (blocker,) = finding.blockers
    assert blocker.summary == "finalizer example.com/archive (owner: unknown)"
    assert "1 object will be left behind without a namespace: widgets.example.com/w1" in (
        finding.warnings
    )
    first = blocker.remedy[0]
    assert first.description.startswith("FIRST delete the 1 object still inside")
    assert first.command == (
        "kubectl delete widgets.example.com -n archive --all --wait=false; "
        "kubectl terminating all -n archive --explain"
    )
    assert blocker.remedy[-1].destructive  # removing it by hand still comes last


def test_content_left_behind_is_no_failed_check_in_the_table() -> None:
    ns = namespace([], ["example.com/archive"])
    finding = explain(ns, widget("w1", ["example.com/cleanup"]))
    assert any("left behind" in w for w in finding.warnings)
    cell = blocker_cell(finding, Style(color=False))
    assert "not possible" not in cell, cell
    finding.warnings.append("could not say more (a note: its wording does not count)")
    assert "not possible" not in blocker_cell(finding, Style(color=False))
    finding.warnings.append(FailedCheck("read leases.coordination.k8s.io: forbidden"))
    assert blocker_cell(finding, Style(color=False)).endswith("(1 check not possible)")


def test_a_spec_finalizer_past_the_content_phase_is_the_main_blocker() -> None:
    ns = namespace(["example.com/archive"], [], DISCOVERY_FAILED)
    finding = explain(ns, UNAVAILABLE_API)
    assert types(finding) == [causes.NAMESPACE_FINALIZER]
    assert finding.main_blocker is not None
    assert finding.main_blocker.summary.startswith("spec finalizer example.com/archive")
    assert not [w for w in finding.warnings if "left behind" in w]


def test_in_the_content_phase_cluster_wide_blockers_still_hold_it() -> None:
    ns = namespace(["kubernetes", "example.com/archive"], [], DISCOVERY_FAILED)
    finding = explain(ns, UNAVAILABLE_API)
    assert types(finding)[0] == causes.APISERVICE_UNAVAILABLE
    assert causes.NAMESPACE_FINALIZER in types(finding)


# -- bullet 2: conditions are evidence -------------------------------------------------------


def test_a_namespace_alone_is_explained_by_its_conditions() -> None:
    """`kubectl get ns X -o json` holds the namespace only: the types and finalizers the
    controller names are not in the file, so they come from its conditions, never "no content"."""
    ns = namespace(["kubernetes"], [], CONTENT_REMAINING, FINALIZERS_REMAINING)
    finding = explain(ns, complete=False)
    assert types(finding) == [causes.FINALIZER, causes.CONTENT_REMAINING]
    finalizer, content = finding.blockers
    assert finalizer.summary.startswith("finalizer gateway.kusk.io/finalizer on 1 object (owner: ")
    assert "NamespaceFinalizersRemaining: Some content" in finalizer.evidence[0].message
    assert content.summary.startswith("3 objects left (per the controller): pods (2)")
    assert content.summary.endswith("(2)…")  # cut between words, never inside a type's name
    assert not any("no content" in b.summary for b in finding.blockers)


def test_a_discovery_failure_is_an_unavailable_api_even_without_apiservices() -> None:
    ns = namespace(["kubernetes"], [], DISCOVERY_FAILED)
    finding = explain(ns, complete=False, unreadable={"APIService": "not in the snapshot"})
    main = finding.main_blocker
    assert main is not None and main.type == causes.APISERVICE_UNAVAILABLE
    assert main.summary.startswith("API metrics.k8s.io/v1beta1 unavailable")
    assert main.remedy[-1].command == "kubectl delete apiservice v1beta1.metrics.k8s.io"


def test_an_apiservice_in_view_is_not_blamed_twice() -> None:
    ns = namespace(["kubernetes"], [], DISCOVERY_FAILED)
    finding = explain(ns, UNAVAILABLE_API)
    (blocker,) = [b for b in finding.blockers if b.type == causes.APISERVICE_UNAVAILABLE]
    assert blocker.summary == "APIService v1beta1.metrics.k8s.io unavailable: ServiceNotFound"


def test_a_content_failure_naming_a_webhook_is_a_webhook() -> None:
    # netbirdio/kubernetes-operator#46
    failed = {
        "type": "NamespaceDeletionContentFailure",
        "status": "True",
        "reason": "ContentDeletionFailed",
        "message": "Failed to delete all resource types, 1 remaining: Internal error occurred: "
        'failed calling webhook "vnbroutingpeer-v1.netbird.io": failed to call webhook: Post '
        '"https://netbird-operator-kubernetes-operator-webhook-service.netbird.svc:443/validate'
        '-netbird-io-v1-nbroutingpeer?timeout=10s": service "netbird-operator-kubernetes-'
        'operator-webhook-service" not found',
    }
    finding = explain(namespace(["kubernetes"], [], failed), complete=False)
    main = finding.main_blocker
    assert main is not None and main.type == causes.WEBHOOK
    assert main.summary.startswith("webhook vnbroutingpeer-v1.netbird.io")


def test_no_content_only_when_listing_and_conditions_agree() -> None:
    removed = {"type": "NamespaceContentRemaining", "status": "False", "reason": "ContentRemoved"}
    agreed = explain(namespace(["kubernetes"], [], removed))
    assert agreed.main_blocker is not None
    assert (
        agreed.main_blocker.summary
        == "finalizer kubernetes left with no content (controller behind?)"
    )

    disagree = explain(namespace(["kubernetes"], [], CONTENT_REMAINING))
    assert not any("no content" in b.summary for b in disagree.blockers)
    assert types(disagree) == [causes.CONTENT_REMAINING]
    # the listing covered pods? no: only widgets were listed; the note says which is which
    assert "could not list" in "\n".join(e.message for e in disagree.blockers[0].evidence)

    unknown = explain(namespace(["kubernetes"], []), complete=False)
    assert not any("no content" in b.summary for b in unknown.blockers)


# What the controller writes on 1.33+ while pods remain with a finalizer or inside their grace
# period: every condition's "ok" variant (pkg/controller/namespace/deletion/
# status_condition_utils.go okReasons, v1.36.3 and v1.37.2; kubernetes/kubernetes#138208).
ORDERED_ALL_OK = (
    {"type": "NamespaceDeletionContentFailure", "status": "False", "reason": "ContentDeleted"},
    {
        "type": "NamespaceContentRemaining",
        "status": "False",
        "reason": "ContentRemoved",
        "message": "All content successfully removed",
    },
    {
        "type": "NamespaceFinalizersRemaining",
        "status": "False",
        "reason": "ContentHasNoFinalizers",
    },
)


def test_content_removed_proves_nothing_without_the_pod_list() -> None:
    """A pasted namespace whose conditions say "All content successfully removed", pods not in
    the file: from 1.33 the controller writes that while pods remain, so no "left with no
    content" and no /finalize of `kubernetes`; the pod list is what to read."""
    ns = namespace(["kubernetes"], [], *ORDERED_ALL_OK)
    finding = explain(ns, complete=False)
    (blocker,) = finding.blockers
    assert blocker.type == causes.NAMESPACE_FINALIZER
    assert blocker.summary == "finalizer kubernetes, content unseen: pods may remain"
    assert blocker.confidence == causes.POSSIBLE
    assert not any(r.destructive for r in blocker.remedy)
    assert "kubectl get pods -n archive" in [r.command for r in blocker.remedy]
    assert "only the pod list proves it" in messages(blocker)


def test_content_removed_counts_once_the_pods_were_listed() -> None:
    """The same conditions with the namespace's pods listed (none there): the controller is
    behind, as before ordered deletion."""
    ns = namespace(["kubernetes"], [], *ORDERED_ALL_OK)
    discovery = Discovery(resources=[WIDGETS, PODS], complete=False)
    finding = explain_namespace_among(ns, [], discovery=discovery)
    main = finding.main_blocker
    assert main is not None
    assert main.summary == "finalizer kubernetes left with no content (controller behind?)"


def test_a_complete_listing_is_fresher_than_the_conditions_finalizers() -> None:
    """Listed just now, every type, nothing carries the finalizer the last pass counted: no
    finalizer blocker from the condition, and still no "no content" (they disagree)."""
    ns = namespace(["kubernetes"], [], FINALIZERS_REMAINING)
    finding = explain(ns)
    assert causes.FINALIZER not in types(finding)
    assert not any("no content" in b.summary for b in finding.blockers)
    partial = explain(ns, complete=False)
    assert types(partial) == [causes.FINALIZER]
