"""The containers are down, the pod stays, and nothing seen says which later step of the
kubelet's teardown hangs: `teardown-unfinished`, said as unknown rather than named.

After the containers (kubelet.go v1.36 SyncTerminatingPod) killPod stops the sandbox, the DRA
claims are unprepared and the final status written; then SyncTerminatedPod waits for the
volumes' unmount and removes the cgroups. Without an event, a volume or a claim in view, any of
them may be the one: say so, and what would tell.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from kubectl_terminating.causes import POSSIBLE, TEARDOWN_UNFINISHED
from kubectl_terminating.explain.common import spec_of, text
from kubectl_terminating.explain.events import event_evidence, newest_saying
from kubectl_terminating.explain.pod_facts import PodFacts
from kubectl_terminating.explain.pod_node import evicting_taints, taint_evidence, untaint
from kubectl_terminating.model import Blocker, Evidence, Remedy

# How the headline ends (pod_generation rewords it when the kubelet has not even seen the
# deletion, as it does volumes-not-reclaimed's).
STEP_UNKNOWN = "kubelet's teardown unfinished, which step is unknown"
# The steps left when the kubelet has not written its final status yet (PodFacts.final_status).
BEFORE_STATUS_STEPS = "the sandbox or the DRA claims: its final status is not written yet"
ALL_STEPS = "the sandbox, the DRA claims, the final status or the volumes"
# what an evicting taint takes from the node's teardown (pod_node.evicting_taints)
EVICTED_AGENTS = "the CSI node plugins, CNI agents and DRA plugins"
EVICTED = f"among them {EVICTED_AGENTS} the teardown needs, unless they tolerate it"

NO_STATUS = "the pod's status is not in the file (its containers, phase and reason)"
# What the kubelet (v1.36) logs for the pod on each retry, by step: SyncTerminatingPod's
# `error killing terminating pod` (the runtime's StopPodSandbox or a container), the DRA
# plugin manager's `plugin name X not found in the list of registered DRA plugins`, and the
# volume manager's unmount failures.
STEP_LOG_LINES = (
    ("error killing terminating pod", "the sandbox or a container (the runtime)"),
    ("not found in the list of registered DRA plugins", "a DRA claim's driver"),
    ("UnmountVolume.TearDown failed", "a volume's unmount"),
    ("some volumes have not been cleaned up", "the volumes"),
)


# the kubelet's word that it could not kill the sandbox (or a container): catalogue entries
KILL_FAILED = ("kill-pod-sandbox-failed", "kill-pod-failed")


def runtime_class(facts: PodFacts) -> str:
    """The pod's spec.runtimeClassName ("" for the node's default runtime)."""
    return text(spec_of(facts.pod).get("runtimeClassName"))


def _remedies(facts: PodFacts) -> tuple[Remedy, ...]:
    uid, ns = facts.uid, shlex.quote(facts.namespace)
    steps = [
        Remedy(
            "read the pod's events: FailedKillPod names the sandbox, FailedUnMount a volume, "
            "a DRA event its driver",
            f"kubectl get events -n {ns} --field-selector involvedObject.uid={uid}",
        ),
        Remedy(
            facts.on_node("is the pod's sandbox still there? listed: the sandbox step hangs"),
            f"crictl pods --label io.kubernetes.pod.uid={uid}",
        ),
        facts.log_errors("kubelet", uid, STEP_LOG_LINES),
    ]
    if runtime_class(facts):
        steps.append(
            Remedy(
                facts.on_node(
                    f"read the runtime's log for the sandbox of runtime class "
                    f"{runtime_class(facts)} (its shim: runsc, kata)"
                ),
                f"journalctl -u containerd --since -1h | grep {uid}",
            )
        )
    return tuple(steps)


def teardown_blocker(
    facts: PodFacts, exited: Evidence, done: str, extra: Sequence[Evidence] = ()
) -> Blocker:
    """The catch-all with no step in view: unfinished, which step unknown, at `possible`;
    `extra`: what else may hold it (webhooks that cannot be verified)."""
    steps = BEFORE_STATUS_STEPS if facts.final_status is False else ALL_STEPS
    evidence = [
        exited,
        Evidence(
            f"no event, volume or claim in view says which step it is on: {steps}",
            facts.ref,
            {"steps": steps},
        ),
        *facts.node.unknown_evidence(),
        *extra,
    ]
    basis = "containers down; no event, volume or claim says which teardown step"
    handler = runtime_class(facts)
    hint = ""
    killed = newest_saying(facts.events, KILL_FAILED)
    if killed is not None:  # the kubelet's word on the sandbox (or a container) kill
        hint = " (the kubelet's FailedKillPod points at the sandbox)"
        basis = "containers down; the kubelet's FailedKillPod points at the sandbox step"
        evidence.append(event_evidence(killed))
    elif handler:
        hint = f" (runtime class {handler}: the sandbox step first)"
        basis = f"containers down; runtimeClassName {handler} hints at the sandbox step"
        evidence.append(
            Evidence(
                f"spec.runtimeClassName {handler}: a sandboxed runtime (gVisor, Kata) whose "
                "sandbox stop is a known place to hang",
                facts.ref,
                {"runtimeClassName": handler},
            )
        )
    taints = evicting_taints(facts.node.node)
    if taints:  # what the teardown needs on the node may be evicted with the workloads
        evidence.append(taint_evidence(facts.node_name, taints, EVICTED))
    unchecked = f"; node {facts.node_name} not checked ({facts.node.unreadable})"
    return Blocker(
        TEARDOWN_UNFINISHED,
        f"{done}{unchecked if facts.node.unreadable else ''}; {STEP_UNKNOWN}{hint}",
        tuple(evidence),
        (
            *_remedies(facts),
            *([untaint(facts.node_name, taints, EVICTED_AGENTS)] if taints else []),
        ),
        # a pod without status hides its containers, phase and reason (NodeLost) as well
        unchecked=facts.events_unread
        or (None if isinstance(facts.pod.get("status"), dict) else NO_STATUS),
        confidence=POSSIBLE,
        basis=basis,
    )
