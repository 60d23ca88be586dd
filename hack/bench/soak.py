"""`make soak`: `serve` for SOAK_SECONDS (default 600) on a real control plane that misbehaves.

A fresh control plane (etcd, kube-apiserver, kube-controller-manager) in .bench/soak/ with
SOAK_PODS healthy pods (default 1000); `serve -v=1 --interval=SOAK_INTERVAL` (default 1m) runs
as a plain user while, on a schedule spread over the soak:

- the API server is restarted twice (tests/harness/controlplane.py's restart_apiserver; the
  controller manager is restarted after it, as the harness does);
- before the second restart, etcd is compacted to its current revision, so every watch that
  resumes from a resourceVersion it saw before gets 410 Gone and lists again (counted by
  serve's kubectl_terminating_watch_relists_total);
- an aggregated APIService whose Service does not exist makes discovery fail for its group
  for SOAK_OUTAGE seconds (default 90), then is deleted;
- SOAK_OBJECTS pods (default 50) start terminating (a finalizer holds each) and stop (it is
  removed), SOAK_BATCH (default 5) at a time: each change must show in /metrics (and, when
  serve has the API, in /api/v1/findings) within SOAK_SOON seconds (default 30: a run takes
  seconds here and a change wakes one).

Its resident memory is sampled every second from /proc. At the end it prints a table and
exits 1 unless: memory is flat after the first minute (the median of the last minute at most
SOAK_GROWTH_MB, default 10, above the median of the second minute), every change was seen in
time, /healthz answers 200 and every kubectl_terminating_thread_up is 1, and serve still runs.

    make soak                                   # 10 minutes and the set-up (a few more)
    SOAK_SECONDS=180 SOAK_OBJECTS=10 make soak  # a quick look
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from hack.bench.exporter import rss
from hack.bench.filler import Filler
from hack.bench.settings import REPO, log
from tests.harness import scenarios
from tests.harness.api import create_namespace, remove_finalizers
from tests.harness.api_extensions import create_apiservice
from tests.harness.controlplane import ControlPlane, free_port
from tests.harness.kubelet import create_node
from tests.harness.users import binding_body

NODE = "soak-node"
FINALIZER = "example.com/drain"


@dataclass
class Soak:
    seconds: float = float(os.environ.get("SOAK_SECONDS") or 600)
    pods: int = int(os.environ.get("SOAK_PODS") or 1000)
    objects: int = int(os.environ.get("SOAK_OBJECTS") or 50)
    batch: int = int(os.environ.get("SOAK_BATCH") or 5)  # objects that change at once
    interval: str = os.environ.get("SOAK_INTERVAL") or "1m"
    outage: float = float(os.environ.get("SOAK_OUTAGE") or 90)
    soon: float = float(os.environ.get("SOAK_SOON") or 30)
    growth_mb: float = float(os.environ.get("SOAK_GROWTH_MB") or 10)
    state: Path = Path(os.environ.get("BENCH_DIR") or REPO / ".bench" / "soak")


@dataclass
class Seen:
    """Each sample of the resident set, and each change with how long /metrics took."""

    rss: list[tuple[float, int]] = field(default_factory=list)  # (seconds since start, bytes)
    metrics: list[float] = field(default_factory=list)  # seconds from a change to /metrics
    pages: list[float] = field(default_factory=list)  # ... to /api/v1/findings
    late: list[str] = field(default_factory=list)  # changes not seen within SOAK_SOON
    events: list[tuple[float, str]] = field(default_factory=list)


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def samples(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    _, text = get(f"http://127.0.0.1:{port}/metrics")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def stuck_in(port: int, ns: str) -> float:
    return sum(
        value
        for (name, labels), value in samples(port).items()
        if name == "kubectl_terminating_stuck_objects" and ("namespace", ns) in labels
    )


def listed_in(port: int, ns: str) -> set[str] | None:
    """The names /api/v1/findings lists in ns; None when serve has no API."""
    code, text = get(f"http://127.0.0.1:{port}/api/v1/findings?namespace={ns}")
    if code == 404 and "/api/v1/findings" not in text:
        return None
    if code != 200:
        return set()
    return {str(item.get("name")) for item in json.loads(text)["items"]}


def until(check: Callable[[], bool], timeout: float) -> float | None:
    """Seconds until check() held, or None after timeout."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return time.monotonic() - started
        time.sleep(0.25)
    return None


def sample_rss(pid: int, seen: Seen, started: float, done: threading.Event) -> None:
    while not done.wait(1.0):
        try:
            seen.rss.append((time.monotonic() - started, rss(pid)))
        except OSError:
            return


