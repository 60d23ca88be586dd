"""--watch's pure parts: its flags, what counts as a change of blocker, which changes touch
which explanation, and its lines. Watching a real API server: tests/e2e/test_watch.py."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import queue
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from kubectl_terminating import kinds
from kubectl_terminating.client import Client
from kubectl_terminating.kubeconfig import Connection
from kubectl_terminating.options import Options, Request
from kubectl_terminating.resources import NODES, PODS, SERVICES, meta
from kubectl_terminating.run import Result
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import EVERYTHING
from kubectl_terminating.watch import (
    Change,
    DependencyView,
    Lines,
    Tracker,
    Watcher,
    depends_on,
    holds,
)
from tests.unit.builders import PODS_NOW, healthy_cluster, pod_fixture
from tests.unit.test_client import FaultServer, Step, make_client
from tests.unit.test_fleet import assert_usage_error
from tests.unit.test_render_pods import volumes_stuck


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-w", "--explain"], "--explain cannot be combined with --watch"),
        (["-w", "--summary"], "--summary cannot be combined with --watch"),
        (["-w", "-o", "yaml"], "-o yaml cannot be combined with --watch"),
        (["-w", "--from-file", "x.json"], "--from-file cannot be combined with --watch"),
        (["-w", "--all-contexts"], "--contexts/--all-contexts cannot be combined with --watch"),
        (["--output-watch-events", "-o", "json"], "only applies with --watch or --watch-only"),
        (["-w", "--output-watch-events"], "--output-watch-events applies with -o json"),
    ],
)
def test_watch_flags_that_do_not_fit_are_usage_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_usage_error(["pods", *args], message, capsys)


def test_the_same_blocker_with_other_numbers_is_no_change() -> None:
    finding = volumes_stuck()
    later = copy.deepcopy(finding)
    main = later.blockers[0]
    later.blockers[0] = type(main)(main.type, main.summary + " for 12m", main.evidence)
    older = copy.deepcopy(later)
    older.blockers[0] = type(main)(main.type, main.summary + " for 13m", main.evidence)
    assert holds(later) == holds(older)
    other = copy.deepcopy(finding)
    other.blockers = other.blockers[1:]
    assert holds(other) != holds(finding)


def test_an_explanation_depends_on_what_it_read_and_nothing_else() -> None:
    view = DependencyView(StaticView(healthy_cluster(), PODS_NOW))
    view.get(NODES, None, "worker-1")
    view.list(SERVICES, "shop")
    read = frozenset(view.read)
    node = pod_fixture("node-worker-1")
    assert depends_on(read, NODES, node)
    other = copy.deepcopy(node)
    other["metadata"]["name"] = "worker-2"
    assert not depends_on(read, NODES, other)
    service = {"metadata": {"name": "anything", "namespace": "shop"}}
    assert depends_on(read, SERVICES, service)  # a list of the namespace: any of its objects
    assert not depends_on(read, SERVICES, {"metadata": {"name": "x", "namespace": "other"}})


def test_lines_as_text_and_as_json_events() -> None:
    finding = volumes_stuck()
    out = io.StringIO()
    lines = Lines(Options(kind="pods", color="never"), out)
    lines.started(finding)
    lines.gone(finding, 252)
    text = out.getvalue().splitlines()
    assert text[0].startswith("shop/db-0 terminating: CSI driver ebs.csi.aws.com")
    assert text[1] == "shop/db-0 gone after 4m12s"
    out = io.StringIO()
    events = Lines(Options(kind="pods", output="json", output_watch_events=True, watch=True), out)
    events.changed(finding)
    event = json.loads(out.getvalue())
    assert event["type"] == "MODIFIED"
    assert event["object"]["name"] == "db-0"


def test_the_end_of_a_grace_period_is_looked_at_when_it_comes() -> None:
    """Nothing is written when a pod's grace period ends: the tracker sets itself a timer
    for then (a second after), and none for a pod already past it."""
    options = Options(kind="pods", color="never")
    unused = Client(Connection(server="http://127.0.0.1:9", context="c", namespace="shop"))
    tracker = Tracker(
        Request(options, "shop"),
        kinds.by_command("pods"),
        [PODS],
        unused,
        Lines(options, io.StringIO()),
    )
    in_grace = dataclasses.replace(volumes_stuck(), overdue_seconds=-30)
    at_deadline = dataclasses.replace(volumes_stuck(), name="db-2", overdue_seconds=0)
    overdue = dataclasses.replace(volumes_stuck(), name="db-1", overdue_seconds=1)
    assert tracker.wait() is None
    before = time.monotonic()
    tracker.start(Result([overdue, in_grace, at_deadline]))
    after = time.monotonic()
    # -30 is from -30.99 to -30 (whole seconds): 32s on is surely 1s past, the explainers'
    # "past deadline"; at 0 (not yet past for them) 2s on
    timers = {key[2]: at for at, key in tracker.timers}
    assert timers.keys() == {"db-0", "db-2"}
    assert before + 32 <= timers["db-0"] <= after + 32
    assert before + 2 <= timers["db-2"] <= after + 2


def stop(watcher: Watcher, server: FaultServer) -> None:
    """The watch and the server stopped, the watch's thread ended: one left running would
    retry the stopped server for the rest of the session. (Its request may still wait for
    the server's headers, which a hang-up cannot cut: the server's stop ends it.)"""
    watcher.stop()
    server.stop()
    if watcher.thread is not None:
        watcher.thread.join(timeout=10)
        assert not watcher.thread.is_alive()


def test_a_watch_too_old_for_the_server_lists_again_and_goes_on_from_there() -> None:
    """410 Gone (the API server restarted, its watch cache moved on): the pods are listed
    again (RELISTED with what is there now) and watched from the list's resourceVersion (e2e
    twin: test_watch_follows_blockers_as_they_change_and_survives_a_restart)."""
    path = "/api/v1/namespaces/shop/pods"
    gone = {"kind": "Status", "code": 410, "message": "too old resource version: 10 (20)"}
    pod = {"metadata": {"name": "web-0", "namespace": "shop", "resourceVersion": "21"}}
    listed = {"metadata": {**pod["metadata"], "managedFields": [{"manager": "kubelet"}]}}
    server = FaultServer()
    server.on(
        path,
        Step(body=json.dumps({"type": "ERROR", "object": gone}).encode() + b"\n"),
        Step(body={"kind": "PodList", "metadata": {"resourceVersion": "20"}, "items": [listed]}),
        Step(body=json.dumps({"type": "MODIFIED", "object": pod}).encode() + b"\n"),
        Step(delay=3600),  # the watch from 21 stays open
    )
    changes: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(make_client(server), PODS, "shop", EVERYTHING, changes, True)
    try:
        watcher.start("10")
        relisted, modified = changes.get(timeout=30), changes.get(timeout=30)
        asked = [parse_qs(urlsplit(s.path).query) for s in server.requests(path)]
    finally:
        stop(watcher, server)
    assert (relisted.event, [meta(i)["name"] for i in relisted.items]) == ("RELISTED", ["web-0"])
    assert relisted.items[0]["kind"] == "Pod"
    assert set(relisted.items[0]["metadata"]) == {"name", "namespace", "resourceVersion"}
    assert (modified.event, meta(modified.obj)["resourceVersion"]) == ("MODIFIED", "21")
    watched = [(q.get("watch"), q.get("resourceVersion")) for q in asked]
    assert watched[:3] == [(["true"], ["10"]), (None, None), (["true"], ["20"])]


def test_a_pod_that_started_terminating_during_the_gap_is_explained_after_the_relist() -> None:
    """The pod was deleted while the watch was gone (410): the relist is all that shows it,
    so it keeps the pod's deletionTimestamp, and the tracker reads and explains the pod."""
    pods = "/api/v1/namespaces/shop/pods"
    gone = {"kind": "Status", "code": 410, "message": "too old resource version: 10 (20)"}
    pod = pod_fixture("pod-web-0")
    pod["metadata"]["resourceVersion"] = "21"
    server = FaultServer()
    server.on(
        pods,
        Step(body=json.dumps({"type": "ERROR", "object": gone}).encode() + b"\n"),
        Step(body={"kind": "PodList", "metadata": {"resourceVersion": "21"}, "items": [pod]}),
        Step(delay=3600),
    )
    server.on(f"{pods}/web-0", Step(body=pod))
    client = make_client(server)
    changes: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(client, PODS, "shop", EVERYTHING, changes, True)
    options = Options(kind="pods", color="never")
    out = io.StringIO()
    tracker = Tracker(Request(options, "shop"), kinds.by_command("pods"), [PODS], client,
                      Lines(options, out))  # fmt: skip
    try:
        watcher.start("10")
        relisted = changes.get(timeout=30)
        assert meta(relisted.items[0])["deletionTimestamp"] == "2026-01-01T11:50:00Z"
        tracker.handle(relisted)
    finally:
        stop(watcher, server)
    assert out.getvalue().startswith("shop/web-0 terminating: "), out.getvalue()


