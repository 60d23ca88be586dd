"""Which printer a run uses, decided in this one place from the completed request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from kubectl_terminating.kinds import Kind
from kubectl_terminating.model import Finding
from kubectl_terminating.options import Request

Render = Callable[[Sequence[Finding], Sequence[str]], str]  # (findings, warnings) -> text


@dataclass(frozen=True)
class Printer:
    render: Render
    prints_empty: bool = False  # an empty List is output; otherwise "No resources found"


def printer(request: Request, kind: Kind, out: IO[str]) -> Printer:
    from kubectl_terminating.render import explain, structured
    from kubectl_terminating.render.style import Style, use_color
    from kubectl_terminating.render.summary import SUMMARY_AFTER_ROWS, summary_text

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
        return Printer(lambda findings, _: summary_text(findings))
    printing = request.print_options(style)

    def table(findings: Sequence[Finding], _warnings: Sequence[str]) -> str:
        text = kind.table(findings, printing)
        # a long table ends with its causes; --no-headers output stays rows only (scripts)
        if not printing.no_headers and len(findings) > SUMMARY_AFTER_ROWS:
            text += "\n" + summary_text(findings)
        return text

    return Printer(table)
