"""Has the kubelet processed the deletion? The first fork of a pod's diagnosis, with no
permission beyond reading the pod (pod generation tracking, KEP-5067).

The API server bumps a generational object's `metadata.generation` when it first marks it for
deletion, and pods carry a generation since 1.33; the kubelet writes `status.observedGeneration`
(the generation of the pod it synced) with each status. Measured on the harness's real
kubelet v1.36.3 (tests/e2e/test_real_node.py, docs/explainers.md): generation goes 1 -> 2 at
deletion; with the kubelet stopped, or its pod worker held in a postStart hook that never
returns, observedGeneration stays 1; with the runtime down, a teardown failing (immutable file,
busy mount, CSI driver gone) or a full runtime disk it is 2. So observedGeneration below
generation says "the kubelet has not processed the deletion", equal says "it has, and is stuck
doing it". A server or kubelet without the fields keeps the diagnosis as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubectl_terminating.causes import cause_of
from kubectl_terminating.explain.common import meta
from kubectl_terminating.explain.pod_facts import TEARDOWN_PENDING, status_of
from kubectl_terminating.model import JSON, Blocker, Evidence, Finding, ObjectRef

# instead of TEARDOWN_PENDING when the kubelet has not even processed the deletion
NOT_PROCESSED = "kubelet has not processed the deletion"


@dataclass(frozen=True)
class DeletionSeen:
    """The pod's generation and the one the kubelet last reported."""

    generation: int
    observed: int

    @property
    def seen(self) -> bool:
        return self.observed >= self.generation

    def evidence(self, ref: ObjectRef, working_on: str) -> Evidence:
        fields = {"generation": self.generation, "observedGeneration": self.observed}
        if self.seen:
            message = (
                f"the kubelet has processed the deletion (status.observedGeneration "
                f"{self.observed} = metadata.generation {self.generation}) and is stuck: "
                f"{working_on}"
            )
        else:
            message = (
                f"the kubelet has not processed the deletion (status.observedGeneration "
                f"{self.observed} < metadata.generation {self.generation}): it has written no "
                "status since the pod was marked for deletion"
            )
        return Evidence(message, ref, fields)


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def deletion_seen(pod: JSON) -> DeletionSeen | None:
    """Whether the kubelet has seen the pod's deletion; None when the server or kubelet does
    not track generations (before 1.33, or the feature off) or the pod is not deleted."""
    m = meta(pod)
    generation = _whole(m.get("generation"))
    observed = _whole(status_of(pod).get("observedGeneration"))
    if not m.get("deletionTimestamp") or generation is None or observed is None:
        return None
    return DeletionSeen(generation, observed)


def _forked(blocker: Blocker, seen: DeletionSeen, ref: ObjectRef) -> Blocker:
    evidence = seen.evidence(ref, cause_of(blocker.type).label)
    summary = blocker.summary
    if not seen.seen and summary.endswith(TEARDOWN_PENDING):
        summary = summary.removesuffix(TEARDOWN_PENDING) + NOT_PROCESSED
    return replace(blocker, summary=summary, evidence=(*blocker.evidence, evidence))


def fork_on_generation(finding: Finding, pod: JSON) -> Finding:
    """The main blocker, when the kubelet is the one to act on it, starts from whether the
    kubelet has processed the deletion (said in its evidence; the catch-all summaries say it)."""
    seen = deletion_seen(pod)
    if seen is None or not finding.blockers or not finding.node:
        return finding
    main = finding.blockers[0]
    if not cause_of(main.type).kubelet:
        return finding
    ref = ObjectRef("Pod", finding.name, finding.namespace, "v1")
    finding.blockers[0] = _forked(main, seen, ref)
    return finding
