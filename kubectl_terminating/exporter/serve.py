"""The exporter's loop: run the diagnosis every interval, and as soon as the watch layer
(watch.py, as `all -A -w` uses it) sees an object start terminating, what holds one change, or
one go; serve the last run's metrics, and its findings as an API and pages (web.py).

Each run is the CLI's own pipeline (run.collect over a LiveSource, `all -A`), with a fresh
client: the in-cluster token file and the kubeconfig are read again, and one run's memo never
outlives it. The watches only wake the loop: on a quiet cluster they are idle connections. The
HTTP server, the runs and the watches are threads; the main thread only waits for SIGTERM or
Ctrl-C, then stops serving and exits 0 without waiting for a run in progress (it only reads).
"""

from __future__ import annotations

import io
import signal
import threading
import time
from dataclasses import dataclass, replace
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from kubectl_terminating.client import parse_duration
from kubectl_terminating.connection import connect, error_line
from kubectl_terminating.errors import TerminatingError, UsageError
from kubectl_terminating.exporter.health import Health
from kubectl_terminating.exporter.metrics import Metrics
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.options import Options, complete
from kubectl_terminating.resources import Resource
from kubectl_terminating.watch import Lines

if TYPE_CHECKING:
    from collections.abc import Callable
    from wsgiref.simple_server import WSGIServer

    from kubectl_terminating.client import Client
    from kubectl_terminating.exporter.events import Recorder
    from kubectl_terminating.exporter.web import Site
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.run import Result
    from kubectl_terminating.view import ClusterView
    from kubectl_terminating.watch import Session

    ViewFor = Callable[[ClusterView, JSON], ClusterView]

# After a change, wait this long for the rest of a burst (a node dies: all its pods at once),
# and start runs at least MIN_GAP apart: an outage is one run or two, not one per pod.
SETTLE_SECONDS = 1.0
MIN_GAP_SECONDS = 5.0
RETRY_WATCH_SECONDS = 30.0  # before setting up the watches again when that failed
RESTART_WATCH_SECONDS = 5.0  # before watching again when following the changes failed


@dataclass(frozen=True)
class ServeOptions:
    address: str  # host:port, `:9101` for every interface
    interval: str  # a kubectl duration: 30s, 1m
    external_url: str = ""  # where users reach the pages (the alerts link there)
    record_events: bool = False  # an Event on each stuck object (events.py)
    events_qps: float = 5.0  # the token bucket of those writes (events.DEFAULT_QPS)
    events_burst: int = 25


def parse_address(address: str) -> tuple[str, int]:
    """(host, port) of `:9101`, `127.0.0.1:9101` or `[::1]:9101`; no host: every interface."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535:
        raise UsageError(f'invalid --metrics-bind-address "{address}": want HOST:PORT or :PORT')
    host = host.removeprefix("[").removesuffix("]")
    return host or "0.0.0.0", int(port)


def parse_interval(interval: str) -> float:
    try:
        seconds = parse_duration(interval)
    except ValueError as error:
        raise UsageError(str(error).replace("timeout value", "--interval")) from None
    if seconds <= 0:
        raise UsageError(f'invalid --interval "{interval}": must be more than 0')
    return seconds


def parse_external_url(url: str) -> str:
    """The --external-url without its trailing slash; empty: not set."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if url and (parts.scheme not in ("http", "https") or not parts.netloc or parts.query):
        raise UsageError(f'invalid --external-url "{url}": want http(s)://HOST[:PORT][/PATH]')
    return url.rstrip("/")


