"""The Headlamp plugin's components in real chromium, answered by a real `serve` on the real
control plane.

A real Headlamp cannot be built here (docs/integrations.md says why), so the components render
through the Storybook setup that @kinvolk/headlamp-plugin ships (`make test-headlamp` builds it
into integrations/headlamp/storybook-static). The page calls Headlamp's own request(), which
goes to the page's origin as it does in Headlamp's web build; the test's server there answers
as the API server would: the service proxy of the chart's Service (monitoring/
kubectl-terminating:9101) forwards to the real `serve` (the real kube-apiserver refuses to proxy
to loopback), and every other path goes to the real kube-apiserver, which gives its own 404 for
an absent Service and its own 403 to a user without services/proxy. chromium is driven by
playwright-core (integrations/headlamp/tests/browser.mjs).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.e2e.test_serve_web import READ_ONLY, hostile_pods
from tests.harness import scenarios
from tests.harness.api import create_namespace, delete, unique_ns, wait_for
from tests.harness.browser import chromium
from tests.harness.cli import start_serve
from tests.harness.controlplane import ApiError, ControlPlane, free_port
from tests.harness.users import User, Users

pytestmark = [pytest.mark.e2e, pytest.mark.headlamp]

PLUGIN = Path(__file__).resolve().parents[2] / "integrations" / "headlamp"
STORYBOOK = PLUGIN / "storybook-static"
CHART_SERVICE = ("monitoring", "kubectl-terminating", "9101")  # deploy/chart's defaults
PROXY = re.compile(r"^/api/v1/namespaces/([^/]+)/services/([^/:]+):([^/]+)/proxy(/.*)$")
RESTRICTED = "restricted"  # service-proxy calls to this namespace go as a user with no rights
SCREENSHOT = os.environ.get("HEADLAMP_SCREENSHOT")  # where to keep the section's picture
WAIT = 90.0


@dataclass(frozen=True)
class Site:
    url: str
    ns: str
    orphan: str
    hostile: str


def answer_as_api_server(
    cp: ControlPlane, serve_url: str, nobody: User, path: str
) -> tuple[int, bytes]:
    """What the API server would answer to the page's request."""
    match = PROXY.match(path)
    if match and match.groups()[:3] == CHART_SERVICE:
        try:
            with urllib.request.urlopen(serve_url + match.group(4), timeout=30) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
    token = nobody.token if match and match.group(1) == RESTRICTED else None
    status, body = cp.api_raw("GET", path, token=token)
    return status, body.encode()


def handler(cp: ControlPlane, serve_url: str, nobody: User) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if not path.startswith("/api/"):
                super().do_GET()
                return
            status, body = answer_as_api_server(cp, serve_url, nobody, self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def covered(serve_url: str, ns: str, names: set[str]) -> bool:
    try:
        with urllib.request.urlopen(f"{serve_url}/api/v1/findings?namespace={ns}") as answer:
            items = json.load(answer)["items"]
    except OSError:
        return False
    return names <= {i["name"] for i in items if (i.get("overdueSeconds") or -1) >= 0}


@pytest.fixture(scope="module")
def site(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    if not (STORYBOOK / "iframe.html").exists():
        pytest.fail("no Storybook build: run make test-headlamp (it builds one)")
    cp = control_plane
    directory = tmp_path_factory.mktemp("headlamp")
    ns = unique_ns("headlamp")
    create_namespace(cp, ns)
    orphan = scenarios.pod_on_missing_node(cp, ns, "orphan-0", grace_period=1).name
    hostile_pods(cp, ns)
    with Users(cp, directory / "users", "headlamp-users") as users:
        viewer = users.user("viewer", cluster_rules=READ_ONLY)
        nobody = users.user("nobody")
        port = free_port()
        serve_url = f"http://127.0.0.1:{port}"
        log_path = directory / "serve.log"
        with open(log_path, "wb") as log:
            proc = start_serve(viewer.kubeconfig, port, "3s", log)
        server = ThreadingHTTPServer(
            ("127.0.0.1", 0),
            functools.partial(handler(cp, serve_url, nobody), directory=str(STORYBOOK)),
        )
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            wanted = {orphan, "hostile-0"}
            wait_for(lambda: covered(serve_url, ns, wanted), WAIT, 0.5, message="serve's findings")
            yield Site(f"http://127.0.0.1:{server.server_address[1]}", ns, orphan, "hostile-0")
        except TimeoutError:
            raise AssertionError(log_path.read_text()[-3000:]) from None
        finally:
            server.shutdown()
            server.server_close()
            proc.terminate()
            proc.wait(30)
            for pod in (orphan, "hostile-0"):
                with contextlib.suppress(ApiError):
                    delete(cp, scenarios.pod_path(ns, pod), grace_period=0)


def story(site: Site, story_id: str, **args: str) -> str:
    query = {"id": f"kubectl-terminating--{story_id}", "viewMode": "story"}
    if args:
        query["args"] = ";".join(f"{k}:{v}" for k, v in args.items())
    return f"{site.url}/iframe.html?{urlencode(query, safe=':;')}"


def render(tmp_path: Path, *pages: dict[str, str]) -> list[dict[str, Any]]:
    """Each page in chromium: its text, its HTML, whether a hostile script ran."""
    spec = {"profile": str(tmp_path / "profile"), "pages": list(pages)}
    done = subprocess.run(
        ["node", str(PLUGIN / "tests" / "browser.mjs")],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "CHROMIUM": chromium()},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, Any]] = json.loads(done.stdout)
    for shown in results:
        assert shown["waited"], (shown["errors"], shown["text"][:2000])
    return results


