"""`serve` against the real control plane, scraped by a real Prometheus; deploy/ applied.

The exporter runs with the arguments of deploy/'s Deployment (no registry is reachable here
for its image, so the same command runs as a process), in-cluster through a real token of
deploy/'s ServiceAccount (tests/harness/prometheus.py). Its clock runs 20 minutes ahead
(libfaketime), and so does the API server's as it sees it (a proxy moves the Date of each
answer: ages are counted on the server's clock), so the shipped 15-minute alert fires for
objects deleted a moment ago; the rules' expressions are the shipped ones, only their `for`
is cut to 0s.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.harness import scenarios
from tests.harness.api import create_namespace, delete, remove_finalizers, unique_ns, wait_for
from tests.harness.cli import start_serve
from tests.harness.controlplane import ApiError, ControlPlane, _Proc, free_port
from tests.harness.prometheus import (
    Parts,
    Prometheus,
    in_cluster_exporter,
    parts,
    rules_file,
    service_account_token,
)
from tests.harness.recording_proxy import RecordingProxy
from tests.harness.tiers import skip_or_fail
from tests.harness.users import Users, rights_granted, rule

pytestmark = [pytest.mark.e2e, pytest.mark.prometheus]

JSON = dict[str, Any]
T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deploy" / "kubectl-terminating.yaml"
RULES = ROOT / "deploy" / "prometheus-rule.yaml"
NAMESPACE = SERVICE_ACCOUNT = "kubectl-terminating"
AS_EXPORTER = f"--as=system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
WAIT = 120.0  # runs every 2s, scrapes every 1s; a loaded 2-core machine is slow
READS = {"get", "list", "watch"}
PAGES = "https://terminating.example/k8s"  # serve --external-url: the alerts link there


@pytest.fixture(scope="module")
def tools() -> Parts:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("unshare") is None:
        # the in-cluster exporter gets its service account files in a mount namespace
        skip_or_fail("Prometheus", "the exporter's in-cluster run needs Linux, root and unshare")
    found = parts()
    if isinstance(found, str):
        skip_or_fail("Prometheus", found)
    assert isinstance(found, Parts)
    return found


@pytest.fixture(scope="module")
def deployed(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """deploy/kubectl-terminating.yaml applied with kubectl, deleted at the end."""
    control_plane.kubectl("apply", "-f", str(MANIFEST))
    yield control_plane
    control_plane.kubectl("delete", "-f", str(MANIFEST), "--wait=false", check=False)


def deployment_args() -> list[str]:
    documents = yaml.safe_load_all(MANIFEST.read_text())
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return list(container["args"])


def test_the_manifest_is_accepted_and_its_service_account_can_only_read(
    deployed: ControlPlane,
) -> None:
    cp = deployed
    for kind, name in [
        ("namespace", NAMESPACE),
        ("serviceaccount", SERVICE_ACCOUNT),
        ("clusterrole", "kubectl-terminating-reader"),
        ("clusterrolebinding", "kubectl-terminating-reader"),
        ("deployment", "kubectl-terminating"),
        ("service", "kubectl-terminating"),
    ]:
        cp.kubectl("get", kind, name, "-n", NAMESPACE)
    added = rights_granted(cp, AS_EXPORTER)
    assert added["*.*"] == {"list", "watch"}
    assert added["pods"] == {"get"}  # listed through "*.*"
    assert all(verbs <= READS for verbs in added.values()), added
    for verb, resource, allowed in [
        ("list", "secrets", "yes"),
        ("get", "nodes --subresource=proxy", "no"),  # exec-equivalent through the kubelet
        ("get", "pods --subresource=log", "no"),
        ("delete", "pods", "no"),
        ("patch", "namespaces", "no"),
        ("create", "pods --subresource=eviction", "no"),
    ]:
        answer = cp.kubectl("auth", "can-i", verb, *resource.split(), AS_EXPORTER, check=False)
        assert answer.stdout.strip() == allowed, (verb, resource)


def test_promtool_accepts_the_shipped_rules(tools: Parts, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(tools.promtool), "check", "rules", str(rules_file(RULES, tmp_path / "rules.yml"))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 2 rules found" in done.stdout


@pytest.fixture(scope="module")
def seeded(control_plane: ControlPlane) -> Iterator[JSON]:
    """A pod on a node that is gone, a pod held by a finalizer, a namespace held by an
    unavailable APIService."""
    cp = control_plane
    pods = unique_ns("exp-pods")
    create_namespace(cp, pods)
    orphan = scenarios.pod_on_missing_node(cp, pods)
    held = scenarios.pod_with_finalizer(cp, pods)
    api_ns = unique_ns("exp-api")
    api = scenarios.namespace_with_unavailable_apiservice(cp, api_ns, f"{api_ns}.io")
    apiservice = f"/apis/apiregistration.k8s.io/v1/apiservices/{api.name}"
    seeds = {
        "pods": pods,
        "orphan": orphan,
        "held": held,
        "api_ns": api_ns,
        "apiservice": apiservice,
    }
    try:
        yield seeds
    finally:
        with contextlib.suppress(ApiError):
            delete(cp, apiservice)


@pytest.fixture(scope="module")
def exporter(
    deployed: ControlPlane, tools: Parts, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[_Proc, str]]:
    cp = deployed
    directory = tmp_path_factory.mktemp("exporter")
    token = service_account_token(cp, NAMESPACE, SERVICE_ACCOUNT)
    port = free_port()
    # the Deployment's command; a test cannot wait a minute between runs
    args = [
        *deployment_args(),
        f"--metrics-bind-address=127.0.0.1:{port}",
        "--interval=2s",
        f"--external-url={PAGES}/",
    ]
    with RecordingProxy(cp.port, cp.pki_dir, date_offset=20 * 60) as later:
        proc = in_cluster_exporter(
            cp, directory, token, NAMESPACE, args, tools.faketime, "+20m", later.url
        )
        proc.start()
        try:
            yield proc, f"127.0.0.1:{port}"
        finally:
            proc.stop()


@pytest.fixture(scope="module")
def prometheus(
    exporter: tuple[_Proc, str], tools: Parts, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Prometheus]:
    directory = tmp_path_factory.mktemp("prometheus")
    rules = rules_file(RULES, directory / "rules.yml", for_duration="0s")
    prom = Prometheus(tools.prometheus, directory, exporter[1], rules)
    prom.start()
    try:
        yield prom
    finally:
        prom.stop()


def series(**labels: str) -> frozenset[tuple[str, str]]:
    return frozenset(labels.items())


def firing(prom: Prometheus, name: str, namespace: str, blocker: str | None = None) -> JSON | None:
    """The firing alert `name` for namespace (and blocker), or None."""
    for alert in prom.alerts():
        labels = alert["labels"]
        if (labels.get("alertname"), labels.get("namespace"), alert["state"]) == (
            name,
            namespace,
            "firing",
        ) and blocker in (None, labels.get("main_blocker")):
            return alert
    return None


def eventually(read: Callable[[], T], ok: Callable[[T], bool]) -> T:
    """read() once ok says so (within WAIT); else the test fails with the last value read."""
    last: list[T] = []

    def check() -> tuple[T] | None:
        last[:] = [read()]
        return (last[0],) if ok(last[0]) else None

    try:
        return wait_for(check, WAIT, 0.5)[0]
    except TimeoutError:
        raise AssertionError(f"still not so after {WAIT}s; last read: {last}") from None


def warned(exporter: tuple[_Proc, str]) -> list[str]:
    """The last run's warnings, as the API serves them: which reads failed, and why."""
    with urllib.request.urlopen(f"http://{exporter[1]}/api/v1/findings", timeout=10) as answer:
        return list(json.loads(answer.read()).get("warnings") or [])


