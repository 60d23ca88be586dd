"""PodFacts have one constructor: whoever builds them (explain_pod, a preflight judge, a test)
gets the node, phase and containers from the pod itself. They once read `finding.node`, which
only explain_pod filled: facts built anywhere else silently had no node."""

from __future__ import annotations

import copy

from kubectl_terminating.explain.pod_facts import NODE_UNKNOWN, SPEC_UNKNOWN, PodFacts
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import PODS_NOW, healthy_cluster, pod_fixture, web_0_events


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
