"""One run: read the cluster, find terminating objects, explain each, render."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from kubectl_terminating import kinds
from kubectl_terminating.connection import connected
from kubectl_terminating.errors import ExitStatus, TerminatingError
from kubectl_terminating.model import JSON, FailedCheck, Finding
from kubectl_terminating.options import Options, Request, complete
from kubectl_terminating.resources import Resource
from kubectl_terminating.source import Source
from kubectl_terminating.view import ClusterView

if TYPE_CHECKING:
    from kubectl_terminating.render.printer import Printer


@dataclass
class Result:
    findings: list[Finding]
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    namespace: str | None = None  # the namespace looked in (None: all or cluster-scoped)


class Progress:
    """`explaining 12/40` on stderr, only when stderr is a terminal."""

    def __init__(self, stream: IO[str], total: int, label: str) -> None:
        self.stream, self.total, self.label = stream, total, label
        self.enabled = total > 1 and bool(getattr(stream, "isatty", lambda: False)())
        self.done = 0
        self.lock = threading.Lock()

    def step(self) -> None:
        if not self.enabled:
            return
        with self.lock:
            self.done += 1
            self.stream.write(f"\r{self.label} {self.done}/{self.total}...")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def run_snapshot(options: Options, source: Source, out: IO[str], err: IO[str]) -> int:
    request = complete(options, None)
    return report(request, collect(request, source, err), out, err)


def run_live(options: Options, out: IO[str], err: IO[str]) -> int:
    from kubectl_terminating.live import LiveSource

    with connected(options, err) as client:
        request = complete(options, client.connection.namespace)
        result = collect(request, LiveSource(client), err)
    return report(request, result, out, err)


def collect(
    request: Request,
    source: Source,
    err: IO[str],
    on_found: Callable[[tuple[Resource, JSON]], None] | None = None,
    view_for: Callable[[ClusterView, JSON], ClusterView] | None = None,
) -> Result:
    """The terminating objects of the request's kind, each explained (and first passed to
    on_found: `dump` keeps them; through view_for(view, object) when given: --watch notes
    what each explanation reads)."""
    kind = kinds.by_command(request.options.kind)
    view, detailed = source.view, request.detailed
    # Objects explained as the finder hands them over, in its reading threads: a dead node's
    # pods are explained while the next nodes are read (the server's time). Not when each
    # object is seen first (dump) or through its own view (--watch).
    early: dict[int, tuple[JSON, Finding]] = {}
    resource_of = kind.resource

    def explain_early(objects: list[JSON]) -> None:
        assert resource_of is not None
        for obj in objects:  # by identity; the entry holds obj, so its id stays its own
            early[id(obj)] = obj, explain_one(kind, obj, resource_of, view, detailed)

    as_found = resource_of is not None and on_found is None and view_for is None
    found = kind.find(source, request, explain_early if as_found else None)
    if on_found is not None:
        for pair in found.objects:
            on_found(pair)
    progress = Progress(err, len(found.objects), kind.progress)

    def one(pair: tuple[Resource, JSON]) -> Finding:
        resource, obj = pair
        made = early.pop(id(obj), None)
        if made is not None and made[0] is obj and resource == resource_of:
            finding = made[1]
        else:
            seen = view_for(view, obj) if view_for else view
            finding = explain_one(kind, obj, resource, seen, detailed)
        progress.step()
        return finding

    try:
        findings = source.map(one, found.objects)
    finally:
        progress.finish()
    warnings = [*found.warnings, *_node_evidence(request, source, found.objects, findings)]
    namespace = request.namespace if kind.namespaced else None
    return Result(findings, warnings, found.missing, namespace)


def _node_evidence(
    request: Request,
    source: Source,
    objects: list[tuple[Resource, JSON]],
    findings: list[Finding],
) -> list[str]:
    """The kubelet's own word for the stuck pods whose blocker is on their node, with
    --node-evidence; without it (or from a snapshot that has none) why it was not read."""
    from kubectl_terminating.nodeevidence import NOT_ASKED, apply_node_evidence

    pairs = [(obj, f) for (_, obj), f in zip(objects, findings, strict=True) if f.kind == "Pod"]
    if not request.options.node_evidence:
        return apply_node_evidence(pairs, source.view, None, NOT_ASKED)
    return apply_node_evidence(pairs, source.view, source.node_evidence)


def explain_one(
    kind: kinds.Kind, obj: JSON, resource: Resource, view: ClusterView, detailed: bool
) -> Finding:
    """The object explained; on an explainer bug listed bare with a warning: one odd object
    must not cost the answer for every other one, nor print a traceback. (The property tests
    in tests/unit/test_properties.py hunt for such bugs.)"""
    try:
        return kind.explain(obj, resource, view, detailed)
    except TerminatingError:
        raise  # the server or the credentials are gone: the run's one error line
    except Exception as error:
        return _unexplained(obj, resource, view, error)


def _unexplained(obj: JSON, resource: Resource, view: ClusterView, error: Exception) -> Finding:
    from kubectl_terminating.explain.common import base_finding

    finding = base_finding(obj, view, resource.kind, resource.api_version)
    finding.warnings.append(
        FailedCheck(
            f"could not explain it: internal error {type(error).__name__}: {error} "
            "(a bug in kubectl-terminating: please report it)"
        )
    )
    return finding


def problems(result: Result) -> list[str]:
    """Each warning once: the run's, then its findings'."""
    seen = dict.fromkeys(result.warnings)
    for finding in result.findings:
        seen.update(dict.fromkeys(finding.warnings))
    return list(seen)


def print_problems(result: Result, err: IO[str], warnings: list[str] | None = None) -> list[str]:
    """The warnings (default: the result's, see problems), then each name not found, on
    err; returns the warnings."""
    from kubectl_terminating.render.style import safe

    shown = problems(result) if warnings is None else warnings
    for warning in shown:
        print(f"Warning: {safe(warning)}", file=err)
    for missing in result.missing:
        print(f"Error from server (NotFound): {safe(missing)} not found", file=err)
    return shown


def report(
    request: Request,
    result: Result,
    out: IO[str],
    err: IO[str],
    show: Printer | None = None,
    warnings: list[str] | None = None,
) -> int:
    """Print the result; show: the printer (default: the request's), warnings: those to
    print instead of the result's (a run over several contexts names each one's)."""
    from kubectl_terminating.render.printer import printer
    from kubectl_terminating.render.style import safe

    warnings = print_problems(result, err, warnings)
    findings = result.findings
    kind = kinds.by_command(request.options.kind)
    show = show or printer(request, kind.table, kinds.json_extras, out)
    if findings or show.prints_empty:
        out.write(show.render(findings, warnings))
    elif not result.missing:
        where = f" in {safe(result.namespace)} namespace" if result.namespace else ""
        print(f"No resources found{where}.", file=err)
    if result.missing:
        return ExitStatus.ERROR
    if request.options.exit_code and any(f.stuck for f in findings):
        return ExitStatus.STUCK
    return ExitStatus.OK
