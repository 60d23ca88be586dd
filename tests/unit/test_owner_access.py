"""The owner runs but may not act (issue 32, class 6): a fresh Lease, and a ServiceAccount that
lost the RBAC to update the object it must release. A SubjectAccessReview for the owner's
ServiceAccount says so; the remedy is its role binding, never the finalizer while it runs.

The view is a StaticView whose SubjectAccessReview answers are given (what the API server
answered for the same question in tests/e2e/test_owner_clock.py, against the real control plane).
"""

from __future__ import annotations

import pytest

from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.fix.observe import observe, planned
from kubectl_terminating.fix.plan import Refusal, plan
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.render.style import Style
from kubectl_terminating.resources import PVCS, Resource
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import ReadFailed
from tests.unit import test_fix, test_server_clock
from tests.unit.builders import NAMESPACES_NOW as NOW
from tests.unit.golden import assert_golden
from tests.unit.nsfixtures import at

EXTERNAL_SECRETS = Resource("external-secrets.io", "v1", "externalsecrets", "ExternalSecret")
FINALIZER = "externalsecrets.external-secrets.io/externalsecret-cleanup"
ACCOUNT = "system:serviceaccount:external-secrets:external-secrets"
HOLDER = "external-secrets-6b9c7d8f5-qk2lp_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

SECRET: JSON = {
    "apiVersion": "external-secrets.io/v1",
    "kind": "ExternalSecret",
    "metadata": {
        "name": "db-credentials",
        "namespace": "shop",
        "uid": "uid-db-credentials",
        "deletionTimestamp": at(-900),
        "finalizers": [FINALIZER],
    },
}
LEASE: JSON = {
    "kind": "Lease",
    "apiVersion": "coordination.k8s.io/v1",
    "metadata": {"name": "external-secrets-controller", "namespace": "external-secrets"},
    "spec": {"holderIdentity": HOLDER, "leaseDurationSeconds": 15, "renewTime": at(-5)},
}
POD: JSON = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {"name": HOLDER.split("_")[0], "namespace": "external-secrets"},
    "spec": {"serviceAccountName": "external-secrets", "nodeName": "worker-1"},
}


class ReviewingView(StaticView):
    """A StaticView that answers SubjectAccessReviews as given (verb -> allowed), or refuses
    to ask as the API server does for a user without `create subjectaccessreviews`."""

    def __init__(self, objects: list[JSON], allowed: dict[str, bool] | None) -> None:
        super().__init__(objects, NOW)
        self.allowed = allowed
        self.asked: list[tuple[str, tuple[str, ...], JSON]] = []

    def may(self, user: str, groups: tuple[str, ...], attributes: JSON) -> bool:
        self.asked.append((user, groups, attributes))
        if self.allowed is None:
            raise ReadFailed("subjectaccessreviews.authorization.k8s.io", "forbidden")
        return self.allowed.get(str(attributes["verb"]), False)


def explained(*objects: JSON, allowed: dict[str, bool] | None) -> tuple[Finding, ReviewingView]:
    view = ReviewingView([SECRET, LEASE, *objects], allowed)
    return explain_object(SECRET, EXTERNAL_SECRETS, view), view


def test_an_owner_that_runs_but_may_not_update_the_object_is_said_so() -> None:
    finding, view = explained(POD, allowed={"get": True})
    blocker = finding.blockers[0]
    assert blocker.summary == (
        f"finalizer {FINALIZER} (owner: External Secrets Operator, running but may not update it)"
    )
    # the questions the API server was asked: the leader pod's ServiceAccount; the namespace's
    # objects of the type first, then (refused) this object by name
    user, groups, attributes = view.asked[0]
    assert user == ACCOUNT
    assert "system:serviceaccounts:external-secrets" in groups
    assert {k: v for k, v in attributes.items() if k != "verb"} == {
        "group": "external-secrets.io",
        "version": "v1",
        "resource": "externalsecrets",
        "namespace": "shop",
    }
    assert [(a["verb"], a.get("name")) for _, _, a in view.asked] == [
        ("update", None),
        ("update", "db-credentials"),
        ("patch", None),
        ("patch", "db-credentials"),
    ]
    first = blocker.remedy[0]
    assert (
        "restore the RBAC of ServiceAccount external-secrets/external-secrets" in first.description
    )
    assert first.command == (
        "kubectl auth can-i update externalsecrets.external-secrets.io/db-credentials -n shop "
        f"--as={ACCOUNT}"
    )
    last = blocker.remedy[-1]
    assert last.destructive and (last.when or "").startswith(
        "never while External Secrets Operator runs"
    )
    assert not any(r.destructive for r in blocker.remedy[:-1])
    text = explain_text([finding], Style(color=False), json_extras)
    assert_golden("owner-access/may-not-update.txt", text)


def test_a_leader_whose_pod_is_not_found_is_not_checked() -> None:
    finding, view = explained(allowed={})  # no pod named as the Lease's holder
    assert view.asked == []
    assert any(
        e.message == "whether the owner may update it: not checked (its leader's pod was not found)"
        for e in finding.blockers[0].evidence
    )


