"""A pod whose DRA claim the kubelet cannot unprepare (its driver not registered on the node):
`resource-claim`, not volume teardown. The claim and the slice are the real v1.36 server's
objects (tests/fixtures/pods/resource*.json)."""

from __future__ import annotations

from dataclasses import replace

from kubectl_terminating.causes import RESOURCE_CLAIM, TEARDOWN_UNFINISHED
from kubectl_terminating.fix.plan import Refusal, plan
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.nodeevidence import apply_node_evidence
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.summary import group_by_cause
from tests.unit.builders import PODS_NOW, healthy_cluster, pod_fixture, terminated
from tests.unit.builders import explain_pod_among as explained
from tests.unit.golden import assert_golden
from tests.unit.test_render_pods import PLAIN

DRIVER = "gpu.example.com"


def dra_pod(**status: object) -> JSON:
    """web-0 with its container exited, using the claim web-0-gpu."""
    pod = terminated(pod_fixture("pod-web-0"), 0, "Completed", "2026-01-01T11:49:45Z")
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]  # the projected token volume only
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "web-0-gpu"}]
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    pod["status"].update(status)
    return pod


def claim() -> JSON:
    return pod_fixture("resourceclaim-web-0-gpu")


def other_node_slice() -> JSON:
    return pod_fixture("resourceslice-worker-2-gpu")


def on_worker_1() -> JSON:
    found = other_node_slice()
    found["metadata"]["name"] = "worker-1-gpu.example.com-4f8nd"
    found["spec"].update(nodeName="worker-1", pool={**found["spec"]["pool"], "name": "worker-1"})
    return found


def stuck(pod: JSON | None = None, *objects: JSON) -> Finding:
    extra = objects or (claim(), other_node_slice())
    return explained(pod or dra_pod(), [*healthy_cluster(), *extra])


def test_a_claim_the_kubelet_cannot_unprepare_is_named_not_volume_teardown() -> None:
    finding = stuck()
    assert [b.type for b in finding.blockers] == [RESOURCE_CLAIM]
    b = finding.blockers[0]
    assert b.summary == (
        f"DRA driver {DRIVER} not registered on worker-1: claim web-0-gpu cannot be unprepared"
    )
    claim_evidence, slices, phase = b.evidence
    assert claim_evidence.object is not None and claim_evidence.object.kind == "ResourceClaim"
    assert claim_evidence.fields["devices"] == ["worker-1/gpu-0"]
    assert slices.fields == {"driver": DRIVER, "nodeName": "worker-1", "resourceSlices": 0}
    assert phase.fields == {"phase": "Running"}
    commands = [r.command for r in b.remedy]
    assert commands[0] == "kubectl get pods -A -o wide --field-selector spec.nodeName=worker-1"
    assert commands[1] == (
        f"kubectl get resourceslices --field-selector spec.driver={DRIVER},spec.nodeName=worker-1"
    )
    assert [r.destructive for r in b.remedy] == [False, False, False, True]
    assert b.remedy[-1].when is not None and "drain" in b.remedy[-1].when


def test_a_claim_made_from_a_template_is_found_through_the_pod_status() -> None:
    pod = dra_pod(resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "web-0-gpu"}])
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    assert [b.type for b in stuck(pod).blockers] == [RESOURCE_CLAIM]


def test_no_claim_blocker_where_the_evidence_does_not_prove_one() -> None:
    registered = stuck(None, claim(), on_worker_1())  # the driver has its slice on the node
    terminal = stuck(dra_pod(phase="Failed"))  # the kubelet is past unpreparing
    released = claim()
    released["status"]["reservedFor"] = []
    unreserved = stuck(None, released, other_node_slice())
    gone = stuck(None, other_node_slice())  # the claim was deleted
    for finding in (registered, terminal, unreserved, gone):  # no volume in view either
        assert [b.type for b in finding.blockers] == [TEARDOWN_UNFINISHED]


def test_grouped_by_driver_and_fix_refuses_with_the_reason() -> None:
    first = stuck()
    second = replace(first, name="web-1", uid="uid-web-1", node="worker-2")
    [group] = group_by_cause([first, second])
    assert (group.type, group.subject_kind, group.subjects) == (
        RESOURCE_CLAIM,
        "DRADriver",
        (DRIVER,),
    )
    [section, _] = plan([first, second])
    refused = [s for s in section.steps if isinstance(s, Refusal)]
    assert refused and all("unprepare the claim's devices" in s.reason for s in refused)


def test_node_evidence_is_offered_and_the_generation_fork_applies() -> None:
    pod = dra_pod(observedGeneration=2)
    pod["metadata"]["generation"] = 2
    finding = stuck(pod)
    assert "the kubelet has processed the deletion" in finding.blockers[0].evidence[-1].message
    view = StaticView([pod, *healthy_cluster(), claim(), other_node_slice()], PODS_NOW)
    apply_node_evidence([(pod, finding)], view, None)
    assert any("node evidence not read" in r.description for r in finding.blockers[0].remedy)


def test_explain_resource_claim() -> None:
    finding = stuck()
    assert_golden("pods/explain-resource-claim.txt", explain_text([finding], PLAIN, json_extras))


def test_a_claim_made_for_extended_resources_is_found_through_the_pod_status() -> None:
    """DRA extended resources (GA in 1.37): the container asks for `gpu.example.com/gpu` and the
    scheduler makes the claim; only status.extendedResourceClaimStatus names it."""
    mapping = {"containerName": "app", "resourceName": "example.com/gpu", "requestName": "c0-r0"}
    pod = dra_pod(
        extendedResourceClaimStatus={"resourceClaimName": "web-0-gpu", "requestMappings": [mapping]}
    )
    del pod["spec"]["resourceClaims"]
    pod["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "1"}}
    finding = stuck(pod)
    assert [b.type for b in finding.blockers] == [RESOURCE_CLAIM]
    assert "claim web-0-gpu cannot be unprepared" in finding.blockers[0].summary


def test_a_driver_that_skips_unprepare_holds_nothing() -> None:
    """Every device of the driver skips NodeUnprepareResources (DRAOptionalNodeOperations): the
    kubelet makes no call to it, so its plugin being gone from the node holds nothing."""
    skipping = claim()
    for result in skipping["status"]["allocation"]["devices"]["results"]:
        result["skipNodeOperations"] = ["NodePrepareResources", "NodeUnprepareResources"]
    assert RESOURCE_CLAIM not in [
        b.type for b in stuck(None, skipping, other_node_slice()).blockers
    ]
    everything = claim()
    for result in everything["status"]["allocation"]["devices"]["results"]:
        result["skipNodeOperations"] = ["*"]
    assert RESOURCE_CLAIM not in [
        b.type for b in stuck(None, everything, other_node_slice()).blockers
    ]