def deadline(cp: ControlPlane, ns: str, name: str) -> int:
    """The pod's deletionTimestamp (set by the API server from the test's delete), in unix
    seconds: whole seconds, as the API writes it."""
    written = cp.api("GET", scenarios.pod_path(ns, name))["metadata"]["deletionTimestamp"]
    return int(datetime.fromisoformat(written.replace("Z", "+00:00")).timestamp())


def assert_ages_on_the_servers_clock(cp: ControlPlane, prom: Prometheus, seeded: JSON) -> None:
    """Each group's oldest age is the run's reading of the server's clock (moved 20 minutes
    ahead by the proxy) minus that pod's deadline, to the second: one reading for every group
    of the run (the deadlines are whole seconds, so the ages' difference is exactly the
    deadlines'), and that reading is the clock of the run that finished at the exporter's
    last_success_timestamp_seconds (its own clock, 20 minutes ahead too), read before it
    finished and at most the longest run before."""
    pods = seeded["pods"]
    deadlines = {
        "node-missing": deadline(cp, pods, seeded["orphan"].name),
        "finalizer": deadline(cp, pods, seeded["held"].name),
    }
    # one instant query: both from the same scrape, so from the same run (SnapshotCollector)
    scraped = prom.query(
        f'kubectl_terminating_stuck_oldest_seconds{{namespace="{pods}"}} '
        "or kubectl_terminating_last_success_timestamp_seconds"
    )
    finished = scraped.pop(frozenset())
    ages = {dict(labels)["main_blocker"]: age for labels, age in scraped.items()}
    assert ages.keys() == deadlines.keys(), scraped
    readings = {int(ages[blocker]) + deadlines[blocker] for blocker in deadlines}
    assert len(readings) == 1, (ages, deadlines)
    [reading] = readings
    buckets = prom.query("kubectl_terminating_run_duration_seconds_bucket")
    count = max(buckets.values())
    longest = min(float(dict(b)["le"]) for b, n in buckets.items() if n == count)
    # the run read the server's time (its skew known to half a second, the ages truncated to
    # whole seconds) between its start and its end
    assert finished - longest - 2 <= reading <= finished + 1, (reading, finished, longest)


