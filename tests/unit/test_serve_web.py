"""`serve`'s API and pages (exporter/web.py, exporter/pages.py) as a WSGI application, over
findings explained from the JSON fixtures; the real server against the real control plane is
tests/e2e/test_serve_web.py."""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import replace
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest

from kubectl_terminating.errors import NotFound
from kubectl_terminating.exporter import pages
from kubectl_terminating.exporter.web import ON_DEMAND, LastRun, Site, facets
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import Blocker, Finding
from kubectl_terminating.resources import NAMESPACES, PODS, Resource
from tests.harness.browser import links
from tests.unit.builders import explain_pod_among, healthy_cluster, pod_fixture, web_0_events

HOSTILE = "<script>document.title='pwned'</script>"


def hung_pod() -> Finding:
    pod = pod_fixture("pod-web-0")
    pod["metadata"]["finalizers"] = [f"example.com/{HOSTILE}"]
    return explain_pod_among(pod, [*healthy_cluster(), *web_0_events()])


class Answer:
    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes) -> None:
        self.code = int(status.split()[0])
        self.headers = dict(headers)
        self.body = body
        self.text = body.decode()

    def json(self) -> Any:
        assert self.headers["Content-Type"] == "application/json"
        return json.loads(self.body)


def get(site: Site, path: str, method: str = "GET", query: str = "") -> Answer:
    environ: dict[str, Any] = {"PATH_INFO": path, "REQUEST_METHOD": method, "QUERY_STRING": query}
    setup_testing_defaults(environ)
    seen: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        seen[:] = [status, headers]

    body: Iterable[bytes] = site(environ, start_response)
    return Answer(seen[0], seen[1], b"".join(body))


def metrics_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"# metrics\n"]


class Reads:
    """The on-demand explainer: what it was asked, its answer (or NotFound)."""

    def __init__(self, answer: tuple[Finding, Resource] | None = None) -> None:
        self.asked: list[tuple[str, str | None, str]] = []
        self.answer = answer
        self.hold: threading.Event | None = None

    def __call__(self, resource: str, namespace: str | None, name: str) -> tuple[Finding, Resource]:
        self.asked.append((resource, namespace, name))
        if self.hold is not None:
            self.hold.wait(10)
        if self.answer is None:
            raise NotFound(f'{resource} "{name}" not found')
        return self.answer


@pytest.fixture
def site() -> Site:
    made = Site(metrics_app, Reads(), io.StringIO())
    made.last = LastRun((hung_pod(),), ("a warning",), (PODS,), 1_767_268_800.0)
    return made


def test_findings_are_the_all_json_document_with_its_time(site: Site) -> None:
    document = get(site, "/api/v1/findings").json()
    assert document["apiVersion"] == "terminating.kubectl.io/v1"
    assert document["kind"] == "List"
    assert document["generatedAt"] == "2026-01-01T12:00:00Z"
    (item,) = document["items"]
    assert (item["kind"], item["namespace"], item["name"]) == ("Pod", "shop", "web-0")
    assert item["node"] == "worker-1"  # the pod's own fields, as -o json gives them
    assert item == hung_pod().to_json(json_extras)  # confidence too, where a blocker has it
    assert document["warnings"] == ["a warning"]


@pytest.mark.parametrize(
    ("query", "count"),
    [
        ("kind=Pod", 1),
        ("kind=pod", 1),
        ("kind=Namespace", 0),
        ("namespace=shop", 1),
        ("namespace=other", 0),
        ("type=containers-running", 1),
        ("type=node-missing", 0),
        ("kind=Pod&namespace=shop&type=containers-running", 1),
    ],
)
def test_findings_filter_by_kind_namespace_and_any_blocker_type(
    site: Site, query: str, count: int
) -> None:
    assert len(get(site, "/api/v1/findings", query=query).json()["items"]) == count


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("colour=red", 'unknown query parameter "colour"'),
        ("kind=Pod&kind=Namespace", 'query parameter "kind" wants one value'),
        ("namespace=", 'query parameter "namespace" wants one value'),
        ("type=stuck", 'unknown blocker type "stuck"'),
    ],
)
def test_a_bad_filter_is_a_400_status(site: Site, query: str, message: str) -> None:
    answer = get(site, "/api/v1/findings", query=query)
    assert answer.code == 400
    status = answer.json()
    assert (status["kind"], status["status"], status["reason"]) == (
        "Status",
        "Failure",
        "BadRequest",
    )
    assert status["message"].startswith(message)


