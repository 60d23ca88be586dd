"""Which printer a run uses, decided in this one place from the completed request.

The printers take data: the kind's table and the fields each finding's kind adds are given
(run.report passes the kind registry's), never looked up here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from kubectl_terminating.model import Finding
from kubectl_terminating.options import Request
from kubectl_terminating.render import explain, structured
from kubectl_terminating.render.structured import Extras
from kubectl_terminating.render.style import Style, use_color
from kubectl_terminating.render.summary import SUMMARY_AFTER_ROWS, summary_text
from kubectl_terminating.render.table import Column, PrintOptions

Render = Callable[[Sequence[Finding], Sequence[str]], str]  # (findings, warnings) -> text
Table = Callable[[Sequence[Finding], PrintOptions], str]  # a kind's table (kinds.Kind.table)
Summarize = Callable[[Sequence[Finding]], str]


@dataclass(frozen=True)
class Printer:
    render: Render
    prints_empty: bool = False  # an empty List is output; otherwise "No resources found"


def printer(
    request: Request,
    table: Table,
    extras: Extras,
    out: IO[str],
    summarize: Summarize | None = None,
    leading: tuple[Column, ...] = (),
) -> Printer:
    """summarize: the cause summary (default: summary_text); leading: columns before the
    table's own (a run over several contexts gives both: fleet.py)."""
    summary = summarize or summary_text
    options = request.options
    if options.output == "json":
        return Printer(lambda findings, w: structured.to_json(findings, w, extras), True)
    if options.output == "yaml":
        return Printer(lambda findings, w: structured.to_yaml(findings, w, extras), True)
    if options.output == "name":
        return Printer(lambda findings, _: structured.to_names(findings))
    style = Style(color=use_color(options.color, out))
    if options.explain:
        return Printer(lambda findings, _: explain.explain_text(findings, style, extras))
    if options.summary:
        return Printer(lambda findings, _: summary(findings))
    wide = options.output == "wide"
    printing = PrintOptions(options.all_namespaces, wide, options.no_headers, style, leading)

    def rows(findings: Sequence[Finding], _warnings: Sequence[str]) -> str:
        text = table(findings, printing)
        # a long table ends with its causes; --no-headers output stays rows only (scripts)
        if not printing.no_headers and len(findings) > SUMMARY_AFTER_ROWS:
            text += "\n" + summary(findings)
        return text

    return Printer(rows)
