"""`serve`'s API and pages against the real control plane, read in a real browser.

One `serve` runs as a user who may only get, list and watch; the cluster holds a pod on a node
that is gone, pods whose event and node condition messages, annotations and finalizer-less
objects carry markup, and a terminating namespace with a Secret in it. The tests ask the API
and the pages, open the pages in Debian's chromium (headless, tests/harness/browser.py), and
at the end read the API server's audit log: serve's user sent nothing but get, list and watch.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import pytest
import yaml

from kubectl_terminating.exporter.pages import object_path
from tests.harness import scenarios
from tests.harness.api import (
    MERGE,
    condition,
    create_event,
    create_namespace,
    delete,
    now,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.backend import publish_service
from tests.harness.browser import Browser, chromium, links
from tests.harness.cli import start_serve
from tests.harness.controlplane import ApiError, ControlPlane, free_port
from tests.harness.kubelet import (
    create_node,
    create_pod,
    renew_lease,
    set_pod_status,
    stale_lease,
)
from tests.harness.node import NodeNetwork
from tests.harness.recording_proxy import RecordingProxy
from tests.harness.recording_proxy import Request as RecordingRequest
from tests.harness.tiers import skip_or_fail
from tests.harness.users import User, Users, rights_granted

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubectl-terminating.yaml"
READ_ONLY = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]
SCRIPT = "<script>document.title='pwned'</script>"
IMAGE = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
SECRET_VALUE = "hunter2-do-not-show-9f3c"
WAIT = 90.0
PROXY_ADDRESS = "10.213.4.1"  # serve's address on the veth pair (tests/harness/node.py's /30s)
SCREENSHOT = os.environ.get("SERVE_SCREENSHOT")  # where to keep the page's picture (docs/img)


@dataclass(frozen=True)
class Seeds:
    ns: str  # the pods' namespace
    orphan: str  # a pod on a node that is gone
    hostile: tuple[str, str]  # pods whose node condition, event and annotation carry markup
    secret_ns: str  # a terminating namespace holding a Secret


class Served(Protocol):
    @property
    def url(self) -> str:
        """Where serve answers."""


@dataclass(frozen=True)
class Serving:
    url: str
    user: User
    audit_from: int
    log: Path
    proxy: RecordingProxy  # between serve and the API server: each request's headers


def hostile_pods(cp: ControlPlane, ns: str) -> tuple[str, str]:
    """A pod on a node NotReady whose condition message is markup; a pod on a healthy node
    whose runtime never killed it, the kubelet's FailedKillPod event markup too; both
    annotated with markup."""
    dead, busy = f"{ns}-dead", f"{ns}-busy"
    message = f"Kubelet stopped posting node status. {SCRIPT}{IMAGE}"
    ready = condition("Ready", "Unknown", "NodeStatusUnknown", message, now(-600))
    create_node(cp, dead, ready="Unknown", conditions=[ready])
    stale_lease(cp, dead, 600)
    create_node(cp, busy)
    killed = (
        'error killing pod: failed to "KillContainer" for "app" with KillContainerError: "rpc '
        f'error: code = DeadlineExceeded desc = context deadline exceeded {SCRIPT} {IMAGE}"'
    )
    names = ("hostile-0", "hostile-1")
    for name, node in zip(names, (dead, busy), strict=True):
        pod = create_pod(cp, ns, name, node=node, grace_period=1)
        path = scenarios.pod_path(ns, name)
        cp.api("PATCH", path, {"metadata": {"annotations": {"note": SCRIPT + IMAGE}}}, MERGE)
        set_pod_status(cp, ns, name, "Running", {"app": "running"})
        if node == busy:
            create_event(cp, ns, pod, "FailedKillPod", killed, count=3)
        delete(cp, path)
    return names


def heartbeat(cp: ControlPlane, node: str, stop: threading.Event) -> None:
    """The busy node's kubelet: its Lease renewed every 10 s, so the node stays healthy and the
    runtime that never killed the container is what holds its pod."""
    while not stop.wait(10):
        with contextlib.suppress(ApiError):
            renew_lease(cp, node)


@pytest.fixture(scope="module")
def seeds(control_plane: ControlPlane) -> Iterator[Seeds]:
    cp = control_plane
    ns = unique_ns("web")
    create_namespace(cp, ns)
    orphan = scenarios.pod_on_missing_node(cp, ns, "orphan-0", grace_period=1)
    hostile = hostile_pods(cp, ns)
    secret_ns = unique_ns("web-secret")
    create_namespace(cp, secret_ns)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db-password", "finalizers": ["example.com/keep"]},
        "data": {"password": base64.b64encode(SECRET_VALUE.encode()).decode()},
        "stringData": {"token": SECRET_VALUE + "-token"},
    }
    cp.api("POST", f"/api/v1/namespaces/{secret_ns}/secrets", secret)
    delete(cp, f"/api/v1/namespaces/{secret_ns}")
    stop = threading.Event()
    beat = threading.Thread(target=heartbeat, args=(cp, f"{ns}-busy", stop), daemon=True)
    beat.start()
    try:
        yield Seeds(ns, orphan.name, hostile, secret_ns)
    finally:
        stop.set()
        beat.join()
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, f"/api/v1/namespaces/{secret_ns}/secrets/db-password")
        for pod in (orphan.name, *hostile):
            with contextlib.suppress(ApiError):
                delete(cp, scenarios.pod_path(ns, pod), grace_period=0)


@pytest.fixture(scope="module")
def serving(
    control_plane: ControlPlane, seeds: Seeds, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Serving]:
    """serve as a get/list/watch-only user, once its API lists the seeded objects."""
    directory = tmp_path_factory.mktemp("serve-web")
    with Users(control_plane, directory / "users", "web-users") as users:
        user = users.user("viewer", cluster_rules=READ_ONLY)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log_path = directory / "serve.log"
        audit_from = control_plane.audit_offset()
        proxy = RecordingProxy(control_plane.port, control_plane.pki_dir)
        with proxy, open(log_path, "wb") as log:
            through = {"HTTPS_PROXY": proxy.url, "NO_PROXY": "", "no_proxy": ""}
            external = "--external-url=https://terminating.example/x/"
            config = through_proxy(control_plane, user.kubeconfig, directory / "serve.kubeconfig")
            proc = start_serve(config, port, "3s", log, external, env=through)
            served = Serving(url, user, audit_from, log_path, proxy)
            try:
                wait_for(lambda: covers(served, seeds), WAIT, 0.5, message="the seeds in the API")
                yield served
            except TimeoutError:
                raise AssertionError(log_path.read_text()[-3000:]) from None
            finally:
                proc.terminate()
                proc.wait(30)


def through_proxy(cp: ControlPlane, kubeconfig: Path, out: Path) -> Path:
    """kubeconfig with a server name the certificate holds but no resolver knows, and not
    loopback (which a proxy never serves): reachable through the recording proxy only."""
    config = yaml.safe_load(kubeconfig.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = f"https://kubernetes.default.svc:{cp.port}"
    out.write_text(yaml.safe_dump(config))
    return out


def covers(served: Serving, seeds: Seeds) -> bool:
    """Whether the last run shows both pods stuck, and the Secret's namespace."""
    try:
        items = fetch(served, "/api/v1/findings")[1]["items"]
    except (OSError, KeyError):
        return False
    stuck = {(i["namespace"], i["name"]) for i in items if (i.get("overdueSeconds") or -1) >= 0}
    names = {i["name"] for i in items}
    wanted = {(seeds.ns, name) for name in (seeds.orphan, *seeds.hostile)}
    return wanted <= stuck and seeds.secret_ns in names


