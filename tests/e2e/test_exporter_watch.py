"""`serve` reacts to changes: with a run only every hour, a pod that gets stuck shows in
/metrics within seconds (the watch layer wakes the loop), and the series goes when it does."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.harness import scenarios
from tests.harness.api import create_namespace, remove_finalizers, unique_ns, wait_for
from tests.harness.cli import start_serve
from tests.harness.controlplane import ControlPlane, free_port
from tests.harness.strays import watch_threads

pytestmark = pytest.mark.e2e

SOON = 30.0  # seconds: a run takes 1 to 3 s here; the loaded 2-core machine is slow


def stuck_series(port: int) -> dict[tuple[str, str], float]:
    """kubectl_terminating_stuck_objects by (namespace, main_blocker); {} before serving."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return {}
    return {
        (s.labels["namespace"], s.labels["main_blocker"]): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "kubectl_terminating_stuck_objects"
    }


@pytest.fixture
def exporter(control_plane: ControlPlane, tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """serve with --interval=1h, once its first run is done and its watches are open."""
    port, log_path = free_port(), tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        proc = start_serve(control_plane.kubeconfig_path, port, "1h", log)
    try:
        wait_for(
            lambda: "run: " in log_path.read_text() and "for changes" in log_path.read_text(),
            timeout=120,
            message="the first run and the watches",
        )
        yield port, log_path
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_pod_that_gets_stuck_shows_within_seconds(
    control_plane: ControlPlane, exporter: tuple[int, Path]
) -> None:
    port, log_path = exporter
    ns = unique_ns("exp-watch")
    create_namespace(control_plane, ns)
    assert (ns, "finalizer") not in stuck_series(port)
    held = scenarios.pod_with_finalizer(control_plane, ns)  # deleted: stuck at once
    started = time.monotonic()
    try:
        wait_for(lambda: (ns, "finalizer") in stuck_series(port), timeout=SOON, message="series")
    except TimeoutError:
        raise AssertionError(log_path.read_text()[-3000:]) from None
    appeared = time.monotonic() - started
    remove_finalizers(control_plane, scenarios.pod_path(ns, held.name))
    wait_for(lambda: (ns, "finalizer") not in stuck_series(port), timeout=SOON, message="gone")
    print(f"stuck pod in /metrics after {appeared:.1f}s")
    assert log_path.read_text().count("run: ") >= 3  # first, on the start, on the end


def test_an_error_while_following_changes_is_one_line_and_the_watching_goes_on(
    control_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception that is no TerminatingError (a bug in one explanation) raised while the
    watch loop handles a change: one line on the log, the loop's thread stays alive, the old
    watches stop, and a later change still wakes the diagnosis (it used to end the thread
    while its watches went on filling a queue nobody read)."""
    import io
    import threading

    from kubectl_terminating.exporter import serve
    from kubectl_terminating.options import Options
    from kubectl_terminating.watch import Tracker

    monkeypatch.setattr(serve, "RESTART_WATCH_SECONDS", 0.5, raising=False)
    real, failed = Tracker.handle, list[object]()

    def handle_once_failing(tracker: Tracker, change: object) -> None:
        if not failed:
            failed.append(change)
            raise RuntimeError("injected into the watch path")
        real(tracker, change)  # type: ignore[arg-type]

    monkeypatch.setattr(Tracker, "handle", handle_once_failing)
    ns = unique_ns("exp-fault")
    create_namespace(control_plane, ns)
    options = Options("all", namespace=ns, kubeconfig=str(control_plane.kubeconfig_path))
    wake, stop, log = threading.Event(), threading.Event(), io.StringIO()
    watching = (options, wake, stop, log)
    thread = threading.Thread(target=serve.watch_changes, args=watching, daemon=True)
    thread.start()
    try:
        wait_for(lambda: "for changes" in log.getvalue(), timeout=60, message="the watches")
        held = scenarios.pod_with_finalizer(control_plane, ns)  # a change: the injected error
        wait_for(lambda: bool(failed), timeout=SOON, message="the injected error")
        wait_for(lambda: log.getvalue().count("for changes") == 2, timeout=SOON, message="again")
        assert thread.is_alive(), log.getvalue()
        lines = [line for line in log.getvalue().splitlines() if "injected" in line]
        assert lines == ["watch: RuntimeError('injected into the watch path'); watching again"]
        wake.clear()
        remove_finalizers(control_plane, scenarios.pod_path(ns, held.name))  # a later change
        wait_for(wake.is_set, timeout=SOON, message="a wake-up after the error")
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive()
    wait_for(lambda: not watch_threads(), timeout=5, message="the watches of both sessions ended")


def test_a_stopped_session_ends_its_watch_requests_at_once(control_plane: ControlPlane) -> None:
    """serve's watches, stopped (serve ending, or setting them up again after an error): each
    open request ends now, not at the server's next event, a bookmark about a minute away.
    Left open, they went on reading as serve's user after it was done (and a later test that
    audits who read what saw them end in its window)."""
    import io
    import threading

    from kubectl_terminating.exporter.serve import watch_session
    from kubectl_terminating.options import Options

    assert not watch_threads()
    ns = unique_ns("exp-stop")
    create_namespace(control_plane, ns)
    options = Options("all", namespace=ns, kubeconfig=str(control_plane.kubeconfig_path))
    session = watch_session(options, threading.Event(), io.StringIO())
    try:
        assert len(watch_threads()) == len(session.watchers) > 1
        reading = lambda: all(w.hangup.reading for w in session.watchers)  # noqa: E731
        wait_for(reading, timeout=SOON, message="each watch request open on the server")
    finally:
        session.stop()
    started = time.monotonic()
    wait_for(lambda: not watch_threads(), timeout=5, message="the watch threads ended")
    print(f"{len(session.watchers)} watches ended {time.monotonic() - started:.2f}s after stop")
