"""Has the kubelet processed the deletion? The pod's `metadata.generation` against the kubelet's
`status.observedGeneration` (1.33+), measured on the real kubelet (docs/explainers.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubectl_terminating.causes import cause_of
from kubectl_terminating.explain.common import meta, status_of
from kubectl_terminating.explain.pod_facts import TEARDOWN_PENDING
from kubectl_terminating.explain.pod_teardown import STEP_UNKNOWN
from kubectl_terminating.model import JSON, Blocker, Evidence, Finding, ObjectRef

# instead of TEARDOWN_PENDING (or STEP_UNKNOWN) when the kubelet has not even processed the deletion
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
    elif not seen.seen and STEP_UNKNOWN in summary:  # no step begun: none to be unsure of
        summary = summary.partition(STEP_UNKNOWN)[0] + NOT_PROCESSED
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
