"""Ages on a live cluster are counted on the API server's clock (its answers' Date header),
not this machine's (issue 32, class 8): a laptop 20 minutes fast must not make a running
owner's Lease look stale. The server is the fault injector of test_client.py answering with a
fixed Date; the client's time of day is moved as libfaketime would move it. The same run with
a real moved clock against the real control plane: tests/e2e/test_clock.py.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from kubectl_terminating import client as client_module
from kubectl_terminating.client import Client
from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.kubeconfig import Connection
from kubectl_terminating.live import LiveView
from kubectl_terminating.model import JSON
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.render.style import Style
from kubectl_terminating.resources import Resource
from kubectl_terminating.timeutil import format_time
from tests.unit.golden import assert_golden
from tests.unit.test_client import TOKEN, FaultServer, Step

SERVER_TIME = datetime(2026, 11, 25, 12, 0, 0, tzinfo=timezone.utc)
FAST = 20 * 60  # this machine's clock runs 20 minutes ahead of the API server's
EMPTY_LISTS = (  # the backends looked at too: no webhook, CRD or APIService of the group
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/apiregistration.k8s.io/v1/apiservices",
    "/api/v1/pods",  # the leader's pod, for its permissions: not found here
)
CHALLENGES = Resource("acme.cert-manager.io", "v1", "challenges", "Challenge")


def at(seconds_before: int) -> str:
    return format_time(SERVER_TIME - timedelta(seconds=seconds_before))


CHALLENGE: JSON = {
    "apiVersion": "acme.cert-manager.io/v1",
    "kind": "Challenge",
    "metadata": {
        "name": "shop-tls-1-2712",
        "namespace": "shop",
        "uid": "0c5d8f0e-2b7a-4b0e-9d55-3c1f0f2a6b11",
        "deletionTimestamp": at(300),
        "finalizers": ["acme.cert-manager.io/finalizer"],
    },
    "spec": {"type": "HTTP-01"},  # whole: not read again (which needs discovery)
}
LEASE: JSON = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "cert-manager-controller", "namespace": "kube-system"},
    "spec": {
        "holderIdentity": "cert-manager-7d9f8b6c5-x2x9q-external-cert-manager-controller",
        "leaseDurationSeconds": 60,
        "renewTime": at(10),
    },
}


@pytest.fixture(autouse=True)
def nothing_said_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process does (a port may be handed out again)."""
    monkeypatch.setattr(client_module, "_SKEW_SAID", set())


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault = FaultServer()
    fault.date = format_datetime(SERVER_TIME, usegmt=True)
    fault.on("/apis/coordination.k8s.io/v1/leases", Step(body={"items": [LEASE]}))
    for empty in EMPTY_LISTS:
        fault.on(empty, Step(body={"items": []}))
    yield fault
    fault.stop()


def client_ahead(server: FaultServer, seconds: float, log: io.StringIO) -> Client:
    """A client whose clock reads the server's time plus `seconds` (about 0.3 s after the
    server wrote its Date, as a real answer arrives)."""
    connection = Connection(
        server=f"http://127.0.0.1:{server.port}", context="c", namespace="default", token=TOKEN
    )
    local = SERVER_TIME.timestamp() + seconds + 0.3
    return Client(connection, log=log, wall=lambda: local)


def test_before_any_answer_the_local_clock_is_all_there_is(server: FaultServer) -> None:
    client = client_ahead(server, FAST, io.StringIO())
    assert client.server_now() == SERVER_TIME + timedelta(seconds=FAST + 0.3)


def test_the_servers_date_corrects_the_local_clock_and_is_said_once(server: FaultServer) -> None:
    log = io.StringIO()
    client = client_ahead(server, FAST, log)
    client.get("/apis/coordination.k8s.io/v1/leases")
    client.get("/apis/coordination.k8s.io/v1/leases")
    # the Date's second, and half of the next one it may have been written in
    assert client.server_now() == SERVER_TIME + timedelta(seconds=0.5)
    assert log.getvalue() == (
        "Warning: this machine's clock is 20m ahead of the API server's: ages are counted "
        "on the server's clock\n"
    )


@pytest.mark.parametrize(("ahead", "said"), [(-3 * 3600 - 300, "3h5m behind"), (30, None)])
def test_only_a_difference_of_more_than_a_minute_is_said(
    server: FaultServer, ahead: float, said: str | None
) -> None:
    log = io.StringIO()
    client_ahead(server, ahead, log).get("/apis/coordination.k8s.io/v1/leases")
    assert (said in log.getvalue()) if said else log.getvalue() == ""


def test_a_fresh_lease_stays_fresh_on_a_machine_20_minutes_fast(server: FaultServer) -> None:
    """Without the server's clock the Lease renewed 10 s ago reads as 20 minutes stale and the
    owner as not running (the case `fix` would act on)."""
    log = io.StringIO()
    view = LiveView(client_ahead(server, FAST, log))
    view.client.get("/apis/coordination.k8s.io/v1/leases")  # the finders' reads come first
    finding = explain_object(CHALLENGE, CHALLENGES, view)
    blocker = finding.blockers[0]
    assert blocker.summary.endswith("(owner: cert-manager, running)")
    assert finding.overdue_seconds == 300
    text = explain_text([finding], Style(color=False), json_extras)
    assert "leader-election lease renewed 10s ago" in text
    assert_golden("clock/fresh-lease-fast-machine.txt", text)


def test_a_new_client_to_the_same_server_says_it_no_more(server: FaultServer) -> None:
    """`serve` connects anew every run: the difference is said once a process."""
    logs = [io.StringIO(), io.StringIO()]
    for log in logs:
        client = client_ahead(server, FAST, log)
        client.get("/apis/coordination.k8s.io/v1/leases")
        assert client.server_now() == SERVER_TIME + timedelta(seconds=0.5)  # still corrected
    assert [bool(log.getvalue()) for log in logs] == [True, False]


@pytest.mark.parametrize("date", ["Fri, 31 Dec 9999 23:59:59 GMT", "Thu, 01 Jan 1970 00:00:00 GMT"])
def test_a_date_header_that_is_no_clock_leaves_the_local_clock(
    server: FaultServer, date: str
) -> None:
    server.date = date  # a broken proxy's, not the API server's
    client = client_ahead(server, 0, io.StringIO())
    client.get("/apis/coordination.k8s.io/v1/leases")
    assert client.server_now() == SERVER_TIME + timedelta(seconds=0.3)
