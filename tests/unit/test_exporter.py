"""What `serve` exports from one run's findings (pure: no server, no cluster)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kubectl_terminating.client import Stats
from kubectl_terminating.errors import UsageError
from kubectl_terminating.exporter.metrics import Metrics, resource_of, stuck_groups
from kubectl_terminating.exporter.serve import (
    MIN_GAP_SECONDS,
    SETTLE_SECONDS,
    parse_address,
    parse_interval,
)
from kubectl_terminating.model import Blocker, Finding


def finding(
    kind: str, name: str, namespace: str | None, blocker: str, overdue: int | None
) -> Finding:
    return Finding(
        kind=kind,
        api_version="v1",
        name=name,
        namespace=namespace,
        uid=name,
        deletion_timestamp="2026-01-01T00:00:00Z",
        overdue_seconds=overdue,
        terminating_seconds=600,
        finalizers=[],
        blockers=[Blocker(blocker, f"{name} is held")],
    )


def samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = generate_latest(metrics.registry).decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def series(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return name, frozenset(labels.items())


def test_stuck_objects_are_counted_per_main_blocker_kind_and_namespace() -> None:
    groups = stuck_groups(
        [
            finding("Pod", "web-0", "shop", "node-missing", 120),
            finding("Pod", "web-1", "shop", "node-missing", 3000),
            finding("Pod", "db-0", "shop", "finalizer", 50),
            finding("Pod", "new", "shop", "grace-period", -10),  # not stuck yet
            finding("Namespace", "old", None, "apiservice-unavailable", None),
        ]
    )
    assert {g: (s.count, s.oldest_seconds) for g, s in groups.items()} == {
        ("node-missing", "Pod", "shop"): (2, 3000),
        ("finalizer", "Pod", "shop"): (1, 50),
        # a namespace counts in itself, so the alert can name it; no deadline: its age
        ("apiservice-unavailable", "Namespace", "old"): (1, 600),
    }


def test_series_of_objects_gone_disappear_and_the_totals_drop_to_zero() -> None:
    metrics = Metrics()
    stats = Stats(requests=7, seconds=0.5)
    metrics.record([finding("Pod", "web-0", "shop", "node-missing", 120)], 1.0, stats, 1e9)
    first = samples(metrics)
    group = {"main_blocker": "node-missing", "kind": "Pod", "namespace": "shop"}
    assert first[series("kubectl_terminating_stuck_objects", **group)] == 1
    assert first[series("kubectl_terminating_stuck_oldest_seconds", **group)] == 120
    assert (
        first[series("kubectl_terminating_stuck_objects_by_blocker", main_blocker="node-missing")]
        == 1
    )
    assert first[series("kubectl_terminating_scrape_requests")] == 7

    metrics.record([], 1.0, Stats(), 1e9 + 60)
    second = samples(metrics)
    assert series("kubectl_terminating_stuck_objects", **group) not in second
    assert (
        second[series("kubectl_terminating_stuck_objects_by_blocker", main_blocker="node-missing")]
        == 0
    )
    assert second[series("kubectl_terminating_run_duration_seconds_count")] == 2


def test_every_stable_blocker_type_has_a_total_and_a_summary_and_never_grace_period() -> None:
    exported = samples(Metrics())
    totals = {
        dict(labels)["main_blocker"] for name, labels in exported if name.endswith("_by_blocker")
    }
    summaries = {
        dict(labels)["main_blocker"]: dict(labels)["summary"]
        for name, labels in exported
        if name == "kubectl_terminating_blocker_info"
    }
    assert "apiservice-unavailable" in totals and "grace-period" not in totals
    assert summaries["apiservice-unavailable"] == "APIService unavailable"
    assert set(summaries) == totals


def test_a_failed_run_keeps_the_last_gauges_and_counts_failed_reads_per_resource() -> None:
    metrics = Metrics()
    metrics.record([finding("Pod", "web-0", "shop", "finalizer", 99)], 1.0, Stats(), 1e9)
    metrics.record_failure(2.0, ["/api/v1/nodes/n1", "/api/v1/nodes/n2"])
    exported = samples(metrics)
    group = {"main_blocker": "finalizer", "kind": "Pod", "namespace": "shop"}
    assert exported[series("kubectl_terminating_stuck_objects", **group)] == 1
    assert exported[series("kubectl_terminating_last_success_timestamp_seconds")] == 1e9
    assert exported[series("kubectl_terminating_run_failures_total")] == 1
    assert exported[series("kubectl_terminating_read_failures_total", resource="nodes")] == 2


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/api/v1/pods?limit=500", "pods"),
        ("/api/v1/namespaces/shop/pods/web-0", "pods"),
        ("/api/v1/namespaces/shop", "namespaces"),
        ("/api/v1/nodes/n1/proxy/logs/", "nodes/proxy"),
        ("/apis/apiregistration.k8s.io/v1/apiservices", "apiservices.apiregistration.k8s.io"),
        ("/apis/example.com/v1/namespaces/a/widgets/w", "widgets.example.com"),
        ("/apis/metrics.k8s.io/v1beta1", "discovery"),
        ("/apis", "discovery"),
        ("/api", "discovery"),
    ],
)
def test_a_failed_read_is_labelled_by_its_resource_type_never_its_object(
    path: str, resource: str
) -> None:
    assert resource_of(path) == resource


@pytest.mark.parametrize(
    ("address", "parsed"),
    [(":9101", ("0.0.0.0", 9101)), ("127.0.0.1:0", ("127.0.0.1", 0)), ("[::1]:80", ("::1", 80))],
)
def test_bind_addresses_as_kubernetes_components_take_them(
    address: str, parsed: tuple[str, int]
) -> None:
    assert parse_address(address) == parsed


@pytest.mark.parametrize("address", ["9101", "host:", ":http", ":70000"])
def test_a_bad_bind_address_is_a_usage_error(address: str) -> None:
    with pytest.raises(UsageError, match="--metrics-bind-address"):
        parse_address(address)


@pytest.mark.parametrize("interval", ["0", "-1s", "soon"])
def test_a_bad_interval_is_a_usage_error(interval: str) -> None:
    with pytest.raises(UsageError, match="--interval"):
        parse_interval(interval)


def test_serve_usage_errors_are_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_terminating", "serve", "--metrics-bind-address", "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        'error: invalid --metrics-bind-address "x": want HOST:PORT or :PORT'
    ]


def test_only_serve_imports_the_prometheus_client() -> None:
    code = (
        "import sys\n"
        "from kubectl_terminating.cli import main\n"
        "try:\n    main(['pods', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('prometheus_client' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"


def test_serve_refuses_several_contexts() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_terminating", "serve", "--all-contexts"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "serve reads one cluster: run one per context" in done.stderr
    assert "Traceback" not in done.stderr


class Clock:
    """A monotonic clock that moves only when a wait times out (no wall-clock window)."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.waits: list[tuple[str, float]] = []

    def monotonic(self) -> float:
        return self.now

    def event(self, name: str, is_set: bool = False) -> Any:
        clock = self

        class Event:
            def wait(self, timeout: float) -> bool:
                clock.waits.append((name, timeout))
                if is_set:
                    return True  # already set: returns at once
                clock.now += timeout
                return False

            def is_set(self) -> bool:
                return is_set

        return Event()


