"""The explainer contract: facts in, blockers out (docs/explainers.md)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from typing import TypeVar

from kubectl_terminating.causes import CERTAIN, GRACE_PERIOD, cause_of
from kubectl_terminating.model import JSON, Blocker, Evidence, FailedCheck, Finding, ObjectRef
from kubectl_terminating.resources import as_dict, list_of, meta, text
from kubectl_terminating.timeutil import parse_time, seconds_since
from kubectl_terminating.view import NO_CAPTURE_TIME, ClusterView, ReadFailed, undated

T = TypeVar("T")
D = TypeVar("D")

AGE_UNKNOWN = f"age unknown: {NO_CAPTURE_TIME}"
DELETION_TIME_UNKNOWN = "age unknown: the object has no deletionTimestamp (a partial paste)"


def spec_of(obj: JSON) -> JSON:
    return as_dict(obj.get("spec"))


def status_of(obj: JSON) -> JSON:
    return as_dict(obj.get("status"))


def pods_on_node(node: str) -> str:
    """The command that lists a node's pods (what runs there: a driver, the CNI plugin)."""
    return f"kubectl get pods -A -o wide --field-selector spec.nodeName={shlex.quote(node)}"


def ref_of(obj: JSON, kind: str | None = None) -> ObjectRef:
    m = meta(obj)
    return ObjectRef(
        kind=kind or text(obj.get("kind")) or "Object",
        name=text(m.get("name")),
        namespace=text(m.get("namespace")) or None,
        api_version=text(obj.get("apiVersion")) or None,
    )


def base_finding(obj: JSON, view: ClusterView, kind: str, api_version: str) -> Finding:
    m = meta(obj)
    deletion = text(m.get("deletionTimestamp"))
    grace = m.get("deletionGracePeriodSeconds")
    overdue = seconds_since(deletion, view.now)
    unknowns = []
    if not deletion:
        # terminating by its status alone (resources.is_terminating): when is not known
        unknowns.append(DELETION_TIME_UNKNOWN)
    elif undated(view) and (overdue is None or overdue <= 0):
        # the file's newest timestamp is the deletion itself (or older): how long ago it was
        # deleted, and whether its grace period is over, the file cannot tell
        overdue = None
        unknowns.append(AGE_UNKNOWN)
    terminating = overdue
    if overdue is not None and isinstance(grace, int):
        # deletionTimestamp is request time + grace period: the request came `grace` earlier.
        terminating = overdue + grace
    return Finding(
        kind=kind,
        api_version=api_version,
        name=text(m.get("name")),
        namespace=text(m.get("namespace")) or None,
        uid=text(m.get("uid")),
        deletion_timestamp=deletion,
        overdue_seconds=overdue,
        terminating_seconds=terminating,
        finalizers=[f for f in list_of(m.get("finalizers")) if isinstance(f, str)],
        unknowns=unknowns,
    )


def add_warning(finding: Finding, warning: str) -> None:
    """The one way a warning reaches a finding: each said once, in the order found."""
    if warning not in finding.warnings:
        finding.warnings.append(warning)


class Facts:
    """What a cause gets: the object, its finding so far and the view, with the reads the
    causes of a kind share (subclasses add them, read once: PodFacts, NamespaceFacts)."""

    def __init__(self, obj: JSON, view: ClusterView, finding: Finding) -> None:
        self.obj = obj
        self.view = view
        self.finding = finding

    def warn(self, warning: str | ReadFailed) -> None:
        """A note, or a read that failed (a FailedCheck: the table counts those)."""
        failed = isinstance(warning, ReadFailed | FailedCheck)
        add_warning(self.finding, FailedCheck(warning) if failed else str(warning))

    def read(self, load: Callable[[], T], default: D) -> T | D:
        """load(), or default when the read fails: the failure becomes a warning."""
        try:
            return load()
        except ReadFailed as failed:
            self.warn(failed)
            return default


F = TypeVar("F", bound=Facts)
Cause = Callable[[F], Iterable[Blocker]]


def run_causes(facts: F, causes: Iterable[Callable[[F], Iterable[Blocker]]]) -> Finding:
    """Each cause in order; a read one of them could not make becomes a warning, the other
    causes still run. The blockers end sorted, the most likely cause first."""
    finding = facts.finding
    for cause in causes:
        try:
            found = list(cause(facts))
        except ReadFailed as failed:
            facts.warn(failed)
            continue
        for blocker in found:
            if not cause_of(blocker.type).holds(finding.kind):
                # a bug, not bad input: the row says this type never holds such an object
                raise TypeError(f"{blocker.type} cannot hold a {finding.kind} (causes.TABLE)")
        finding.blockers.extend(found)
    finding.sort_blockers()
    return finding


def grace_period(facts: Facts) -> list[Blocker]:
    """Still inside the grace period: listed, but clearly not stuck."""
    finding = facts.finding
    if finding.overdue_seconds is None or finding.overdue_seconds >= 0:
        return []
    left = -finding.overdue_seconds
    return [
        Blocker(
            type=GRACE_PERIOD,
            summary=f"still inside its grace period ({left}s left): not stuck yet",
            evidence=(
                Evidence(
                    message=f"deletionTimestamp {finding.deletion_timestamp} is in the future",
                    object=ref_of(facts.obj, finding.kind),
                    fields={
                        "deletionTimestamp": finding.deletion_timestamp,
                        "deletionGracePeriodSeconds": meta(facts.obj).get(
                            "deletionGracePeriodSeconds"
                        ),
                    },
                ),
            ),
            confidence=CERTAIN,
            basis="its deletionTimestamp is in the future",
        )
    ]


def age_seconds(obj: JSON, view: ClusterView, field: str = "creationTimestamp") -> int | None:
    return seconds_since(meta(obj).get(field), view.now)


__all__ = [
    "Cause",
    "Facts",
    "add_warning",
    "age_seconds",
    "as_dict",
    "base_finding",
    "grace_period",
    "list_of",
    "meta",
    "parse_time",
    "ref_of",
    "run_causes",
    "spec_of",
    "status_of",
    "text",
]
