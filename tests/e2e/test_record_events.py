"""`serve --record-events` against the real control plane: the diagnosis as an Event on each
stuck object, read back with the built kubectl (`describe`, `events --for`).

Each serve runs as a ServiceAccount with the rights the chart grants with the value on (reads,
create/patch on events.k8s.io events, get/create/update on Leases in its own namespace), every
2s, as pod serve-N of that namespace (POD_NAME, POD_NAMESPACE). What each one wrote is read from
the API server's audit log by its user.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_outage import dead_node
from tests.harness import scenarios
from tests.harness.api import create_namespace, delete, unique_ns, wait_for
from tests.harness.cli import start_serve
from tests.harness.controlplane import ApiError, ControlPlane, free_port
from tests.harness.users import User, Users

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
READS = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
WRITE_EVENTS = {
    "apiGroups": ["events.k8s.io"],
    "resources": ["events"],
    "verbs": ["create", "patch"],
}
LEASES = {
    "apiGroups": ["coordination.k8s.io"],
    "resources": ["leases"],
    "verbs": ["get", "create", "update"],
}
PAGES = "https://terminating.example/k8s"
WAIT = 120.0  # runs every 2s; a loaded 2-core machine is slow
LEASE = "kubectl-terminating-events"
LEASES_PATH = "/apis/coordination.k8s.io/v1/namespaces/{}/leases"


@dataclass
class Serve:
    user: User
    name: str  # its pod name: the Events' reportingInstance, the Lease's holder
    log: Path
    proc: Any = None

    def said(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def users(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    with Users(control_plane, tmp_path_factory.mktemp("events-users"), "events") as made:
        yield made


def writer(users: Users, name: str) -> User:
    """A user with the chart's rights when --record-events is on."""
    return users.user(
        name,
        cluster_rules=[READS, WRITE_EVENTS],
        namespace_rules={users.namespace: [LEASES]},
    )


@contextlib.contextmanager
def serving(
    cp: ControlPlane, users: Users, user: User, name: str, directory: Path, *extra: str
) -> Iterator[Serve]:
    served = Serve(user, name, directory / f"{name}.log")
    env = {"POD_NAME": name, "POD_NAMESPACE": users.namespace}
    with open(served.log, "wb") as log:
        served.proc = start_serve(
            user.kubeconfig, free_port(), "2s", log, f"--external-url={PAGES}", *extra, env=env
        )
        try:
            yield served
        finally:
            served.proc.terminate()
            served.proc.wait(30)
            with contextlib.suppress(ApiError):  # the next test's replicas start afresh
                cp.api("DELETE", f"{LEASES_PATH.format(users.namespace)}/{LEASE}")


