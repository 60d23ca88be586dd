"""One run: read the cluster, find terminating objects, explain each, render.

Errors become one line on stderr and an exit code (0 ok, 1 error, 2 usage, 3 stuck objects
found with --exit-code); checks that could not be made become warnings, never tracebacks.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Protocol, TypeVar

from kubectl_terminating.errors import ApiError, TerminatingError, Unauthorized, UsageError
from kubectl_terminating.find import Found, Scope
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.options import Options
from kubectl_terminating.resources import NAMESPACES, PODS, Resource
from kubectl_terminating.view import ClusterView

if TYPE_CHECKING:
    from kubectl_terminating.client import Client

EXIT_STUCK = 3
T = TypeVar("T")
R = TypeVar("R")


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


def run(options: Options, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    if options.from_file and not options.namespace:
        # a snapshot has no context to default to: look at everything in it
        options = replace(options, all_namespaces=True)
    try:
        result = collect(options, err)
    except TerminatingError as error:
        print(error_line(error), file=err)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    return report(options, result, out, err)


def error_line(error: TerminatingError) -> str:
    """The one line kubectl would print for this error."""
    from kubectl_terminating.render.style import safe

    if isinstance(error, ApiError) and error.reason and not isinstance(error, Unauthorized):
        return f"Error from server ({error.reason}): {safe(error.message)}"
    return f"error: {safe(error.message)}"


def _explain_all(
    items: Sequence[T],
    explain: Callable[[T], Finding],
    mapper: Callable[[Callable[[T], Finding], Sequence[T]], list[Finding]],
    err: IO[str],
    label: str,
    unexplained: Callable[[T, Exception], Finding],
) -> list[Finding]:
    progress = Progress(err, len(items), label)

    def one(item: T) -> Finding:
        try:
            finding = explain(item)
        except TerminatingError:
            raise  # the server or the credentials are gone: the run's one error line
        except Exception as error:
            # An explainer bug on one odd object must not cost the answer for every other
            # one, nor print a traceback: the object is listed bare with a warning. (The
            # property tests in tests/unit/test_properties.py hunt for such bugs.)
            finding = unexplained(item, error)
        progress.step()
        return finding

    try:
        return mapper(one, items)
    finally:
        progress.finish()


class Source(Protocol):
    """Where terminating objects come from: a live cluster or a saved snapshot."""

    @property
    def view(self) -> ClusterView: ...

    def find_pods(self, scope: Scope) -> Found: ...

    def find_namespaces(self, names: tuple[str, ...]) -> Found: ...

    def find_all(self, scope: Scope) -> tuple[list[tuple[Resource, JSON]], list[str]]: ...

    def map(self, function: Callable[[T], R], inputs: Sequence[T]) -> list[R]: ...


def collect(options: Options, err: IO[str]) -> Result:
    if options.from_file:
        from kubectl_terminating.snapshot import SnapshotSource

        source = SnapshotSource.open(options.from_file, use_now=options.now)
        namespace = None if options.all_namespaces else options.namespace
        return _collect(options, source, namespace, err)
    from kubectl_terminating.live import LiveSource

    client = connect(options, err)
    namespace = None if options.all_namespaces else client.connection.namespace
    try:
        return _collect(options, LiveSource(client, brief=_brief(options)), namespace, err)
    finally:
        report_stats(options, client, err)


def _brief(options: Options) -> bool:
    """Only the table (not wide), --summary or names will be shown: no pod's spec or status
    beyond its node (find.find_pods reads pods on a dead node metadata only)."""
    return not options.explain and options.output in (None, "", "name")


def connect(options: Options, err: IO[str]) -> Client:
    """A client for the cluster the kubeconfig flags select (nothing is sent yet)."""
    import logging

    from kubectl_terminating.client import Client, parse_duration
    from kubectl_terminating.kubeconfig import Overrides, Selection, resolve

    root = logging.getLogger()
    if not root.handlers:  # a library's log record never reaches stderr (logging.lastResort)
        root.addHandler(logging.NullHandler())

    try:
        timeout = parse_duration(options.request_timeout)
    except ValueError as error:
        raise UsageError(str(error)) from None
    connection = resolve(
        Selection(
            kubeconfig=options.kubeconfig,
            context=options.context,
            cluster=options.cluster,
            user=options.user,
            namespace=options.namespace,
            overrides=Overrides(
                server=options.server,
                certificate_authority=options.certificate_authority,
                insecure_skip_tls_verify=options.insecure_skip_tls_verify,
                tls_server_name=options.tls_server_name,
                disable_compression=options.disable_compression,
                token=options.token,
                username=options.username,
                password=options.password,
                client_certificate=options.client_certificate,
                client_key=options.client_key,
                impersonate=options.impersonate,
                impersonate_uid=options.impersonate_uid,
                impersonate_groups=options.impersonate_groups,
                impersonate_extra=options.impersonate_extra,
            ),
        )
    )
    return Client(connection, request_timeout=timeout, verbosity=options.verbosity, log=err)


def report_stats(options: Options, client: Client, err: IO[str]) -> None:
    if options.verbosity >= 1:
        s = client.stats
        print(
            f"requests: {s.requests}, bytes: {s.bytes}, retries: {s.retries}, "
            f"request time: {s.seconds:.2f}s",
            file=err,
        )


def _collect(options: Options, source: Source, namespace: str | None, err: IO[str]) -> Result:
    view = source.view
    detailed = options.explain or options.output in ("json", "yaml")
    if options.kind == "pods":
        from kubectl_terminating.explain.pods import explain_pod

        found = source.find_pods(Scope(namespace, options.names, options.selector))
        findings = _explain_all(
            found.objects,
            lambda p: explain_pod(p, view),
            source.map,
            err,
            "explaining pods",
            lambda p, error: _unexplained(p, PODS, view, error),
        )
        return Result(findings, found.warnings, [f'pods "{n}"' for n in found.missing], namespace)
    if options.kind == "namespaces":
        from kubectl_terminating.explain.namespaces import explain_namespace

        found = source.find_namespaces(options.names)
        findings = _explain_all(
            found.objects,
            lambda ns: explain_namespace(ns, view, explain_pods=detailed),
            source.map,
            err,
            "explaining namespaces",
            lambda ns, error: _unexplained(ns, NAMESPACES, view, error),
        )
        return Result(findings, found.warnings, [f'namespaces "{n}"' for n in found.missing])
    objects, warnings = source.find_all(Scope(namespace, (), options.selector))
    findings = _explain_all(
        objects,
        lambda pair: _object_finding(pair, view),
        source.map,
        err,
        "explaining",
        lambda pair, error: _unexplained(pair[1], pair[0], view, error),
    )
    return Result(findings, warnings, [], namespace)


def _unexplained(obj: JSON, resource: Resource, view: ClusterView, error: Exception) -> Finding:
    from kubectl_terminating.explain.common import base_finding

    finding = base_finding(obj, view, resource.kind, resource.api_version)
    finding.warnings.append(
        f"could not explain it: internal error {type(error).__name__}: {error} "
        "(a bug in kubectl-terminating: please report it)"
    )
    return finding


def _object_finding(pair: tuple[Resource, JSON], view: ClusterView) -> Finding:
    """Every kind is explained, the table too: its BLOCKER column names the main blocker."""
    from kubectl_terminating.explain.objects import explain_object

    resource, obj = pair
    return explain_object(obj, resource, view)


def _warnings(result: Result) -> list[str]:
    seen = dict.fromkeys(result.warnings)
    for finding in result.findings:
        seen.update(dict.fromkeys(finding.warnings))
    return list(seen)


def report(options: Options, result: Result, out: IO[str], err: IO[str]) -> int:
    from kubectl_terminating.render import explain, structured, table
    from kubectl_terminating.render.style import Style, safe, use_color
    from kubectl_terminating.render.summary import SUMMARY_AFTER_ROWS, summary_text

    warnings = _warnings(result)
    for warning in warnings:
        print(f"Warning: {safe(warning)}", file=err)
    for missing in result.missing:
        print(f"Error from server (NotFound): {safe(missing)} not found", file=err)
    findings = result.findings
    if options.output == "json":
        out.write(structured.to_json(findings, warnings))
    elif options.output == "yaml":
        out.write(structured.to_yaml(findings, warnings))
    elif not findings:
        if not result.missing:
            where = f" in {safe(result.namespace)} namespace" if result.namespace else ""
            print(f"No resources found{where}.", file=err)
    elif options.output == "name":
        out.write(structured.to_names(findings))
    else:
        style = Style(color=use_color(options.color, out))
        if options.explain:
            out.write(explain.explain_text(findings, style))
        elif options.summary:
            out.write(summary_text(findings))
        elif options.kind == "pods":
            out.write(
                table.pods_table(
                    findings,
                    options.all_namespaces,
                    options.output == "wide",
                    options.no_headers,
                    style,
                )
            )
        elif options.kind == "namespaces":
            out.write(
                table.namespaces_table(
                    findings, options.output == "wide", options.no_headers, style
                )
            )
        else:
            out.write(
                table.objects_table(findings, options.all_namespaces, options.no_headers, style)
            )
        # a long table ends with its causes; --no-headers output stays rows only (scripts)
        if not (options.explain or options.summary or options.no_headers) and (
            len(findings) > SUMMARY_AFTER_ROWS
        ):
            out.write("\n" + summary_text(findings))
    if result.missing:
        return 1
    if options.exit_code and any(f.stuck for f in findings):
        return EXIT_STUCK
    return 0
