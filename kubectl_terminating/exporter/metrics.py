"""One run's findings and failed reads as Prometheus metrics.

Labels are bounded by the cluster's shape, never by its objects: the main blocker (a stable
blocker type), the kind and the namespace. Object names never become labels: the
`kubectl terminating ... --explain` command in an alert's description finds them. The
per-group gauges come from the last run only (a custom collector over an immutable
snapshot), so a group whose objects are gone disappears at the next run and the per-blocker
totals, always present for every stable type, drop to zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from kubectl_terminating.causes import CAUSES
from kubectl_terminating.client import Stats
from kubectl_terminating.model import Finding

PREFIX = "kubectl_terminating"
GROUP_LABELS = ("main_blocker", "kind", "namespace")
# every stable type that means "stuck" (grace-period is not stuck yet)
BLOCKER_TYPES = tuple(t for t, cause in CAUSES.items() if not cause.not_stuck)
RUN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

Group = tuple[str, str, str]  # main_blocker, kind, namespace


@dataclass(frozen=True)
class Stuck:
    count: int = 0
    oldest_seconds: float = 0.0  # the longest time past the deletion deadline in the group


@dataclass(frozen=True)
class Snapshot:
    """What the last successful run found; replaced whole, never changed in place."""

    groups: dict[Group, Stuck] = field(default_factory=dict)
    api_seconds: float = 0.0
    api_requests: int = 0
    finished_at: float | None = None  # unix time


def group_of(finding: Finding) -> Group | None:
    """Its group, or None while it is not stuck. A Namespace counts in its own namespace (as
    kube-state-metrics labels its namespace series), so an alert can name it."""
    blocker = finding.main_blocker
    if not finding.stuck or blocker is None:
        return None
    namespace = finding.name if finding.kind == "Namespace" else finding.namespace or ""
    return blocker.type, finding.kind, namespace


def stuck_groups(findings: Iterable[Finding]) -> dict[Group, Stuck]:
    groups: dict[Group, Stuck] = {}
    for finding in findings:
        group = group_of(finding)
        if group is None:
            continue
        age = finding.overdue_seconds
        if age is None:  # a deadline that could not be read: its time in Terminating
            age = finding.terminating_seconds or 0
        seen = groups.get(group, Stuck())
        groups[group] = Stuck(seen.count + 1, max(seen.oldest_seconds, float(age)))
    return groups


def resource_of(path: str) -> str:
    """The resource type a request path reads (`pods`, `apiservices.apiregistration.k8s.io`,
    `nodes/proxy`; `discovery` for the API's own listings): a bounded label."""
    parts = [p for p in urlsplit(path).path.split("/") if p]
    if parts[:1] == ["api"]:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return "discovery"
    if not rest:
        return "discovery"
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]  # namespaces/NS/plural/...
    plural = rest[0] + (f".{group}" if group else "")
    return f"{plural}/{rest[2]}" if len(rest) >= 3 else plural


class SnapshotCollector(Collector):
    """The gauges of the last run, read by the HTTP server's thread while runs go on."""

    def __init__(self, external_url: str = "") -> None:
        self.snapshot = Snapshot()
        self.external_url = external_url  # serve --external-url: the alerts link there

    def collect(self) -> Iterator[Metric]:
        snap = self.snapshot  # one reference read: a consistent view of one run
        count = GaugeMetricFamily(
            f"{PREFIX}_stuck_objects",
            "Objects stuck in Terminating, by main blocker, kind and namespace.",
            labels=GROUP_LABELS,
        )
        oldest = GaugeMetricFamily(
            f"{PREFIX}_stuck_oldest_seconds",
            "How long the group's longest-stuck object is past its deletion deadline.",
            labels=GROUP_LABELS,
        )
        by_blocker = dict.fromkeys(BLOCKER_TYPES, 0)
        for (blocker, kind, namespace), stuck in sorted(snap.groups.items()):
            count.add_metric([blocker, kind, namespace], stuck.count)
            oldest.add_metric([blocker, kind, namespace], stuck.oldest_seconds)
            by_blocker[blocker] = by_blocker.get(blocker, 0) + stuck.count
        totals = GaugeMetricFamily(
            f"{PREFIX}_stuck_objects_by_blocker",
            "Objects stuck in Terminating per main blocker; every known type, 0 when none.",
            labels=("main_blocker",),
        )
        for blocker, total in by_blocker.items():
            totals.add_metric([blocker], total)
        info = GaugeMetricFamily(
            f"{PREFIX}_blocker_info",
            "The summary of each blocker type (join on main_blocker for alert text), and where "
            "the pages are (external_url, empty when not set: the alerts link there).",
            labels=("main_blocker", "summary", "external_url"),
        )
        for blocker in BLOCKER_TYPES:
            info.add_metric([blocker, CAUSES[blocker].label, self.external_url], 1)
        yield from (count, oldest, totals, info)
        yield GaugeMetricFamily(
            f"{PREFIX}_scrape_duration_seconds",
            "Time the last run spent reading the API server (its requests' durations summed).",
            value=snap.api_seconds,
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_scrape_requests",
            "Requests the last run sent to the API server.",
            value=snap.api_requests,
        )
        if snap.finished_at is not None:
            yield GaugeMetricFamily(
                f"{PREFIX}_last_success_timestamp_seconds",
                "When the last successful run finished (unix time).",
                value=snap.finished_at,
            )


class Metrics:
    """The exporter's registry: the last run's gauges, and counters over every run."""

    def __init__(self, external_url: str = "") -> None:
        self.registry = CollectorRegistry()
        self.snapshot = SnapshotCollector(external_url)
        self.registry.register(self.snapshot)
        ProcessCollector(registry=self.registry)  # the exporter's own memory and CPU
        self.run_seconds = Histogram(
            f"{PREFIX}_run_duration_seconds",
            "Wall time of each diagnosis run (find and explain every terminating object).",
            buckets=RUN_BUCKETS,
            registry=self.registry,
        )
        self.run_failures = Counter(
            f"{PREFIX}_run_failures",
            "Runs that could not finish (API server unreachable, credentials rejected).",
            registry=self.registry,
        )
        self.read_failures = Counter(
            f"{PREFIX}_read_failures",
            "Reads that failed (forbidden, a server error, no answer in time), per resource.",
            labelnames=("resource",),
            registry=self.registry,
        )

    def record(
        self, findings: Sequence[Finding], seconds: float, stats: Stats, finished_at: float
    ) -> None:
        """A successful run: its gauges replace the last run's."""
        self.run_seconds.observe(seconds)
        self.count_failed_reads(stats.failed)
        groups = stuck_groups(findings)
        self.snapshot.snapshot = Snapshot(groups, stats.seconds, stats.requests, finished_at)

    def record_failure(self, seconds: float, failed_paths: Sequence[str]) -> None:
        """A run that could not finish: the last good gauges stay, and say when they were."""
        self.run_seconds.observe(seconds)
        self.run_failures.inc()
        self.count_failed_reads(failed_paths)

    def count_failed_reads(self, paths: Sequence[str]) -> None:
        for path in paths:
            self.read_failures.labels(resource=resource_of(path)).inc()
