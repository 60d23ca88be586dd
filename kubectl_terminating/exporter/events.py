"""serve --record-events: the diagnosis written where people already look (`kubectl describe`,
`kubectl events`, k9s, Lens), as a Warning Event on each stuck object (events.k8s.io/v1).

One event per object and main blocker, named and counted as client-go's events.k8s.io
recorder does (k8s.io/client-go/tools/events): the name is `<object>.<hex of the Unix time in
nanoseconds>` (event_recorder.go, makeEvent); a later run that sees the same cause updates the
event's series (count, lastObservedTime) with a PATCH, and a PATCH that finds the event gone
(its TTL, --event-ttl, is 1h by default) creates it again under the same name
(event_broadcaster.go, recordToSink and recordEvent). A change of main blocker is a new event:
the API server keeps note, reason and eventTime immutable on update
(pkg/apis/core/validation/events.go, ValidateEventUpdate). The events are written only by the
replica that holds the Lease (lease.py), at the pace of a token bucket, never on the object
itself.

The API server has no event rate limit by default. Its EventRateLimit admission plugin is off by
default and has no default numbers (plugin/pkg/admission/eventratelimit: qps and burst are
required; its v1alpha1 defaults set nothing but a 4096-entry cache); and it only looks at
core-group Events (admission.go: `attr.GetKind().GroupKind() != api.Kind("Event")`): writes
through events.k8s.io pass it (measured on v1.36.3, tests/e2e/test_record_events_outage.py).
The only numbers upstream gives are its documented example (kubernetes/website,
admission-controllers.md, "EventRateLimit"): per Namespace 50/s with a burst of 100, per User
10/s with a burst of 50, creates and updates alike. serve writes as one user, so its default,
5/s with a burst of 25, is half of the stricter one: a 2,000-pod outage's first events take
about 400 s, and would never be refused there.

Memory: one entry per stuck object of the last run (its note is at most 1 KiB); an object no
longer stuck is forgotten at the next run.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import IO, TYPE_CHECKING

from kubectl_terminating.connection import error_line
from kubectl_terminating.errors import Forbidden, NotFound, TerminatingError
from kubectl_terminating.exporter.lease import RENEW_SECONDS, Lease, micro_time
from kubectl_terminating.exporter.pages import object_path
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.terminal import safe

if TYPE_CHECKING:
    from kubectl_terminating.client import Client
    from kubectl_terminating.resources import Resource

CONTROLLER = "kubectl-terminating"  # reportingController: a qualified name
REASON = "DeletionBlocked"
ACTION = "Diagnose"  # required by events.k8s.io/v1, at most 128 bytes
DEFAULT_QPS = 5.0
DEFAULT_BURST = 25
NOTE_LIMIT = 1024  # bytes, the API server's NoteLengthLimit
NAME_LIMIT = 253 - 17  # a DNS subdomain, less `.` and 16 hex digits
RETRY_SECONDS = 10.0  # before writing again an event whose write failed (not refused)
FOLLOWER_SECONDS = 2.0  # between two tries for the Lease (client-go's retry period)
CLIENT_SECONDS = 60.0  # a fresh client (the token file read again) at least this often
CONTENT_MERGE_PATCH = "application/merge-patch+json"


@dataclass
class Entry:
    """The event of one stuck object's main blocker: what to write, and what was written."""

    regarding: JSON  # the object's reference, uid included
    cause: str  # the main blocker's type
    note: str
    namespace: str  # the event's: the object's, `default` for a cluster-scoped one
    name: str
    event_time: str
    last_observed: str
    instance: str  # reportingInstance: this replica
    count: int = 1  # runs that saw this cause on this object
    written: int = 0  # the count the API server holds (0: not created yet)
    refused: bool = False  # the create was refused (namespace terminating): not tried again
    retry_at: float = 0.0  # monotonic; a failed write waits until then
    last_write: float = 0.0

    @property
    def path(self) -> str:
        return f"/apis/events.k8s.io/v1/namespaces/{self.namespace}/events"

    def body(self) -> JSON:
        event: JSON = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "eventTime": self.event_time,
            "reportingController": CONTROLLER,
            "reportingInstance": self.instance,
            "action": ACTION,
            "reason": REASON,
            "regarding": self.regarding,
            "note": self.note,
            "type": "Warning",
        }
        if self.count > 1:
            event["series"] = self.series()
        return event

    def series(self) -> JSON:
        return {"count": self.count, "lastObservedTime": self.last_observed}


