"""Stuck objects grouped by cause: in an outage thousands of pods share a handful of causes.

Each finding counts once, under its main blocker. Causes on the node side (the node, its
runtime, its kubelet's teardown) make one group per type that names every node involved
(`1,980 pods: node NotReady (20 nodes: zone-b-0, zone-b-1 ... zone-b-19)`); other causes make
one group per shared object (a CSI driver, a finalizer, an APIService, a webhook
configuration), so one APIService blocking 40 namespaces is one line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_terminating.causes import UNKNOWN, cause_of
from kubectl_terminating.model import FINALIZER_ON, JSON, Blocker, Finding, priority

# Kinds of evidence object that many stuck objects can share.
SHARED_KINDS = (
    "Node",
    "CSIDriver",
    "APIService",
    "CustomResourceDefinition",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
)


@dataclass(frozen=True)
class CauseGroup:
    type: str
    subject_kind: str | None  # "Node", "CSIDriver", "finalizer", ... or None
    subjects: tuple[str, ...]
    count: int
    example: Finding
    # (context, count) largest first, in a run over several contexts (fleet.py)
    contexts: tuple[tuple[str, int], ...] = ()

    @property
    def cause(self) -> str:
        return cause_of(self.type).label

    def to_json(self) -> JSON:
        shared = (
            {"kind": self.subject_kind, "names": list(self.subjects)} if self.subject_kind else None
        )
        example = self.example
        out: JSON = {
            "count": self.count,
            "type": self.type,
            "cause": self.cause,
            "shared": shared,
            "example": {
                "kind": example.kind,
                "namespace": example.namespace,
                "name": example.name,
            },
        }
        if self.contexts:
            out["example"]["context"] = example.context
            out["contexts"] = [{"context": c, "count": n} for c, n in self.contexts]
        return out


def subject_of(blocker: Blocker, finding: Finding) -> tuple[str, str] | None:
    """The (kind, name) many stuck objects can share behind this blocker, if any."""
    if cause_of(blocker.type).on_node and finding.node:
        return "Node", finding.node
    for subject in blocker.subjects:
        if subject.kind == FINALIZER_ON and subject.name:
            return FINALIZER_ON, subject.name
    for evidence in blocker.evidence:
        if evidence.object is not None and evidence.object.kind in SHARED_KINDS:
            return evidence.object.kind, evidence.object.name
    return None


def _natural(name: str) -> list[object]:
    """zone-b-2 before zone-b-10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _per_context(findings: Sequence[Finding]) -> tuple[tuple[str, int], ...]:
    """How many of findings each context has, largest first (none outside a fleet run)."""
    counts = Counter(f.context for f in findings if f.context is not None)
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], _natural(item[0]))))


def group_by_cause(findings: Sequence[Finding]) -> list[CauseGroup]:
    """One group per cause, largest first; each finding counted once, by its main blocker."""
    members: dict[tuple[str, str | None, str | None], list[Finding]] = {}
    subjects: dict[tuple[str, str | None, str | None], set[str]] = {}
    for finding in findings:
        main = finding.main_blocker
        blocker_type = main.type if main is not None else UNKNOWN
        subject = subject_of(main, finding) if main is not None else None
        kind, name = subject if subject else (None, None)
        key = (blocker_type, kind, None if kind == "Node" else name)
        members.setdefault(key, []).append(finding)
        if name is not None:
            subjects.setdefault(key, set()).add(name)
    groups = [
        CauseGroup(
            type=key[0],
            subject_kind=key[1],
            subjects=tuple(sorted(subjects.get(key, ()), key=_natural)),
            count=len(found),
            example=found[0],
            contexts=_per_context(found),
        )
        for key, found in members.items()
    ]
    groups.sort(key=lambda g: (-g.count, priority(g.type), [_natural(n) for n in g.subjects]))
    return groups
