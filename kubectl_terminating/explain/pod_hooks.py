"""A postStart hook that never returns: the kubelet's pod worker waits on it, so the pod can
neither start nor be torn down.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kubectl_terminating.causes import LIFECYCLE_HOOK, LIKELY
from kubectl_terminating.explain.common import as_dict, list_of, meta, spec_of, status_of, text
from kubectl_terminating.explain.events import event_evidence, event_time
from kubectl_terminating.explain.pod_facts import PodFacts
from kubectl_terminating.model import JSON, Blocker, Evidence, Remedy
from kubectl_terminating.timeutil import seconds_since


@dataclass(frozen=True)
class HungHook:
    container: str
    command: str  # the exec command, or the HTTP target
    started: JSON | None  # the `Started` event of the container
    unknown: str | None  # without that event: why its absence proves nothing
    process: str  # what the hook's process shows in `ps` (a shell's script: see _process)


def _hook_command(hook: JSON) -> str:
    command = list_of(as_dict(hook.get("exec")).get("command"))
    if command:
        return shlex.join(text(c) for c in command)
    http = as_dict(hook.get("httpGet"))
    if http:
        return f"GET {text(http.get('path')) or '/'} on port {text(http.get('port'))}"
    return "?"


SHELLS = frozenset({"sh", "bash", "ash", "dash", "/bin/sh", "/bin/bash", "/bin/ash", "/bin/dash"})


def _process(hook: JSON) -> str:
    """The text to look for in `ps`: for `sh -c SCRIPT` the script, because a shell execs a
    lone command (seen on the real node: the hook `sh -c 'sleep 3601'` runs as `sleep 3601`)
    and a shell that stays shows the script in its own command line."""
    command = [text(c) for c in list_of(as_dict(hook.get("exec")).get("command"))]
    if len(command) >= 3 and command[0] in SHELLS and command[1] == "-c":
        return command[2]
    return _hook_command(hook)


def _started_event(facts: PodFacts, container: str) -> JSON | None:
    field = f"spec.containers{{{container}}}"
    found = [
        e
        for e in facts.events
        if text(e.get("reason")) == "Started"
        and text(as_dict(e.get("involvedObject")).get("fieldPath")) == field
    ]
    return max(found, key=event_time) if found else None


EVENT_TTL = 3600  # seconds: kube-apiserver --event-ttl (default 1h) deletes older events


def _no_started_event(facts: PodFacts) -> str | None:
    """Why a missing `Started` event does not prove the container never started (None: it
    does). Events are deleted an hour after their last update, and a hung hook adds none
    after `Started`: a pod stuck in its hook for over an hour has lost that event."""
    if facts.events_unread:
        return facts.events_unread
    if not facts.events:
        return "the pod has no events at all (events are deleted after 1h: --event-ttl)"
    age = seconds_since(text(meta(facts.pod).get("creationTimestamp")), facts.view.now)
    if age is None or age > EVENT_TTL:
        return (
            "the pod is older than the events' 1h lifetime (--event-ttl): its Started event "
            "may be gone"
        )
    return None


def hung_post_start_hooks(facts: PodFacts) -> list[HungHook]:
    """Containers with a postStart hook that the runtime started (a `Started` event) whose
    status still waits in ContainerCreating: the hook has not returned. Where the events cannot
    tell (not read, or the event may have expired) such a container is a hook that may not have
    returned: said unchecked."""
    waiting = {
        text(s.get("name"))
        for s in (as_dict(x) for x in list_of(status_of(facts.pod).get("containerStatuses")))
        if text(as_dict(as_dict(s.get("state")).get("waiting")).get("reason"))
        == "ContainerCreating"
    }
    hung = []
    for container in (as_dict(c) for c in list_of(spec_of(facts.pod).get("containers"))):
        name = text(container.get("name"))
        hook = as_dict(as_dict(container.get("lifecycle")).get("postStart"))
        if not hook or name not in waiting:
            continue
        started = _started_event(facts, name)
        unknown = None if started is not None else _no_started_event(facts)
        if started is not None or unknown:
            hung.append(HungHook(name, _hook_command(hook), started, unknown, _process(hook)))
    return hung


def _blocker(facts: PodFacts, hook: HungHook) -> Blocker:
    return Blocker(
        LIFECYCLE_HOOK,
        f"postStart hook of {hook.container} "
        + ("never returned" if hook.started is not None else "may not have returned"),
        (
            Evidence(
                f"container {hook.container} was started but still waits in ContainerCreating: "
                f"its postStart hook ({hook.command}) has not returned, and the kubelet tears "
                "the pod down only after it does"
                if hook.started is not None
                else f"container {hook.container} still waits in ContainerCreating and has a "
                f"postStart hook ({hook.command}): if it was started, the hook has not "
                "returned, and the kubelet tears the pod down only after it does",
                facts.ref,
                {"container": hook.container, "postStart": hook.command},
            ),
            event_evidence(hook.started)
            if hook.started is not None
            else Evidence(f"whether it was started is not known: {hook.unknown}"),
        ),
        (
            Remedy(
                facts.on_node("find the hook's process"),
                f"ps -eo pid,etime,args | grep -F -- {shlex.quote(hook.process)}",
            ),
            Remedy(
                facts.on_node(
                    "end the hook: the kubelet then kills the container and the pod goes"
                ),
                "kill <pid of the hook>",
                destructive=True,
                when="the hook is hung for good: whatever it was doing is cut short",
            ),
            Remedy(
                facts.on_node("or stop the container in the runtime (exec into it hangs too)"),
                f"crictl ps -a --label io.kubernetes.pod.uid={facts.uid}; crictl stop <id>",
                destructive=True,
                when="the hook's process cannot be found",
            ),
        ),
        unchecked=hook.unknown,
        # the kubelet's Started event and its status still waiting: only the hook lies between
        confidence=LIKELY,
        basis="the kubelet's Started event, and its status still ContainerCreating",
    )


def explain_hooks(facts: PodFacts) -> list[Blocker]:
    # Holds while the kubelet, alive on a healthy node, has not confirmed the deletion past the
    # deadline (kubelet_overdue) and the hook's container still waits to start.
    if not facts.kubelet_overdue:
        return []
    return [_blocker(facts, hook) for hook in hung_post_start_hooks(facts)]
