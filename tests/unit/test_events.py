"""serve --record-events without a cluster: what one event says, one event per object and
cause, what is written first, and the pace of the writes. Their writing to a real API server,
the Lease and the audit log's count are tests/e2e/test_record_events.py."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from kubectl_terminating.exporter.events import (
    NOTE_LIMIT,
    Recorder,
    TokenBucket,
    event_name,
    note_of,
)
from kubectl_terminating.exporter.lease import expired, micro_time
from kubectl_terminating.model import Blocker, Finding
from kubectl_terminating.resources import Resource

NOW = datetime(2026, 11, 28, 10, 0, 0, 123456, tzinfo=timezone.utc)
PODS = Resource("", "v1", "pods", "Pod", True)


def stuck(
    name: str,
    cause: str = "node-missing",
    summary: str = "node n1 is gone",
    namespace: str | None = "shop",
    kind: str = "Pod",
) -> Finding:
    return Finding(
        kind=kind,
        api_version="v1",
        name=name,
        namespace=namespace,
        uid=f"uid-{name}",
        deletion_timestamp="2026-11-28T09:00:00Z",
        overdue_seconds=600,
        terminating_seconds=600,
        finalizers=[],
        blockers=[Blocker(cause, summary, confidence="certain")],
    )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pods(_finding: Finding) -> Resource:
    return PODS


def test_the_note_says_the_main_blocker_its_confidence_and_its_page() -> None:
    recorder = Recorder("serve-0", "https://pages.example/k8s")
    recorder.observe([stuck("web-0")], pods, NOW)
    (entry,) = recorder.entries.values()
    body = entry.body()
    assert body["note"] == (
        "node-missing: node n1 is gone (confidence: certain). "
        "Details: https://pages.example/k8s/objects/pods/shop/web-0"
    )
    assert body["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-0",
        "namespace": "shop",
        "uid": "uid-web-0",
    }
    assert (body["type"], body["reason"], body["reportingController"]) == (
        "Warning",
        "DeletionBlocked",
        "kubectl-terminating",
    )
    assert body["reportingInstance"] == "serve-0"
    assert body["metadata"]["namespace"] == "shop"
    assert body["eventTime"] == "2026-11-28T10:00:00.123456Z"
    assert "series" not in body  # one observation: no series yet


def test_without_external_url_no_link_and_a_long_summary_is_cut_to_the_limit() -> None:
    long = stuck("web-0", summary="x" * 5000)
    note = note_of(long, "")
    assert len(note.encode()) <= NOTE_LIMIT
    assert note.endswith("... (confidence: certain)")
    assert "Details" not in note_of(stuck("web-0"), "")


def test_the_note_escapes_control_characters() -> None:
    hostile = stuck("web-0", summary="finalizer \x1b[31mred\x1b[0m")
    assert "\x1b" not in note_of(hostile, "")


def test_event_names_are_client_gos_and_always_a_dns_subdomain() -> None:
    assert event_name("web-0", 0x187B) == "web-0.187b"
    assert event_name("system:Controller", 1) == "system-controller.1"
    assert len(event_name("a" * 253, 2**63)) <= 253


def test_three_runs_one_event_whose_series_counts_them() -> None:
    recorder = Recorder("serve-0", "")
    for minute in range(3):
        recorder.observe([stuck("web-0")], pods, NOW + timedelta(minutes=minute))
    (entry,) = recorder.entries.values()
    assert entry.count == 3
    assert entry.series() == {"count": 3, "lastObservedTime": "2026-11-28T10:02:00.123456Z"}
    assert entry.event_time == "2026-11-28T10:00:00.123456Z"


def test_a_new_main_blocker_is_a_new_event_and_a_freed_object_is_forgotten() -> None:
    recorder = Recorder("serve-0", "")
    recorder.observe([stuck("web-0"), stuck("web-1")], pods, NOW)
    first = recorder.entries["uid-web-0"]
    later = NOW + timedelta(minutes=1)
    recorder.observe([stuck("web-0", cause="node-not-ready")], pods, later)
    assert set(recorder.entries) == {"uid-web-0"}  # web-1 is gone: its entry too
    second = recorder.entries["uid-web-0"]
    assert second is not first
    assert (second.cause, second.count) == ("node-not-ready", 1)
    assert second.name != first.name


def test_objects_of_a_terminating_namespace_get_no_event_but_the_namespace_does() -> None:
    recorder = Recorder("serve-0", "")
    namespace = stuck("shop", cause="content-remaining", namespace=None, kind="Namespace")
    recorder.observe([namespace, stuck("web-0")], pods, NOW)
    assert recorder.entries["uid-web-0"].refused
    assert recorder.entries["uid-shop"].namespace == "default"
    entry = recorder.next_write()
    assert entry is not None and entry.regarding["name"] == "shop"


def test_creates_come_before_series_updates_oldest_write_first() -> None:
    clock = Clock()
    recorder = Recorder("serve-0", "", clock=clock)
    recorder.observe([stuck("a"), stuck("b")], pods, NOW)
    for entry, written_at in zip(recorder.entries.values(), (50.0, 40.0), strict=True):
        entry.written, entry.last_write = 1, written_at
    recorder.observe([stuck("a"), stuck("b"), stuck("c")], pods, NOW)
    recorder.entries["uid-c"].last_write = 60.0  # its create failed once, since retried
    order = []
    while (due := recorder.next_write()) is not None:
        order.append(due.regarding["name"])
        due.written = due.count
    assert order == ["c", "b", "a"]


def test_the_token_bucket_allows_its_burst_then_its_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(5.0, 3, clock)
    stop = threading.Event()
    assert [bucket.take(stop, until=clock.now) for _ in range(4)] == [True, True, True, False]
    clock.now += 0.2  # one token's worth at 5/s
    assert bucket.take(stop, until=clock.now)
    assert not bucket.take(stop, until=clock.now + 0.1)  # the next is 0.2s away


def test_a_lease_is_free_once_its_duration_passed_since_its_renewal() -> None:
    spec = {"holderIdentity": "a", "leaseDurationSeconds": 15, "renewTime": micro_time(NOW)}
    assert not expired(spec, NOW + timedelta(seconds=14))
    assert expired(spec, NOW + timedelta(seconds=16))
    assert expired({"holderIdentity": "a"}, NOW)  # no renewal said: holds nothing
