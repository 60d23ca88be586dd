"""Containers still running past the deadline, with the likely cause read from events and
node conditions (docs/explainers.md, node-level symptoms)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from kubectl_terminating.causes import CERTAIN, CONTAINERS_RUNNING, LIKELY
from kubectl_terminating.explain.common import as_dict, list_of, spec_of, status_of, text
from kubectl_terminating.explain.events import event_evidence, newest_saying
from kubectl_terminating.explain.node_health import condition_of, node_ref
from kubectl_terminating.explain.pod_facts import (
    PodFacts,
    past_text,
    running_containers,
    unique_remedies,
)
from kubectl_terminating.model import JSON, Blocker, Evidence, Remedy

# -- containers still running: hints from events (docs/explainers.md, node-level symptoms) ---


def _few(names: list[str], noun: str) -> str:
    """`app`, `app, sidecar` or `3 containers`: short enough for a summary column."""
    if len(names) <= 2:
        return ", ".join(names)
    return f"{len(names)} {noun}s"


@dataclass(frozen=True)
class Hint:
    short: str  # goes into the summary
    evidence: tuple[Evidence, ...]
    remedies: tuple[Remedy, ...]


RemedyBuilder = Callable[[PodFacts, JSON | None], tuple[Remedy, ...]]


def _list_containers(facts: PodFacts) -> Remedy:
    return Remedy(
        facts.on_node("list the pod's containers the runtime still has"),
        f"crictl ps -a --label io.kubernetes.pod.uid={facts.uid}",
    )


def _runtime_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        _list_containers(facts),
        Remedy(
            facts.on_node("read the container runtime's log"),
            "journalctl -u containerd -u docker --since -1h",
        ),
        Remedy(
            facts.on_node("restart the container runtime"),
            "systemctl restart containerd",
            destructive=True,
            when="the runtime is confirmed hung; drain the node first unless its containers "
            "survive a runtime restart (containerd, dockerd with live-restore)",
        ),
    )


def _disk_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        Remedy(
            facts.on_node("check the runtime's data disk"),
            "df -h /var/lib/containerd /var/lib/docker /var/lib/kubelet",
        ),
        Remedy(facts.on_node("free space, unused images first"), "crictl rmi --prune"),
    )


# What containerd logs when it cannot stop a container, and what each string means. Seen on a
# real containerd 1.6 whose root filesystem was full: the container exited (SIGKILL) but
# containerd could not record it (`failed to update container state: failed to checkpoint
# status to ...: no space left on device`), retried with backoff and reported it running; the
# kubelet wrote only `Killing`, and no node condition changed. Only the runtime's log tells.
RUNTIME_ERRORS = (
    ("no space left on device", "its data disk is full, it cannot record the container's exit"),
    ("DeadlineExceeded", "it is hung"),
    ("operation not permitted", "a file with the immutable attribute in the container"),
)


def _container_id(facts: PodFacts, names: list[str]) -> str:
    """The runtime's id of the first of the named containers (what the runtime logs)."""
    for status in (as_dict(s) for s in list_of(status_of(facts.pod).get("containerStatuses"))):
        found = text(status.get("containerID")).split("://")[-1]
        if text(status.get("name")) in names and found:
            return found
    return facts.uid


def _silent_runtime_remedies(facts: PodFacts, running: list[str]) -> tuple[Remedy, ...]:
    """No event or node condition names the cause: what to look for on the node."""
    return (
        facts.log_errors("containerd", _container_id(facts, running), RUNTIME_ERRORS),
        _disk_remedies(facts, None)[0],
    )


PATH_BEFORE_EPERM = re.compile(r"(/[^\s:\"']+)\S*:? operation not permitted")


def _immutable_remedies(facts: PodFacts, event: JSON | None) -> tuple[Remedy, ...]:
    found = PATH_BEFORE_EPERM.search(text((event or {}).get("message")))
    path = found.group(1) if found else "<path from the kubelet log>"
    return (
        Remedy(facts.on_node("look for the immutable attribute on the path"), f"lsattr -d {path}"),
        Remedy(
            facts.on_node("clear it so the runtime can remove the container's files"),
            f"chattr -i {path}",
            when="the path is inside the container's own filesystem",
        ),
    )


def busy_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        Remedy(
            facts.on_node("find the processes whose mount namespace holds the pod's mounts"),
            f"grep {facts.uid} /proc/*/mountinfo",
        ),
        Remedy(facts.on_node("see what holds it (pid from the path above)"), "ps -f <pid>"),
    )


def _prestop_remedies(facts: PodFacts, _event: JSON | None) -> tuple[Remedy, ...]:
    return (
        Remedy(
            "check the preStop hook: it failed or hung",
            f"kubectl get pod -n {shlex.quote(facts.namespace)} {shlex.quote(facts.name)} "
            "-o jsonpath='{.spec.containers[*].lifecycle.preStop}'",
        ),
    )