def run_once(
    options: Options,
    metrics: Metrics,
    site: Site | None,
    err: IO[str],
    stop: threading.Event | None = None,
    watches: FirstPass | None = None,
    recorder: Recorder | None = None,
) -> None:
    """One diagnosis, recorded in metrics and (for the API and pages) on the site; an error
    is its one line on err, never an exit. Once stop is set the process is exiting under the
    run (its thread pools refuse new work): a run cut short that way says nothing.
    watches: the run's pass is also the first pass of those watches (serve's first run).
    recorder: the Events to write of the run's stuck objects (--record-events)."""
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.run import collect

    started = time.monotonic()
    client = None
    result = None
    types: set[Resource] = set()
    try:
        client = connect(options, err)
        request = complete(options, client.connection.namespace)
        source = LiveSource(client)
        view_for = watches.prepare(client, source) if watches is not None else None

        def found(pair: tuple[Resource, JSON]) -> None:
            types.add(pair[0])  # the type of each object, for the API's paths

        result = collect(request, source, io.StringIO(), on_found=found, view_for=view_for)
    except Exception as error:  # a bug in one run must not end the runs: one line, counted
        if stop is not None and stop.is_set():
            return
        line = error_line(error) if isinstance(error, TerminatingError) else f"run: {error!r}"
        print(line, file=err, flush=True)
        metrics.record_failure(time.monotonic() - started, client.stats.failed if client else [])
        return
    finally:
        if watches is not None:
            watches.done(result)
    seconds = time.monotonic() - started
    stats, now = client.stats, time.time()
    metrics.record(result.findings, seconds, stats, now)
    from kubectl_terminating.exporter.web import LastRun

    warnings = tuple(str(w) for w in result.warnings)
    findings = tuple(result.findings)
    previous = site.last if site is not None else None
    last = LastRun.after(previous, findings, warnings, tuple(sorted(types)), now)
    if site is not None:
        site.last = last
    if recorder is not None:
        recorder.observe(last.findings, last.resource_of, client.server_now())
    if options.verbosity >= 1:
        stuck = sum(1 for f in result.findings if f.stuck)
        print(f"run: {stuck} stuck, {stats.requests} requests in {seconds:.2f}s", file=err)


class Wake(Lines):
    """The watch layer's lines, turned into a wake-up of the diagnosis loop (with -v 1, the
    change on err): what changed is what the next run measures."""

    def __init__(self, options: Options, wake: threading.Event, err: IO[str]) -> None:
        super().__init__(replace(options, output=None), io.StringIO(), with_kind=True)
        self.wake, self.err, self.verbose = wake, err, options.verbosity >= 1

    def kept(self, finding: Finding) -> Finding:
        """Only what tells a change (watch.holds) and names the object: its evidence,
        remedies and containers are the runs' to keep (2,000 stuck pods: megabytes)."""
        blockers = [replace(b, evidence=(), remedy=()) for b in finding.blockers]
        return replace(
            finding,
            blockers=blockers,
            containers=[],
            children=[],
            warnings=[],
            unknowns=[],
            conditions=None,
            remaining=None,
            finalizers=[],
        )

    def emit(self, event: str, finding: Finding, text: str) -> None:
        if self.verbose:
            where = f"{finding.namespace}/" if finding.namespace else ""
            print(f"change: {finding.kind} {where}{finding.name} {event}", file=self.err)
        self.wake.set()


class FirstPass:
    """serve's first run, whose pass is also the watches' first: their session is built (each
    watch's resourceVersion read) before the run explains anything, its tracker notes what
    each explanation reads, and it starts on the run's findings. A pass of its own would read
    and explain every terminating object a second time at start: its requests and CPU
    (docs/integrations.md)."""

    def __init__(self, options: Options, wake: threading.Event, err: IO[str]) -> None:
        self.options, self.wake, self.err = options, wake, err
        self.session: Session | None = None
        self.ready = threading.Event()  # done: session is the watches' (None: set up anew)

    def prepare(self, client: Client, source: LiveSource) -> ViewFor | None:
        """The session, built on the run's client and discovery: the run's view_for."""
        from kubectl_terminating.watch import Session

        try:
            request = complete(self.options, client.connection.namespace)
            lines = Wake(self.options, self.wake, self.err)
            self.session = Session(client, source.view, request, lines, self.err)
        except Exception as error:  # the watch thread sets up on its own, and says why
            print(f"watch: {describe(error)}", file=self.err, flush=True)
            return None
        return self.session.tracker.view_for

    def done(self, result: Result | None) -> None:
        """The run ended (result None: it failed): the session starts on its findings."""
        session, self.session = self.session, None
        if session is not None and result is not None:
            session.tracker.start(result)
            session.start()
            self.session = session
        self.ready.set()

    def handed(self, stop: threading.Event) -> Session | None:
        """The session once the run is done (None: there is none, or stop was set)."""
        while not self.ready.wait(1.0):
            if stop.is_set():
                return None
        return self.session


def describe(error: BaseException) -> str:
    return error_line(error) if isinstance(error, TerminatingError) else repr(error)


