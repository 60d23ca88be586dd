"""`serve`'s HTTP answers beside /metrics: the read-only API (`/api/v1/...`) and the pages.

    GET /api/v1/findings[?kind=&namespace=&type=]   the last run's `all -A -o json` document
    GET /api/v1/explain/RESOURCE/NAMESPACE/NAME     one object's item (cluster-scoped: no NS)
    GET /                                           the index page (same filters)
    GET /objects/RESOURCE/NAMESPACE/NAME            one object's `--explain` page

serve remembers when its runs first saw each object stuck (by uid), for the object's page;
an object is forgotten once a run finds it no longer stuck or gone, so what is remembered is
bounded by what is stuck now.

An object the last run did not cover is read on demand (at most ON_DEMAND at a time; past
that a 503). Errors are Kubernetes Status objects (kubectl's NotFound wording), never a
traceback; nothing but GET and HEAD is answered, and nothing answered writes to the cluster.
A WSGI application, served by the standard library's server (as prometheus_client's own).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import IO, Any
from urllib.parse import parse_qs

from kubectl_terminating import kinds
from kubectl_terminating.causes import CAUSES
from kubectl_terminating.errors import (
    ConfigError,
    Forbidden,
    NotFound,
    TerminatingError,
    UsageError,
)
from kubectl_terminating.exporter import pages
from kubectl_terminating.model import API_VERSION, JSON, Finding
from kubectl_terminating.resources import Resource
from kubectl_terminating.timeutil import human_duration
from kubectl_terminating.view import Discovery

ON_DEMAND = 4  # on-demand reads at once: each is a few API requests
FILTERS = ("kind", "namespace", "type")
READ_METHODS = ("GET", "HEAD")
JSON_TYPE = "application/json"
HTML_TYPE = "text/html; charset=utf-8"

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
# (resource as kubectl takes it, namespace or None, name) -> the finding and its resource
Explainer = Callable[[str, str | None, str], tuple[Finding, Resource]]

STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
REASONS = {
    400: "BadRequest",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    500: "InternalError",
    503: "ServiceUnavailable",
}


class Refused(Exception):
    """An answer other than 200: a Kubernetes Status with this code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def status(code: int, message: str) -> JSON:
    """A Kubernetes Status, as the API server answers an error (reason from the code)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(code, "Unknown"),
        "code": code,
    }


def rfc3339(unix: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix))


@dataclass(frozen=True)
class LastRun:
    """What the last successful run found; replaced whole, never changed in place."""

    findings: tuple[Finding, ...]
    warnings: tuple[str, ...]
    types: tuple[Resource, ...]  # the resource type of each kind found
    finished_at: float  # unix time
    # when serve's runs first saw each stuck object (identity -> unix time), and its first run
    first_seen: Mapping[str, float] = field(default_factory=dict)
    first_run: float = 0.0

    @classmethod
    def after(
        cls,
        previous: LastRun | None,
        findings: tuple[Finding, ...],
        warnings: tuple[str, ...],
        types: tuple[Resource, ...],
        now: float,
    ) -> LastRun:
        """This run, remembering from previous when each object still stuck was first seen
        stuck (now for one stuck since); the rest is forgotten."""
        before = previous.first_seen if previous is not None else {}
        seen = {key: before.get(key, now) for key in (identity(f) for f in findings if f.stuck)}
        first_run = previous.first_run if previous is not None else now
        return cls(findings, warnings, types, now, seen, first_run)

    def seen_line(self, finding: Finding, now: float) -> str:
        """When serve first saw the object stuck, as its page says it."""
        seen = self.first_seen.get(identity(finding))
        if seen is None:
            return "not seen stuck by serve's runs (yet)"
        ago = human_duration(max(0.0, now - seen))
        line = f"{rfc3339(seen)} ({ago} ago)"
        if seen <= self.first_run:  # serve was not looking before then
            line += ", in serve's first run: stuck since before serve started"
        return line

    def resource_of(self, finding: Finding) -> Resource | None:
        key = (finding.api_version, finding.kind)
        return next((r for r in self.types if (r.api_version, r.kind) == key), None)

    def find(self, resource: str, namespace: str | None, name: str) -> tuple[Finding, Resource]:
        """The finding of that object; NotFound when the run did not cover it."""
        from kubectl_terminating.preflight.api import resolve_type

        found = resolve_type(resource, Discovery(resources=list(self.types)))  # ConfigError
        check_scope(found, namespace)
        for finding in self.findings:
            if (finding.api_version, finding.kind, finding.namespace, finding.name) == (
                found.api_version,
                found.kind,
                namespace,
                name,
            ):
                return finding, found
        raise NotFound(f'{found.qualified} "{name}" not found')


def check_scope(resource: Resource, namespace: str | None) -> None:
    """A namespaced type needs a namespace in the path, a cluster-scoped one none."""
    if resource.namespaced and namespace is None:
        raise Refused(400, f"{resource.qualified} is namespaced: give RESOURCE/NAMESPACE/NAME")
    if not resource.namespaced and namespace is not None:
        raise Refused(400, f"{resource.qualified} is cluster-scoped: give RESOURCE/NAME")


def filters_of(query: str) -> dict[str, str]:
    """The query's filters; an unknown parameter, one given twice, or an unknown blocker type
    is a 400 (a typo must not look like "nothing found")."""
    given = parse_qs(query, keep_blank_values=True)
    for key, values in given.items():
        if key not in FILTERS:
            raise Refused(400, f'unknown query parameter "{key}": use {", ".join(FILTERS)}')
        if len(values) != 1 or not values[0]:
            raise Refused(400, f'query parameter "{key}" wants one value')
    wanted = {key: values[0] for key, values in given.items()}
    if "type" in wanted and wanted["type"] not in CAUSES:
        raise Refused(
            400, f'unknown blocker type "{wanted["type"]}": see kubectl terminating types'
        )
    return wanted


def selected(finding: Finding, wanted: dict[str, str]) -> bool:
    """Whether the finding passes the filters. A Namespace is in its own namespace, as in the
    metrics (an alert's namespace label links to it)."""
    if "kind" in wanted and finding.kind.lower() != wanted["kind"].lower():
        return False
    if "namespace" in wanted and wanted["namespace"] != own_namespace(finding):
        return False
    return "type" not in wanted or any(b.type == wanted["type"] for b in finding.blockers)


def identity(finding: Finding) -> str:
    """The object across runs: its uid (a new object of the same name is another)."""
    where = f"{finding.api_version}/{finding.kind}/{finding.namespace or ''}/{finding.name}"
    return finding.uid or where


def own_namespace(finding: Finding) -> str | None:
    """The namespace the filters put it in: a Namespace is in its own."""
    return finding.name if finding.kind == "Namespace" else finding.namespace


def facets(findings: Iterable[Finding], wanted: dict[str, str]) -> dict[str, list[tuple[str, int]]]:
    """For each filter, the values the findings have (with how many have each), among those
    that pass the other filters: each a link that narrows the index."""
    findings = list(findings)
    out = {}
    for key in FILTERS:
        others = {k: v for k, v in wanted.items() if k != key}
        counts: Counter[str] = Counter()
        for finding in findings:
            if selected(finding, others):
                counts.update(_values(finding, key))
        out[key] = sorted(counts.items(), key=lambda pair: pair[0].lower())
    return out


def _values(finding: Finding, key: str) -> set[str]:
    if key == "kind":
        return {finding.kind}
    if key == "namespace":
        own = own_namespace(finding)
        return {own} if own else set()
    return {b.type for b in finding.blockers}


def findings_document(last: LastRun, wanted: dict[str, str]) -> JSON:
    from kubectl_terminating.render.structured import list_document

    chosen = [f for f in last.findings if selected(f, wanted)]
    document = list_document(chosen, last.warnings, kinds.json_extras)
    return {"apiVersion": API_VERSION, "kind": "List", "generatedAt": rfc3339(last.finished_at)} | {
        key: value for key, value in document.items() if key not in ("apiVersion", "kind")
    }


def object_address(segments: Sequence[str]) -> tuple[str, str | None, str]:
    """(resource, namespace or None, name) of RESOURCE/NAMESPACE/NAME or RESOURCE/NAME."""
    if len(segments) == 3:
        return segments[0], segments[1], segments[2]
    if len(segments) == 2:
        return segments[0], None, segments[1]
    raise Refused(400, "want RESOURCE/NAMESPACE/NAME, or RESOURCE/NAME for a cluster-scoped one")


class Answer:
    def __init__(self, code: int, content_type: str, body: bytes, **headers: str) -> None:
        self.code, self.content_type, self.body, self.headers = code, content_type, body, headers


# As Go's encoding/json (and so the API server) writes them: a JSON answer opened as HTML by
# mistake holds no markup. Outside strings JSON has none of these characters.
JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def json_answer(code: int, document: JSON, **headers: str) -> Answer:
    text = json.dumps(document, indent=2, ensure_ascii=True).translate(JSON_ESCAPES) + "\n"
    return Answer(code, JSON_TYPE, text.encode(), **headers)


class Site:
    """The WSGI application: /metrics to prometheus_client's, the rest answered here."""

    def __init__(
        self,
        metrics: WSGIApp,
        explain_now: Explainer,
        err: IO[str],
        problems: Callable[[], list[str]] = list,
    ) -> None:
        """problems: serve's dead threads (health.py), for /healthz."""
        self.metrics, self.explain_now, self.err = metrics, explain_now, err
        self.problems = problems
        self.last: LastRun | None = None  # set by the diagnosis loop, read by request threads
        self.on_demand = threading.BoundedSemaphore(ON_DEMAND)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        raw = str(environ.get("PATH_INFO") or "/")
        path = raw.encode("latin-1", "replace").decode("utf-8", "replace")  # PEP 3333
        if path == "/metrics":
            return self.metrics(environ, start_response)
        if path == "/healthz":  # a liveness probe: 503 while one of serve's threads is dead
            problems = self.problems()
            body = ("\n".join(problems) if problems else "ok").encode() + b"\n"
            code = "503 Service Unavailable" if problems else "200 OK"
            start_response(code, [("Content-Type", "text/plain; charset=utf-8")])
            return [body]
        method = str(environ.get("REQUEST_METHOD") or "GET")
        page = not path.startswith("/api/")
        try:
            if method not in READ_METHODS:
                raise Refused(405, f"method {method} is not allowed: this server only reads")
            answer = self.route(path, str(environ.get("QUERY_STRING") or ""))
        except Refused as refused:
            answer = self.refusal(refused.code, refused.message, page, path)
        except TerminatingError as error:
            answer = self.refusal(*code_of(error), page, path)
        except Exception as error:  # a bug: one line in the log and a 500, never a traceback
            print(f"serve: {path}: {type(error).__name__}: {error}", file=self.err, flush=True)
            answer = self.refusal(500, f"internal error {type(error).__name__}", page, path)
        headers = [
            ("Content-Type", answer.content_type),
            ("Content-Length", str(len(answer.body))),
            ("Content-Security-Policy", pages.CONTENT_SECURITY_POLICY),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"),
            *answer.headers.items(),
        ]
        if answer.code == 405:
            headers.append(("Allow", ", ".join(READ_METHODS)))
        start_response(f"{answer.code} {STATUS_TEXT.get(answer.code, '')}".strip(), headers)
        return [] if method == "HEAD" else [answer.body]

    def refusal(self, code: int, message: str, page: bool, path: str) -> Answer:
        if page:
            root = "../" * (path.count("/") - 1) or "./"
            return Answer(code, HTML_TYPE, pages.error_page(code, message, root).encode())
        return json_answer(code, status(code, message))

    def route(self, path: str, query: str) -> Answer:
        segments = path.strip("/").split("/") if path.strip("/") else []
        if any(s in ("", ".", "..") for s in segments):
            raise Refused(400, f"malformed path {path!r}")
        if not segments:
            return self.index(query)
        if segments[0] == "objects":
            # the way back to / from the path as given (a trailing slash is one level more)
            return self.object_page(object_address(segments[1:]), path.count("/") - 1)
        if segments[:2] == ["api", "v1"] and len(segments) > 2:
            if segments[2:] == ["findings"]:
                last = self.current()
                return json_answer(200, findings_document(last, filters_of(query)))
            if segments[2] == "explain":
                finding, _, when = self.explain(object_address(segments[3:]))
                return json_answer(200, finding.to_json(kinds.json_extras), **when)
        raise Refused(404, f"the server could not find the requested resource {path!r}")

    def current(self) -> LastRun:
        last = self.last
        if last is None:
            raise Refused(503, "the first run of the diagnosis has not finished yet")
        return last

    def explain(
        self, address: tuple[str, str | None, str]
    ) -> tuple[Finding, Resource, dict[str, str]]:
        """The object from the last run, else read now; the header that says when."""
        last = self.current()
        try:
            finding, resource = last.find(*address)
            return finding, resource, {"Last-Modified": formatdate(last.finished_at, usegmt=True)}
        except (NotFound, ConfigError):
            pass  # not in the last run: it may have started terminating since
        if not self.on_demand.acquire(blocking=False):
            raise Refused(503, f"too many objects read on demand at once ({ON_DEMAND}): try again")
        try:
            finding, resource = self.explain_now(*address)
        finally:
            self.on_demand.release()
        return finding, resource, {"Last-Modified": formatdate(usegmt=True)}

    def index(self, query: str) -> Answer:
        last, wanted = self.current(), filters_of(query)
        listed = [(f, r) for f in last.findings if (r := last.resource_of(f)) is not None]
        rows = [
            (finding, resource.qualified)
            for finding, resource in sorted(listed, key=lambda pair: index_order(pair[0]))
            if selected(finding, wanted)
        ]
        links = facets((finding for finding, _ in listed), wanted)
        html = pages.index_page(rows, rfc3339(last.finished_at), wanted, links)
        return Answer(200, HTML_TYPE, html.encode())

    def object_page(self, address: tuple[str, str | None, str], up: int) -> Answer:
        finding, resource, when = self.explain(address)
        root = "../" * up
        api = (
            root
            + "api/v1/explain/"
            + pages.object_path(resource.qualified, finding.namespace, finding.name).removeprefix(
                "objects/"
            )
        )
        generated = f"Read {when['Last-Modified']}"
        seen = self.current().seen_line(finding, time.time())
        html = pages.object_page(finding, kinds.json_extras, generated, root, api, seen)
        return Answer(200, HTML_TYPE, html.encode())


def index_order(finding: Finding) -> tuple[bool, bool, int, str, str]:
    """Stuck first, the most overdue first (how overdue unknown: after those known), then
    by namespace and name."""
    overdue = finding.overdue_seconds
    return (
        not finding.stuck,
        overdue is None,
        -(overdue or 0),
        finding.namespace or "",
        finding.name,
    )


def code_of(error: TerminatingError) -> tuple[int, str]:
    """The HTTP code of an error met while reading on demand, and its message."""
    if isinstance(error, NotFound | ConfigError):  # no such object, or no such type
        return 404, error.message
    if isinstance(error, UsageError):
        return 400, error.message
    if isinstance(error, Forbidden):
        return 403, error.message
    return 503, error.message  # the API server unreachable, slow, or refusing serve itself
