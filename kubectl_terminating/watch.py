"""`-w/--watch`: the table, then a line whenever an object starts terminating, what holds it
changes, or it is gone; built on watch requests (docs/fleet-and-watch.md).
"""

from __future__ import annotations

import heapq
import json
import queue
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import IO

from kubectl_terminating import kinds
from kubectl_terminating.causes import cause_of
from kubectl_terminating.client import ACCEPT_METADATA, Client, Hangup, accept_for
from kubectl_terminating.connection import connected, error_line
from kubectl_terminating.errors import ApiError, ExitStatus, Gone, NotFound, TerminatingError
from kubectl_terminating.find import drop_managed_fields, listable_types
from kubectl_terminating.kinds import Kind
from kubectl_terminating.live import LiveSource, LiveView
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.options import Options, Request, complete
from kubectl_terminating.reads import watched_kinds
from kubectl_terminating.resources import Resource, meta, typed
from kubectl_terminating.run import Result, collect, explain_one, report
from kubectl_terminating.view import (
    EVERYTHING,
    ClusterView,
    ContentListing,
    Discovery,
    Selectors,
    may,
)

# The server ends each watch request after this long (client-go: 5 to 10 minutes); the watch
# goes on from the last resourceVersion seen.
WATCH_SECONDS = 300
# Statuses a running watch will not get past by trying again (404, 405: no watch verb). A
# 401 or 403 is not one: an API server that restarts authorizes before its caches fill (make
# soak saw every watch refused at once); refused from the start, a type is not watched.
GONE_FOR_GOOD = frozenset({404, 405})
FIRST_BACKOFF = 0.5
RETRY_SECONDS = 5.0  # before explaining again an object the server could not be asked about
INTERRUPTED_EVERY = 60.0  # seconds between two "watch interrupted" warnings
MAX_BACKOFF = 30.0
# Changes waiting to be handled: past this the watches wait for the handler (a burst, or a
# handler gone) instead of holding every event in memory
MAX_QUEUED = 1000
PUT_POLL = 1.0  # seconds a watch waits on a full queue before looking whether it was stopped
ACCEPT_WATCH_METADATA = (
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)
# The same blocker with other numbers (an age, a count of dependents left) is no change.
_NUMBERS = re.compile(r"\d+")

# (type, namespace, name) an explanation read; name None: a list (namespace None: all)
Dependency = tuple[str, str | None, str | None]
Key = tuple[Resource, str, str]  # (type, namespace or "", name)


class DependencyView:
    """A ClusterView that passes reads on and notes which objects and lists were read."""

    def __init__(self, inner: ClusterView) -> None:
        self.inner = inner
        self.read: set[Dependency] = set()

    @property
    def now(self) -> datetime:
        return self.inner.now

    def may(self, user: str, groups: tuple[str, ...], attributes: JSON) -> bool:
        return may(self.inner, user, groups, attributes)

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        self.read.add((resource.qualified, namespace or None, name))
        return self.inner.get(resource, namespace, name)

    def discovery(self) -> Discovery:
        return self.inner.discovery()

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        return self.inner.namespace_content(namespace)

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        self.read.add((resource.qualified, namespace or None, None))
        return self.inner.list(resource, namespace, selectors)


def depends_on(read: frozenset[Dependency], resource: Resource, obj: JSON) -> bool:
    m = meta(obj)
    namespace, name = m.get("namespace") or None, m.get("name")
    kind = resource.qualified
    return bool(read & {(kind, namespace, name), (kind, namespace, None), (kind, None, None)})


@dataclass(frozen=True)
class Change:
    """What a watch saw: ADDED, MODIFIED, DELETED (obj), RELISTED (after 410 Gone: items,
    for the command's kind), INTERRUPTED (message: reconnecting) or LOST (message: the watch
    is impossible)."""

    event: str
    resource: Resource
    obj: JSON = field(default_factory=dict)
    items: tuple[JSON, ...] = ()
    message: str = ""