def watch_changes(
    options: Options,
    wake: threading.Event,
    stop: threading.Event,
    err: IO[str],
    health: Health | None = None,
    first: FirstPass | None = None,
) -> None:
    """Follow the terminating objects as `all -w` does, waking the loop on each change; set
    up again (after RETRY_WATCH_SECONDS) when the first reads fail, and (after
    RESTART_WATCH_SECONDS) when following them ends on an error: one line each time, the old
    watches stopped, a run woken for what they missed.

    first: the session set up by serve's first run (FirstPass), once that run is done; a
    session set up again later makes its own pass."""
    handed = first.handed(stop) if first is not None else None
    while not stop.is_set():
        session: Session | None = None
        try:
            session, handed = handed or watch_session(options, wake, err), None
            if health is not None:
                health.watching(session)
            print(f"watching {len(session.watchers)} types for changes", file=err, flush=True)
            session.follow(stop=stop)  # until serve stops: the watches reconnect on their own
        except Exception as error:  # a bug in one explanation must not end the watching
            if isinstance(error, TerminatingError) and session is None:
                print(f"watch: {error_line(error)}", file=err, flush=True)
                stop.wait(RETRY_WATCH_SECONDS)
                continue
            print(f"watch: {describe(error)}; watching again", file=err, flush=True)
            wake.set()
            stop.wait(RESTART_WATCH_SECONDS)
        finally:
            if session is not None:
                session.stop()
            if health is not None:
                health.watching(None)


def watch_session(options: Options, wake: threading.Event, err: IO[str]) -> Session:
    """The watches, started, with the terminating objects of a first pass tracked. Nothing
    of that pass is kept but the tracker's findings: its client's and view's reads go."""
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.run import collect
    from kubectl_terminating.watch import Session

    client = connect(options, err, interactive=False)
    request = complete(options, client.connection.namespace)
    source = LiveSource(client)
    session = Session(client, source.view, request, Wake(options, wake, err), err)
    found = collect(request, source, io.StringIO(), view_for=session.tracker.view_for)
    session.tracker.start(found)
    session.start()
    return session


def _glibc() -> Any:
    """glibc's malloc controls through ctypes; None elsewhere (musl, macOS)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except (OSError, TypeError):
        return None


def fewer_malloc_arenas(libc: Any) -> None:
    """glibc gives each thread that allocates its own malloc arena (up to 8 per core), and
    keeps what each freed: with a watch thread per type that was 10 MB of serve's resident
    memory at 5,000 pods (docs/integrations.md). Two arenas (MALLOC_ARENA_MAX=2, set before
    any thread starts) suffice: the threads take the GIL anyway."""
    if libc is not None:
        libc.mallopt(-8, 2)  # M_ARENA_MAX, glibc's malloc.h


def give_back_freed_memory(libc: Any) -> None:
    """Return to the system the pages malloc keeps free after a run (malloc_trim): what a run,
    or 60 watches relisting at once after an API server restart, freed stayed resident; at
    1,000 pods the next run's trim gave back 2.6 to 2.8 MB after each restart (make soak:
    growth after the first minute +10.9 MB without, +8.2 with; docs/integrations.md)."""
    if libc is not None:
        libc.malloc_trim(0)


def wait_for_next_run(
    interval: float, started: float, wake: threading.Event, stop: threading.Event
) -> None:
    """Until interval after started, or a change woke us (then SETTLE_SECONDS more, and
    MIN_GAP_SECONDS after started at least), or stop."""
    remaining = started + interval - time.monotonic()
    if remaining > 0 and wake.wait(remaining) and not stop.is_set():
        stop.wait(max(SETTLE_SECONDS, started + MIN_GAP_SECONDS - time.monotonic()))


def explain_now(
    options: Options, resource: str, namespace: str | None, name: str
) -> tuple[Finding, Resource]:
    """An object the last run did not cover, read and explained now (the `all --explain` of
    that one object): its finding and resource type. NotFound when it is not there or not
    terminating, Forbidden outside the one namespace serve looks at (-n)."""
    from kubectl_terminating import kinds
    from kubectl_terminating.client import accept_for
    from kubectl_terminating.errors import Forbidden, NotFound
    from kubectl_terminating.exporter.web import check_scope
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.preflight.api import resolve_type
    from kubectl_terminating.resources import is_terminating, typed
    from kubectl_terminating.run import explain_one

    only = None if options.all_namespaces else options.namespace
    if only and namespace != only and (namespace, resource, name) != (None, "namespaces", only):
        raise Forbidden(f"serve looks only at namespace {only}")
    client = connect(options, io.StringIO(), interactive=False)
    source = LiveSource(client)
    found = resolve_type(resource, source.view.discovery())
    check_scope(found, namespace)
    try:
        obj = typed(client.get(found.path(namespace, name), accept=accept_for(found)), found)
    except NotFound:
        raise NotFound(f'{found.qualified} "{name}" not found') from None
    if not is_terminating(obj):
        raise NotFound(f'{found.qualified} "{name}" exists but is not terminating')
    return explain_one(kinds.ANY, obj, found, source.view, True), found


def events_recorder(
    options: Options, serving: ServeOptions, external: str, err: IO[str]
) -> Recorder | None:
    """The Recorder of --record-events (None without it), and the line that says so."""
    if not serving.record_events:
        return None
    from kubectl_terminating.exporter.events import Recorder
    from kubectl_terminating.exporter.lease import identity

    if serving.events_qps <= 0 or serving.events_burst < 1:
        raise UsageError("--events-qps must be more than 0 and --events-burst at least 1")
    instance = identity()
    print(
        f"recording an Event on each stuck object as {instance}, at most "
        f"{serving.events_qps:g} writes/s (burst {serving.events_burst}), while this replica "
        "holds the Lease",
        file=err,
        flush=True,
    )
    return Recorder(instance, external, serving.events_qps, serving.events_burst)


def recorder_thread(
    options: Options,
    recorder: Recorder | None,
    health: Health,
    stop: threading.Event,
    err: IO[str],
) -> None:
    """The events thread (none without a recorder), with its Lease in the pod's namespace
    (POD_NAMESPACE; else the kubeconfig's or the service account's, whatever -n serve looks
    at)."""
    import os

    if recorder is None:
        return
    from kubectl_terminating.exporter.events import write_events
    from kubectl_terminating.exporter.lease import Lease

    own = replace(options, namespace=None, all_namespaces=False)
    namespace = os.environ.get("POD_NAMESPACE") or connect(own, err).connection.namespace
    lease = Lease(namespace, recorder.instance)

    def fresh() -> Client:
        return connect(options, err, interactive=False)

    health.start("events", write_events, fresh, recorder, lease, stop, err)


def listen(host: str, port: int, site: Site) -> WSGIServer:
    """The standard library's threading WSGI server, as prometheus_client starts its own."""
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client.exposition import ThreadingWSGIServer

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """No line per request."""

    class Server(ThreadingWSGIServer):
        address_family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]

    return make_server(host, port, site, Server, handler_class=Quiet)


