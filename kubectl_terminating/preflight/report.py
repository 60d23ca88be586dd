"""The preflight report: predictions, the verdict and its exit code, the `-o json` document
(docs/preflight.md, "Output"), and `preflight`, the entry point that returns it as a dict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubectl_terminating.causes import CONFIDENCES, LIKELY
from kubectl_terminating.errors import ExitStatus
from kubectl_terminating.model import API_VERSION, JSON, Evidence, ObjectRef, Remedy

CLEAR, BLOCKED, UNDECIDED = "clear", "blocked", "undecided"


@dataclass(frozen=True)
class Prediction:
    """A blocker the deletion will meet: its type is a row of causes.TABLE, so it names what
    `--explain` reports once the object is stuck."""

    type: str
    confidence: str
    object: ObjectRef
    summary: str
    evidence: tuple[Evidence, ...] = ()
    prevent: tuple[Remedy, ...] = ()  # what to do before the deletion so it does not block
    remedy: tuple[Remedy, ...] = ()  # what `--explain` will say once stuck

    def to_json(self) -> JSON:
        return {
            "type": self.type,
            "confidence": self.confidence,
            "object": self.object.to_json(),
            "summary": self.summary,
            "evidence": [e.to_json() for e in self.evidence],
            "prevent": [r.to_json() for r in self.prevent],
            "remedy": [r.to_json() for r in self.remedy],
        }


@dataclass
class Report:
    target: JSON
    doomed: dict[str, int]
    predictions: list[Prediction] = field(default_factory=list)
    order: list[JSON] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    fail_on: str = LIKELY
    # each finalizer on a doomed object whose owner is shown to run after the deletion: why
    # (judges.Survivor.to_json); what a clear verdict rests on
    surviving_owners: list[JSON] = field(default_factory=list)

    def blocking(self) -> list[Prediction]:
        """The predictions at or above --fail-on."""
        limit = CONFIDENCES.index(self.fail_on)
        return [p for p in self.predictions if CONFIDENCES.index(p.confidence) <= limit]

    @property
    def verdict(self) -> str:
        """blocked: a prediction at --fail-on or above; undecided: a weaker prediction or a
        check not made (never `clear` while anything might hold the deletion); else clear."""
        if self.blocking():
            return BLOCKED
        if self.predictions or self.unchecked:
            return UNDECIDED
        return CLEAR

    @property
    def exit_code(self) -> int:
        return {
            CLEAR: ExitStatus.OK,
            BLOCKED: ExitStatus.STUCK,
            UNDECIDED: ExitStatus.UNDECIDED,
        }[self.verdict]

    def to_json(self) -> JSON:
        return {
            "apiVersion": API_VERSION,
            "kind": "PreflightReport",
            "verdict": self.verdict,
            "failOn": self.fail_on,
            "target": self.target,
            "doomed": self.doomed,
            "predictions": [p.to_json() for p in self.predictions],
            "order": self.order,
            "unchecked": list(self.unchecked),
            "survivingOwners": list(self.surviving_owners),
        }


def sort_predictions(predictions: Sequence[Prediction]) -> list[Prediction]:
    from kubectl_terminating.causes import rank

    return sorted(
        predictions,
        key=lambda p: (CONFIDENCES.index(p.confidence), rank(p.type), str(p.object)),
    )
