"""What every explainer shares: the finding skeleton, the grace period, safe running."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubectl_terminating.model import GRACE_PERIOD, JSON, Blocker, Evidence, Finding, ObjectRef
from kubectl_terminating.resources import meta
from kubectl_terminating.timeutil import parse_time, seconds_since
from kubectl_terminating.view import ClusterView, ReadFailed

Explainer = Callable[[JSON, ClusterView], Iterable[Blocker]]

HOLDS_WHILE = {GRACE_PERIOD: "context only: the deletionTimestamp is still in the future"}


def list_of(value: Any) -> list[Any]:
    """value when it is a list (fields of the API's JSON may be missing or malformed)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


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
    )


def grace_period_blocker(obj: JSON, finding: Finding) -> Blocker | None:
    """Still inside the grace period: listed, but clearly not stuck."""
    if finding.overdue_seconds is None or finding.overdue_seconds >= 0:
        return None
    left = -finding.overdue_seconds
    return Blocker(
        type=GRACE_PERIOD,
        summary=f"still inside its grace period ({left}s left): not stuck yet",
        evidence=(
            Evidence(
                message=f"deletionTimestamp {finding.deletion_timestamp} is in the future",
                object=ref_of(obj, finding.kind),
                fields={
                    "deletionTimestamp": finding.deletion_timestamp,
                    "deletionGracePeriodSeconds": meta(obj).get("deletionGracePeriodSeconds"),
                },
            ),
        ),
    )


def run_explainers(
    finding: Finding, obj: JSON, view: ClusterView, explainers: Iterable[Explainer]
) -> Finding:
    """Run each explainer; a read one of them could not make becomes a warning, not a crash."""
    for explain in explainers:
        try:
            finding.blockers.extend(explain(obj, view))
        except ReadFailed as failed:
            warning = f"{failed}"
            if warning not in finding.warnings:
                finding.warnings.append(warning)
    finding.sort_blockers()
    return finding


def age_seconds(obj: JSON, view: ClusterView, field: str = "creationTimestamp") -> int | None:
    return seconds_since(meta(obj).get(field), view.now)


__all__ = [
    "Explainer",
    "age_seconds",
    "as_dict",
    "base_finding",
    "grace_period_blocker",
    "list_of",
    "meta",
    "parse_time",
    "ref_of",
    "run_explainers",
    "text",
]
