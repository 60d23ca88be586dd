"""The exporter's loop: run the diagnosis every interval, serve the last run's metrics.

Each run is the CLI's own pipeline (run.collect over a LiveSource, `all -A`), with a fresh
client: the in-cluster token file and the kubeconfig are read again, and one run's memo never
outlives it. The HTTP server and the runs are threads; the main thread only waits for
SIGTERM or Ctrl-C, then stops serving and exits 0 without waiting for a run in progress
(it only reads).
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
from kubectl_terminating.options import Options, complete


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
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            run_once(options, metrics, err)
            stop.wait(interval)

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    threading.Thread(target=loop, name="diagnosis", daemon=True).start()
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
