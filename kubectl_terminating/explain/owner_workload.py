"""Whether the workload a knowledge file names as a finalizer's owner can run it: gone, scaled
to 0, with no ready replica, or ready; and the remedy that follows from each.

Read for the user's own entries (docs/knowledge.md), whose owner has no Lease or webhook the
tool knows of: the workload itself is the evidence. One GET by name, or one list of pods by
label selector; ReadFailed propagates (the caller says the check could not be made).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kubectl_terminating import reads
from kubectl_terminating.explain.common import as_dict, meta, text
from kubectl_terminating.explain.knowledge_schema import OwnerWorkload
from kubectl_terminating.model import JSON, Evidence, ObjectRef, Remedy
from kubectl_terminating.view import ClusterView, ReadFailed

GONE, SCALED_TO_ZERO, NOT_READY, READY = "gone", "scaled to 0", "no ready replicas", "ready"


@dataclass(frozen=True)
class WorkloadState:
    state: str  # GONE, SCALED_TO_ZERO, NOT_READY or READY
    evidence: Evidence
    remedy: Remedy | None = None  # what to do about it; None when it is ready

    @property
    def runs(self) -> bool:
        return self.state == READY


def _count(value: object) -> int:
    """A count the controller writes; it omits zeros (omitempty), and a pasted one may be
    anything: what is not a whole number counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _counts(kind: str, obj: JSON) -> tuple[int, int]:
    """(wanted, ready) as the workload's controller last wrote them. A workload pasted without
    its status says nothing of its replicas: ReadFailed, never "none ready"."""
    spec, status = as_dict(obj.get("spec")), obj.get("status")
    if not isinstance(status, dict):
        raise ReadFailed(f"the status of {kind} {text(meta(obj).get('name'))}", "not in the file")
    if kind == "DaemonSet":
        return _count(status.get("desiredNumberScheduled")), _count(status.get("numberReady"))
    replicas = spec.get("replicas")
    wanted = 1 if replicas is None else _count(replicas)  # the API's default
    return wanted, _count(status.get("readyReplicas"))


def _named(workload: OwnerWorkload, owner: str, view: ClusterView) -> WorkloadState:
    kind, ns, name = workload.kind, workload.namespace, workload.name
    ref = ObjectRef(kind, name, ns, "apps/v1")
    target = f"{kind.lower()}/{name} -n {shlex.quote(ns)}"
    obj = reads.workload(view, kind, ns, name)
    if obj is None or meta(obj).get("deletionTimestamp"):
        said = f"does not exist (or is being deleted): {owner} is not installed"
        fix = Remedy(f"reinstall {owner} ({workload} is gone), then retry")
        return WorkloadState(GONE, Evidence(said, ref, {"workload": GONE}), fix)
    wanted, ready = _counts(kind, obj)
    fields = {"workload": "", "wanted": wanted, "ready": ready}
    if wanted == 0:
        fields["workload"] = SCALED_TO_ZERO
        said = f"scaled to 0: {owner} does not run"
        if kind == "DaemonSet":
            said = "schedules no pod (its node selector matches no node)"
            return WorkloadState(SCALED_TO_ZERO, Evidence(said, ref, fields), None)
        fix = Remedy(
            f"scale {workload} back up, then retry",
            f"kubectl scale {target} --replicas=1",
        )
        return WorkloadState(SCALED_TO_ZERO, Evidence(said, ref, fields), fix)
    if ready == 0:
        fields["workload"] = NOT_READY
        said = f"no ready replica (0/{wanted}): {owner} does not run"
        fix = Remedy(
            f"find out why the pods of {workload} are not ready", f"kubectl describe {target}"
        )
        return WorkloadState(NOT_READY, Evidence(said, ref, fields), fix)
    fields["workload"] = READY
    said = f"{ready}/{wanted} replicas ready"
    return WorkloadState(READY, Evidence(said, ref, fields))


def _ready(pod: JSON) -> bool:
    conditions = as_dict(pod.get("status")).get("conditions") or []
    return any(
        as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True" for c in conditions
    )


def _selected(workload: OwnerWorkload, owner: str, view: ClusterView) -> WorkloadState:
    pods = [
        p
        for p in reads.pods_labelled(view, workload.namespace or None, workload.selector)
        if not meta(p).get("deletionTimestamp")
    ]
    fields: JSON = {"selector": workload.selector, "pods": len(pods)}
    if not pods:
        said = f"no {workload}: {owner} is not running"
        fix = Remedy(
            f"reinstall or scale up {owner} (no pod matches {workload.selector}), then retry"
        )
        return WorkloadState(GONE, Evidence(said, None, {**fields, "workload": GONE}), fix)
    ready = [p for p in pods if _ready(p)]
    if not ready:
        said = f"none of the {len(pods)} {workload} is ready: {owner} does not run"
        first = pods[0]
        command = (
            f"kubectl describe pod {text(meta(first).get('name'))} "
            f"-n {shlex.quote(text(meta(first).get('namespace')))}"
        )
        fix = Remedy(f"find out why the pods of {owner} are not ready", command)
        return WorkloadState(
            NOT_READY, Evidence(said, None, {**fields, "workload": NOT_READY}), fix
        )
    said = f"{len(ready)} of {len(pods)} {workload} ready"
    return WorkloadState(READY, Evidence(said, None, {**fields, "workload": READY}))


def workload_state(workload: OwnerWorkload, owner: str, view: ClusterView) -> WorkloadState:
    """The workload's state (see the module); ReadFailed when it could not be read."""
    if workload.selector:
        return _selected(workload, owner, view)
    return _named(workload, owner, view)
