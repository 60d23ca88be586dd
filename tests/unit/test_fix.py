"""The fix planner (pure: findings -> plan), its proofs, digest, apply loop and renderings.

Findings come from the real explainers over the namespace fixtures; the cluster the proofs and
writes see is a dict of objects (FakeCluster), so every refusal path can be forced.
"""

from __future__ import annotations

import copy
import io
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.causes import (
    APISERVICE_UNAVAILABLE,
    CERTAIN,
    FINALIZER,
    LIFECYCLE_HOOK,
    LIKELY,
    NODE_MISSING,
    NODE_NOT_READY,
    RUNTIME_UNAVAILABLE,
)
from kubectl_terminating.errors import ApiError, Forbidden
from kubectl_terminating.explain.finalizers import finalizer_confidence
from kubectl_terminating.explain.namespaces import explain_namespace
from kubectl_terminating.fix.apply import CHANGED, DONE, FORBIDDEN, NOT_CONFIRMED, apply_plan
from kubectl_terminating.fix.audit import Actor, AuditLog
from kubectl_terminating.fix.command import _confirmation_refused
from kubectl_terminating.fix.digest import digest
from kubectl_terminating.fix.flags import FixOptions
from kubectl_terminating.fix.observe import (
    Planned,
    judge,
    observe,
    planned,
)
from kubectl_terminating.fix.plan import (
    ABSENT,
    DELETE_APISERVICE,
    DELETE_WEBHOOK_CONFIGURATION,
    FORCE_DELETE_POD,
    GONE_OR_TERMINATING,
    NONE_NAMED,
    REMOVE_FINALIZER,
    TAINT_OUT_OF_SERVICE,
    Check,
    Proposal,
    Refusal,
    Resolver,
    Section,
    known_resource,
    no_live_lease,
    plan,
)
from kubectl_terminating.fix.render import dry_run_footer, plan_json, plan_text
from kubectl_terminating.model import (
    FINALIZER_ON,
    JSON,
    Blocker,
    Evidence,
    Finding,
    ObjectRef,
    Subject,
)
from kubectl_terminating.render.style import Style
from kubectl_terminating.resources import ENDPOINT_SLICES, LEASES, VOLUME_ATTACHMENTS, Resource
from tests.unit.golden import assert_golden
from tests.unit.nsfixtures import scenario

CHALLENGES = Resource("acme.cert-manager.io", "v1", "challenges", "Challenge")
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
ACTOR = Actor("admin", "test", "https://127.0.0.1:6443")


def resolve(api_version: str, kind: str) -> Resource | None:
    extra = {
        (r.api_version, r.kind): r
        for r in (CHALLENGES, CONFIGMAPS, VOLUME_ATTACHMENTS, LEASES, ENDPOINT_SLICES)
    }
    return known_resource(api_version, kind) or extra.get((api_version, kind))


class FakeCluster:
    """Objects by API path; lists are every object whose path lies under the list's path.
    Also a Writer that records what it was asked to write."""

    def __init__(self, objects: list[JSON], resolver: Resolver = resolve) -> None:
        self.objects: dict[str, JSON] = {}
        self.forbidden: set[str] = set()
        self.writes: list[tuple[str, str, Any]] = []
        self.fail: ApiError | None = None
        self.clock = datetime.now(timezone.utc)  # the API server's time
        for number, original in enumerate(objects, 1):
            obj = copy.deepcopy(original)
            obj["metadata"].setdefault("resourceVersion", str(100 + number))
            obj["metadata"].setdefault("uid", f"uid-{number}")
            resource = resolver(obj["apiVersion"], obj["kind"])
            if resource is not None:
                m = obj["metadata"]
                self.objects[resource.path(m.get("namespace"), m["name"])] = obj

    def get(self, path: str) -> JSON | None:
        if path in self.forbidden:
            raise Forbidden(f"forbidden: {path}", 403, "Forbidden")
        return self.objects.get(path)

    def now(self) -> datetime:
        return self.clock

    def list(self, path: str) -> list[JSON]:
        if path in self.forbidden:
            raise Forbidden(f"forbidden: {path}", 403, "Forbidden")
        plural = path.rsplit("/", 1)[1]
        prefix = path.rsplit("/", 1)[0]
        return [
            o
            for p, o in self.objects.items()
            if p.startswith(prefix) and p.rsplit("/", 2)[1] == plural
        ]

    def write(self, verb: str, path: str, body: object, content_type: str) -> tuple[int, JSON]:
        if self.fail is not None:
            raise self.fail
        self.writes.append((verb, path, body))
        return 200, {"kind": "Status", "metadata": {}, "message": "ok"}