@pytest.mark.parametrize(
    ("woken_after", "next_run_after"),
    [
        (0.1, MIN_GAP_SECONDS),  # a change early in the run: MIN_GAP after its start
        (30.0, 30.0 + SETTLE_SECONDS),  # a change later: SETTLE after it
        (None, 3600.0),  # no change: the interval
    ],
)
def test_a_change_starts_the_next_run_early_but_not_at_once(
    monkeypatch: pytest.MonkeyPatch, woken_after: float | None, next_run_after: float
) -> None:
    from kubectl_terminating.exporter import serve

    started = 1000.0
    clock = Clock(started + (woken_after or 0.0))
    monkeypatch.setattr(serve, "time", clock)
    wake = clock.event("wake", is_set=woken_after is not None)
    serve.wait_for_next_run(3600.0, started, wake, clock.event("stop"))
    assert clock.now - started == pytest.approx(next_run_after), clock.waits


def test_a_dead_thread_fails_healthz_and_its_gauge_drops_to_zero() -> None:
    """serve's threads each have a kubectl_terminating_thread_up gauge, and /healthz (the
    chart's liveness probe) answers 503 naming the ones that ended, 200 while all run."""
    import threading

    from kubectl_terminating.exporter.health import Health
    from kubectl_terminating.exporter.web import Site
    from tests.unit.test_serve_web import Reads, get, metrics_app

    health, release, metrics = Health(), threading.Event(), Metrics()
    metrics.registry.register(health)
    health.start("diagnosis", release.wait)
    health.start("watch", release.wait)
    health.start("http", lambda: None)  # ends at once: a thread that died
    health.threads["http"].join()
    site = Site(metrics_app, Reads(), io.StringIO(), health.problems)
    try:
        sick = get(site, "/healthz")
        up = {
            dict(labels)["thread"]: value
            for (name, labels), value in samples(metrics).items()
            if name == "kubectl_terminating_thread_up"
        }
        assert (sick.code, sick.text) == (503, "thread http is not running\n")
        assert up == {"diagnosis": 1, "watch": 1, "watches": 1, "http": 0}
        health.failed_watches = lambda: ["pods"]  # type: ignore[method-assign]
        assert get(site, "/healthz").text == "thread http is not running\nwatches ended: pods\n"
        del health.threads["http"]
        del health.failed_watches
        healthy = get(site, "/healthz")
        assert (healthy.code, healthy.text) == (200, "ok\n")
    finally:
        release.set()


