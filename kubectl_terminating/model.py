"""The findings the explainers produce and the renderers print (the `-o json` contract:
docs/output.md; blockers: docs/explainers.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The blocker types, their rank and all else known of each: one table, causes.py.
from kubectl_terminating import causes
from kubectl_terminating.causes import TABLE, rank

JSON = dict[str, Any]

API_VERSION = "terminating.kubectl.io/v1"

PRIORITY: tuple[str, ...] = tuple(cause.type for cause in TABLE)  # main blocker first
priority = rank  # a blocker type's rank; a type from elsewhere ranks last but one


def _set(out: JSON, **optional: object) -> JSON:
    """out with each optional field that is set (`-o json` leaves the others out)."""
    out.update((key, value) for key, value in optional.items() if value)
    return out


def blocker_rank(blocker: Blocker) -> tuple[bool, int]:
    """Blockers the evidence proves come before those that could not be checked, then by type."""
    return blocker.unchecked is not None, priority(blocker.type)


# A Subject kind beyond the API's own: a finalizer, on the object Subject.holder.
FINALIZER_ON = causes.FINALIZER_ON


@dataclass(frozen=True)
class ObjectRef:
    kind: str
    name: str
    namespace: str | None = None
    api_version: str | None = None

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}" if not where else f"{self.kind} {where}{self.name}"

    def to_json(self) -> JSON:
        out: JSON = {"kind": self.kind, "name": self.name}
        return _set(out, namespace=self.namespace, apiVersion=self.api_version)


@dataclass(frozen=True)
class Subject:
    """What a piece of evidence is about, typed, for the code that acts on blockers (`fix`,
    the summary): they read these, never an evidence's wording, fields or order. Not in
    `-o json`, where the evidence's object and fields say the same."""

    kind: str  # FINALIZER_ON, or the kind of an object: APIService, Service, ...
    name: str
    namespace: str | None = None
    holder: ObjectRef | None = None  # FINALIZER_ON: the object that carries it
    spec: bool = False  # FINALIZER_ON: in a namespace's spec.finalizers (/finalize removes it)
    backend: ObjectRef | None = None  # an APIService: the Service that serves it
    exists: bool | None = None  # a Service: False when it is known to be gone


class FailedCheck(str):
    """A finding's warning that says a check could not be made (a read failed): the table
    counts these (`2 checks not possible`); other warnings are notes."""

    __slots__ = ()


@dataclass(frozen=True)
class Evidence:
    """A fact read from the cluster that proves a blocker: which object, what it says."""

    message: str
    object: ObjectRef | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    about: Subject | None = field(default=None, compare=False)  # what it is about, typed
    failed_read: bool = field(default=False, compare=False)  # a read it needed failed

    def to_json(self) -> JSON:
        out: JSON = {"message": self.message}
        if self.object is not None:
            out["object"] = self.object.to_json()
        if self.fields:
            out["fields"] = dict(self.fields)
        return out


@dataclass(frozen=True)
class Remedy:
    """One step a user can take. Remedies are listed safest first; nothing is ever run."""

    description: str
    command: str | None = None
    destructive: bool = False
    when: str | None = None  # the condition under which the step is safe

    def to_json(self) -> JSON:
        out: JSON = {"description": self.description, "destructive": self.destructive}
        return _set(out, command=self.command, when=self.when)


@dataclass(frozen=True)
class Blocker:
    type: str
    summary: str
    evidence: tuple[Evidence, ...] = ()
    remedy: tuple[Remedy, ...] = ()
    # set when the blocker is only possible: the read that would prove or clear it is missing
    unchecked: str | None = None
    # how sure (causes.CONFIDENCES) and the witness that makes it so ("the kubelet's
    # FailedUnmount names the volume"); every cause states both (tests/unit/test_confidence.py)
    confidence: str | None = None
    basis: str | None = None

    def __post_init__(self) -> None:
        # A blocker whose proving read is missing is only possible, whatever its witness says
        # (DESIGN.md "How sure"): said once here, so no cause (nor a replace()) can forget it.
        if self.unchecked is not None and self.confidence not in (None, causes.POSSIBLE):
            object.__setattr__(self, "confidence", causes.POSSIBLE)
            said = "the read that would prove it is missing (unchecked)"
            object.__setattr__(self, "basis", f"{self.basis}; {said}" if self.basis else said)

    @property
    def subjects(self) -> tuple[Subject, ...]:
        """What the blocker is about, typed (its evidence's subjects, in order)."""
        return tuple(e.about for e in self.evidence if e.about is not None)

    @property
    def failed_reads(self) -> tuple[Evidence, ...]:
        """Its evidence that says a read it needed failed."""
        return tuple(e for e in self.evidence if e.failed_read)

    def to_json(self) -> JSON:
        out: JSON = {
            "type": self.type,
            "summary": self.summary,
            "evidence": [e.to_json() for e in self.evidence],
            "remedy": [r.to_json() for r in self.remedy],
        }
        if self.unchecked is not None:
            out["unchecked"] = str(self.unchecked)  # plain (a FailedCheck is a str too)
        out["confidence"] = self.confidence  # always: null only for a blocker built elsewhere
        return _set(out, confidenceBasis=self.basis)