def test_an_owner_that_may_update_it_keeps_the_plain_running_answer() -> None:
    finding, _ = explained(POD, allowed={"patch": True})
    blocker = finding.blockers[0]
    assert blocker.summary.endswith("(owner: External Secrets Operator, running)")
    assert any("may patch" in e.message for e in blocker.evidence)
    assert blocker.remedy[0].description.startswith("its owner runs but does not finish")


def test_without_create_subjectaccessreviews_it_is_said_not_checked() -> None:
    finding, _ = explained(POD, allowed=None)
    blocker = finding.blockers[0]
    assert blocker.summary.endswith("(owner: External Secrets Operator, running)")
    assert any(
        e.message.startswith("whether the owner may update it: not checked (could not read")
        and "forbidden" in e.message
        for e in blocker.evidence
    )


def test_a_file_asks_nothing_and_says_what_it_always_said() -> None:
    view = StaticView([SECRET, LEASE, POD], NOW)
    blocker = explain_object(SECRET, EXTERNAL_SECRETS, view).blockers[0]
    assert blocker.summary.endswith("(owner: External Secrets Operator, running)")
    assert not any("may" in e.message for e in blocker.evidence)


# the Challenge of test_server_clock, deleted 15 minutes before this module's NOW
CHALLENGE: JSON = {
    **test_server_clock.CHALLENGE,
    "metadata": {**test_server_clock.CHALLENGE["metadata"], "deletionTimestamp": at(-900)},
}
# cert-manager's identity: `<hostname>-external-cert-manager-controller`
CERT_MANAGER_LEASE: JSON = {
    **LEASE,
    "metadata": {"name": "cert-manager-controller", "namespace": "kube-system"},
    "spec": {
        "holderIdentity": "cert-manager-55c69bf5cf-2fgjn-external-cert-manager-controller",
        "leaseDurationSeconds": 60,
        "renewTime": at(-5),
    },
}
CERT_MANAGER_POD: JSON = {
    **POD,
    "metadata": {"name": "cert-manager-55c69bf5cf-2fgjn", "namespace": "cert-manager"},
    "spec": {"serviceAccountName": "cert-manager", "nodeName": "worker-1"},
}


@pytest.mark.parametrize("allowed", [{}, {"update": True}])
def test_fix_keeps_refusing_while_the_owner_runs(allowed: dict[str, bool]) -> None:
    """fix plans nothing: its proof that the owner is gone fails on the same fresh Lease. The
    leader's pod is found in its own namespace, not the Lease's."""
    objects = [CHALLENGE, CERT_MANAGER_LEASE, CERT_MANAGER_POD]
    view = ReviewingView(objects, allowed)
    finding = explain_object(CHALLENGE, test_fix.CHALLENGES, view)
    assert view.asked[0][0] == "system:serviceaccount:cert-manager:cert-manager"
    assert finding.blockers[0].summary.endswith(
        "(owner: cert-manager, running)" if allowed else "running but may not update it)"
    )
    cluster = test_fix.FakeCluster(objects)
    sections = observe(plan([finding], resolve=test_fix.resolve), cluster, NOW)
    assert planned(sections) == []
    reasons = [s.reason for section in sections for s in section.steps if isinstance(s, Refusal)]
    assert reasons and all("kube-system/cert-manager-controller" in r for r in reasons), reasons


def test_the_first_fresh_lease_whose_leader_is_found_is_asked_about() -> None:
    """Two installs' Leases match; the first names a leader nothing in the view shows."""
    orphan = {
        **LEASE,
        "metadata": {"name": "external-secrets-controller", "namespace": "another"},
        "spec": {**LEASE["spec"], "holderIdentity": "gone-7d9f8b6c5-x2x9q_1"},
    }
    view = ReviewingView([SECRET, orphan, LEASE, POD], {})
    explain_object(SECRET, EXTERNAL_SECRETS, view)
    assert {user for user, _, _ in view.asked} == {ACCOUNT}


def test_one_answer_for_the_namespace_serves_every_object_there() -> None:
    """A mass outage of one running owner's objects costs two questions, not two an object."""
    second = {**SECRET, "metadata": {**SECRET["metadata"], "name": "api-key", "uid": "uid-2"}}
    view = ReviewingView([SECRET, second, LEASE, POD], {"update": True})
    for target in (SECRET, second):
        explain_object(target, EXTERNAL_SECRETS, view)
    live_like = {(a["verb"], a.get("name")) for _, _, a in view.asked}
    assert live_like == {
        ("update", None),
        ("patch", None),
        ("patch", "db-credentials"),
        ("patch", "api-key"),
    }


def test_kubernetes_own_controllers_are_not_asked_about() -> None:
    """kube-controller-manager's controllers have their own bootstrap rights: a static pod's
    ServiceAccount says nothing of them."""
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data",
            "namespace": "shop",
            "uid": "uid-data",
            "deletionTimestamp": at(-900),
            "finalizers": ["kubernetes.io/pv-controller"],
        },
    }
    kcm = {
        **LEASE,
        "metadata": {"name": "kube-controller-manager", "namespace": "kube-system"},
        "spec": {**LEASE["spec"], "holderIdentity": "cp-1_5f0c6a52"},
    }
    view = ReviewingView([claim, kcm], {})
    blocker = explain_object(claim, PVCS, view).blockers[0]
    assert view.asked == [] and "running" in blocker.summary
