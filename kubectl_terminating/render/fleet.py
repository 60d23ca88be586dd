"""Output of a run over several kubeconfig contexts (fleet.py): the same printers, with a
CONTEXT column first, one --explain section per context and the cause summary grouped across
clusters (`CSI driver X not installed: 140 pods in 7 clusters: prod-eu-1 (40), ...`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from kubectl_terminating.model import Finding
from kubectl_terminating.options import Request
from kubectl_terminating.render.printer import Printer, Table, printer
from kubectl_terminating.render.structured import Extras
from kubectl_terminating.render.style import safe
from kubectl_terminating.render.table import Column

CONTEXT = Column("CONTEXT", lambda f, _: safe(f.context or ""))
# Clusters named in a summary line; the rest are counted.
SHOWN_CONTEXTS = 5


def _clusters(count: int) -> str:
    return f"{count} cluster{'' if count == 1 else 's'}"


def fleet_summary_text(findings: Sequence[Finding]) -> str:
    """One line per cause across every cluster, each naming the clusters it is in."""
    from kubectl_terminating.render.summary import cause_text, noun
    from kubectl_terminating.summary import group_by_cause

    if not findings:
        return ""
    groups = group_by_cause(findings)
    clusters = len({f.context for f in findings})
    causes = "cause" if len(groups) == 1 else "causes"
    total = f"{len(findings):,} {noun(findings, len(findings))}"
    lines = [f"Summary: {total} in {_clusters(clusters)}, {len(groups)} {causes}"]
    for group in groups:
        shown = ", ".join(f"{safe(c)} ({n:,})" for c, n in group.contexts[:SHOWN_CONTEXTS])
        if len(group.contexts) > SHOWN_CONTEXTS:
            shown += f", ... {len(group.contexts) - SHOWN_CONTEXTS} more"
        lines.append(
            f"{cause_text(group)}: {group.count:,} {noun(findings, group.count)} in "
            f"{_clusters(len(group.contexts))}: {shown}"
        )
    return "\n".join(lines) + "\n"


def _by_context(findings: Sequence[Finding]) -> dict[str, list[Finding]]:
    parts: dict[str, list[Finding]] = {}
    for finding in findings:
        parts.setdefault(finding.context or "", []).append(finding)
    return parts


def fleet_printer(request: Request, table: Table, extras: Extras, out: IO[str]) -> Printer:
    """The printer of a fleet run: one context's, with the CONTEXT column, the summary
    across clusters and one --explain section per context (json and yaml items name their
    context themselves)."""
    from kubectl_terminating.render.explain import explain_text
    from kubectl_terminating.render.style import Style, use_color

    if request.options.explain:
        style = Style(color=use_color(request.options.color, out))

        def explain(findings: Sequence[Finding], _warnings: Sequence[str]) -> str:
            return "\n".join(
                f"{style.bold('Context: ' + safe(context))}\n\n{explain_text(part, style, extras)}"
                for context, part in _by_context(findings).items()
            )

        return Printer(explain)
    return printer(request, table, extras, out, fleet_summary_text, (CONTEXT,))