class TokenBucket:
    """qps tokens a second, at most burst saved: client-go's flowcontrol token bucket, the
    rate limiter the EventRateLimit plugin applies too."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.qps, self.burst, self.clock = qps, burst, clock
        self.tokens, self.updated = float(burst), clock()

    def _refill(self) -> float:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.qps)
        self.updated = now
        return now

    def take(self, stop: threading.Event, until: float) -> bool:
        """One token, waiting for it unless that would pass `until` (monotonic) or stop."""
        while not stop.is_set():
            now = self._refill()
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return True
            wait = (1.0 - self.tokens) / self.qps
            if now + wait > until:
                return False
            stop.wait(wait)
        return False


def event_name(object_name: str, nanoseconds: int) -> str:
    """client-go's `<object>.<hex nanoseconds>`, the object's name made a DNS subdomain
    (some kinds allow names that are not one: `system:controller`)."""
    base = re.sub(r"[^a-z0-9.-]", "-", object_name.lower())[:NAME_LIMIT].strip(".-") or "object"
    return f"{base}.{nanoseconds:x}"


def note_of(finding: Finding, url: str) -> str:
    """The main blocker's summary and confidence, and where its page is; at most 1 KiB."""
    blocker = finding.main_blocker
    assert blocker is not None
    confidence = f" (confidence: {blocker.confidence})" if blocker.confidence else ""
    tail = f"{confidence}{f'. Details: {url}' if url else ''}"
    head = safe(f"{blocker.type}: {blocker.summary}")
    room = NOTE_LIMIT - len(tail.encode())
    if len(head.encode()) > room:
        head = head.encode()[: room - 3].decode(errors="ignore") + "..."
    return head + tail


def _last_write(entry: Entry) -> float:
    return entry.last_write


def reference(finding: Finding) -> JSON:
    ref: JSON = {"apiVersion": finding.api_version, "kind": finding.kind, "name": finding.name}
    if finding.namespace:
        ref["namespace"] = finding.namespace
    ref["uid"] = finding.uid
    return ref


