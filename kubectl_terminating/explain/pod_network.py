"""The pod's network cannot be torn down: the CNI plugin's DEL fails (a `FailedKillPod` event),
so the runtime never removes the sandbox (docs/explainers.md, `network-teardown`).
"""

from __future__ import annotations

import shlex

from kubectl_terminating.catalogue import evidence
from kubectl_terminating.causes import CERTAIN, NETWORK_TEARDOWN
from kubectl_terminating.explain.common import pods_on_node, text
from kubectl_terminating.explain.events import event_evidence, newest_saying
from kubectl_terminating.explain.pod_facts import PodFacts
from kubectl_terminating.explain.pod_node import evicting_taints, taint_evidence, untaint
from kubectl_terminating.model import JSON, Blocker, Evidence, Remedy

# what the runtime says when the CNI plugin's DEL fails, and the plugin it names: the catalogue's
# cni-teardown-failed entry (containerd's sandbox_stop.go)
TEARDOWN = "cni-teardown-failed"


def teardown_event(facts: PodFacts) -> JSON | None:
    """The newest event saying the runtime could not tear down the pod's network."""
    return newest_saying(facts.events, (TEARDOWN,))


def explain_network(facts: PodFacts) -> list[Blocker]:
    if not facts.kubelet_overdue:
        return []
    event = teardown_event(facts)
    if event is None:
        return []
    found = evidence.name_in(TEARDOWN, "plugin", text(event.get("message")))
    plugin = f"CNI plugin {found}" if found else "the CNI plugin"
    node = shlex.quote(facts.node_name)
    # a NoExecute taint evicts the CNI agent (a DaemonSet pod) with the workloads
    taints = evicting_taints(facts.node.node)
    agent = f"the agent of {plugin}"
    tainted = (
        [taint_evidence(facts.node_name, taints, f"{agent} with them unless it tolerates it")]
        if taints
        else []
    )
    untainted = [untaint(facts.node_name, taints, agent)] if taints else []
    return [
        Blocker(
            NETWORK_TEARDOWN,
            f"pod network teardown failing ({plugin})",
            (
                Evidence(
                    f"likely cause: {plugin} cannot delete the pod's network, so the runtime "
                    "cannot remove its sandbox",
                    facts.ref,
                ),
                event_evidence(event),
                *tainted,
            ),
            (
                *untainted,
                Remedy(
                    f"repair {plugin} on {facts.node_name} (its agent pod there, its config in "
                    "/etc/cni/net.d); the kubelet retries the teardown by itself",
                    pods_on_node(node),
                ),
                facts.kubelet_log("read the teardown error"),
                facts.force_delete(
                    "the CNI plugin cannot be repaired; the sandbox and its IP stay allocated on "
                    "the node until the runtime can remove them"
                ),
            ),
            confidence=CERTAIN,
            basis=f"the kubelet's {text(event.get('reason')) or 'event'} says the network "
            "teardown fails",
        )
    ]