def request(served: Served, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    call = urllib.request.Request(served.url + path, method=method)
    try:
        with urllib.request.urlopen(call, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def fetch(served: Served, path: str, method: str = "GET") -> tuple[int, JSON]:
    code, headers, body = request(served, path, method)
    assert headers["Content-Type"] == "application/json", (path, headers)
    assert b"Traceback" not in body
    document: JSON = json.loads(body)
    return code, document


def page(served: Served, path: str) -> str:
    code, headers, body = request(served, path)
    assert code == 200, (path, code, body[:500])
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Security-Policy"].startswith("default-src 'none'; style-src 'sha256-")
    return body.decode()


def audited(cp: ControlPlane, served: Serving) -> list[JSON]:
    """serve's user's audit events since it started, once a marker request sent now is in."""
    marker = f"audit-marker-{time.time_ns()}"
    cp.api_raw("GET", f"/api/v1/namespaces/default/configmaps/{marker}", token=served.user.token)

    def with_marker() -> list[JSON] | None:
        events = cp.audit_events(served.audit_from, user=served.user.username)
        return events if any(marker in e["requestURI"] for e in events) else None

    events = wait_for(with_marker, timeout=10, message="the marker request in the audit log")
    return [e for e in events if marker not in e["requestURI"]]


def metadata_only(request: RecordingRequest) -> bool:
    """Asked as PartialObjectMetadata(List), or a Table (its rows: metadata and a data count)."""
    accept = ",".join(request.values("accept"))
    return accept.startswith(
        ("application/json;as=PartialObjectMetadata", "application/json;as=Table")
    )


def unix(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


# -- the API -------------------------------------------------------------------------------------


def test_findings_are_the_all_json_document_filtered(serving: Serving, seeds: Seeds) -> None:
    code, document = fetch(serving, "/api/v1/findings")
    assert code == 200
    assert (document["apiVersion"], document["kind"]) == ("terminating.kubectl.io/v1", "List")
    assert 0 <= time.time() - unix(document["generatedAt"]) < WAIT
    _, only = fetch(serving, f"/api/v1/findings?kind=Pod&namespace={seeds.ns}&type=node-missing")
    assert [(i["kind"], i["name"]) for i in only["items"]] == [("Pod", seeds.orphan)]
    (orphan,) = only["items"]
    assert orphan["blockers"][0]["type"] == "node-missing"
    assert orphan["node"] == f"{seeds.ns}-gone"  # the pod's own fields, as -o json has them
    _, in_ns = fetch(serving, f"/api/v1/findings?namespace={seeds.ns}")
    assert {i["name"] for i in in_ns["items"]} == {seeds.orphan, *seeds.hostile}
    _, namespace = fetch(serving, f"/api/v1/findings?namespace={seeds.secret_ns}&kind=Namespace")
    assert [i["name"] for i in namespace["items"]] == [seeds.secret_ns]  # in its own namespace
    code, refused = fetch(serving, "/api/v1/findings?type=stuck")
    assert code == 400 and refused["reason"] == "BadRequest"


def test_explain_answers_from_the_last_run(serving: Serving, seeds: Seeds) -> None:
    code, item = fetch(serving, f"/api/v1/explain/pods/{seeds.ns}/{seeds.orphan}")
    assert code == 200
    assert (item["kind"], item["namespace"], item["name"]) == ("Pod", seeds.ns, seeds.orphan)
    assert item["blockers"][0]["type"] == "node-missing"
    code, namespace = fetch(serving, f"/api/v1/explain/namespaces/{seeds.secret_ns}")
    assert code == 200 and namespace["kind"] == "Namespace"
    assert any(r["resource"] == "secrets" and r["count"] == 1 for r in namespace["remaining"])


def test_an_object_the_last_run_did_not_cover_is_read_on_demand(
    control_plane: ControlPlane, serving: Serving, seeds: Seeds
) -> None:
    """A pod deleted a moment ago, asked for at once: the runs (every 3 s, or a second after
    a change) have not seen it, so serve reads it (a GET by its user in the audit log)."""
    for attempt in range(3):  # a run that lists pods in that very moment: try again
        name = f"late-{attempt}"
        path = scenarios.pod_path(seeds.ns, name)
        create_pod(control_plane, seeds.ns, name, finalizers=["example.com/late"], grace_period=0)
        delete(control_plane, path)
        code, item = fetch(serving, f"/api/v1/explain/pods/{seeds.ns}/{name}")
        remove_finalizers(control_plane, path)
        assert code == 200, item
        assert (item["name"], item["blockers"][0]["type"]) == (name, "finalizer")
        if any(
            e["verb"] == "get" and e["requestURI"] == path for e in audited(control_plane, serving)
        ):
            return
    pytest.fail("every try raced a run that listed the pod first")


def test_errors_are_kubernetes_status_objects(serving: Serving, seeds: Seeds) -> None:
    code, status = fetch(serving, f"/api/v1/explain/pods/{seeds.ns}/nope")
    assert code == 404
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "nope" not found',
        "reason": "NotFound",
        "code": 404,
    }
    code, status = fetch(serving, "/api/v1/explain/namespaces/default")
    assert (code, status["message"]) == (404, 'namespaces "default" exists but is not terminating')
    code, status = fetch(serving, "/api/v1/explain/gizmos.example.com/a/b")
    unknown = 'the server doesn\'t have a resource type "gizmos.example.com"'
    assert (code, status["message"]) == (404, unknown)
    for path in (f"/api/v1/explain/pods/{seeds.orphan}", "/api/v1/explain/pods/a/b/c"):
        assert fetch(serving, path)[0] == 400, path
    assert fetch(serving, "/api/v1/nothing")[0] == 404
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        code, status = fetch(serving, f"/api/v1/explain/pods/{seeds.ns}/{seeds.orphan}", method)
        assert (code, status["reason"]) == (405, "MethodNotAllowed"), method
    code, _, body = request(serving, "/metrics")
    assert code == 200 and b"kubectl_terminating_stuck_objects" in body
    assert b'external_url="https://terminating.example/x"' in body


# -- the pages -----------------------------------------------------------------------------------


def test_the_index_links_each_stuck_object_to_its_page(serving: Serving, seeds: Seeds) -> None:
    index = page(serving, f"/?namespace={seeds.ns}")
    link = f'href="objects/pods/{seeds.ns}/{seeds.orphan}"'
    assert link in index
    assert "node no longer exists" in index or "node-missing" in index
    orphan = page(serving, f"/objects/pods/{seeds.ns}/{seeds.orphan}")
    assert "node-missing" in orphan
    assert "What to do (safest first)" in orphan
    assert '<span class="destructive">DESTRUCTIVE:</span>' in orphan
    ns_page = page(serving, f"/objects/namespaces/{seeds.secret_ns}")
    assert "secrets" in ns_page and "db-password" in ns_page


def test_a_cluster_scoped_object_is_reached_by_its_links(serving: Serving, seeds: Seeds) -> None:
    """A Namespace has no namespace: its row in the index and its page's JSON link name it
    by resource and name alone, as a user clicks them (not typed)."""

    def followed(html: str, base: str, start: str) -> str:
        """The page's one link under start that names the Secret's namespace."""
        [link] = [
            link
            for link in links(html, base)
            if link.startswith(start) and link.endswith(f"/{seeds.secret_ns}")
        ]
        return link

    row = followed(page(serving, "/"), "/", "/objects/namespaces/")
    assert "db-password" in page(serving, row)
    api = followed(page(serving, row), row, "/api/v1/explain/namespaces/")
    code, document = fetch(serving, api)
    assert (code, document["kind"], document["name"]) == (200, "Namespace", seeds.secret_ns)
    assert (row, api) == (
        f"/objects/namespaces/{seeds.secret_ns}",
        f"/api/v1/explain/namespaces/{seeds.secret_ns}",
    )


def test_markup_from_the_cluster_is_escaped(serving: Serving, seeds: Seeds) -> None:
    hostile = [page(serving, f"/objects/pods/{seeds.ns}/{name}") for name in seeds.hostile]
    index = page(serving, f"/?namespace={seeds.ns}")
    findings = request(serving, f"/api/v1/findings?namespace={seeds.ns}")[2].decode()
    for html in (*hostile, index):
        assert "<script" not in html and "<img" not in html
    escaped = "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;"
    # the node's condition message (evidence of the dead node), the kubelet's event message
    assert escaped in hostile[0] and escaped in hostile[1]
    assert "Kubelet stopped posting node status." in hostile[0]
    assert "error killing pod" in hostile[1]
    assert "<script" not in findings and "\\u003cscript\\u003e" in findings  # as Go writes JSON


def test_no_secret_data_in_any_answer(serving: Serving, seeds: Seeds) -> None:
    encoded = base64.b64encode(SECRET_VALUE.encode()).decode()
    answers = [
        request(serving, path)[2]
        for path in (
            "/api/v1/findings",
            f"/api/v1/explain/namespaces/{seeds.secret_ns}",
            f"/api/v1/explain/secrets/{seeds.secret_ns}/db-password",
            "/",
            f"/objects/namespaces/{seeds.secret_ns}",
            f"/objects/secrets/{seeds.secret_ns}/db-password",
        )
    ]
    assert b"db-password" in answers[1]  # the Secret is listed, by name
    for answer in answers:
        token = base64.b64encode(f"{SECRET_VALUE}-token".encode()).decode()
        for value in (SECRET_VALUE, encoded, token):
            assert value.encode() not in answer


# -- in a real browser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Browser:
    return Browser(chromium(), tmp_path_factory.mktemp("chromium"))


def test_the_page_reads_in_a_browser_and_no_script_runs(
    serving: Serving, seeds: Seeds, browser: Browser, tmp_path: Path
) -> None:
    orphan = browser.dom(f"{serving.url}/objects/pods/{seeds.ns}/{seeds.orphan}")
    assert f"<title>Pod {seeds.ns}/{seeds.orphan}</title>" in orphan
    assert "node-missing" in orphan and "DESTRUCTIVE:" in orphan
    assert "What to do (safest first)" in orphan
    for name, text in zip(
        seeds.hostile, ("Kubelet stopped posting", "error killing pod"), strict=True
    ):
        hostile = browser.dom(f"{serving.url}/objects/pods/{seeds.ns}/{name}")
        assert f"<title>Pod {seeds.ns}/{name}</title>" in hostile  # not 'pwned'
        assert "<body>" in hostile  # the onerror handler did not mark it (data-pwned)
        assert "<script" not in hostile and "<img" not in hostile  # no element was injected
        assert text in hostile and "document.title=" in hostile, hostile  # shown, as text
    shot = Path(SCREENSHOT) if SCREENSHOT else tmp_path / "serve-page.png"
    browser.screenshot(f"{serving.url}/objects/pods/{seeds.ns}/{seeds.orphan}", shot)


# -- serve -n: one namespace, and its memory given back after each run -----------------------


@dataclass(frozen=True)
class Started:
    url: str
    log: Path
    proc: subprocess.Popen[bytes]


@contextlib.contextmanager
def serve_process(
    cp: ControlPlane, directory: Path, *extra: str, under: tuple[str, ...] = ()
) -> Iterator[Started]:
    """serve as a user who may get, list and watch everything (so only serve's own checks
    limit it), a run every second, `under` a program that runs it (gdb); once its first run
    is done."""
    with Users(cp, directory / "users", "web-scope") as users:
        user = users.user("viewer", cluster_rules=READ_ONLY)
        port = free_port()
        log_path = directory / "serve.log"
        with open(log_path, "wb") as log:
            proc = start_serve(user.kubeconfig, port, "1s", log, *extra, under=under)
        started = Started(f"http://127.0.0.1:{port}", log_path, proc)
        try:
            try:
                wait_for(lambda: first_run_done(started), WAIT, 0.5, message="serve's first run")
            except TimeoutError:
                raise AssertionError(log_path.read_text()[-3000:]) from None
            yield started
        finally:
            if proc.poll() is None:
                proc.terminate()
            proc.wait(30)


def first_run_done(served: Served) -> bool:
    try:
        return request(served, "/api/v1/findings")[0] == 200
    except OSError:
        return False


def test_serve_in_one_namespace_explains_nothing_outside_it(
    control_plane: ControlPlane, seeds: Seeds, tmp_path: Path
) -> None:
    """`serve -n NS` as a user who may read every namespace: it explains NS's
    objects, and answers 403 for any other namespace's object (the terminating Namespace and
    its Secret, which it could read), the page as well as the API."""
    with serve_process(control_plane, tmp_path, "-n", seeds.ns) as served:
        code, item = fetch(served, f"/api/v1/explain/pods/{seeds.ns}/{seeds.orphan}")
        assert (code, item["name"]) == (200, seeds.orphan)
        outside = {"message": f"serve looks only at namespace {seeds.ns}", "code": 403}
        for path in (
            f"/api/v1/explain/namespaces/{seeds.secret_ns}",
            f"/api/v1/explain/secrets/{seeds.secret_ns}/db-password",
        ):
            code, status = fetch(served, path)
            assert {k: status.get(k) for k in outside} == outside, (path, status)
        assert request(served, f"/objects/secrets/{seeds.secret_ns}/db-password")[0] == 403


def test_serve_gives_freed_memory_back_after_each_run(
    control_plane: ControlPlane, seeds: Seeds, tmp_path: Path
) -> None:
    """After each run serve hands the pages malloc keeps free back to the system (glibc's
    malloc_trim; make soak measured what that saves). gdb prints each call of the real
    libc's malloc_trim into serve's log: one between each two runs' lines."""
    gdb = shutil.which("gdb")
    if gdb is None:
        skip_or_fail("serve", "gdb is missing: it watches serve's calls into libc")
        return
    under = (
        gdb, "-q", "-nx", "-batch", "-ex", "set breakpoint pending on",
        "-ex", 'dprintf malloc_trim,"malloc_trim called\\n"',
        "-ex", "handle SIGTERM nostop noprint pass", "-ex", "run", "--args",
    )  # fmt: skip
    with serve_process(control_plane, tmp_path, under=under) as started:
        log_path, proc = started.log, started.proc
        wait_for(lambda: log_path.read_text().count("\nrun: ") >= 4, WAIT, 0.5, message="four runs")
        [serve_pid] = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        os.kill(int(serve_pid), signal.SIGTERM)  # gdb passes it on: serve stops as it does
        assert proc.wait(60) == 0
    lines = [
        line for line in log_path.read_text().splitlines()
        if line.startswith(("run: ", "malloc_trim called"))
    ]  # fmt: skip
    said = ["run" if line.startswith("run: ") else "trim" for line in lines]
    assert said.count("run") >= 4, log_path.read_text()[-3000:]
    # each run is followed by its give-back before the next run starts
    between = "".join("R" if s == "run" else "t" for s in said)
    assert "RR" not in between and between.startswith("R"), between


ROWS = "[...document.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.innerText))"
FILTER_LINKS = "[...document.querySelectorAll('.filters a')].map(a => [a.innerText, a.href])"
WIDTH = "document.documentElement.scrollWidth"
LAST_COLUMN = "document.querySelector('thead th:last-child')"
# the value of the object page's "First seen stuck" field
FIRST_SEEN = (
    "[...document.querySelectorAll('dt')].filter(d => d.innerText == 'First seen stuck')"
    ".map(d => d.nextElementSibling.innerText)[0] ?? null"
)


@pytest.fixture
def older_and_newer(control_plane: ControlPlane) -> Iterator[tuple[str, dict[str, float]]]:
    """Two pods stuck on a finalizer in a namespace of their own, deleted 3 s apart while
    serve runs; the older one last by name, its name 100 characters without a break (253 are
    allowed). Their namespace, and when each was deleted (older first)."""
    cp = control_plane
    ns = unique_ns("web-order")
    create_namespace(cp, ns)
    deleted: dict[str, float] = {}
    try:
        for name in ("z-older-" + "0" * 92, "a-newer"):
            if deleted:
                time.sleep(3)  # overdue 3 s more than the newer: the order is not the names'
            path = scenarios.pod_path(ns, name)
            labels = {"app": "web-order"}
            create_pod(cp, ns, name, finalizers=["example.com/hold"], grace_period=0, labels=labels)
            deleted[name] = time.time()
            delete(cp, path)
        yield ns, deleted
    finally:
        for name in deleted:
            with contextlib.suppress(ApiError):
                remove_finalizers(cp, scenarios.pod_path(ns, name))


def test_the_index_fits_1280_px_narrows_by_links_and_sorts_by_overdue(
    serving: Serving,
    older_and_newer: tuple[str, dict[str, float]],
    browser: Browser,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In Chromium at 1280 px the index (every seed, and the two pods) is no wider than the
    window, its last column inside it; the namespace's link leaves the two rows, the older
    first; the newer one's page says when serve first saw it stuck, the same a run later."""
    ns, deleted = older_and_newer
    older, newer = deleted
    with browser.tab(width=1280, height=900) as tab:

        def index_lists_both() -> bool:
            tab.open(f"{serving.url}/")
            return {(ns, older), (ns, newer)} <= {tuple(r[1:3]) for r in tab.evaluate(ROWS)}

        wait_for(index_lists_both, WAIT, 1.0, message="both pods in the index")
        shot = tab.screenshot(tmp_path / "serve-index-1280.png")
        with capsys.disabled():
            print(f"\nthe index at 1280 px: {shot}")
        assert tab.evaluate(WIDTH) <= 1280
        assert tab.evaluate(f"{LAST_COLUMN}.innerText") == "Confidence"
        assert tab.evaluate(f"{LAST_COLUMN}.getBoundingClientRect().right") <= 1280
        assert {r[1] for r in tab.evaluate(ROWS)} > {ns}  # the seeds' rows too
        (mine,) = [h for text, h in tab.evaluate(FILTER_LINKS) if text.startswith(f"{ns}\xa0(")]
        assert urllib.parse.urlsplit(mine).query == f"namespace={ns}"

        tab.open(mine)  # the link, as a click follows it
        assert [(r[1], r[2]) for r in tab.evaluate(ROWS)] == [(ns, older), (ns, newer)]
        assert tab.evaluate(WIDTH) <= 1280
        assert dict(tab.evaluate(FILTER_LINKS))["Clear the filter"] == f"{serving.url}/"

        page = f"{serving.url}/{object_path('pods', ns, newer)}"
        tab.open(page)
        seen = tab.evaluate(FIRST_SEEN)
        assert seen is not None, tab.evaluate("document.body.innerText")
        assert deleted[newer] - 1 <= unix(seen.split()[0]) <= time.time(), (seen, deleted)
        assert "before serve started" not in seen
        time.sleep(4)  # a run (every 3 s) later: the same time
        tab.open(page)
        assert tab.evaluate(FIRST_SEEN).split()[0] == seen.split()[0]


def test_serve_starts_with_one_pass(control_plane: ControlPlane, serving: Serving) -> None:
    """serve's first run is also its watches' first pass (FirstPass): before the first watch
    opened, each list of every pod that a pass sends (the finder's; with two or more
    terminating namespaces, their content read across namespaces too) went once, where a pass
    of the watches' own sent each again."""
    events = sorted(audited(control_plane, serving), key=lambda e: e["requestReceivedTimestamp"])
    first_watch = next(i for i, e in enumerate(events) if e["verb"] == "watch")

    def whole_pod_list(event: JSON) -> bool:
        uri = urllib.parse.urlsplit(event["requestURI"])
        query = urllib.parse.parse_qs(uri.query)
        narrowed = {"continue", "fieldSelector", "labelSelector"} & set(query)
        every_pod = not narrowed and query.get("limit") != ["1"]  # one page: no cursor
        return event["verb"] == "list" and uri.path == "/api/v1/pods" and every_pod

    pod_lists = [e["requestURI"] for e in events[:first_watch] if whole_pod_list(e)]
    assert pod_lists and len(set(pod_lists)) == len(pod_lists), pod_lists


# -- who may see the findings -------------------------------------------------------------------


def chart_viewer_and_service() -> tuple[list[JSON], tuple[str, int]]:
    """From deploy/'s rendering of the chart: the findings-viewer ClusterRole's rules, and
    serve's Service name and port."""
    documents = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    (viewer,) = [
        d
        for d in documents
        if d["kind"] == "ClusterRole" and d["metadata"]["name"].endswith("-findings-viewer")
    ]
    (service,) = [d for d in documents if d["kind"] == "Service"]
    return viewer["rules"], (service["metadata"]["name"], service["spec"]["ports"][0]["port"])


def test_the_findings_viewer_role_grants_the_service_proxy_alone(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The chart's findings-viewer rules (from deploy/'s rendering), bound in a namespace:
    `get` through the service proxy on serve's Service there, and nothing else."""
    viewer_rules, (name, port) = chart_viewer_and_service()
    with Users(control_plane, tmp_path, "web-viewers") as users:
        where = users.namespace
        user = users.user("teammate", namespace_rules={where: viewer_rules})
        who = f"--as={user.username}"
        assert rights_granted(control_plane, who, "-n", where) == {"services/proxy": {"get"}}

        def can(verb: str, resource: str, namespace: str = where) -> str:
            args = ("auth", "can-i", verb, *resource.split(), who, "-n", namespace)
            return control_plane.kubectl(*args, check=False).stdout.strip()

        for proxied in (f"{name}:{port}", f"{name}:metrics", f"http:{name}:{port}", name):
            assert can("get", f"services/{proxied} --subresource=proxy") == "yes", proxied
        for verb, resource in [
            ("create", f"services/{name}:{port} --subresource=proxy"),  # a POST through it
            ("get", f"services/other:{port} --subresource=proxy"),
            ("get", f"services/{name}"),
            ("get", "pods"),
            ("list", "secrets"),
        ]:
            assert can(verb, resource) == "no", (verb, resource)
        assert can("get", f"services/{name}:{port} --subresource=proxy", "default") == "no"


def proxy_address_unavailable() -> str | None:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "a veth pair for serve's address needs root and `ip` (iproute2)"
    return None


def behind_service(
    cp: ControlPlane, ns: str, service: tuple[str, int], address: str, listen: int
) -> None:
    """serve's Service in ns, its endpoint address:listen targeting serve's pod (the
    Deployment's, on a node), whose status holds that address, as the kubelet writes it."""
    name, port = service
    pod, node = f"{name}-0", f"{ns}-node"
    create_node(cp, node)
    create_pod(cp, ns, pod, node=node)
    addresses = {"podIP": address, "podIPs": [{"ip": address}]}
    cp.api("PATCH", f"/api/v1/namespaces/{ns}/pods/{pod}/status", {"status": addresses}, MERGE)
    target = {"kind": "Pod", "name": pod, "namespace": ns}
    publish_service(cp, ns, name, ("http", port), address, listen, target)


def test_the_api_and_pages_through_the_api_servers_service_proxy(
    control_plane: ControlPlane, seeds: Seeds, tmp_path: Path
) -> None:
    """The path the Headlamp plugin and a shared link take: the API server's service proxy to
    serve's Service, as a user bound to the chart's findings-viewer rules. The API server
    refuses to proxy to loopback, so serve listens on a test address on a veth pair made here
    (removed after). Its Service's endpoints name that address with serve's pod as target, and
    the pod's status carries it: the API server proxies only to an address the targeted pod
    holds (it answered "no endpoints available" for one without)."""
    why = proxy_address_unavailable()
    if why:
        skip_or_fail("service proxy", why)
    cp = control_plane
    viewer_rules, (name, port) = chart_viewer_and_service()
    with (
        NodeNetwork(PROXY_ADDRESS) as network,
        Users(cp, tmp_path / "users", "web-proxy") as users,
        open(tmp_path / "serve.log", "wb") as log,
    ):
        where = users.namespace
        reader = users.user("serve", cluster_rules=READ_ONLY)
        teammate = users.user("teammate", namespace_rules={where: viewer_rules})
        # may read the Service itself and pods, but not use its proxy
        reads = [{"apiGroups": [""], "resources": ["services", "pods"], "verbs": ["get", "list"]}]
        outsider = users.user("outsider", namespace_rules={where: reads})
        listen = free_port()
        proc = start_serve(reader.kubeconfig, listen, "3s", log, address=network.address)
        try:
            behind_service(cp, where, (name, port), network.address, listen)
            base = f"/api/v1/namespaces/{where}/services/{name}:{port}/proxy"
            explain = f"{base}/api/v1/explain/pods/{seeds.ns}/{seeds.orphan}"  # as the plugin asks

            last: list[tuple[int, bytes]] = []

            def explained() -> JSON | None:
                answer = cp.response("GET", explain, teammate.token)
                last[:] = [(answer.status, answer.data[:300])]
                return json.loads(answer.data) if answer.status == 200 else None

            try:
                item = wait_for(explained, WAIT, 0.5, message="the explanation through the proxy")
            except TimeoutError:
                raise AssertionError(f"last answer: {last}") from None
            assert (item["name"], item["blockers"][0]["type"]) == (seeds.orphan, "node-missing")
            assert item["blockers"][0]["confidence"] == "certain"

            index = cp.response("GET", f"{base}/", teammate.token)
            assert index.status == 200, index.data[:300]
            assert index.headers["Content-Security-Policy"].startswith("default-src 'none'")
            link = object_path("pods", seeds.ns, seeds.orphan)
            assert f'href="{link}"' in index.data.decode()  # relative: it stays under the proxy
            page = cp.response("GET", f"{base}/{link}", teammate.token)
            assert page.status == 200, page.data[:300]
            assert page.headers["Content-Type"] == "text/html; charset=utf-8"
            assert "node-missing" in page.data.decode()

            # the chart's rules grant get through the proxy, nothing else: a POST is refused by
            # the API server before serve sees it, and a user without the rules is refused
            assert cp.response("POST", explain, teammate.token).status == 403
            refused = cp.response("GET", explain, outsider.token)
            assert refused.status == 403, refused.data[:300]
            assert "services/proxy" in refused.data.decode()
        finally:
            proc.terminate()
            proc.wait(30)


# -- nothing written ----------------------------------------------------------------------------


def test_serve_only_got_listed_and_watched(control_plane: ControlPlane, serving: Serving) -> None:
    """Last in the module: every request serve's user sent while the tests above asked the API
    and the pages (on-demand reads included) was a get, a list or a watch."""
    events = audited(control_plane, serving)
    verbs = {e["verb"] for e in events}
    # every read of Secrets asked for their metadata only: serve never received their data
    with serving.proxy.recording.lock:
        sent = list(serving.proxy.recording.requests)
    secrets = [r for r in sent if "/secrets" in r.path.split("?")[0]]
    assert any(r.path.split("?")[0].endswith("/db-password") for r in secrets)  # read, by name
    whole = [(r.path, r.values("accept")) for r in secrets if not metadata_only(r)]
    assert whole == [], whole
    assert len(events) > 20, verbs  # serve really ran as this user
    assert verbs <= {"get", "list", "watch"}, sorted(
        (e["verb"], e["requestURI"]) for e in events if e["verb"] not in ("get", "list", "watch")
    )