# -- findings built by hand: pods -------------------------------------------------------------


def pod_finding(blocker: Blocker, node: str = "worker-3") -> Finding:
    return Finding(
        kind="Pod",
        api_version="v1",
        name="web-0",
        namespace="shop",
        uid="uid-pod",
        deletion_timestamp="2026-03-01T10:00:00Z",
        overdue_seconds=7200,
        terminating_seconds=7230,
        finalizers=[],
        blockers=[blocker],
        node=node,
    )


POD_REF = ObjectRef("Pod", "web-0", "shop", "v1")
NODE_GONE = Blocker(
    NODE_MISSING,
    "node worker-3 no longer exists",
    (Evidence("gone", POD_REF),),
    confidence=CERTAIN,
    basis="the API has no Node worker-3",
)
NODE_DOWN = Blocker(
    NODE_NOT_READY,
    "node worker-3 NotReady for 2h",
    (Evidence("down"),),
    confidence=CERTAIN,
    basis="the node's Lease not renewed for 2h",
)


def pod_object(node: str = "worker-3") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "shop", "uid": "uid-pod"},
        "spec": {"nodeName": node},
    }


def attachment(node: str) -> JSON:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "csi-1234"},
        "spec": {"nodeName": node, "attacher": "ebs.csi.aws.com"},
    }


def test_pod_on_a_missing_node_is_force_deleted_only_without_attachments() -> None:
    [section] = plan([pod_finding(NODE_GONE)])
    [proposal] = section.steps
    assert isinstance(proposal, Proposal)
    assert proposal.action == FORCE_DELETE_POD
    assert [(c.kind, c.path) for c in proposal.checks] == [
        (ABSENT, "/api/v1/nodes/worker-3"),
        (NONE_NAMED, "/apis/storage.k8s.io/v1/volumeattachments"),
    ]

    cluster = FakeCluster([pod_object()])
    [step] = observe([section], cluster)[0].steps
    assert isinstance(step, Planned)
    assert step.request.body["gracePeriodSeconds"] == 0
    assert step.request.body["preconditions"] == {"uid": "uid-pod", "resourceVersion": "101"}

    attached = FakeCluster([pod_object(), attachment("worker-3")])
    [refused] = observe([section], attached)[0].steps
    assert isinstance(refused, Refusal)
    assert "found: csi-1234" in refused.reason

    elsewhere = FakeCluster([pod_object(), attachment("worker-9")])
    assert isinstance(observe([section], elsewhere)[0].steps[0], Planned)


def test_node_that_came_back_or_is_unreadable_is_no_proof() -> None:
    [section] = plan([pod_finding(NODE_GONE)])
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-3"}}
    [back] = observe([section], FakeCluster([pod_object(), node]))[0].steps
    assert isinstance(back, Refusal) and "Node worker-3 does not exist: exists" in back.reason
    cluster = FakeCluster([pod_object()])
    cluster.forbidden.add("/api/v1/nodes/worker-3")
    [hidden] = observe([section], cluster)[0].steps
    assert isinstance(hidden, Refusal) and "unreadable: forbidden" in hidden.reason