def test_prometheus_sees_the_stuck_objects_fires_the_alerts_and_sees_them_go(
    control_plane: ControlPlane,
    seeded: JSON,
    exporter: tuple[_Proc, str],
    prometheus: Prometheus,
) -> None:
    cp, prom, pods, api_ns = control_plane, prometheus, seeded["pods"], seeded["api_ns"]
    stuck_in_pods = f'kubectl_terminating_stuck_objects{{namespace="{pods}"}}'
    eventually(
        lambda: prom.query(stuck_in_pods),
        lambda found: found
        == {
            series(main_blocker="node-missing", kind="Pod", namespace=pods): 1.0,
            series(main_blocker="finalizer", kind="Pod", namespace=pods): 1.0,
        },
    )
    held_ns = f'kubectl_terminating_stuck_objects{{kind="Namespace",namespace="{api_ns}"}}'
    eventually(
        lambda: prom.query(held_ns),
        lambda found: found
        == {series(main_blocker="apiservice-unavailable", kind="Namespace", namespace=api_ns): 1.0},
    )
    assert_ages_on_the_servers_clock(cp, prom, seeded)

    alerts = eventually(
        prom.alerts,
        lambda _: firing(prom, "KubernetesObjectsStuckTerminating", pods, "node-missing")
        is not None,
    )
    alert = firing(prom, "KubernetesObjectsStuckTerminating", pods, "node-missing")
    assert alert is not None, alerts
    description = alert["annotations"]["description"]
    assert "Blocker: node no longer exists (node-missing)." in description
    assert description.endswith(f"Run: kubectl terminating pods -n {pods} --explain")
    # the page that lists them, each linked to its explanation (web.py's filters)
    assert alert["annotations"]["page"] == f"{PAGES}/?kind=Pod&namespace={pods}&type=node-missing"
    eventually(
        prom.alerts,
        lambda _: firing(prom, "APIServiceHoldsNamespaceDeletion", api_ns) is not None,
    )
    held = firing(prom, "APIServiceHoldsNamespaceDeletion", api_ns)
    assert held is not None
    assert "APIService unavailable" in held["annotations"]["description"]
    assert held["annotations"]["description"].endswith(
        f"Run: kubectl terminating ns {api_ns} --explain"
    )
    assert held["annotations"]["page"] == f"{PAGES}/objects/namespaces/{api_ns}"

    # with the shipped RBAC nothing was forbidden: the only failed reads are the discovery
    # of the aggregated API that has no backend
    failed = prom.query("kubectl_terminating_read_failures_total")
    assert {dict(labels)["resource"] for labels in failed} <= {"discovery"}, (
        failed,
        warned(exporter),
    )

    # the objects go: their series go, the per-blocker totals drop to zero, alerts resolve
    orphan, held_pod = seeded["orphan"], seeded["held"]
    delete(cp, scenarios.pod_path(pods, orphan.name), grace_period=0)
    remove_finalizers(cp, scenarios.pod_path(pods, held_pod.name))
    delete(cp, seeded["apiservice"])
    eventually(lambda: prom.query(stuck_in_pods), lambda found: found == {})
    totals = (
        'kubectl_terminating_stuck_objects_by_blocker{main_blocker=~"node-missing|finalizer|'
        'apiservice-unavailable"}'
    )
    eventually(
        lambda: prom.query(totals),
        lambda found: len(found) == 3 and set(found.values()) == {0.0},
    )
    eventually(
        prom.alerts,
        lambda _: firing(prom, "KubernetesObjectsStuckTerminating", pods, "node-missing") is None,
    )

    # SIGTERM: the exporter stops at once, exit 0
    proc, _ = exporter
    assert proc.popen is not None
    proc.popen.send_signal(signal.SIGTERM)
    assert proc.popen.wait(30) == 0
    assert proc.log_path.read_text().splitlines()[-1] == "stopped"


def test_a_read_the_user_may_not_make_is_counted_for_its_resource(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """A user who may list everything but get no node: explaining a pod on a dead node needs
    its Node, and that forbidden read shows as a read failure of `nodes` (no Prometheus here:
    /metrics is read directly)."""
    cp = control_plane
    ns = unique_ns("exp-forbidden")
    create_namespace(cp, ns)
    scenarios.pod_on_missing_node(cp, ns)  # explained inside its grace period too
    rules = [rule(["*"], ["list", "watch"], group="*"), rule(["pods", "namespaces"], ["get"])]
    with Users(cp, tmp_path / "users", "exp-users") as users:
        user = users.user("lister", cluster_rules=rules)
        port = free_port()
        log_path = tmp_path / "serve.log"
        with open(log_path, "wb") as log:
            proc = start_serve(user.kubeconfig, port, "1s", log)
        try:
            failed = eventually(lambda: failed_reads(port), lambda found: "nodes" in found)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{log_path.read_text()[-3000:]}") from None
        finally:
            proc.terminate()
            proc.wait(30)
    assert failed["nodes"] >= 1


def failed_reads(port: int) -> dict[str, float]:
    """kubectl_terminating_read_failures_total per resource, read from /metrics."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:  # not serving yet
        return {}
    return {
        sample.labels["resource"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "kubectl_terminating_read_failures_total"
    }
