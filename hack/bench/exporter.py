"""`make bench-exporter`: the memory and CPU of `serve` on a filled control plane.

Fills HEALTHY pods, the stuck-pod scenarios of tests/harness/scenarios.py and STUCK pods on dead
nodes (EXPORTER_SIZES=healthy:stuck, default 20000:2000), then runs `serve` as the bench's
user for EXPORTER_RUNS runs (default 5) at EXPORTER_INTERVAL (default 10s), sampling its
resident memory from /proc every 0.2 s, and reads its own metrics: run durations, CPU seconds
(process_cpu_seconds_total) and what it found. The table goes to stderr and report.md.
EXPORTER_BINS=A,B,... measures each of those executables in turn on the same filled cluster
(before and after a change: a run of an older tree is `PYTHONPATH=TREE python -m
kubectl_terminating "$@"` in a small script).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families

from hack.bench.filler import Filler
from hack.bench.seed import Seeded, seed_stuck_pods
from hack.bench.settings import log
from tests.harness.controlplane import free_port

if TYPE_CHECKING:
    from hack.bench.run import Bench

DEFAULT_SIZES = ((20000, 2000),)


def sizes(env: dict[str, str]) -> tuple[tuple[int, int], ...]:
    if not env.get("EXPORTER_SIZES"):
        return DEFAULT_SIZES
    pairs = [p.split(":") for p in env["EXPORTER_SIZES"].split(",") if p.strip()]
    return tuple(sorted((int(healthy), int(stuck)) for healthy, stuck in pairs))


@dataclass
class Observed:
    healthy: int
    stuck: int
    binary: str = ""
    runs: list[float] = field(default_factory=list)  # seconds per run
    cpu_seconds: float = 0.0
    rss_peak: int = 0  # bytes
    rss_idle: int = 0  # between runs, at the end
    found: float = 0.0  # stuck objects it reports
    requests: float = 0.0  # of the last run

    def row(self) -> str:
        runs = len(self.runs)
        median = statistics.median(self.runs)
        return (
            f"| {self.binary} | {self.healthy:,} + {self.stuck:,} | {runs} | {median:.2f} s | "
            f"{self.cpu_seconds / runs:.2f} s | {self.rss_peak / 2**20:.0f} MB | "
            f"{self.rss_idle / 2**20:.0f} MB | {self.found:,.0f} | {self.requests:,.0f} |"
        )


HEADER = (
    "| serve | healthy + stuck pods | runs | run (median) | CPU per run | peak RSS "
    "| RSS between runs | stuck reported | requests per run |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def scrape(port: int) -> dict[str, float]:
    """Each sample's name (labels summed over) and value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    return values


def observe(binary: Path, env: dict[str, str], workdir: Path, healthy: int, stuck: int) -> Observed:
    runs = int(os.environ.get("EXPORTER_RUNS") or 5)
    interval = os.environ.get("EXPORTER_INTERVAL") or "10s"
    port = free_port()
    seen = Observed(healthy, stuck, str(binary))
    label = binary.parent.name if binary.name == "kubectl-terminating" else binary.name
    with open(workdir / f"serve-{label}-{healthy}-{stuck}.log", "wb") as log_file:
        proc = subprocess.Popen(
            [
                str(binary),
                "serve",
                f"--metrics-bind-address=127.0.0.1:{port}",
                "--interval",
                interval,
            ],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
        try:
            metrics: dict[str, float] = {}
            while metrics.get("kubectl_terminating_run_duration_seconds_count", 0) < runs:
                if proc.poll() is not None:
                    raise RuntimeError(f"serve exited {proc.returncode}: see {log_file.name}")
                seen.rss_peak = max(seen.rss_peak, rss(proc.pid))
                time.sleep(0.2)
                try:
                    metrics = scrape(port)
                except OSError:
                    continue
                done = int(metrics.get("kubectl_terminating_run_duration_seconds_count", 0))
                if done > len(seen.runs):  # the histogram has the sum; runs come one at a time
                    total = metrics["kubectl_terminating_run_duration_seconds_sum"]
                    seen.runs.append(total - sum(seen.runs))
                    log(f"  run {done}: {seen.runs[-1]:.2f}s, RSS {rss(proc.pid) / 2**20:.0f} MB")
            seen.rss_idle = rss(proc.pid)
            seen.cpu_seconds = metrics["process_cpu_seconds_total"]
            seen.found = metrics.get("kubectl_terminating_stuck_objects", 0.0)
            seen.requests = metrics.get("kubectl_terminating_scrape_requests", 0.0)
        finally:
            proc.terminate()
            proc.wait(30)
    return seen


def run_exporter(bench: Bench, pairs: tuple[tuple[int, int], ...]) -> int:
    """The scenario, on the Bench's control plane (hack/bench/run.py)."""
    cp = bench.start()
    env = bench.environment(cp)
    filler = Filler(cp, bench.settings.threads)
    seeded = Seeded()
    rows: list[Observed] = []
    named = [b for b in (os.environ.get("EXPORTER_BINS") or "").split(",") if b.strip()]
    binaries = [Path(b.strip()) for b in named] or [bench.settings.binary]
    for healthy, stuck in pairs:
        filler.add_pods(healthy + len(filler.stuck))
        if not seeded.stuck_pods:
            seed_stuck_pods(cp, filler, seeded)
        filler.add_outage(stuck)
        log(f"cluster at {healthy} healthy pods, {stuck} stuck on dead nodes")
        for binary in binaries:
            rows.append(observe(binary, env, bench.settings.state, healthy, stuck))
    report = "\n".join(
        [
            f"`serve`, {len(seeded.stuck_pods)} scenario pods besides:",
            "",
            HEADER,
            *(r.row() for r in rows),
        ]
    )
    (bench.settings.state / "report.md").write_text(report + "\n")
    print(report)
    return 0