def live(site: Site, name: str, **service: str) -> str:
    return story(site, "live-object", resource="pods", namespace=site.ns, name=name, **service)


def test_the_section_shows_serves_explanation_of_a_pod_on_a_missing_node(
    site: Site, tmp_path: Path
) -> None:
    page = {"url": live(site, site.orphan), "wait": "[data-testid=kt-explanation]"}
    if SCREENSHOT:
        page["screenshot"] = SCREENSHOT
    (shown,) = render(tmp_path, page)
    text = shown["text"]
    assert re.search(r"Deleting \d+s \(\d+s past deadline\)", text), text  # from metadata
    assert "node-missing" in text and f"{site.ns}-gone" in text  # the main blocker, from serve
    assert "Evidence" in text and "Remedies (safest first)" in text
    assert "DESTRUCTIVE" in text  # the force delete is labelled
    failed = [e for e in shown["errors"] if "Failed to load resource" not in e]  # favicon
    assert failed == [], failed


def test_an_absent_service_or_a_forbidden_proxy_is_one_line_and_the_marker_stays(
    site: Site, tmp_path: Path
) -> None:
    absent, forbidden = render(
        tmp_path,
        {
            "url": live(site, site.orphan, serviceName="absent"),
            "wait": "[data-testid=kt-unavailable]",
        },
        {
            "url": live(site, site.orphan, serviceNamespace=RESTRICTED),
            "wait": "[data-testid=kt-unavailable]",
        },
    )
    assert "service monitoring/absent:9101 was not found" in absent["text"], absent["text"]
    assert "may not use services/proxy on service restricted/" in forbidden["text"]
    for shown in (absent, forbidden):
        assert re.search(r"Deleting \d+s", shown["text"]), shown["text"]
        assert "Main blocker" not in shown["text"]


def test_markup_from_the_cluster_is_text_and_never_runs(site: Site, tmp_path: Path) -> None:
    """A real event message with <script> and <img onerror> (through serve), and hostile
    finalizers (the API server refuses them, so the story makes them)."""
    from_serve, made = render(
        tmp_path,
        {"url": live(site, site.hostile), "wait": "[data-testid=kt-explanation]"},
        {"url": story(site, "hostile"), "wait": "[data-testid=kt-hostile]"},
    )
    assert "<script>" in from_serve["text"] or "<img" in from_serve["text"], from_serve["text"]
    assert "<script>window.__pwned" in made["text"] and '<img src=x onerror="' in made["text"]
    for shown in (from_serve, made):
        assert shown["pwned"] is None and shown["dialogs"] == []
        assert "<script" not in shown["html"] and "<img" not in shown["html"]