def test_out_of_service_taint_only_with_node_down() -> None:
    [inferred] = plan([pod_finding(NODE_DOWN)])
    [refusal] = inferred.steps
    assert isinstance(refusal, Refusal) and "--node-down worker-3" in refusal.reason
    [told] = plan([pod_finding(NODE_DOWN)], node_down=("worker-3",))
    [proposal] = told.steps
    assert isinstance(proposal, Proposal) and proposal.action == TAINT_OUT_OF_SERVICE
    assert proposal.target.path == "/api/v1/nodes/worker-3"
    assert plan([pod_finding(NODE_DOWN)], node_down=("worker-4",))[0].steps[0] == refusal


@pytest.mark.parametrize("blocker_type", [RUNTIME_UNAVAILABLE, LIFECYCLE_HOOK])
def test_node_side_causes_of_a_live_node_are_never_written(blocker_type: str) -> None:
    """The runtime down under a live kubelet, a hung hook: the containers still run, so neither
    a force delete nor the taint is planned, even when the operator says the node is down."""
    blocker = Blocker(blocker_type, "on worker-3", (Evidence("seen", POD_REF),))
    [section] = plan([pod_finding(blocker)], node_down=("worker-3",))
    [refusal] = section.steps
    assert isinstance(refusal, Refusal)
    assert "still run" in refusal.reason or "ended there" in refusal.reason


def test_taint_refused_once_the_node_is_ready() -> None:
    [section] = plan([pod_finding(NODE_DOWN)], node_down=("worker-3",))
    ready: JSON = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-3"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    [step] = observe([section], FakeCluster([ready]))[0].steps
    assert isinstance(step, Refusal) and "is not Ready: Ready" in step.reason
    down = copy.deepcopy(ready)
    down["status"]["conditions"][0]["status"] = "Unknown"
    [taint] = observe([section], FakeCluster([down]))[0].steps
    assert isinstance(taint, Planned)
    assert taint.request.body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "101"},
        {
            "op": "add",
            "path": "/spec/taints",
            "value": [
                {
                    "key": "node.kubernetes.io/out-of-service",
                    "value": "nodeshutdown",
                    "effect": "NoExecute",
                }
            ],
        },
    ]


def test_not_stuck_objects_get_no_plan() -> None:
    waiting = replace(pod_finding(NODE_GONE), overdue_seconds=-20)
    assert plan([waiting]) == []


# -- findings from the explainers: namespaces --------------------------------------------------


def namespace_findings(name: str) -> tuple[list[Finding], list[JSON]]:
    s = scenario(name)
    finding = explain_namespace(s.namespace, s.view)
    return [finding], s.data["objects"]


def test_unavailable_apiservice_whose_namespace_lives_is_refused() -> None:
    """metrics-server's Service is still in kube-system (no endpoints): not an orphan."""
    findings, objects = namespace_findings("discovery-failure")
    [section] = plan(findings, resolve=resolve)
    [proposal] = [s for s in section.steps if isinstance(s, Proposal)]
    assert proposal.action == DELETE_APISERVICE
    assert [c.kind for c in proposal.checks] == [ABSENT, GONE_OR_TERMINATING]
    [observed] = observe([section], FakeCluster(objects))
    [refused] = [s for s in observed.steps if isinstance(s, Refusal) and s.target]
    assert "Service kube-system/metrics-server does not exist: exists" in refused.reason
    assert planned([observed]) == []


def orphaned_apiservice(objects: list[JSON]) -> list[JSON]:
    """The same cluster once metrics-server and its namespace are uninstalled."""
    gone = {"Service", "EndpointSlice"}
    return [o for o in objects if o["kind"] not in gone]


def test_orphaned_apiservice_is_deleted_with_its_spec_recorded() -> None:
    findings, objects = namespace_findings("discovery-failure")
    [observed] = observe(plan(findings, resolve=resolve), FakeCluster(orphaned_apiservice(objects)))
    [action] = planned([observed])
    assert action.proposal.action == DELETE_APISERVICE
    assert action.request.verb == "DELETE"
    assert (
        action.request.path == "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io"
    )
    assert action.recreate is not None and "status" not in action.recreate
    assert action.recreate["spec"]["service"]["name"] == "metrics-server"