def serve(options: Options, serving: ServeOptions, err: IO[str]) -> int:
    from prometheus_client import make_wsgi_app

    from kubectl_terminating.exporter.web import Site

    host, port = parse_address(serving.address)
    interval = parse_interval(serving.interval)
    external = parse_external_url(serving.external_url)
    if not options.namespace:
        options = replace(options, all_namespaces=True)
    # the runs with every detail, as `all -A -o json`: the API serves that document (the
    # watches, which only wake the loop, keep the table's brief reads)
    detailed = replace(options, output="json")
    connect(options, err)  # a kubeconfig that cannot work is the one error line, now
    libc = _glibc()
    fewer_malloc_arenas(libc)
    metrics = Metrics(external)
    health = Health()
    metrics.registry.register(health)
    site = Site(
        make_wsgi_app(metrics.registry),
        lambda resource, namespace, name: explain_now(detailed, resource, namespace, name),
        err,
        health.problems,
    )
    try:
        server = listen(host, port, site)
    except OSError as error:
        raise TerminatingError(f"listen tcp {serving.address}: {error.strerror}") from None
    health.start("http", server.serve_forever)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"serving metrics on http://{shown}:{server.server_port}/metrics, the API on /api/v1/ "
        f"and pages on /{f' ({external}/)' if external else ''}, a run every {serving.interval}",
        file=err,
        flush=True,
    )
    stop, wake = threading.Event(), threading.Event()

    first = FirstPass(options, wake, err)  # the first run's pass is the watches' too
    recorder = events_recorder(options, serving, external, err)

    def loop() -> None:
        watches: FirstPass | None = first
        while not stop.is_set():
            wake.clear()  # a change seen from here on is measured by the next run
            started = time.monotonic()
            run_once(detailed, metrics, site, err, stop, watches, recorder)
            watches = None
            give_back_freed_memory(libc)
            wait_for_next_run(interval, started, wake, stop)

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()
        wake.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    health.start("diagnosis", loop)
    health.start("watch", watch_changes, options, wake, stop, err, health, first)
    recorder_thread(options, recorder, health, stop, err)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.shutdown()
        server.server_close()
    print("stopped", file=err, flush=True)
    return 0