def compact_etcd(cp: ControlPlane) -> int:
    """Compact etcd to its current revision: older resourceVersions are gone (410)."""
    import urllib3

    pool = urllib3.PoolManager()
    base = f"http://127.0.0.1:{cp.etcd_port}/v3/kv"
    answer = pool.request("POST", f"{base}/range", body=json.dumps({"key": "AA=="}).encode())
    revision = int(json.loads(answer.data)["header"]["revision"])
    body = json.dumps({"revision": str(revision), "physical": True}).encode()
    pool.request("POST", f"{base}/compaction", body=body)
    return revision


def user_kubeconfig(cp: ControlPlane, state: Path) -> Path:
    """A plain user (not system:masters: API Priority and Fairness applies), as the bench's."""
    alice = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
    binding = binding_body("ClusterRole", "soak-alice", "cluster-admin", alice)
    cp.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
    return cp.write_kubeconfig(state / "kubeconfig", cp.tokens["alice"])


def flip(cp: ControlPlane, port: int, ns: str, batch: int, seen: Seen, soak: Soak) -> None:
    """SOAK_BATCH pods start terminating at once, then stop: each change timed to /metrics
    and the API."""
    names = [f"held-{batch}-{i}" for i in range(soak.batch)]
    before = stuck_in(port, ns)
    for name in names:  # containers done, deleted at once: only the finalizer holds it
        finished = ("terminated:0", "Succeeded", 0)
        scenarios._deleted_pod(cp, ns, name, *finished, node=NODE, finalizers=[FINALIZER])
    shown(port, ns, names, before + len(names), True, "start", seen, soak)
    for name in names:
        remove_finalizers(cp, scenarios.pod_path(ns, name))
    shown(port, ns, names, before, False, "stop", seen, soak)


def shown(
    port: int,
    ns: str,
    names: list[str],
    count: float,
    listed: bool,
    change: str,
    seen: Seen,
    soak: Soak,
) -> None:
    """Wait until /metrics counts `count` stuck in ns and the API lists names (or none of
    them), each timed from now; late past SOAK_SOON."""
    started, metric, page = time.monotonic(), None, None
    has_api = listed_in(port, ns) is not None
    while time.monotonic() - started < soak.soon and (metric is None or (has_api and page is None)):
        try:
            if metric is None and stuck_in(port, ns) == count:
                metric = time.monotonic() - started
            there = listed_in(port, ns) or set()
            if has_api and page is None and all((n in there) == listed for n in names):
                page = time.monotonic() - started
        except (OSError, ValueError):
            pass  # serve busy or the answer cut: ask again
        time.sleep(0.25)
    for what, took, timings in (("/metrics", metric, seen.metrics), ("API", page, seen.pages)):
        if took is not None:
            timings.append(took)
        elif what == "/metrics" or has_api:
            seen.late.append(f"{names[0]}.. {change}: {what}")


def schedule(soak: Soak) -> list[tuple[float, str]]:
    """(seconds after serve started, what): the faults, and the flips between them."""
    s = soak.seconds
    faults = [
        (0.2 * s, "restart"),
        (0.4 * s, "discovery-down"),
        (0.4 * s + soak.outage, "discovery-up"),
        (0.7 * s, "compact+restart"),
    ]
    batches = max(1, soak.objects // soak.batch)
    spread = (0.9 * s - 60) / batches
    flips = [(60 + i * spread, f"flip {i}") for i in range(batches)]
    return sorted(faults + flips)


def run(soak: Soak) -> int:
    soak.state.mkdir(parents=True, exist_ok=True)
    cp = ControlPlane(soak.state / "cp")
    cp.start()
    serve: subprocess.Popen[bytes] | None = None
    done = threading.Event()
    seen = Seen()
    try:
        filler = Filler(cp, 8)
        filler.add_pods(soak.pods)
        ns = "soak"
        create_namespace(cp, ns)
        create_node(cp, NODE)
        kubeconfig = user_kubeconfig(cp, soak.state)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
        env.update(KUBECONFIG=str(kubeconfig), PYTHONPATH=str(REPO))
        serve_log = soak.state / "serve.log"
        with open(serve_log, "wb") as out:
            serve = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kubectl_terminating",
                    "serve",
                    "-v=1",
                    f"--interval={soak.interval}",
                    f"--metrics-bind-address=127.0.0.1:{port}",
                ],
                env=env,
                stdout=out,
                stderr=out,
            )
        started = time.monotonic()
        threading.Thread(target=sample_rss, args=(serve.pid, seen, started, done)).start()
        if until(lambda: "for changes" in serve_log.read_text(), 300) is None:
            raise SystemExit(f"serve did not set up its watches: see {serve_log}")
        log(f"serve up, watching; {soak.seconds:.0f} s of soak begin")
        for at, what in schedule(soak):
            time.sleep(max(0.0, at - (time.monotonic() - started)))
            seen.events.append((time.monotonic() - started, what))
            if what == "restart":
                cp.restart_apiserver()
            elif what == "compact+restart":
                log(f"etcd compacted at revision {compact_etcd(cp)}")
                cp.restart_apiserver()
            elif what == "discovery-down":
                create_apiservice(cp, "soak.example.com", "v1", ns, "nowhere")
            elif what == "discovery-up":
                cp.api("DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/v1.soak.example.com")
            else:
                flip(cp, port, ns, int(what.split()[1]), seen, soak)
            log(f"{what} done at {time.monotonic() - started:.0f} s")
        time.sleep(max(0.0, soak.seconds - (time.monotonic() - started)))
        return verdict(soak, seen, port, serve, serve_log)
    finally:
        done.set()
        if serve is not None:
            serve.terminate()
            serve.wait(30)
        cp.stop()