def test_an_orphaned_apiservice_whose_availability_is_unknown_is_not_deleted() -> None:
    """A cluster-wide type passes the same gate on proof: Available=Unknown is only likely, so
    even with its Service and namespace gone `fix` writes nothing for it."""
    objects = copy.deepcopy(scenario("discovery-failure").data["objects"])
    [metrics] = [o for o in objects if o["metadata"]["name"] == "v1beta1.metrics.k8s.io"]
    metrics["status"]["conditions"][0].update(status="Unknown", reason="FailedDiscoveryCheck")
    unknown = scenario("discovery-failure", objects=objects)
    finding = explain_namespace(unknown.namespace, unknown.view)
    [section] = plan([finding], resolve=resolve)
    [refusal] = [s for s in section.steps if s.blocker.type == APISERVICE_UNAVAILABLE]
    assert isinstance(refusal, Refusal)
    assert refusal.reason == (
        "not certain (likely: the APIService's Available=Unknown condition): "
        "fix acts only on certain blockers"
    )
    assert planned(observe([section], FakeCluster(orphaned_apiservice(objects)))) == []


def test_webhook_of_a_gone_operator_is_deleted_and_the_running_one_refused() -> None:
    findings, objects = namespace_findings("webhook-old-release")
    sections = plan(findings, resolve=resolve)
    # judged when the snapshot was taken: cert-manager's Lease was renewed 10s before
    [observed] = observe(
        sections, FakeCluster(objects), now=scenario("webhook-old-release").view.now
    )
    [action] = planned([observed])
    assert action.proposal.action == DELETE_WEBHOOK_CONFIGURATION
    assert action.proposal.target.name == "policy-validation"
    refused = [s for s in observed.steps if isinstance(s, Refusal)]
    [challenge] = [r for r in refused if r.blocker.type == FINALIZER]
    assert "found: kube-system/cert-manager-controller" in challenge.reason


def cert_manager_finding(evidence: tuple[Evidence, ...] = ()) -> Finding:
    ref = ObjectRef("Challenge", "tls-1", "legacy", "acme.cert-manager.io/v1")
    fact = Evidence(
        "has finalizer",
        ref,
        {"finalizer": "acme.cert-manager.io/finalizer", "index": 0},
        about=Subject(FINALIZER_ON, "acme.cert-manager.io/finalizer", holder=ref),
    )
    confidence, basis = finalizer_confidence((fact, *evidence))
    blocker = Blocker(
        FINALIZER,
        "finalizer acme (owner: cert-manager)",
        (fact, *evidence),
        confidence=confidence,
        basis=basis,
    )
    return replace(
        pod_finding(blocker),
        kind="Challenge",
        api_version="acme.cert-manager.io/v1",
        name="tls-1",
        namespace="legacy",
    )


def test_finalizer_removed_only_when_every_sign_of_its_owner_is_absent() -> None:
    [section] = plan([cert_manager_finding()], resolve=resolve)
    [proposal] = section.steps
    assert isinstance(proposal, Proposal) and proposal.action == REMOVE_FINALIZER
    assert [(c.path, c.patterns) for c in proposal.checks] == [
        ("/apis/coordination.k8s.io/v1/leases", ("cert-manager-controller",)),
        ("/apis/apps/v1/deployments", ("*cert-manager*",)),
        (
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            ("*cert-manager*",),
        ),
        (
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
            ("*cert-manager*",),
        ),
    ]
    challenge = {
        "apiVersion": "acme.cert-manager.io/v1",
        "kind": "Challenge",
        "metadata": {
            "name": "tls-1",
            "namespace": "legacy",
            "finalizers": ["other.example.com/x", "acme.cert-manager.io/finalizer"],
        },
    }
    [step] = observe([section], FakeCluster([challenge]))[0].steps
    assert isinstance(step, Planned)
    assert step.request.body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "101"},
        {"op": "test", "path": "/metadata/finalizers/1", "value": "acme.cert-manager.io/finalizer"},
        {"op": "remove", "path": "/metadata/finalizers/1"},
    ]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cert-manager-webhook", "namespace": "cert-manager"},
    }
    deployments = Resource("apps", "v1", "deployments", "Deployment")

    def with_deployments(api_version: str, kind: str) -> Resource | None:
        return deployments if kind == "Deployment" else resolve(api_version, kind)

    cluster = FakeCluster([challenge, deployment], with_deployments)
    [refused] = observe([section], cluster)[0].steps
    assert isinstance(refused, Refusal)
    assert "found: cert-manager/cert-manager-webhook" in refused.reason
    cluster = FakeCluster([challenge])
    cluster.forbidden.add("/apis/apps/v1/deployments")
    [hidden] = observe([section], cluster)[0].steps
    assert isinstance(hidden, Refusal) and "unreadable: forbidden" in hidden.reason


