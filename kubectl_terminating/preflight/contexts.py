"""`preflight --contexts a,b` / `--all-contexts`: the same deletion judged on each cluster,
concurrently, each with its own credentials; a context that cannot be read is one warning.
Exit 3 when any is blocked, else 4 when any is undecided or unread, else 0."""

from __future__ import annotations

import concurrent.futures
import io
import json
from dataclasses import replace
from typing import IO

from kubectl_terminating.errors import ExitStatus, TerminatingError
from kubectl_terminating.fleet import FLEET_WORKERS, context_names
from kubectl_terminating.model import API_VERSION, JSON
from kubectl_terminating.options import Options
from kubectl_terminating.preflight.api import Target
from kubectl_terminating.preflight.report import BLOCKED, UNDECIDED, Report
from kubectl_terminating.terminal import safe


def judged(
    options: Options, target: Target, manifest: tuple[JSON, ...], err: IO[str]
) -> list[tuple[str, Report | None]]:
    """(context, its report, or None when it could not be read) in the order named."""
    from kubectl_terminating.connection import error_line, read_kuberc
    from kubectl_terminating.preflight.reading import live_report

    def one(context: str) -> tuple[str, Report | None, str]:
        single = replace(options, context=context, contexts=None, all_contexts=False)
        log = io.StringIO()
        try:
            return context, live_report(single, target, manifest, log), log.getvalue()
        except TerminatingError as error:
            said = error_line(error).removeprefix("error: ")
            return context, None, said.removeprefix(f'context "{context}": ')

    names = context_names(options)
    read_kuberc(err)
    with concurrent.futures.ThreadPoolExecutor(FLEET_WORKERS) as pool:
        done = list(pool.map(one, names))
    for context, report, said in done:
        if report is None:
            print(f"Warning: context {safe(context)}: {safe(said)}", file=err)
    return [(context, report) for context, report, _ in done]


def exit_code(results: list[tuple[str, Report | None]]) -> int:
    verdicts = {r.verdict if r is not None else UNDECIDED for _, r in results}
    if BLOCKED in verdicts:
        return int(ExitStatus.STUCK)
    return int(ExitStatus.UNDECIDED if UNDECIDED in verdicts else ExitStatus.OK)


def render_all(results: list[tuple[str, Report | None]], output: str | None, explain: bool) -> str:
    from kubectl_terminating.preflight.render import render
    from kubectl_terminating.render.structured import yaml_text

    if output in ("json", "yaml"):
        items = [
            {**r.to_json(), "context": c} if r is not None else {"context": c, "error": True}
            for c, r in results
        ]
        document = {"apiVersion": API_VERSION, "kind": "List", "items": items}
        return json.dumps(document, indent=2) + "\n" if output == "json" else yaml_text(document)
    parts = [
        f"Context: {safe(c)}\n" + (render(r, None, explain) if r else "not read\n")
        for c, r in results
    ]
    return "\n".join(parts)