def test_explain_answers_from_the_last_run_without_reading(site: Site) -> None:
    reads = site.explain_now
    assert isinstance(reads, Reads)
    for resource in ("pods", "pod", "po"):  # as kubectl takes it
        answer = get(site, f"/api/v1/explain/{resource}/shop/web-0")
        assert answer.code == 200
        assert answer.json()["name"] == "web-0"
        assert "Last-Modified" in answer.headers
    assert reads.asked == []


def test_an_object_the_run_did_not_cover_is_read_on_demand(site: Site) -> None:
    reads = Reads()
    site.explain_now = reads
    answer = get(site, "/api/v1/explain/pods/shop/web-9")
    assert reads.asked == [("pods", "shop", "web-9")]
    assert answer.code == 404
    assert answer.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "web-9" not found',
        "reason": "NotFound",
        "code": 404,
    }
    reads.answer = (hung_pod(), PODS)
    assert get(site, "/api/v1/explain/deployments.apps/shop/web").json()["name"] == "web-0"


def test_on_demand_reads_are_bounded(site: Site) -> None:
    reads = Reads((hung_pod(), PODS))
    reads.hold = threading.Event()
    site.explain_now = reads
    busy = [
        threading.Thread(target=get, args=(site, f"/api/v1/explain/pods/shop/p{i}"))
        for i in range(ON_DEMAND)
    ]
    for thread in busy:
        thread.start()
    try:
        while len(reads.asked) < ON_DEMAND:
            threading.Event().wait(0.01)
        answer = get(site, "/api/v1/explain/pods/shop/one-more")
        assert answer.code == 503
        assert answer.json()["reason"] == "ServiceUnavailable"
    finally:
        reads.hold.set()
        for thread in busy:
            thread.join()
    assert get(site, "/api/v1/explain/pods/shop/one-more").code == 200  # free again


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/api/v1/explain/pods/web-0", 400),  # a namespaced type without its namespace
        ("/api/v1/explain/pods", 400),
        ("/api/v1/explain/pods/a/b/c", 400),
        ("/api/v1/explain/pods//web-0", 400),
        ("/api/v1/explain/pods/../web-0", 400),
        ("/api/v1/nothing", 404),
        ("/api/v2/findings", 404),
    ],
)
def test_bad_paths_are_status_answers(site: Site, path: str, code: int) -> None:
    answer = get(site, path)
    assert answer.code == code
    assert answer.json()["code"] == code


def test_only_get_and_head_are_answered(site: Site) -> None:
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        for path in ("/api/v1/findings", "/api/v1/explain/pods/shop/web-0", "/"):
            answer = get(site, path, method)
            assert answer.code == 405, (method, path)
            assert answer.headers["Allow"] == "GET, HEAD"
    head = get(site, "/api/v1/findings", "HEAD")
    assert head.code == 200 and head.body == b""
    assert get(site, "/metrics").text == "# metrics\n"  # prometheus_client's own


def test_before_the_first_run_the_api_says_so(site: Site) -> None:
    site.last = None
    answer = get(site, "/api/v1/findings")
    assert answer.code == 503
    assert answer.json()["message"] == "the first run of the diagnosis has not finished yet"


def test_a_bug_is_a_500_status_and_one_line_not_a_traceback(site: Site) -> None:
    def broken(resource: str, namespace: str | None, name: str) -> tuple[Finding, Resource]:
        raise KeyError("spec")

    site.explain_now = broken
    answer = get(site, "/api/v1/explain/pods/shop/other")
    assert answer.code == 500
    assert "Traceback" not in answer.text
    assert answer.json()["message"] == "internal error KeyError"


def test_every_answer_has_the_strict_headers(site: Site) -> None:
    for path in ("/", "/objects/pods/shop/web-0", "/api/v1/findings", "/nothing"):
        headers = get(site, path).headers
        policy = headers["Content-Security-Policy"]
        assert policy.startswith("default-src 'none'; style-src 'sha256-")
        assert "script-src" not in policy and "unsafe" not in policy
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_the_pages_escape_what_the_cluster_says(site: Site) -> None:
    index = get(site, "/")
    assert index.headers["Content-Type"] == "text/html; charset=utf-8"
    assert 'href="objects/pods/shop/web-0"' in index.text
    page = get(site, "/objects/pods/shop/web-0").text
    assert "<script" not in page and "<script" not in index.text
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert 'href="../../../"' in page  # relative: works under any prefix (a service proxy)
    assert 'href="../../../api/v1/explain/pods/shop/web-0"' in page
    slash = get(site, "/objects/pods/shop/web-0/").text  # one level deeper: one more ../
    assert 'href="../../../../api/v1/explain/pods/shop/web-0"' in slash
    assert "What to do (safest first)" in page
    api = get(site, "/api/v1/explain/pods/shop/web-0")
    assert "<" not in api.text and "\\u003cscript\\u003e" in api.text  # as Go writes JSON
    assert api.json()["finalizers"] == [f"example.com/{HOSTILE}"]


