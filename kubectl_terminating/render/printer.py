"""Which printer a run uses, decided in this one place from the completed request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING

from kubectl_terminating.kinds import Kind
from kubectl_terminating.model import Finding
from kubectl_terminating.options import Request

if TYPE_CHECKING:
    from kubectl_terminating.render.table import Column

Render = Callable[[Sequence[Finding], Sequence[str]], str]  # (findings, warnings) -> text
Summarize = Callable[[Sequence[Finding]], str]


@dataclass(frozen=True)
class Printer:
    render: Render
    prints_empty: bool = False  # an empty List is output; otherwise "No resources found"


def printer(
    request: Request,
    kind: Kind,
    out: IO[str],
    summarize: Summarize | None = None,
    leading: tuple[Column, ...] = (),
) -> Printer:
    """summarize: the cause summary (default: summary_text); leading: columns before the
    table's own (a run over several contexts gives both: fleet.py)."""
    from kubectl_terminating.render import explain, structured
    from kubectl_terminating.render.style import Style, use_color
    from kubectl_terminating.render.summary import SUMMARY_AFTER_ROWS, summary_text

    summary = summarize or summary_text
    options = request.options
    if options.output == "json":
        return Printer(structured.to_json, prints_empty=True)
    if options.output == "yaml":
        return Printer(structured.to_yaml, prints_empty=True)
    if options.output == "name":
        return Printer(lambda findings, _: structured.to_names(findings))
    style = Style(color=use_color(options.color, out))
    if options.explain:
        return Printer(lambda findings, _: explain.explain_text(findings, style))
    if options.summary:
        return Printer(lambda findings, _: summary(findings))
    printing = replace(request.print_options(style), leading=leading)

    def table(findings: Sequence[Finding], _warnings: Sequence[str]) -> str:
        text = kind.table(findings, printing)
        # a long table ends with its causes; --no-headers output stays rows only (scripts)
        if not printing.no_headers and len(findings) > SUMMARY_AFTER_ROWS:
            text += "\n" + summary(findings)
        return text

    return Printer(table)