@pytest.mark.parametrize(
    ("finalizer", "why"),
    [
        ("example.com/mystery", "owner of example.com/mystery unknown"),
        ("batch.kubernetes.io/job-tracking", "owned by Kubernetes itself"),
        ("customresourcecleanup.apiextensions.k8s.io", "owned by Kubernetes itself"),
        ("finalizer.keda.sh", "no known installation names"),
    ],
)
def test_finalizers_whose_owner_cannot_be_proven_gone_are_refused(finalizer: str, why: str) -> None:
    fact = Evidence("has", POD_REF, about=Subject(FINALIZER_ON, finalizer, holder=POD_REF))
    held = Blocker(FINALIZER, "f", (fact,), confidence=CERTAIN, basis="metadata.finalizers")
    [section] = plan([pod_finding(held)])
    [refusal] = section.steps
    assert isinstance(refusal, Refusal) and why in refusal.reason


def test_unreadable_liveness_signal_refuses_the_finalizer() -> None:
    failed = Evidence("could not read leases: forbidden", failed_read=True)
    [section] = plan([cert_manager_finding((failed,))], resolve=resolve)
    [refusal] = section.steps
    assert isinstance(refusal, Refusal)
    assert "a liveness signal could not be read" in refusal.reason


def test_a_shared_cause_is_planned_once() -> None:
    findings, _ = namespace_findings("discovery-failure")
    second = replace(findings[0], name="other", uid="uid-other")
    sections = plan([findings[0], second], resolve=resolve)
    first = [s for s in sections[0].steps if isinstance(s, Proposal)]
    assert [p.action for p in first] == [DELETE_APISERVICE]
    assert not any(isinstance(s, Proposal) for s in sections[1].steps)
    assert [s.what for s in sections[1].shared] == ["delete APIService v1beta1.metrics.k8s.io"]


def test_a_shared_step_is_worded_as_it_turned_out_where_it_is_listed() -> None:
    """metrics-server's Service still exists: the APIService's deletion is refused under the
    first namespace, so the second must not say it will be deleted."""
    findings, objects = namespace_findings("discovery-failure")
    second = replace(findings[0], name="other", uid="uid-other")
    observed = observe(plan([findings[0], second], resolve=resolve), FakeCluster(objects))
    assert planned(observed) == []
    [shared] = observed[1].shared
    assert shared.what.startswith("refused apiservice-unavailable: APIService v1beta1.metrics")
    orphaned = observe(
        plan([findings[0], second], resolve=resolve), FakeCluster(orphaned_apiservice(objects))
    )
    assert [s.what for s in orphaned[1].shared] == ["delete APIService v1beta1.metrics.k8s.io"]


# -- checks, digest, apply ---------------------------------------------------------------------


