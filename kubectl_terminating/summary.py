"""Stuck objects grouped by cause, each counted once under its main blocker: one group per
type and the object its row groups it by (causes.Cause.group); a node-grouped type makes one
group naming every node (`1,980 pods: node NotReady (20 nodes: zone-b-0 ... zone-b-19)`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_terminating.causes import NODE, UNKNOWN, cause_of
from kubectl_terminating.model import JSON, Blocker, Finding, priority


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
    """The (kind, name) its row groups this blocker by: the pod's node, or the subject of
    that kind its evidence is about; None when the row groups it by nothing."""
    group = cause_of(blocker.type).group
    if NODE in group:
        return (NODE, finding.node) if finding.node else None
    for subject in blocker.subjects:
        if subject.kind in group and subject.name:
            return subject.kind, subject.name
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
        key = (blocker_type, kind, None if kind == NODE else name)
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