def ours(cp: ControlPlane, namespace: str, name: str | None = None) -> list[JSON]:
    """The events serve wrote in namespace (about the object `name`), oldest first."""
    items = cp.api("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]
    found = [
        e
        for e in items
        if e.get("reportingController") == "kubectl-terminating"
        and (name is None or e["regarding"]["name"] == name)
    ]
    return sorted(found, key=lambda e: e["eventTime"])


def count_of(event: JSON) -> int:
    return int((event.get("series") or {}).get("count") or 1)


def writes(cp: ControlPlane, offset: int, user: User) -> list[JSON]:
    """The audited requests of user that were not reads."""
    reads = {"get", "list", "watch"}
    return [e for e in cp.audit_events(offset, user.username) if e["verb"] not in reads]


def test_each_stuck_object_gets_one_event_kubectl_shows_and_a_new_cause_a_new_one(
    control_plane: ControlPlane, users: Users, tmp_path: Path
) -> None:
    cp = control_plane
    ns = unique_ns("events")
    create_namespace(cp, ns)
    pod = scenarios.pod_on_missing_node(cp, ns, grace_period=1)
    user = writer(users, "recorder")
    offset = cp.audit_offset()
    with serving(cp, users, user, "serve-0", tmp_path, "--record-events") as served:
        try:
            # three runs or more: still one event, its series counting them
            wait_for(
                lambda: [e for e in ours(cp, ns, pod.name) if count_of(e) >= 3],
                WAIT,
                0.5,
                message="the event's series at 3",
            )
        except TimeoutError:
            raise AssertionError(served.said()[-3000:]) from None
        (event,) = ours(cp, ns, pod.name)
        assert event["type"] == "Warning"
        assert event["reason"] == "DeletionBlocked"
        assert event["reportingInstance"] == "serve-0"
        uid = cp.api("GET", scenarios.pod_path(ns, pod.name))["metadata"]["uid"]
        assert event["regarding"]["uid"] == uid
        assert event["note"].startswith("node-missing: ")
        assert "(confidence: certain)" in event["note"]
        assert event["note"].endswith(f"Details: {PAGES}/objects/pods/{ns}/{pod.name}")
        assert event["metadata"]["name"].startswith(f"{pod.name}.")

        described = cp.kubectl("describe", "pod", pod.name, "-n", ns).stdout
        assert "DeletionBlocked" in described and "node-missing: " in described, described
        listed = cp.kubectl("events", "--for", f"pod/{pod.name}", "-n", ns).stdout
        assert "DeletionBlocked" in listed and "node-missing: " in listed, listed

        # the node comes back, dead: the main blocker is now another, so another event
        dead_node(cp, pod.node or "")
        try:
            second = wait_for(
                lambda: [e for e in ours(cp, ns, pod.name) if "node-not-ready" in e["note"]],
                WAIT,
                0.5,
                message="an event for the new main blocker",
            )
        except TimeoutError:
            raise AssertionError(served.said()[-3000:]) from None
        first, latest = ours(cp, ns, pod.name)
        assert first["metadata"]["name"] == event["metadata"]["name"]
        assert latest["metadata"]["name"] == second[0]["metadata"]["name"]

    # what serve's user wrote: events and its Lease, nothing else; never the pod
    written = writes(cp, offset, user)
    targets = {(e["verb"], e["objectRef"]["resource"]) for e in written}
    assert targets <= {
        ("create", "events"),
        ("patch", "events"),
        ("create", "leases"),
        ("update", "leases"),
    }, targets
    assert ("patch", "events") in targets
    assert all(
        e["objectRef"].get("apiGroup") in ("events.k8s.io", "coordination.k8s.io") for e in written
    )
    with contextlib.suppress(ApiError):
        delete(cp, f"/api/v1/nodes/{pod.node}")


def test_without_the_flag_serve_writes_nothing(
    control_plane: ControlPlane, users: Users, tmp_path: Path
) -> None:
    cp = control_plane
    ns = unique_ns("no-events")
    create_namespace(cp, ns)
    pod = scenarios.pod_on_missing_node(cp, ns, grace_period=1)
    user = writer(users, "reader")  # may write events: only the flag keeps it from doing so
    offset = cp.audit_offset()
    with serving(cp, users, user, "serve-quiet", tmp_path) as served:
        try:
            wait_for(lambda: served.said().count("run: ") >= 3, WAIT, 0.5, message="3 runs")
        except TimeoutError:
            raise AssertionError(served.said()[-3000:]) from None
    assert ours(cp, ns, pod.name) == []
    assert writes(cp, offset, user) == []


def test_of_two_replicas_only_the_lease_holder_writes_until_it_stops(
    control_plane: ControlPlane, users: Users, tmp_path: Path
) -> None:
    cp = control_plane
    ns = unique_ns("replicas")
    create_namespace(cp, ns)
    pod = scenarios.pod_on_missing_node(cp, ns, grace_period=1)
    one, two = writer(users, "replica-a"), writer(users, "replica-b")
    offset = cp.audit_offset()
    lease_path = f"{LEASES_PATH.format(users.namespace)}/{LEASE}"
    with (
        serving(cp, users, one, "serve-a", tmp_path, "--record-events") as a,
        serving(cp, users, two, "serve-b", tmp_path, "--record-events") as b,
    ):
        try:
            wait_for(
                lambda: [e for e in ours(cp, ns, pod.name) if count_of(e) >= 3],
                WAIT,
                0.5,
                message="three runs' events",
            )
        except TimeoutError:
            raise AssertionError(a.said()[-2000:] + b.said()[-2000:]) from None
        holder = cp.api("GET", lease_path)["spec"]["holderIdentity"]
        leader, follower = (a, b) if holder == "serve-a" else (b, a)
        assert {e["reportingInstance"] for e in ours(cp, ns, pod.name)} == {leader.name}
        assert not [
            e for e in writes(cp, offset, follower.user) if e["objectRef"]["resource"] == "events"
        ]
        # the holder stops: the other takes the Lease once it runs out, and writes
        leader.proc.terminate()
        leader.proc.wait(30)
        try:
            wait_for(
                lambda: [
                    e for e in ours(cp, ns, pod.name) if e["reportingInstance"] == follower.name
                ],
                WAIT,
                0.5,
                message="the other replica's event",
            )
        except TimeoutError:
            raise AssertionError(follower.said()[-3000:]) from None
        assert cp.api("GET", lease_path)["spec"]["holderIdentity"] == follower.name