def test_judge() -> None:
    gone = Check("x", GONE_OR_TERMINATING, "/p")
    assert judge(gone, None).holds
    assert judge(gone, {"metadata": {"deletionTimestamp": "t"}}).observed == "terminating"
    assert not judge(gone, {"metadata": {}}).holds
    named = Check("y", NONE_NAMED, "/l", "metadata.name", ("cert-manager*",))
    assert judge(named, [{"metadata": {"name": "other"}}]).holds
    found = judge(named, [{"metadata": {"name": "cert-manager-cainjector", "namespace": "cm"}}])
    assert (found.holds, found.observed) == (False, "found: cm/cert-manager-cainjector")


def leader_lease(renew: str | None, duration: int = 60) -> JSON:
    spec: JSON = {
        "holderIdentity": "cert-manager-5d7f97b46d-8jkqz",
        "leaseDurationSeconds": duration,
    }
    if renew is not None:
        spec["renewTime"] = renew
    return {
        "metadata": {"name": "cert-manager-controller", "namespace": "kube-system"},
        "spec": spec,
    }


def test_a_lease_not_renewed_for_many_durations_is_evidence_of_absence() -> None:
    """helm uninstall leaves cert-manager's Lease in kube-system: renewed long ago, it shows
    when cert-manager last ran, not that it runs; fix says when."""
    check = no_live_lease(("cert-manager-controller",), "cert-manager")
    at = datetime(2026, 11, 24, 8, 0, tzinfo=timezone.utc)
    stale = judge(check, [leader_lease("2026-11-24T06:00:00.000000Z")], at)
    assert stale.holds
    assert (
        stale.observed
        == "stale: kube-system/cert-manager-controller last renewed 2026-11-24T06:00:00.000000Z"
    )
    # renewed within 10 durations (and 15 minutes): a leader may still run
    for renew, duration in (
        ("2026-11-24T07:59:30Z", 60),
        ("2026-11-24T07:50:00Z", 15),
        ("2026-11-24T07:00:00Z", 600),
    ):
        live = judge(check, [leader_lease(renew, duration)], at)
        assert (live.holds, live.observed) == (False, "found: kube-system/cert-manager-controller")
    # a Lease that does not say when it was renewed cannot prove absence
    assert not judge(check, [leader_lease(None)], at).holds
    assert judge(check, [{"metadata": {"name": "other"}, "spec": {}}], at).observed == "none"


def test_a_lease_left_behind_no_longer_blocks_the_finalizer_forever() -> None:
    """The same snapshot a day later: cert-manager's Lease was last renewed then; with no
    Deployment or webhook of cert-manager, its finalizer is removed."""
    findings, objects = namespace_findings("webhook-old-release")
    later = scenario("webhook-old-release").view.now + timedelta(days=1)
    [observed] = observe(plan(findings, resolve=resolve), FakeCluster(objects), later)
    removals = [a for a in planned([observed]) if a.proposal.action == REMOVE_FINALIZER]
    [removal] = removals
    assert removal.proposal.finalizer == "acme.cert-manager.io/finalizer"
    [lease] = [o for o in removal.outcomes if o.check.path == LEASES.path()]
    assert lease.observed.startswith(
        "stale: kube-system/cert-manager-controller last renewed 2026-"
    )


def planned_pod(cluster: FakeCluster) -> list[Planned]:
    return planned(observe(plan([pod_finding(NODE_GONE)]), cluster))


def test_digest_binds_the_resource_version() -> None:
    cluster = FakeCluster([pod_object()])
    before = digest(planned_pod(cluster))
    assert before == digest(planned_pod(cluster))
    cluster.objects["/api/v1/namespaces/shop/pods/web-0"]["metadata"]["resourceVersion"] = "999"
    assert digest(planned_pod(cluster)) != before


def run_apply(
    cluster: FakeCluster, actions: list[Planned], confirm: bool = True
) -> tuple[list[str], int, str]:
    err = io.StringIO()
    results, code = apply_plan(
        actions, cluster, cluster.write, AuditLog(err, None), ACTOR, "d1", lambda _a: confirm
    )
    return [r.result for r in results], code, err.getvalue()