def event_line(kind: str, name: str, version: str) -> bytes:
    pod = {"metadata": {"name": name, "namespace": "shop", "resourceVersion": version}}
    return json.dumps({"type": kind, "object": pod}).encode() + b"\n"


def test_a_watch_survives_an_error_that_is_no_api_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anything raised while a watch reads (a bug, an answer it did not expect) is one
    INTERRUPTED change and the watch goes on from where it was; its thread used to end."""
    from kubectl_terminating import watch

    path = "/api/v1/namespaces/shop/pods"
    server = FaultServer()
    server.on(
        path,
        Step(body=event_line("MODIFIED", "web-0", "11")),
        Step(body=event_line("MODIFIED", "web-1", "12")),
        Step(delay=3600),
    )
    from kubectl_terminating.resources import typed as real

    raised: list[object] = []

    def typed_once_failing(obj: dict[str, object], resource: object) -> object:
        if not raised:
            raised.append(obj)
            raise ValueError("injected")
        return real(obj, resource)  # type: ignore[arg-type]

    monkeypatch.setattr(watch, "typed", typed_once_failing)
    monkeypatch.setattr(watch, "FIRST_BACKOFF", 0.01)
    changes: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(make_client(server), PODS, "shop", EVERYTHING, changes, True)
    try:
        watcher.start("10")
        interrupted, modified = changes.get(timeout=30), changes.get(timeout=30)
        asked = [parse_qs(urlsplit(s.path).query) for s in server.requests(path)]
        alive = watcher.thread is not None and watcher.thread.is_alive()
        failed = watcher.failed()
    finally:
        stop(watcher, server)
    assert (interrupted.event, interrupted.message) == ("INTERRUPTED", "ValueError: injected")
    assert (modified.event, meta(modified.obj)["name"]) == ("MODIFIED", "web-1")
    # on from past the event it choked on: the same answer again would choke it again
    assert [q.get("resourceVersion") for q in asked[:2]] == [["10"], ["11"]]
    assert alive and not failed


def test_a_watch_waits_on_a_full_queue_and_ends_when_stopped() -> None:
    """Nobody handles the changes (the loop died, or is slow): a watch holds at most what
    the bounded queue holds, waiting instead of growing, and stop() ends it."""
    import threading

    path = "/api/v1/namespaces/shop/pods"
    server = FaultServer()
    server.on(path, Step(body=b"".join(event_line("ADDED", f"web-{i}", str(i)) for i in range(50))))
    changes: queue.Queue[Change] = queue.Queue(5)
    stopped = threading.Event()
    try:
        watcher = Watcher(make_client(server), PODS, "shop", EVERYTHING, changes, True, stopped)
        watcher.start("0")
        deadline = time.monotonic() + 30
        while not changes.full() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # time to put more, were it unbounded
        assert changes.qsize() == 5
        assert watcher.thread is not None and watcher.thread.is_alive()
        stopped.set()
        watcher.thread.join(timeout=10)
        assert not watcher.thread.is_alive() and not watcher.failed()
    finally:
        server.stop()


def test_a_watch_refused_after_it_ran_tries_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch that ran and is then refused (403: an API server that restarts authorizes
    before its caches fill) reconnects with backoff and goes on; it used to give the type up
    for good (seen in make soak: every watch lost after the first restart)."""
    from kubectl_terminating import watch

    path = "/api/v1/namespaces/shop/pods"
    forbidden = {
        "kind": "Status",
        "code": 403,
        "reason": "Forbidden",
        "message": "pods is forbidden",
    }
    server = FaultServer()
    server.on(
        path,
        Step(body=event_line("MODIFIED", "web-0", "11")),
        Step(403, forbidden),
        Step(body=event_line("MODIFIED", "web-1", "12")),
        Step(delay=3600),
    )
    monkeypatch.setattr(watch, "FIRST_BACKOFF", 0.01)
    changes: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(make_client(server), PODS, "shop", EVERYTHING, changes, True)
    try:
        watcher.start("10")
        seen = [changes.get(timeout=30) for _ in range(3)]
    finally:
        stop(watcher, server)
    assert [c.event for c in seen] == ["MODIFIED", "INTERRUPTED", "MODIFIED"]
    assert meta(seen[2].obj)["name"] == "web-1" and not watcher.given_up