class Watcher:
    """One resource type watched in a thread of its own; what it sees goes to `changes`."""

    def __init__(
        self,
        client: Client,
        resource: Resource,
        namespace: str | None,
        selectors: Selectors,
        changes: queue.Queue[Change],
        whole: bool,
        stopped: threading.Event | None = None,
    ) -> None:
        """whole: a relist reads every object (the command's kind); otherwise one item
        gives the resourceVersion to go on from and every dependent is explained again.
        stopped: set, the watch ends at its next event or reconnection; stop() ends it now."""
        self.client, self.resource, self.changes, self.whole = client, resource, changes, whole
        self.path = resource.path(namespace)
        self.params = selectors.params()
        self.stopped = stopped or threading.Event()
        self.thread: threading.Thread | None = None
        self.given_up = False  # the type cannot be watched (LOST): its thread ended on purpose
        self.hangup = Hangup()  # ends the open watch request from another thread

    def resource_version(self) -> str | None:
        """Where the watch starts: now (read before the first explanations, so nothing that
        changes while they run is missed). None when the type cannot be listed."""
        try:
            page = self.client.get(self.path, {**self.params, "limit": 1}, ACCEPT_METADATA)
        except ApiError as error:
            self._lost(f"{self._what()}: {error_line(error)}; its changes are not followed")
            return None
        return str((page.get("metadata") or {}).get("resourceVersion") or "") or None

    def start(self, version: str) -> None:
        name = f"watch {self.resource.qualified}"
        self.thread = threading.Thread(target=self._run, args=(version,), name=name, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """End the watch now: its request closed, its thread ended without waiting for the
        server's next event."""
        self.stopped.set()
        self.hangup.now()

    def failed(self) -> bool:
        """Its thread ended, and not because the type cannot be watched or it was stopped."""
        thread = self.thread
        ended = thread is not None and not thread.is_alive()
        return ended and not self.given_up and not self.stopped.is_set()

    def _put(self, change: Change) -> None:
        """Into the bounded queue, waiting while it is full, until stopped."""
        while not self.stopped.is_set():
            try:
                self.changes.put(change, timeout=PUT_POLL)
                return
            except queue.Full:
                continue

    def _what(self) -> str:
        return f"cannot watch {self.resource.qualified}"

    def _lost(self, message: str) -> None:
        self.given_up = True
        self._put(Change("LOST", self.resource, message=message))

    def _run(self, version: str | None) -> None:
        delay, interrupted = FIRST_BACKOFF, False
        while not self.stopped.is_set():
            try:
                if version is None:
                    version = self._relist()
                for kind, obj in self._events(version):
                    if self.stopped.is_set():
                        return
                    version = str(meta(obj).get("resourceVersion") or version)
                    delay, interrupted = FIRST_BACKOFF, False
                    if kind in ("ADDED", "MODIFIED", "DELETED"):
                        self._put(Change(kind, self.resource, typed(obj, self.resource)))
            except Gone:
                version = None  # too old for the server: list again, then go on from there
            except Exception as error:  # a bug or an odd answer must not end the watch
                if isinstance(error, ApiError) and error.status in GONE_FOR_GOOD:
                    self._lost(f"{self._what()}: {error_line(error)}; its changes are not followed")
                    return
                if not interrupted:
                    message = (
                        error_line(error)
                        if isinstance(error, TerminatingError)
                        else f"{type(error).__name__}: {error}"
                    )
                    self._put(Change("INTERRUPTED", self.resource, message=message))
                    interrupted = True
                self.stopped.wait(delay)
                delay = min(delay * 2, MAX_BACKOFF)

    def _events(self, version: str) -> Iterator[tuple[str, JSON]]:
        params = {
            **self.params,
            "resourceVersion": version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": WATCH_SECONDS,
        }
        # metadata only: which object changed is all a watch tells; explaining reads the rest
        for event in self.client.watch(self.path, params, ACCEPT_WATCH_METADATA, self.hangup):
            kind, obj = str(event.get("type")), event.get("object")
            if not isinstance(obj, dict):
                continue
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise Gone(str(obj.get("message") or "too old resource version"), 410)
                raise ApiError(str(obj.get("message") or "watch error"), int(obj.get("code") or 0))
            yield kind, obj

    def _relist(self) -> str:
        if not self.whole:
            version = self.resource_version()
            if version is None:
                raise NotFound(f"{self.resource.qualified} can no longer be listed", 404)
            self._put(Change("RELISTED", self.resource))
            return version
        items: list[JSON] = []
        version = ""
        # managedFields cut before decoding (as find's lists do): most of each item's bytes
        pages = self.client.pages(
            self.path, self.params, ACCEPT_METADATA, prune=drop_managed_fields
        )
        for page in pages:
            version = version or str((page.get("metadata") or {}).get("resourceVersion") or "")
            # only what the tracker reads of each (its key, version, deletion): after a 410
            # every type lists at once, and whole metadata (managedFields) held that long
            # was 29 MB that serve kept for good at 1,000 pods (make soak)
            items += [typed(_relisted_meta(i), self.resource) for i in page.get("items") or []]
        self._put(Change("RELISTED", self.resource, items=tuple(items)))
        return version


_RELISTED_FIELDS = ("name", "namespace", "uid", "resourceVersion", "deletionTimestamp")


def _relisted_meta(obj: JSON) -> JSON:
    m = meta(obj)
    return {"metadata": {k: m[k] for k in _RELISTED_FIELDS if k in m}}


def holds(finding: Finding) -> tuple[str, str]:
    """What holds the object, as compared between two explanations."""
    main = finding.main_blocker
    if main is None:
        return "", ""
    return main.type, "" if cause_of(main.type).not_stuck else _NUMBERS.sub("#", main.summary)


def key_of(resource: Resource, obj: JSON) -> Key:
    m = meta(obj)
    return resource, str(m.get("namespace") or ""), str(m.get("name") or "")


class Lines:
    """The lines after the table: text, or with -o json one JSON object (or event) a line."""

    def __init__(self, options: Options, out: IO[str], with_kind: bool = False) -> None:
        """with_kind: each line names the object's kind (`all`)."""
        from kubectl_terminating.render.style import Style, use_color

        self.with_kind = with_kind
        self.out, self.json, self.events = (
            out,
            options.output == "json",
            options.output_watch_events,
        )
        self.style = Style(color=use_color(options.color, out))
        self.lock = threading.Lock()

    def emit(self, event: str, finding: Finding, text: str) -> None:
        from kubectl_terminating.render.style import safe

        if self.json:
            document = finding.to_json(kinds.json_extras)
            if self.events:
                document = {"type": event, "object": document}
            line = json.dumps(document, ensure_ascii=True)
        else:
            from kubectl_terminating.render.structured import kind_group

            where = f"{finding.namespace}/" if finding.namespace else ""
            if self.with_kind:
                where = f"{kind_group(finding, finding.kind)} {where}"
            line = f"{safe(where + finding.name)} {text}"
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()

    def kept(self, finding: Finding) -> Finding:
        """What the tracker keeps of a finding until the object goes: its DELETED line
        prints it (with -o json whole)."""
        return finding

    def started(self, finding: Finding) -> None:
        self.emit("ADDED", finding, f"terminating: {self._blocker(finding)}")

    def changed(self, finding: Finding) -> None:
        self.emit("MODIFIED", finding, f"now: {self._blocker(finding)}")

    def gone(self, finding: Finding, seconds: float | None) -> None:
        from kubectl_terminating.timeutil import human_duration

        self.emit("DELETED", finding, f"gone after {human_duration(seconds)}")

    def _blocker(self, finding: Finding) -> str:
        from kubectl_terminating.render.table import blocker_cell

        return blocker_cell(finding, self.style)


@dataclass
class Tracked:
    finding: Finding
    read: frozenset[Dependency]
    version: str  # the resourceVersion explained
    since: float | None  # when its deletion was first asked for (epoch seconds)


class Tracker:
    """The terminating objects being watched: explained again only when they or what they
    read change, a line printed when one starts, what holds it changes, or it goes."""

    def __init__(
        self, request: Request, kind: Kind, own: list[Resource], client: Client, lines: Lines
    ) -> None:
        """own: the types whose terminating objects are followed (the command's kind, or
        for `all` every listable type)."""
        self.request, self.kind, self.client, self.lines = request, kind, client, lines
        self.own = {(r.api_version, r.kind): r for r in own}
        self.objects: dict[Key, Tracked] = {}
        self.timers: list[tuple[float, Key]] = []
        self.reads: dict[str, set[Dependency]] = {}  # by uid, in the first pass

    def view_for(self, view: ClusterView, obj: JSON) -> ClusterView:
        """For run.collect: each object explained through its own DependencyView."""
        noting = DependencyView(view)
        self.reads[str(meta(obj).get("uid"))] = noting.read
        return noting

    def start(self, result: Result) -> None:
        """The first pass's findings, tracked without a line (their resourceVersion is not
        known: the first change of each explains it again)."""
        for finding in result.findings:
            resource = self.own.get((finding.api_version, finding.kind))
            if resource is not None:
                key = (resource, finding.namespace or "", finding.name)
                self._keep(key, {}, finding, frozenset(self.reads.get(finding.uid, ())))
        self.reads.clear()

    def _keep(self, key: Key, obj: JSON, finding: Finding, read: frozenset[Dependency]) -> None:
        since = None
        if finding.terminating_seconds is not None:
            since = time.time() - finding.terminating_seconds
        before = self.objects.get(key)
        if before is not None and before.since is not None:
            # a forced deletion moves deletionTimestamp to now: the first request counts
            since = before.since if since is None else min(since, before.since)
        version = str(meta(obj).get("resourceVersion"))
        self.objects[key] = Tracked(self.lines.kept(finding), read, version, since)
        if finding.overdue_seconds is not None and finding.overdue_seconds <= 0:
            # nothing will be written when the grace period ends: look again then. The
            # seconds are whole (-14.9 reads -14) and the explainers call a pod past its
            # deadline from 1s on (at 0s nothing holds it yet): 2s more, or the line says
            # "unknown" and, with no timer left, stays so
            heapq.heappush(self.timers, (time.monotonic() - finding.overdue_seconds + 2, key))

    def wanted(self, key: Key) -> bool:
        names = self.request.options.names
        return not names or key[2] in names

    def handle(self, change: Change) -> None:
        """A change of a watched object: its own (re-explained if terminating) or of one
        that explanations read (those that read it are explained again). The objects one
        change re-explains read through one view: a node read once for all its pods."""
        live = LiveView(self.client)
        if (change.resource.api_version, change.resource.kind) in self.own:
            if change.event == "RELISTED":
                self._relisted(change.resource, change.items, live)
            elif self.wanted(key_of(change.resource, change.obj)):
                self._own(change, live)
        self._related(change, live)

    def _own(self, change: Change, live: LiveView) -> None:
        key, m = key_of(change.resource, change.obj), meta(change.obj)
        if change.event == "DELETED":
            self._gone(key)
            return
        tracked = self.objects.get(key)
        if m.get("deletionTimestamp") and (
            tracked is None or tracked.version != str(m.get("resourceVersion"))
        ):
            self.refresh(key, live)

    def _relisted(self, resource: Resource, items: tuple[JSON, ...], live: LiveView) -> None:
        present = {key_of(resource, i): i for i in items}
        for key in [k for k in self.objects if k[0] == resource and k not in present]:
            self._gone(key)
        for key, obj in present.items():
            if self.wanted(key):
                self._own(Change("MODIFIED", resource, obj), live)

    def _related(self, change: Change, live: LiveView) -> None:
        kind = change.resource.qualified
        for key, tracked in list(self.objects.items()):
            if (change.event == "RELISTED" and any(r[0] == kind for r in tracked.read)) or (
                change.event != "RELISTED" and depends_on(tracked.read, change.resource, change.obj)
            ):
                self.refresh(key, live)

    def refresh(self, key: Key, live: LiveView | None = None) -> None:
        """Read the object again and explain it (through live, shared by the objects one
        change re-explains): a line if it started or what holds it changed. When the API
        server cannot be reached (it restarts), try again later."""
        try:
            self._refresh(key, live or LiveView(self.client))
        except TerminatingError:
            heapq.heappush(self.timers, (time.monotonic() + RETRY_SECONDS, key))

    def _refresh(self, key: Key, live: LiveView) -> None:
        resource, namespace, name = key
        try:
            path = resource.path(namespace or None, name)
            obj = typed(self.client.get(path, accept=accept_for(resource)), resource)
        except NotFound:
            self._gone(key)
            return
        if not meta(obj).get("deletionTimestamp"):
            return
        noting = DependencyView(live)
        finding = explain_one(self.kind, obj, resource, noting, self.request.detailed)
        before = self.objects.get(key)
        self._keep(key, obj, finding, frozenset(noting.read))
        if before is None:
            self.lines.started(finding)
        elif holds(before.finding) != holds(finding):
            self.lines.changed(finding)

    def _gone(self, key: Key) -> None:
        tracked = self.objects.pop(key, None)
        if tracked is None:
            return
        seconds = None if tracked.since is None else time.time() - tracked.since
        self.lines.gone(tracked.finding, seconds)

    def wait(self) -> float | None:
        """Seconds until the next timer (None: none)."""
        return max(0.0, self.timers[0][0] - time.monotonic()) if self.timers else None

    def fire(self) -> None:
        live = LiveView(self.client)
        while self.timers and self.timers[0][0] <= time.monotonic():
            _, key = heapq.heappop(self.timers)
            if key in self.objects:
                self.refresh(key, live)


def _first(request: Request, result: Result, lines: Lines, out: IO[str], err: IO[str]) -> None:
    """The table (or with -o json each object, a line each); with --watch-only only the
    warnings."""
    from kubectl_terminating.run import print_problems

    options = request.options
    if options.watch_only or options.output == "json":
        print_problems(result, err)
        if not options.watch_only:
            for finding in result.findings:
                lines.started(finding)
    else:
        report(request, result, out, err)
    out.flush()
    err.flush()


def _own_types(view: ClusterView, kind: Kind, namespace: str | None) -> list[Resource]:
    """The types whose objects the run follows: the command's, or for `all` every type
    find_all looks at (view: the run's, whose discovery find_all then reuses)."""
    if kind.resource is not None:
        return [kind.resource]
    return listable_types(view, namespace)[0]


class Session:
    """The watches of one run and the tracker they feed: built (each watch's resourceVersion
    read) before the first explanations, started after them."""

    def __init__(
        self, client: Client, view: ClusterView, request: Request, lines: Lines, err: IO[str]
    ) -> None:
        options = request.options
        kind = kinds.by_command(options.kind)
        own = _own_types(view, kind, request.namespace)
        related = [r for r in watched_kinds() if r not in own]
        self.changes: queue.Queue[Change] = queue.Queue(MAX_QUEUED)
        self.stopped = threading.Event()  # stop(): every watch of the session ends
        self.relists = 0  # watches that got 410 Gone and listed again
        # long-lived requests get their own connections: the explanations keep theirs
        streams = Client(client.connection, 0.0, len(own) + len(related), options.verbosity, err)
        selectors = Selectors(labels=options.selector or "")
        self.watchers = [
            Watcher(
                streams,
                r,
                request.namespace if r.namespaced else None,
                selectors,
                self.changes,
                True,
                self.stopped,
            )
            for r in own
        ]
        self.watchers += [
            Watcher(streams, r, None, EVERYTHING, self.changes, False, self.stopped)
            for r in related
        ]
        self.versions = streams.map(lambda w: w.resource_version(), self.watchers)
        self.tracker = Tracker(request, kind, own, client, lines)
        self.err = err

    def start(self) -> None:
        for watcher, version in zip(self.watchers, self.versions, strict=True):
            if version is not None:
                watcher.start(version)

    def stop(self) -> None:
        """End the watches now, their requests closed: a session set up again must not
        leave the old one's threads reading (each for a minute or more, until the server's
        next event), nor a stopped serve its requests open."""
        self.stopped.set()
        for watcher in self.watchers:
            watcher.stop()

    def failed_watches(self) -> list[str]:
        """The types whose watch thread ended on an error it did not survive."""
        return [w.resource.qualified for w in self.watchers if w.failed()]

    def follow(self, until: float | None = None, stop: threading.Event | None = None) -> None:
        """Handle changes, forever or (until: a time.monotonic()) until then or until no
        object is left; with stop, until it is set (looked at every PUT_POLL seconds)."""
        from kubectl_terminating.render.style import safe

        said = -INTERRUPTED_EVERY  # when an interruption was last told
        tracker = self.tracker
        while until is None or (tracker.objects and time.monotonic() < until):
            if stop is not None and stop.is_set():
                return
            poll = None if stop is None else PUT_POLL
            waits = [
                w
                for w in (tracker.wait(), until and until - time.monotonic(), poll)
                if w is not None
            ]
            try:
                change = self.changes.get(timeout=max(0.0, min(waits)) if waits else None)
            except queue.Empty:
                tracker.fire()
                continue
            if change.event == "LOST":
                print(f"Warning: {safe(change.message)}", file=self.err, flush=True)
            elif change.event == "INTERRUPTED":
                # every watch loses the server at once: one line, not one per watch
                if time.monotonic() - said >= INTERRUPTED_EVERY:
                    said = time.monotonic()
                    print(
                        f"Warning: watch interrupted, reconnecting: {safe(change.message)}",
                        file=self.err,
                        flush=True,
                    )
            else:
                self.relists += change.event == "RELISTED"
                tracker.handle(change)


def run_watch(options: Options, out: IO[str], err: IO[str]) -> int:
    """The table (unless --watch-only), then the lines, until Ctrl-C (exit 130)."""
    with connected(options, err) as client:
        request = complete(options, client.connection.namespace)
        lines = Lines(options, out, with_kind=kinds.by_command(options.kind).resource is None)
        source = LiveSource(client)
        session = Session(client, source.view, request, lines, err)
        result = collect(request, source, err, view_for=session.tracker.view_for)
        _first(request, result, lines, out, err)
        session.tracker.start(result)
        session.start()
        session.follow()
    return ExitStatus.OK  # not reached: Ctrl-C ends it (guarded: exit 130)


def wait_gone(
    client: Client,
    request: Request,
    findings: list[Finding],
    timeout: float,
    out: IO[str],
    err: IO[str],
) -> int:
    """`fix --apply --wait`: the same watch over findings until all are gone (0), or exit 3
    with the ones still there after timeout seconds."""
    from kubectl_terminating.render.style import safe

    with_kind = kinds.by_command(request.options.kind).resource is None
    lines = Lines(replace(request.options, output=None), out, with_kind)
    session = Session(client, LiveView(client), request, lines, err)
    session.tracker.start(Result(findings))
    session.start()
    try:
        # gone before the watches began? read each once (after their resourceVersion was taken)
        for key in list(session.tracker.objects):
            session.tracker.refresh(key)
        session.follow(time.monotonic() + timeout)
    finally:
        session.stop()  # its requests end with the wait, not at the server's next event
    left = [f"{safe(k[1] + '/' if k[1] else '')}{safe(k[2])}" for k in session.tracker.objects]
    if left:
        print(f"error: timed out waiting for {len(left)} to go: {', '.join(left)}", file=err)
        return ExitStatus.STUCK
    return ExitStatus.OK