def test_apply_writes_after_reading_everything_again() -> None:
    cluster = FakeCluster([pod_object()])
    actions = planned_pod(cluster)
    results, code, err = run_apply(cluster, actions)
    assert (results, code) == ([DONE], 0)
    assert [w[:2] for w in cluster.writes] == [("DELETE", "/api/v1/namespaces/shop/pods/web-0")]
    record = json.loads(err.removeprefix("audit: "))
    assert record["user"] == "admin" and record["result"] == DONE and record["digest"] == "d1"


def test_apply_stops_when_the_target_changed_after_the_plan() -> None:
    cluster = FakeCluster([pod_object()])
    actions = planned_pod(cluster)
    cluster.objects["/api/v1/namespaces/shop/pods/web-0"]["metadata"]["resourceVersion"] = "999"
    results, code, _ = run_apply(cluster, actions)
    assert (results, code, cluster.writes) == ([CHANGED], 3, [])


def test_apply_stops_when_a_fact_changed_after_the_plan() -> None:
    cluster = FakeCluster([pod_object()])
    actions = planned_pod(cluster)
    cluster.objects["/api/v1/nodes/worker-3"] = {"metadata": {"name": "worker-3"}}
    results, code, err = run_apply(cluster, actions)
    assert (results, code, cluster.writes) == ([CHANGED], 3, [])
    assert "Node worker-3 does not exist: was absent, now exists" in err


def test_apply_without_the_name_typed_writes_nothing() -> None:
    cluster = FakeCluster([pod_object()])
    results, code, _ = run_apply(cluster, planned_pod(cluster), confirm=False)
    assert (results, code, cluster.writes) == ([NOT_CONFIRMED], 3, [])


@pytest.mark.parametrize(
    ("error", "result", "code"),
    [
        (Forbidden('cannot delete resource "pods"', 403, "Forbidden"), FORBIDDEN, 1),
        (ApiError("the test op failed", 422, "Invalid"), CHANGED, 3),
        (ApiError("Precondition failed: UID in precondition", 409, "Conflict"), CHANGED, 3),
        (ApiError("etcd down", 500, "InternalError"), "failed", 1),
    ],
)
def test_apply_maps_server_refusals(error: ApiError, result: str, code: int) -> None:
    cluster = FakeCluster([pod_object()])
    actions = planned_pod(cluster)
    cluster.fail = error
    assert run_apply(cluster, actions)[:2] == ([result], code)


# -- golden renderings -------------------------------------------------------------------------


def golden_plan() -> tuple[list[Any], str]:
    """A namespace whose webhook's operator is gone and a pod on a deleted node."""
    findings, objects = namespace_findings("webhook-old-release")
    cluster = FakeCluster([*objects, pod_object()])
    now = scenario("webhook-old-release").view.now  # cert-manager's Lease is fresh then
    sections = observe(plan([*findings, pod_finding(NODE_GONE)], resolve=resolve), cluster, now)
    return sections, digest(planned(sections))


def test_plan_text_golden() -> None:
    sections, code = golden_plan()
    text = plan_text(sections, code, Style(color=False))
    # the command that plans both a namespace and a pod of another namespace (`fix ns legacy`
    # never plans shop/web-0: its --confirm line would not carry out this plan)
    text += dry_run_footer(code, len(planned(sections)), "kubectl terminating fix all -A")
    assert_golden("fix/plan.txt", text)


def test_plan_json_golden() -> None:
    sections, code = golden_plan()
    assert_golden("fix/plan.json", plan_json(sections, code, applied=False))


# -- command line ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fix", "pods", "--confirm", "abc"], "--confirm only applies with --apply"),
        (["fix", "secrets"], "Invalid value for '(pods|ns|all)'"),
        (["fix", "all", "web-0"], "`all` takes no names"),
    ],
)
def test_fix_usage_errors(args: list[str], message: str) -> None:
    from click.testing import CliRunner

    from kubectl_terminating.cli import cli

    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert message in result.output