def test_the_style_is_the_one_the_policy_allows() -> None:
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(pages.STYLE.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in pages.CONTENT_SECURITY_POLICY
    html = pages.error_page(404, "x", "./")
    assert f"<style>{pages.STYLE}</style>" in html


def test_a_cluster_scoped_objects_links_lead_to_it() -> None:
    """A Namespace has no namespace: its row's link in the index and its page's JSON link
    are RESOURCE/NAME, followed as a browser resolves them (the e2e twin:
    test_a_cluster_scoped_object_is_reached_by_its_links)."""
    from kubectl_terminating.explain.namespaces import explain_namespace
    from kubectl_terminating.resources import NAMESPACES
    from tests.unit.nsfixtures import scenario

    held = scenario("discovery-failure")
    finding = explain_namespace(held.namespace, held.view)
    made = Site(metrics_app, Reads(), io.StringIO())
    made.last = LastRun((finding,), (), (NAMESPACES,), 1_767_268_800.0)

    [row] = [link for link in links(get(made, "/").text, "/") if "/objects/" in link]
    assert row == f"/objects/namespaces/{finding.name}"
    page = get(made, row)
    assert page.code == 200, page.text
    [api] = [link for link in links(page.text, row) if "/api/" in link]
    assert api == f"/api/v1/explain/namespaces/{finding.name}"
    answer = get(made, api)
    assert (answer.code, answer.json()["name"]) == (200, finding.name)


# -- the index: its order, its filter links; when serve first saw an object stuck ----------------


def pod(name: str, overdue: int | None, namespace: str | None = "shop", *types: str) -> Finding:
    """web-0's finding renamed, overdue that long (None: not known), with blockers of types."""
    found = hung_pod()
    blockers = [Blocker(type=t, summary=f"held by {t}") for t in types] or found.blockers
    return replace(
        found,
        name=name,
        namespace=namespace,
        uid=f"uid-{name}",
        overdue_seconds=overdue,
        blockers=blockers,
    )


def namespace(name: str) -> Finding:
    found = pod(name, 60, None, "content-remaining")
    return replace(found, kind="Namespace", api_version="v1", namespace=None)


def rows(html: str) -> list[str]:
    """The index's rows, each as the object's link."""
    return re.findall(
        r'<tr><td>[^<]*</td><td class="long">[^<]*</td><td class="long name">'
        r'<a href="([^"]*)">',
        html,
    )


def test_the_index_lists_the_most_overdue_first(site: Site) -> None:
    findings = (
        pod("late", 60),
        pod("later", 3600),
        pod("unknown", None),
        pod("zero", 0),
        pod("in-grace", -30, "shop", "grace-period"),
        pod("just-in-grace", -5, "shop", "grace-period"),
        pod("a-tie", 60),
        namespace("archive"),
    )
    site.last = LastRun.after(None, findings, (), (PODS, NAMESPACES), 1_767_268_800.0)
    assert rows(get(site, "/").text) == [
        "objects/pods/shop/later",
        "objects/namespaces/archive",  # no namespace, no empty segment
        "objects/pods/shop/a-tie",  # the same: by namespace, then name
        "objects/pods/shop/late",
        "objects/pods/shop/zero",
        "objects/pods/shop/unknown",  # stuck, how long not known: after those known
        "objects/pods/shop/just-in-grace",  # not stuck: the nearest its deadline first
        "objects/pods/shop/in-grace",
    ]


FINDINGS = (
    pod("a", 10, "shop", "node-missing"),
    pod("b", 20, "shop", "finalizer"),
    pod("c", 30, "cart", "node-missing", "finalizer"),
    namespace("shop"),
)


def test_the_filter_links_are_the_values_among_the_other_filters() -> None:
    assert facets(FINDINGS, {}) == {
        "kind": [("Namespace", 1), ("Pod", 3)],
        "namespace": [("cart", 1), ("shop", 3)],  # a Namespace is in its own
        "type": [("content-remaining", 1), ("finalizer", 2), ("node-missing", 2)],
    }
    narrowed = facets(FINDINGS, {"namespace": "shop", "type": "finalizer"})
    assert narrowed["namespace"] == [("cart", 1), ("shop", 1)]  # with type=finalizer
    assert narrowed["type"] == [("content-remaining", 1), ("finalizer", 1), ("node-missing", 1)]
    assert narrowed["kind"] == [("Pod", 1)]


def test_the_index_narrows_by_plain_links(site: Site) -> None:
    site.last = LastRun.after(None, FINDINGS, (), (PODS, NAMESPACES), 1_767_268_800.0)
    index = get(site, "/").text
    assert "Clear the filter" not in index
    for link in ('href="?namespace=cart"', 'href="?kind=Pod"', 'href="?type=node-missing"'):
        assert link in index
    assert "<form" not in index and "<script" not in index
    narrowed = get(site, "/", query="namespace=shop&kind=pod").text
    assert rows(narrowed) == ["objects/pods/shop/b", "objects/pods/shop/a"]
    assert "Showing only kind pod, namespace shop." in narrowed
    assert '<a href="./">Clear the filter</a>' in narrowed
    # a value adds to the filters in force, `any` drops its own, the one chosen is no link
    assert 'href="?kind=pod&amp;namespace=shop&amp;type=finalizer">finalizer&nbsp;(1)' in narrowed
    assert 'href="?kind=pod&amp;namespace=cart">cart&nbsp;(1)' in narrowed
    assert 'Namespace: <a href="?kind=pod">any</a>' in narrowed
    assert (
        "<strong>Pod&nbsp;(2)</strong>" in narrowed and "<strong>shop&nbsp;(2)</strong>" in narrowed
    )
    nothing = get(site, "/", query="namespace=cart&type=content-remaining").text
    assert rows(nothing) == [] and "Nothing terminating matches the filter." in nothing


def test_filter_links_escape_what_the_cluster_names() -> None:
    hostile = replace(pod("x", 1), kind=HOSTILE)
    html = pages.index_page([(hostile, "pods")], "now", {}, facets([hostile], {}))
    assert "<script" not in html
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;&nbsp;(1)</a>" in html
    assert 'href="?kind=%3Cscript%3Edocument.title%3D%27pwned%27%3C%2Fscript%3E"' in html


def test_serve_remembers_when_it_first_saw_each_object_stuck() -> None:
    first = LastRun.after(None, (pod("a", 10), pod("b", -5, "shop", "grace-period")), (), (), 100.0)
    assert first.first_seen == {"uid-a": 100.0}  # b is not stuck yet
    second = LastRun.after(first, (pod("a", 20), pod("b", 5)), (), (), 110.0)
    assert second.first_seen == {"uid-a": 100.0, "uid-b": 110.0}
    # a gone, b no longer stuck (its grace period made longer): both forgotten
    third = LastRun.after(second, (pod("b", -1, "shop", "grace-period"),), (), (), 120.0)
    assert third.first_seen == {}
    assert LastRun.after(third, (pod("b", 5),), (), (), 130.0).first_seen == {"uid-b": 130.0}
    renamed = replace(pod("a", 30), uid="another")  # deleted and made again: another object
    assert LastRun.after(second, (renamed,), (), (), 120.0).first_seen == {"another": 120.0}
    assert third.first_run == 100.0


def test_the_first_seen_line_says_when_and_whether_serve_was_looking_before() -> None:
    first = LastRun.after(None, (pod("a", 10),), (), (), 1_767_268_800.0)
    second = LastRun.after(first, (pod("a", 20), pod("b", 5)), (), (), 1_767_268_860.0)
    now = 1_767_268_920.0
    assert second.seen_line(pod("b", 5), now) == "2026-01-01T12:01:00Z (60s ago)"
    assert second.seen_line(pod("a", 20), now) == (
        "2026-01-01T12:00:00Z (2m ago), in serve's first run: stuck since before serve started"
    )
    assert second.seen_line(pod("read-on-demand", 5), now) == "not seen stuck by serve's runs (yet)"


def test_the_object_page_says_when_serve_first_saw_it_stuck(site: Site) -> None:
    previous = LastRun.after(None, (), (), (PODS,), 1_767_268_800.0)
    site.last = LastRun.after(previous, (hung_pod(),), (), (PODS,), 1_767_268_860.0)
    page = get(site, "/objects/pods/shop/web-0").text
    assert "<dt>First seen stuck</dt><dd>2026-01-01T12:01:00Z (" in page
    assert "before serve started" not in page