@dataclass(frozen=True)
class ContentType:
    """Remaining objects of one resource type in a terminating namespace."""

    resource: str  # plural.group, e.g. "widgets.example.com" or "pods"
    kind: str
    count: int
    # objects that have finalizers or are terminating themselves
    objects: tuple[JSON, ...] = ()
    error: str | None = None  # why the type could not be listed

    def to_json(self) -> JSON:
        out: JSON = {"resource": self.resource, "kind": self.kind, "count": self.count}
        out["objects"] = list(self.objects)
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class Finding:
    """One terminating object, with everything known about why it has not gone."""

    kind: str
    api_version: str
    name: str
    namespace: str | None
    uid: str
    deletion_timestamp: str
    overdue_seconds: int | None
    terminating_seconds: int | None
    finalizers: list[str]
    blockers: list[Blocker] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # what the evidence cannot show ("age unknown: the file has no capture time"): said in the
    # headline next to the main blocker, never read as "nothing" or "0s"
    unknowns: list[str] = field(default_factory=list)
    # pods
    node: str | None = None
    phase: str | None = None
    containers: list[JSON] = field(default_factory=list)
    # namespaces
    conditions: list[JSON] | None = None
    remaining: list[ContentType] | None = None
    # explanations of objects inside (pods of a terminating namespace)
    children: list[Finding] = field(default_factory=list)
    # the kubeconfig context it was found in, in a run over several (fleet.py)
    context: str | None = None

    @property
    def main_blocker(self) -> Blocker | None:
        if not self.blockers:
            return None
        if not self.stuck:
            # Inside the grace period the honest one-liner is "not stuck yet", whatever else
            # is listed (those say what would hold the object once the period ends).
            grace = [b for b in self.blockers if causes.cause_of(b.type).not_stuck]
            if grace:
                return grace[0]
        return min(self.blockers, key=blocker_rank)

    @property
    def stuck(self) -> bool:
        if self.overdue_seconds is not None and self.overdue_seconds < 0:
            return False  # still inside the grace period: nothing can be stuck yet
        return any(not causes.cause_of(b.type).not_stuck for b in self.blockers) or (
            self.overdue_seconds is not None and self.overdue_seconds > 0
        )

    @property
    def remaining_count(self) -> int | None:
        if self.remaining is None:
            return None
        return sum(c.count for c in self.remaining)

    def sort_blockers(self) -> None:
        self.blockers.sort(key=blocker_rank)

    def to_json(self, extras: Callable[[Finding], JSON]) -> JSON:
        """The `-o json` item; extras: the fields of its kind (kinds.json_extras)."""
        out: JSON = {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "deletionTimestamp": self.deletion_timestamp,
            "overdueSeconds": self.overdue_seconds,
            "terminatingSeconds": self.terminating_seconds,
            "finalizers": list(self.finalizers),
            "blockers": [b.to_json() for b in self.blockers],
            "warnings": [str(w) for w in self.warnings],
        }
        if self.unknowns:
            out["unknowns"] = list(self.unknowns)
        out.update(extras(self))
        if self.conditions is not None:
            out["conditions"] = list(self.conditions)
        if self.remaining is not None:
            out["remaining"] = [c.to_json() for c in self.remaining]
        if self.children:
            out["pods"] = [c.to_json(extras) for c in self.children]
        if self.context is not None:
            out = {"context": self.context, **out}
        return out