def _reworded(finding: Finding) -> Finding:
    """The same finding with every evidence line reworded, its fields dropped and its order
    reversed: what `fix` plans from must not change (it reads typed subjects)."""
    blockers = [
        replace(
            b,
            evidence=tuple(
                replace(e, message=f"reworded {i}", fields={})
                for i, e in enumerate(reversed(b.evidence))
            ),
        )
        for b in finding.blockers
    ]
    children = [_reworded(c) for c in finding.children]
    return replace(finding, blockers=blockers, children=children)


def _plan_shape(sections: list[Section]) -> list[tuple[str, ...]]:
    return [
        (s.action, s.target.path, s.finalizer)
        if isinstance(s, Proposal)
        else ("refused", s.blocker.type, s.target.path if s.target else "")
        for section in sections
        for s in section.steps
    ]


@pytest.mark.parametrize(
    ("name", "proposes"),
    [
        ("discovery-failure", True),  # an APIService and its Service
        ("webhook-old-release", True),  # webhook configurations and their missing Service
        ("own-finalizers", False),  # spec and metadata finalizers, refused with their reasons
        ("operator-gone", False),
    ],
)
def test_the_plan_reads_typed_subjects_not_evidence_wording_fields_or_order(
    name: str, proposes: bool
) -> None:
    findings, _ = namespace_findings(name)
    before = _plan_shape(plan(findings, resolve=resolve))
    assert before and any(step[0] != "refused" for step in before) == proposes
    assert _plan_shape(plan([_reworded(f) for f in findings], resolve=resolve)) == before


def test_the_audit_file_keeps_earlier_runs(tmp_path: Path) -> None:
    """--audit-file is a trail: each run appends its lines after those of earlier runs."""
    path = tmp_path / "audit.jsonl"
    path.write_text('{"run":0}\n')
    for run in (1, 2):
        log = AuditLog(io.StringIO(), str(path))
        log.write({"run": run, "line": 1})
        log.write({"run": run, "line": 2})
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == [{"run": 0}] + [{"run": r, "line": n} for r in (1, 2) for n in (1, 2)]


class Typed(io.StringIO):
    """stdin as a terminal (the prompt may ask) or not."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_apply_goes_ahead_only_on_the_digest_shown_or_at_a_terminal() -> None:
    """The digest check of `fix --apply --confirm DIGEST` (e2e: test_fix.py
    test_digest_from_before_a_change_is_refused): the plan shown is the plan applied."""
    shown = digest(planned_pod(FakeCluster([pod_object()])))
    refused = _confirmation_refused(FixOptions(apply=True, confirm="0123abcd"), shown, Typed(True))
    assert refused == (
        f"the plan changed since digest 0123abcd was shown (it is now {shown}); "
        "run the dry run again and check it"
    )
    assert _confirmation_refused(FixOptions(apply=True, confirm=shown), shown, Typed(False)) == ""
    unconfirmed = FixOptions(apply=True)
    assert _confirmation_refused(unconfirmed, shown, Typed(True)) == ""  # the prompt asks
    assert _confirmation_refused(unconfirmed, shown, Typed(False)) == (
        "--apply without --confirm DIGEST and no terminal to confirm on"
    )


@pytest.mark.parametrize("certain", [pod_finding(NODE_GONE), cert_manager_finding()])
def test_a_blocker_identical_but_for_a_likely_confidence_gets_no_proposal(certain: Finding) -> None:
    """One gate on proof: `fix` writes only for a certain blocker, whatever its type."""
    [sure] = plan([certain], resolve=resolve)[0].steps
    assert isinstance(sure, Proposal)
    doubted = replace(certain.blockers[0], confidence=LIKELY, basis="a witness of others' state")
    [refusal] = plan([replace(certain, blockers=[doubted])], resolve=resolve)[0].steps
    assert isinstance(refusal, Refusal)
    assert refusal.reason.startswith("not certain (likely: a witness of others' state)")