def test_the_relists_counter_keeps_counting_when_the_watch_session_is_set_up_again() -> None:
    """kubectl_terminating_watch_relists is a counter: the relists of the sessions before (the
    watch loop sets its session up again after an error) stay counted, never fall back."""
    import queue
    from dataclasses import dataclass, field

    from kubectl_terminating.exporter.health import Health

    @dataclass
    class Session:  # what health reads of watch.Session
        relists: int
        changes: queue.Queue[Any] = field(default_factory=queue.Queue)

        def failed_watches(self) -> list[str]:
            return []

    health, metrics = Health(), Metrics()
    metrics.registry.register(health)

    def relists() -> float:
        return samples(metrics)[("kubectl_terminating_watch_relists_total", frozenset())]

    first = Session(relists=2)
    health.watching(first)
    first.relists = 3  # another 410 Gone in the same session
    assert relists() == 3
    health.watching(None)  # set up again
    assert relists() == 3
    health.watching(Session(relists=1))
    assert relists() == 4


def test_the_watches_keep_only_what_tells_a_change_of_each_stuck_object() -> None:
    """serve's watch loop keeps one finding per terminating object for as long as it is
    there (2,000 at the bench's size): without evidence, remedies and containers, which only
    the runs print, but with what watch.holds compares and what names the object."""
    import threading

    from kubectl_terminating.exporter.serve import Wake
    from kubectl_terminating.options import Options
    from kubectl_terminating.watch import holds
    from tests.unit.test_render_pods import volumes_stuck

    finding = volumes_stuck()
    assert finding.containers and finding.blockers[0].evidence  # what there is to drop
    kept = Wake(Options("all"), threading.Event(), io.StringIO()).kept(finding)
    assert holds(kept) == holds(finding) and kept.stuck == finding.stuck
    assert (kept.kind, kept.namespace, kept.name) == (finding.kind, finding.namespace, finding.name)
    assert kept.containers == [] and all(not b.evidence and not b.remedy for b in kept.blockers)
    from kubectl_terminating.kinds import json_extras

    size = len(json.dumps(kept.to_json(json_extras))) / len(
        json.dumps(finding.to_json(json_extras))
    )
    assert size < 0.5, size


def test_a_run_cut_short_by_the_exit_says_nothing(tmp_path: Any) -> None:
    """serve exits without waiting for a run in progress; the run then fails under it (its
    thread pools refuse new work at exit). That failure is not news: the log ends `stopped`.
    Any other failed run is its one line."""
    import threading

    from kubectl_terminating.exporter.serve import run_once
    from kubectl_terminating.options import Options

    options = Options(kind="all", kubeconfig=str(tmp_path / "absent"))
    stop = threading.Event()
    running, exiting = io.StringIO(), io.StringIO()
    run_once(options, Metrics(), None, running, stop)
    stop.set()
    run_once(options, Metrics(), None, exiting, stop)
    assert running.getvalue().count("\n") == 1 and "error" in running.getvalue()
    assert exiting.getvalue() == ""
