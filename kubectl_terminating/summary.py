"""Stuck objects grouped by cause: in an outage thousands of pods share a handful of causes.

Each finding counts once, under its main blocker. Node causes make one group per type that
names every node involved (`1,980 pods: node NotReady (20 nodes: zone-b-0, ... zone-b-19)`);
other causes make one group per shared object (a CSI driver, a finalizer, an APIService, a
webhook configuration), so one APIService blocking 40 namespaces is one line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_terminating.model import (
    APISERVICE_UNAVAILABLE,
    CONTAINERS_RUNNING,
    CONTENT_REMAINING,
    CONVERSION_WEBHOOK,
    CSI_DRIVER_MISSING,
    FINALIZER,
    GRACE_PERIOD,
    JSON,
    NAMESPACE_CONDITION,
    NAMESPACE_CONTROLLER,
    NAMESPACE_FINALIZER,
    NAMESPACE_TERMINATING,
    NODE_MISSING,
    NODE_NOT_READY,
    OWNER_DEPENDENTS,
    PROTECTION_IN_USE,
    UNKNOWN,
    VOLUME_ATTACHMENT,
    VOLUMES_NOT_RECLAIMED,
    WEBHOOK,
    Blocker,
    Finding,
    priority,
)

# Causes whose groups gather every node they name, rather than one group per node.
NODE_CAUSES = frozenset({NODE_MISSING, NODE_NOT_READY, "runtime-unavailable"})
# Kinds of evidence object that many stuck objects can share.
SHARED_KINDS = (
    "Node",
    "CSIDriver",
    "APIService",
    "CustomResourceDefinition",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
)
CAUSES: dict[str, str] = {
    NODE_MISSING: "node no longer exists",
    NODE_NOT_READY: "node NotReady",
    "runtime-unavailable": "container runtime down",
    "lifecycle-hook": "lifecycle hook never returned",
    CONTAINERS_RUNNING: "containers still running",
    VOLUMES_NOT_RECLAIMED: "volumes not reclaimed",
    CSI_DRIVER_MISSING: "CSI driver not installed",
    VOLUME_ATTACHMENT: "volume not detached",
    WEBHOOK: "admission webhook down",
    APISERVICE_UNAVAILABLE: "APIService unavailable",
    CONVERSION_WEBHOOK: "conversion webhook down",
    FINALIZER: "finalizer",
    OWNER_DEPENDENTS: "waiting for dependents",
    PROTECTION_IN_USE: "still in use",
    CONTENT_REMAINING: "content remaining",
    NAMESPACE_FINALIZER: "namespace finalizer",
    NAMESPACE_CONTROLLER: "namespace controller not running",
    NAMESPACE_CONDITION: "namespace deletion failing",
    NAMESPACE_TERMINATING: "namespace terminating",
    GRACE_PERIOD: "inside the grace period (not stuck yet)",
    UNKNOWN: "no known cause",
}


@dataclass(frozen=True)
class CauseGroup:
    type: str
    subject_kind: str | None  # "Node", "CSIDriver", "finalizer", ... or None
    subjects: tuple[str, ...]
    count: int
    example: Finding

    @property
    def cause(self) -> str:
        return CAUSES.get(self.type, self.type.replace("-", " "))

    def to_json(self) -> JSON:
        shared = (
            {"kind": self.subject_kind, "names": list(self.subjects)}
            if self.subject_kind
            else None
        )
        example = self.example
        return {
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


def subject_of(blocker: Blocker, finding: Finding) -> tuple[str, str] | None:
    """The (kind, name) many stuck objects can share behind this blocker, if any."""
    for evidence in blocker.evidence:
        for key in ("finalizer", "specFinalizer"):
            value = evidence.fields.get(key)
            if isinstance(value, str) and value:
                return "finalizer", value
    for evidence in blocker.evidence:
        if evidence.object is not None and evidence.object.kind in SHARED_KINDS:
            return evidence.object.kind, evidence.object.name
    if blocker.type == NODE_MISSING and finding.node:
        return "Node", finding.node
    return None


def _natural(name: str) -> list[object]:
    """zone-b-2 before zone-b-10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def group_by_cause(findings: Sequence[Finding]) -> list[CauseGroup]:
    """One group per cause, largest first; each finding counted once, by its main blocker."""
    members: dict[tuple[str, str | None, str | None], list[Finding]] = {}
    subjects: dict[tuple[str, str | None, str | None], set[str]] = {}
    for finding in findings:
        main = finding.main_blocker
        blocker_type = main.type if main is not None else UNKNOWN
        subject = subject_of(main, finding) if main is not None else None
        kind, name = subject if subject else (None, None)
        key = (blocker_type, kind, None if blocker_type in NODE_CAUSES else name)
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
        )
        for key, found in members.items()
    ]
    groups.sort(key=lambda g: (-g.count, priority(g.type), g.subjects))
    return groups
