"""The exporter's loop: run the diagnosis every interval, and as soon as the watch layer
(watch.py, as `all -A -w` uses it) sees an object start terminating, what holds one change, or
one go; serve the last run's metrics.

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
from typing import IO

from kubectl_terminating.client import parse_duration
from kubectl_terminating.connection import connect, error_line
from kubectl_terminating.errors import TerminatingError, UsageError
from kubectl_terminating.exporter.metrics import Metrics
from kubectl_terminating.model import Finding
from kubectl_terminating.options import Options, complete
from kubectl_terminating.watch import Lines

# After a change, wait this long for the rest of a burst (a node dies: all its pods at once),
# and start runs at least MIN_GAP apart: an outage is one run or two, not one per pod.
SETTLE_SECONDS = 1.0
MIN_GAP_SECONDS = 5.0
RETRY_WATCH_SECONDS = 30.0  # before setting up the watches again when that failed


@dataclass(frozen=True)
class ServeOptions:
    address: str  # host:port, `:9101` for every interface
    interval: str  # a kubectl duration: 30s, 1m


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


def run_once(options: Options, metrics: Metrics, err: IO[str]) -> None:
    """One diagnosis, recorded in metrics; an error is its one line on err, never an exit."""
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.run import collect

    started = time.monotonic()
    client = None
    try:
        client = connect(options, err)
        request = complete(options, client.connection.namespace)
        result = collect(request, LiveSource(client), io.StringIO())
    except TerminatingError as error:
        print(error_line(error), file=err, flush=True)
        metrics.record_failure(time.monotonic() - started, client.stats.failed if client else [])
        return
    seconds = time.monotonic() - started
    stats = client.stats
    metrics.record(result.findings, seconds, stats, time.time())
    if options.verbosity >= 1:
        stuck = sum(1 for f in result.findings if f.stuck)
        print(f"run: {stuck} stuck, {stats.requests} requests in {seconds:.2f}s", file=err)


class Wake(Lines):
    """The watch layer's lines, turned into a wake-up of the diagnosis loop (with -v 1, the
    change on err): what changed is what the next run measures."""

    def __init__(self, options: Options, wake: threading.Event, err: IO[str]) -> None:
        super().__init__(replace(options, output=None), io.StringIO(), with_kind=True)
        self.wake, self.err, self.verbose = wake, err, options.verbosity >= 1

    def emit(self, event: str, finding: Finding, text: str) -> None:
        if self.verbose:
            where = f"{finding.namespace}/" if finding.namespace else ""
            print(f"change: {finding.kind} {where}{finding.name} {event}", file=self.err)
        self.wake.set()


def watch_changes(
    options: Options, wake: threading.Event, stop: threading.Event, err: IO[str]
) -> None:
    """Follow the terminating objects as `all -w` does, waking the loop on each change; set
    up again (after RETRY_WATCH_SECONDS) when the first reads fail."""
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.run import collect
    from kubectl_terminating.watch import Session

    while not stop.is_set():
        try:
            client = connect(options, err, interactive=False)
            request = complete(options, client.connection.namespace)
            source = LiveSource(client)
            session = Session(client, source.view, request, Wake(options, wake, err), err)
            found = collect(request, source, io.StringIO(), view_for=session.tracker.view_for)
            session.tracker.start(found)
            session.start()
            print(f"watching {len(session.watchers)} types for changes", file=err, flush=True)
        except TerminatingError as error:
            print(f"watch: {error_line(error)}", file=err, flush=True)
            stop.wait(RETRY_WATCH_SECONDS)
            continue
        session.follow()  # forever: the watches reconnect on their own


def wait_for_next_run(
    interval: float, started: float, wake: threading.Event, stop: threading.Event
) -> None:
    """Until interval after started, or a change woke us (then SETTLE_SECONDS more, and
    MIN_GAP_SECONDS after started at least), or stop."""
    remaining = started + interval - time.monotonic()
    if remaining > 0 and wake.wait(remaining) and not stop.is_set():
        stop.wait(max(SETTLE_SECONDS, started + MIN_GAP_SECONDS - time.monotonic()))


def serve(options: Options, serving: ServeOptions, err: IO[str]) -> int:
    from prometheus_client import start_http_server

    host, port = parse_address(serving.address)
    interval = parse_interval(serving.interval)
    if not options.namespace:
        options = replace(options, all_namespaces=True)
    connect(options, err)  # a kubeconfig that cannot work is the one error line, now
    metrics = Metrics()
    try:
        server, _ = start_http_server(port, host, metrics.registry)
    except OSError as error:
        raise TerminatingError(f"listen tcp {serving.address}: {error.strerror}") from None
    shown = f"[{host}]" if ":" in host else host
    print(
        f"serving metrics on http://{shown}:{server.server_port}/metrics, "
        f"a run every {serving.interval}",
        file=err,
        flush=True,
    )
    stop, wake = threading.Event(), threading.Event()

    def loop() -> None:
        while not stop.is_set():
            wake.clear()  # a change seen from here on is measured by the next run
            started = time.monotonic()
            run_once(options, metrics, err)
            wait_for_next_run(interval, started, wake, stop)

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()
        wake.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    threading.Thread(target=loop, name="diagnosis", daemon=True).start()
    watching = (options, wake, stop, err)
    threading.Thread(target=watch_changes, args=watching, name="watch", daemon=True).start()
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