def verdict(
    soak: Soak, seen: Seen, port: int, serve: subprocess.Popen[bytes], serve_log: Path
) -> int:
    """The table, and 0 only if every check passed."""
    mb = 2**20
    second = [r for t, r in seen.rss if 60 <= t < 120]
    last = [r for t, r in seen.rss if t >= seen.rss[-1][0] - 60]
    growth = (statistics.median(last) - statistics.median(second)) / mb
    code, health = get(f"http://127.0.0.1:{port}/healthz")
    metrics = samples(port)
    threads = {
        dict(labels)["thread"]: value
        for (name, labels), value in metrics.items()
        if name == "kubectl_terminating_thread_up"
    }
    relists = metrics.get(("kubectl_terminating_watch_relists_total", ()), 0.0)
    failures = metrics.get(("kubectl_terminating_run_failures_total", ()), 0.0)
    text = serve_log.read_text()
    checks = {
        "memory flat after the first minute": growth <= soak.growth_mb,
        f"every change in /metrics within {soak.soon:.0f} s": not seen.late
        and len(seen.metrics) == 2 * max(1, soak.objects // soak.batch),
        "/healthz 200": code == 200,
        "every thread up": bool(threads) and all(v == 1 for v in threads.values()),
        "serve still running": serve.poll() is None,
        "a watch got 410 Gone and listed again": relists > 0,
    }

    def spread(values: list[float]) -> str:
        if not values:
            return "-"
        return f"median {statistics.median(values):.1f} s, max {max(values):.1f} s"

    rows = [
        ("soak", f"{soak.seconds:.0f} s, {soak.pods} healthy pods, interval {soak.interval}"),
        (
            "faults",
            ", ".join(f"{what} at {at:.0f} s" for at, what in seen.events if "flip" not in what),
        ),
        (
            "RSS at 1 min / 2nd-minute median / last-minute median / max",
            " / ".join(
                f"{v / mb:.0f} MB"
                for v in (
                    next((r for t, r in seen.rss if t >= 60), 0),
                    statistics.median(second),
                    statistics.median(last),
                    max(r for _, r in seen.rss),
                )
            ),
        ),
        ("growth after the first minute", f"{growth:+.1f} MB (at most {soak.growth_mb:.0f})"),
        (
            f"{soak.objects} objects started and stopped, {soak.batch} at once: to /metrics",
            spread(seen.metrics),
        ),
        ("... to /api/v1/findings", spread(seen.pages)),
        ("late changes", ", ".join(seen.late) or "none"),
        ("watch relists (410 Gone)", f"{relists:.0f}"),
        ("failed runs", f"{failures:.0f}"),
        ("runs", f"{metrics.get(('kubectl_terminating_run_duration_seconds_count', ()), 0):.0f}"),
        ("threads", ", ".join(f"{k}={v:.0f}" for k, v in sorted(threads.items()))),
        ("/healthz", f"{code} {health.strip()}"),
        ("watch set up again", f"{text.count('for changes') - 1} times"),
        *((check, "ok" if ok else "FAILED") for check, ok in checks.items()),
    ]
    table = "\n".join(["| what | measured |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)])
    print(table)
    (soak.state / "report.md").write_text(table + "\n")
    # the resident set over time, the faults beside it: a high-water mark and a leak differ
    # in shape, not in the two medians
    marks = iter(sorted(seen.events))
    mark = next(marks, None)
    with open(soak.state / "rss.tsv", "w") as series:
        for at, value in seen.rss:
            what = ""
            while mark is not None and mark[0] <= at:
                what, mark = f"{what} {mark[1]}".strip(), next(marks, None)
            series.write(f"{at:.0f}\t{value / mb:.1f}\t{what}\n")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(run(Soak()))
