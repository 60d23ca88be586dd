"""Which of `serve`'s threads still work: `kubectl_terminating_thread_up{thread}` and /healthz.

serve is a handful of threads (the diagnosis loop, the watch loop and its one watch per type,
the HTTP server); the main thread only waits for a signal. A thread that ended on an error
would leave the process up and its metrics stale, so each one's liveness is a gauge, and
/healthz answers 503 naming the dead ones (a liveness probe restarts the pod).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector


class Watching(Protocol):
    """What health reads of the watch loop's session (watch.Session)."""

    changes: queue.Queue[Any]
    relists: int

    def failed_watches(self) -> list[str]: ...


class Health(Collector):
    """serve's threads by name, and the watch loop's current watches."""

    def __init__(self) -> None:
        self.threads: dict[str, threading.Thread] = {}
        self.session: Watching | None = None  # the watch loop's, once it has one
        self.relists_before = 0  # of the sessions before it

    def watching(self, session: Watching | None) -> None:
        """The watch loop's new session (None: none while it sets up again)."""
        if self.session is not None:
            self.relists_before += self.session.relists
        self.session = session

    def failed_watches(self) -> list[str]:
        return self.session.failed_watches() if self.session is not None else []

    def start(self, name: str, target: Callable[..., object], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self.threads[name] = thread
        thread.start()

    def status(self) -> dict[str, bool]:
        """Each thread: alive. `watches`: every watch thread of the current session alive."""
        alive = {name: thread.is_alive() for name, thread in self.threads.items()}
        if "watch" in alive:
            alive["watches"] = not self.failed_watches()
        return alive

    def problems(self) -> list[str]:
        """One phrase per dead thread; empty when all work."""
        return [
            f"watches ended: {', '.join(self.failed_watches())}"
            if name == "watches"
            else f"thread {name} is not running"
            for name, up in self.status().items()
            if not up
        ]

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "kubectl_terminating_thread_up",
            "1 while the thread runs (diagnosis, watch, http; watches: every watch of a type).",
            labels=("thread",),
        )
        for name, alive in sorted(self.status().items()):
            up.add_metric([name], 1.0 if alive else 0.0)
        yield up
        session = self.session
        yield GaugeMetricFamily(
            "kubectl_terminating_watch_queued_changes",
            "Changes the watches saw that the watch loop has not handled yet (bounded).",
            value=session.changes.qsize() if session is not None else 0,
        )
        yield CounterMetricFamily(
            "kubectl_terminating_watch_relists",
            "Watches that got 410 Gone (too old a resourceVersion) and listed again.",
            value=self.relists_before + (session.relists if session is not None else 0),
        )
