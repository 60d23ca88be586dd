"""The cause summary printed after a long table, or alone with --summary."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_terminating.model import (
    APISERVICE_UNAVAILABLE,
    CONVERSION_WEBHOOK,
    CSI_DRIVER_MISSING,
    FINALIZER,
    NAMESPACE_FINALIZER,
    WEBHOOK,
    Finding,
)
from kubectl_terminating.render.style import safe
from kubectl_terminating.summary import CauseGroup, group_by_cause

# A table longer than this (about a screenful) is followed by the summary.
SUMMARY_AFTER_ROWS = 20
# Subjects named in a line; the rest are elided (JSON keeps them all).
SHOWN_SUBJECTS = 3
NOUNS = {"Pod": "pod", "Namespace": "namespace"}


def _noun(findings: Sequence[Finding], count: int) -> str:
    kinds = {f.kind for f in findings}
    word = NOUNS.get(next(iter(kinds)), "object") if len(kinds) == 1 else "object"
    return word if count == 1 else word + "s"


# How a cause reads with the one object its group shares (`CSI driver X not installed`);
# other causes read `cause (X)`.
WITH_SUBJECT = {
    CSI_DRIVER_MISSING: "CSI driver {} not installed",
    FINALIZER: "finalizer {}",
    NAMESPACE_FINALIZER: "namespace finalizer {}",
    APISERVICE_UNAVAILABLE: "APIService {} unavailable",
    CONVERSION_WEBHOOK: "conversion webhook of {} down",
    WEBHOOK: "admission webhook {} down",
}


def _cause_text(group: CauseGroup) -> str:
    names = [safe(name) for name in group.subjects]
    if group.subject_kind != "Node" and len(names) == 1:
        template = WITH_SUBJECT.get(group.type)
        return template.format(names[0]) if template else f"{group.cause} ({names[0]})"
    if not names:
        return group.cause
    if len(names) <= SHOWN_SUBJECTS:
        shown = ", ".join(names)
    else:
        shown = ", ".join(names[: SHOWN_SUBJECTS - 1]) + " ... " + names[-1]
    if len(names) > 1:
        shown = f"{len(names)} nodes: {shown}"
    return f"{group.cause} ({shown})"


def summary_text(findings: Sequence[Finding]) -> str:
    """The groups as lines, headed by the totals; empty when there is nothing."""
    if not findings:
        return ""
    groups = group_by_cause(findings)
    causes = "cause" if len(groups) == 1 else "causes"
    total = f"{len(findings):,} {_noun(findings, len(findings))}"
    lines = [f"Summary: {total}, {len(groups)} {causes}"]
    lines += [f"{g.count:,} {_noun(findings, g.count)}: {_cause_text(g)}" for g in groups]
    return "\n".join(lines) + "\n"