class Recorder:
    """The events of the last run's stuck objects (observe), and their writing (write_events,
    in its own thread): creates first, then the series that are behind, oldest write first."""

    def __init__(
        self,
        instance: str,
        external_url: str,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.instance, self.external_url, self.clock = instance, external_url, clock
        self.bucket = TokenBucket(qps, burst, clock)
        self.entries: dict[str, Entry] = {}  # by the object's uid
        self.lock = threading.Lock()
        self.changed = threading.Event()
        self.said: set[str] = set()  # the error lines said since the last run

    def observe(
        self,
        findings: Iterable[Finding],
        resource_of: Callable[[Finding], Resource | None],
        now: datetime,
    ) -> None:
        """One run's findings: a new event for each stuck object whose main blocker is new,
        one more in the series of the others; objects no longer stuck are forgotten."""
        stamp = micro_time(now)
        stuck = [f for f in findings if f.stuck and f.uid and f.main_blocker is not None]
        # no new content in a terminating namespace (NamespaceLifecycle refuses the create):
        # its objects' events are not tried; the namespace's own is (in `default`)
        closing = {f.name for f in stuck if f.kind == "Namespace" and not f.namespace}
        with self.lock:
            kept: dict[str, Entry] = {}
            for finding in stuck:
                blocker = finding.main_blocker
                assert blocker is not None
                entry = self.entries.get(finding.uid)
                if entry is not None and entry.cause == blocker.type:
                    entry.count += 1
                    entry.last_observed = stamp
                else:
                    entry = self._entry(finding, blocker.type, resource_of(finding), now, stamp)
                    entry.refused = finding.namespace in closing
                kept[finding.uid] = entry
            self.entries = kept
            self.said.clear()
        self.changed.set()

    def _entry(
        self, finding: Finding, cause: str, resource: Resource | None, now: datetime, stamp: str
    ) -> Entry:
        url = ""
        if self.external_url and resource is not None:
            page = object_path(resource.qualified, finding.namespace, finding.name)
            url = f"{self.external_url}/{page}"
        return Entry(
            regarding=reference(finding),
            cause=cause,
            note=note_of(finding, url),
            namespace=finding.namespace or "default",
            name=event_name(finding.name, int(now.timestamp() * 1e9)),
            event_time=stamp,
            last_observed=stamp,
            instance=self.instance,
        )

    def next_write(self) -> Entry | None:
        """The event to write next: one not created yet, else the series furthest behind."""
        now = self.clock()
        with self.lock:
            due = [
                e
                for e in self.entries.values()
                if not e.refused and e.count > e.written and e.retry_at <= now
            ]
        creates = [e for e in due if not e.written]
        if creates:
            return creates[0]
        return min(due, key=_last_write) if due else None

    def write(self, client: Client, entry: Entry, err: IO[str]) -> None:
        """Create the event, or PATCH its series (created again when it is gone)."""
        count = entry.count
        try:
            if entry.written:
                try:
                    client.patch(
                        f"{entry.path}/{entry.name}",
                        {"series": entry.series()},
                        CONTENT_MERGE_PATCH,
                    )
                except NotFound:
                    client.create(entry.path, entry.body())
            else:
                client.create(entry.path, entry.body())
        except Forbidden as error:  # RBAC, or its namespace began terminating
            entry.refused = True
            self._say(error, err)
        except Exception as error:  # unreachable, 5xx, 429; or a bug: not the end of writing
            entry.retry_at = self.clock() + RETRY_SECONDS
            self._say(error, err)
        else:
            entry.written = max(count, 1)
        entry.last_write = self.clock()

    def _say(self, error: Exception, err: IO[str]) -> None:
        said = error_line(error) if isinstance(error, TerminatingError) else repr(error)
        line = f"events: {said}"
        with self.lock:
            if line in self.said:
                return
            self.said.add(line)
        print(line, file=err, flush=True)


def write_events(
    connect: Callable[[], Client],
    recorder: Recorder,
    lease: Lease,
    stop: threading.Event,
    err: IO[str],
) -> None:
    """serve's events thread: while this replica holds the Lease (renewed every
    RENEW_SECONDS), write what the runs observed at the token bucket's pace; else try for the
    Lease every FOLLOWER_SECONDS. Says once each time it starts or stops writing."""
    client: Client | None = None
    made = 0.0
    leading = False
    while not stop.is_set():
        try:
            if client is None or time.monotonic() - made > CLIENT_SECONDS:
                client, made = connect(), time.monotonic()
            holds = lease.hold(client)
        except TerminatingError as error:
            print(f"events: {error_line(error)}", file=err, flush=True)
            holds = False
        if holds != leading:
            leading = holds
            where = f"Lease {lease.namespace}/{lease.name}"
            said = "holds" if holds else "no longer holds"
            print(f"events: {lease.holder} {said} {where}", file=err, flush=True)
        if not holds or client is None:
            stop.wait(FOLLOWER_SECONDS)
            continue
        until = time.monotonic() + RENEW_SECONDS
        while not stop.is_set() and time.monotonic() < until:
            recorder.changed.clear()
            entry = recorder.next_write()
            if entry is None:
                recorder.changed.wait(max(0.0, until - time.monotonic()))
            elif recorder.bucket.take(stop, until):
                recorder.write(client, entry, err)