@dataclass(frozen=True)
class NodeSymptom:
    """One row of the symptom table: the catalogue entries whose events show a cause (or a
    node condition that shows it when True)."""

    short: str
    cause: str
    remedies: RemedyBuilder
    keys: tuple[str, ...] = ()  # catalogue evidence entries (catalogue/catalogue.yaml)
    node_condition: str = ""  # a node condition that shows the same cause when True

    def hint(self, facts: PodFacts) -> Hint | None:
        event = newest_saying(facts.events, self.keys)
        condition = (
            condition_of(facts.node.node or {}, self.node_condition)
            if self.node_condition
            else None
        )
        pressed = condition is not None and condition.get("status") == "True"
        if event is None and not pressed:
            return None
        evidence_list = [Evidence(f"likely cause: {self.cause}", facts.ref)]
        if event is not None:
            evidence_list.append(event_evidence(event))
        if pressed:
            evidence_list.append(
                Evidence(
                    f"Node {facts.node_name} has {self.node_condition}=True",
                    node_ref(facts.node_name),
                    {
                        self.node_condition: "True",
                        "since": (condition or {}).get("lastTransitionTime"),
                    },
                )
            )
        return Hint(self.short, tuple(evidence_list), self.remedies(facts, event))


NODE_SYMPTOMS: tuple[NodeSymptom, ...] = (
    NodeSymptom(
        "runtime did not kill them",
        "the container runtime is hung or out of sync with the kubelet",
        _runtime_remedies,
        keys=("kill-pod-failed", "exceeded-grace-period", "runtime-deadline-exceeded"),
    ),
    NodeSymptom(
        "node disk full",
        "the runtime's data disk is full, so it cannot remove containers",
        _disk_remedies,
        keys=("disk-full",),
        node_condition="DiskPressure",
    ),
    NodeSymptom(
        "immutable file",
        "a file with the immutable attribute stops the runtime removing the container",
        _immutable_remedies,
        keys=("immutable-file",),
    ),
    NodeSymptom(
        "mount busy",
        "a mount is held open, often by another process's mount namespace",
        busy_remedies,
        keys=("mount-busy",),
    ),
    NodeSymptom(
        "preStop hook failed",
        "the preStop hook failed or hung",
        _prestop_remedies,
        keys=("prestop-hook-failed",),
    ),
)


def _has_exec_post_start(pod: JSON) -> bool:
    return any(
        isinstance(as_dict(as_dict(as_dict(c).get("lifecycle")).get("postStart")).get("exec"), dict)
        for c in list_of(spec_of(pod).get("containers"))
    )


def exec_hang_hint(facts: PodFacts) -> Hint | None:
    """hostPID/shareProcessNamespace + a postStart exec hook: an exec into a container that
    exited first can hang (docker), and the pod with it."""
    spec = spec_of(facts.pod)
    shared = [k for k in ("hostPID", "shareProcessNamespace") if spec.get(k) is True]
    if not shared or not _has_exec_post_start(facts.pod):
        return None
    return Hint(
        "postStart exec hang",
        (
            Evidence(
                f"{' and '.join(shared)} with a postStart exec hook: an exec into a container "
                "that exited first can hang",
                facts.ref,
                dict.fromkeys(shared, True) | {"postStart": "exec"},
            ),
        ),
        (
            _list_containers(facts),
            Remedy(
                facts.on_node(
                    "stop the hung container in the runtime; the kubelet then "
                    "finishes deleting the pod"
                ),
                "crictl stop <container-id>",
            ),
        ),
    )


def runtime_hints(facts: PodFacts) -> list[Hint]:
    found = [symptom.hint(facts) for symptom in NODE_SYMPTOMS] + [exec_hang_hint(facts)]
    return [hint for hint in found if hint is not None]


def _running_evidence(facts: PodFacts, running: list[str]) -> Evidence:
    return Evidence(
        f"{', '.join(running)} still running{past_text(facts.overdue, 'the')} "
        f"{facts.finding.deletion_timestamp}",
        facts.ref,
        {
            "running": running,
            "deletionTimestamp": facts.finding.deletion_timestamp,
            "overdueSeconds": facts.overdue,
            "nodeName": facts.node_name,
        },
    )


def explain_containers(facts: PodFacts) -> list[Blocker]:
    running = running_containers(facts.finding)
    if not running or not facts.kubelet_overdue:
        return []
    hints = runtime_hints(facts)
    summary = f"{_few(running, 'container')} still running{past_text(facts.overdue)}"
    if facts.node.unreadable:
        # the kubelet's last report, not a fact: a node that is down reports nothing new
        summary = (
            f"node {facts.node_name} not checked ({facts.node.unreadable}); "
            f"{_few(running, 'container')} last reported running"
        )
    elif hints:
        summary += f" ({hints[0].short})"
    silent = () if hints else _silent_runtime_remedies(facts, running)
    generic = (_list_containers(facts), facts.kubelet_log())
    first = Remedy(
        "read the pod's events",
        f"kubectl get events -n {shlex.quote(facts.namespace)} "
        f"--field-selector involvedObject.uid={facts.uid}",
    )
    return [
        Blocker(
            CONTAINERS_RUNNING,
            summary,
            (
                _running_evidence(facts, running),
                *facts.node.unknown_evidence(),
                *(e for h in hints for e in h.evidence),
            ),
            unique_remedies([first, *(r for h in hints for r in h.remedies), *silent, *generic]),
            # the kubelet's status says so; with the node unchecked it is its last word only
            confidence=LIKELY if facts.node.unreadable else CERTAIN,
            basis="the kubelet's last status of a node not checked"
            if facts.node.unreadable
            else "the kubelet's pod status, past the deadline",
        )
    ]
