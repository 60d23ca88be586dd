"""The cause summary printed after a long table, or alone with --summary."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_terminating.causes import cause_of
from kubectl_terminating.model import Finding
from kubectl_terminating.render.style import safe
from kubectl_terminating.summary import CauseGroup, group_by_cause

# A table longer than this (about a screenful) is followed by the summary.
SUMMARY_AFTER_ROWS = 20
# Subjects named in a line; the rest are elided (JSON keeps them all).
SHOWN_SUBJECTS = 3
NOUNS = {"Pod": "pod", "Namespace": "namespace"}


def noun(findings: Sequence[Finding], count: int) -> str:
    kinds = {f.kind for f in findings}
    word = NOUNS.get(next(iter(kinds)), "object") if len(kinds) == 1 else "object"
    return word if count == 1 else word + "s"


def cause_text(group: CauseGroup) -> str:
    names = [safe(name) for name in group.subjects]
    if group.subject_kind != "Node" and len(names) == 1:
        template = cause_of(group.type).shared  # `CSI driver X not installed`
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
    total = f"{len(findings):,} {noun(findings, len(findings))}"
    lines = [f"Summary: {total}, {len(groups)} {causes}"]
    lines += [f"{g.count:,} {noun(findings, g.count)}: {cause_text(g)}" for g in groups]
    return "\n".join(lines) + "\n"
