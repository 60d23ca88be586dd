"""PodFacts have one constructor: whoever builds them (explain_pod, a preflight judge, a test)
gets the node, phase and containers from the pod itself. They once read `finding.node`, which
only explain_pod filled: facts built anywhere else silently had no node."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

from kubectl_terminating.explain.pod_facts import (
    NODE_UNKNOWN,
    SPEC_UNKNOWN,
    PodFacts,
    Work,
    read_ahead,
)
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import Resource
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import EVERYTHING, Selectors
from tests.unit.builders import (
    PODS_NOW,
    healthy_cluster,
    pod_fixture,
    terminated,
    types,
    web_0_events,
)
from tests.unit.builders import (
    explain_pod_among as explain,
)


def test_facts_built_outside_explain_pod_know_the_pods_node() -> None:
    pod = pod_fixture("pod-web-0")
    facts = PodFacts(pod, StaticView(healthy_cluster(), PODS_NOW))
    assert facts.node_name == "worker-1"
    assert facts.finding.phase == pod["status"]["phase"]
    assert [c["name"] for c in facts.finding.containers] == ["app"]
    # the node's health is read for that node, so the kubelet's checks can run
    assert facts.node.node is not None and facts.kubelet_pending


def test_a_pasted_pod_without_spec_takes_its_node_from_the_kubelets_events() -> None:
    pod = copy.deepcopy(pod_fixture("pod-web-0"))
    del pod["spec"]
    view = StaticView([*healthy_cluster(), *web_0_events()], PODS_NOW)
    facts = PodFacts(pod, view)
    assert (facts.node_name, facts.finding.unknowns) == ("worker-1", [SPEC_UNKNOWN])
    alone = PodFacts(pod, StaticView([], PODS_NOW))
    assert (alone.node_name, alone.finding.unknowns) == ("", [NODE_UNKNOWN])


def test_a_stale_node_lost_does_not_outrank_a_ready_node() -> None:
    """The node controller's NodeLost stays in the pod's status after its node came back:
    the Node's Ready=True and fresh Lease speak, so no node-not-ready (nor its taint and force
    delete); what holds the pod is read on the live node."""
    pod = terminated(pod_fixture("pod-web-0"), 143, "Error", "2026-01-01T11:49:45Z")
    pod["status"].update(reason="NodeLost", message="Node worker-1 which was running pod web-0 "
                         "is unresponsive")  # fmt: skip
    finding = explain(pod, healthy_cluster())
    assert types(finding) == ["volumes-not-reclaimed"]
    commands = " ".join(r.command or "" for b in finding.blockers for r in b.remedy)
    assert "out-of-service" not in commands and "--force" not in commands


def test_a_terminal_phase_written_before_the_deletion_is_not_the_final_status() -> None:
    """phase Failed with status.observedGeneration behind metadata.generation was written
    before the kubelet processed the deletion: not its final status, so the volumes are not
    taken as the step left (the node no longer lists them in use)."""
    pod = terminated(pod_fixture("pod-web-0"), 143, "Error", "2026-01-01T11:49:45Z")
    pod["metadata"]["generation"] = 2
    pod["status"].update(phase="Failed", observedGeneration=1)
    node = pod_fixture("node-worker-1")
    node["status"]["volumesInUse"] = []
    cluster = [node, *healthy_cluster("node-worker-1")]
    main = explain(pod, cluster).blockers[0]
    assert main.confidence == "possible"
    assert "final status is written" not in main.evidence[0].message
    assert PodFacts(pod, StaticView(cluster, PODS_NOW)).final_status is None
    pod["status"]["observedGeneration"] = 2  # twin: written after the deletion
    assert PodFacts(pod, StaticView(cluster, PODS_NOW)).final_status is True
    assert explain(pod, cluster).blockers[0].confidence == "likely"


class _Recording(StaticView):
    """A view that notes the kinds listed through it."""

    def __init__(self, objects: list[JSON]) -> None:
        super().__init__(objects, PODS_NOW)
        self.listed: list[str] = []

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        self.listed.append(resource.plural)
        return super().list(resource, namespace, selectors)


def _serially(function: Callable[[Work], None], work: Sequence[Work]) -> None:
    for item in work:
        function(item)


def test_the_webhooks_are_read_ahead_only_for_pods_that_still_need_a_write() -> None:
    """Every pod still waiting for its kubelet (or a finalizer's removal) has the webhooks on
    those writes checked, so their configurations are read before the pods are explained; a
    pod whose kubelet already confirmed, with no finalizer, needs no write: nothing is read
    for it that its explanation would not read."""
    waiting = pod_fixture("pod-web-0")
    view = _Recording(healthy_cluster())
    read_ahead(view, [waiting], _serially)
    webhooks = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
    assert [kind for kind in view.listed if kind in webhooks] == webhooks
    confirmed = copy.deepcopy(waiting)
    confirmed["metadata"]["deletionGracePeriodSeconds"] = 0
    confirmed["metadata"].pop("finalizers", None)
    view = _Recording(healthy_cluster())
    read_ahead(view, [confirmed], _serially)
    assert not set(view.listed) & set(webhooks)
    explain_pod(confirmed, view)
    assert not set(view.listed) & set(webhooks)  # what its explanation reads: none either
