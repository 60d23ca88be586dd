"""The benchmark's report: one row per command (medians, ratios to kubectl, targets met),
the targets, the setup; on stdout and in report.md."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from hack.bench.filler import Filler
from hack.bench.measure import Command
from hack.bench.settings import (
    NS_TARGET_TYPES,
    REPO,
    RSS_SIZES,
    TARGET_NS_EXPLAIN,
    TARGET_PODS,
    TARGET_RSS_GROWTH,
    Settings,
    log,
)
from tests.harness.controlplane import ControlPlane


@dataclass
class Row:
    size: int
    label: str
    median: float
    best: float
    runs: int
    ratio: float | None
    rss: float
    requests: str
    found: str
    target: float | None

    @property
    def met(self) -> str:
        if self.target is None or self.ratio is None:
            return ""
        return "yes" if self.ratio <= self.target else "**no**"


def rows_for(
    size: int,
    ours: Command,
    baseline: Command | None,
    others: Sequence[Command],
    target: float | None,
    expect: int | None,
) -> list[Row]:
    rows = []
    base = statistics.median(s.seconds for s in baseline.samples) if baseline else None
    for command in [ours, *([baseline] if baseline else []), *others]:
        median = statistics.median(s.seconds for s in command.samples)
        if command.requests is not None and command.bytes is not None:
            retried = f", {command.retries} retried" if command.retries else ""
            requests = f"{command.requests} ({command.bytes / 1e6:.1f} MB{retried})"
        else:
            requests = "" if command.requests is None else f"{command.requests}"
        found = "" if command.found_count is None else str(command.found_count)
        if expect is not None and found:
            found += f"/{expect}"
        rows.append(
            Row(
                size=size,
                label=command.label,
                median=median,
                best=min(s.seconds for s in command.samples),
                runs=len(command.samples),
                ratio=(median / base) if base and command is not baseline else None,
                rss=max(s.rss_mb for s in command.samples),
                requests=requests,
                found=found,
                target=target if command is ours else None,
            )
        )
    return rows


def markdown(rows: Sequence[Row]) -> str:
    lines = [
        "| pods | command | median s | min s | runs | ratio | peak RSS MB | requests | found"
        " | target | met? |",
        "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.3f}"
        target = "" if r.target is None else f"≤ {r.target:g}"
        lines.append(
            f"| {r.size} | `{r.label}` | {r.median:.2f} | {r.best:.2f} | {r.runs} | {ratio} "
            f"| {r.rss:.0f} | {r.requests} | {r.found} | {target} | {r.met} |"
        )
    return "\n".join(lines)


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pods_requests: dict[int, str] = field(default_factory=dict)  # size -> requests of pods -A
    pods_rss: dict[int, float] = field(default_factory=dict)  # size -> peak RSS MB of pods -A


def pods_targets(results: Results) -> list[str]:
    """Whether `make bench`'s targets were met."""
    lines = []
    for size, target in TARGET_PODS.items():
        row = next((r for r in results.rows if r.size == size and r.target == target), None)
        verdict = (
            "not measured"
            if row is None
            else (f"{row.ratio:.3f} -> {'met' if row.met == 'yes' else 'NOT met'}")
        )
        lines.append(f"- pods -A ≤ {target}x `get pods -A | grep` at {size}: {verdict}")
    ns_row = next((r for r in results.rows if r.target == TARGET_NS_EXPLAIN), None)
    if ns_row is None:
        lines.append(f"- ns X --explain: not measured with {NS_TARGET_TYPES}+ types")
    elif ns_row.ratio is not None:
        lines.append(
            f"- ns X --explain ≤ {TARGET_NS_EXPLAIN}x the recipe: {ns_row.ratio:.3f}"
            f" -> {'met' if ns_row.met == 'yes' else 'NOT met'}"
        )
    small, large = RSS_SIZES
    if small in results.pods_rss and large in results.pods_rss:
        growth = results.pods_rss[large] / results.pods_rss[small]
        lines.append(
            f"- pods -A peak RSS at {large} within {TARGET_RSS_GROWTH}x of {small}: "
            f"{results.pods_rss[large]:.0f} / {results.pods_rss[small]:.0f} MB = {growth:.2f}x"
            f" -> {'met' if growth <= TARGET_RSS_GROWTH else 'NOT met'}"
        )
    else:
        lines.append(f"- pods -A peak RSS at {large} vs {small}: not measured")
    return lines


def write(
    results: Results,
    settings: Settings,
    filler: Filler,
    fill_total: float,
    setup: str,
    verdicts: list[str],
    cp: ControlPlane,
) -> None:
    s = settings
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "kubectl_terminating"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    version = cp.api("GET", "/version").get("gitVersion")
    pod_bytes = pod_json_size(cp)
    lines = [
        f"## kubectl terminating benchmark ({time.strftime('%Y-%m-%d %H:%M')})",
        "",
        f"commit {commit}{' + uncommitted changes in kubectl_terminating/' if dirty else ''}"
        f"; kube-apiserver {version}; {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {platform.python_version()}; "
        f"ours: `{s.binary}`",
        f"{setup}; REPEAT={s.repeat} "
        f"(median; slow recipes stop repeating after {s.budget:.0f}s)",
        f"fill: {filler.objects} objects with {filler.requests} requests in "
        f"{filler.seconds:.0f}s of concurrent creates ({filler.objects / filler.seconds:.0f}"
        f" objects/s, {filler.requests / filler.seconds:.0f} requests/s, "
        f"{s.threads} threads); whole run {fill_total:.0f}s; a pod is "
        f"{pod_bytes / 1000:.1f} kB as JSON with managedFields",
        *results.notes,
        "",
        markdown(results.rows),
        "",
        "ratio: median time over the first kubectl row of the same group. peak RSS: "
        "ru_maxrss from wait4; for a pipeline, the largest single process in it. requests: "
        "ours from `-v 1`, kubectl's from a separate `-v=6` run. found: terminating pods "
        "(or held namespaces) printed / created.",
        "",
        "Targets:",
        *verdicts,
    ]
    lines.append(
        "- pods -A peak RSS per size: "
        + ", ".join(f"{n}: {r:.0f} MB" for n, r in results.pods_rss.items())
    )
    lines.append(
        "- pods -A requests per size: "
        + ", ".join(f"{n}: {r}" for n, r in results.pods_requests.items())
    )
    text = "\n".join(lines) + "\n"
    (s.state / "report.md").write_text(text)
    print(text)
    log(f"report written to {s.state / 'report.md'}")


def pod_json_size(cp: ControlPlane) -> float:
    listed = cp.api("GET", "/api/v1/namespaces/app-0000/pods?limit=20")
    items = listed.get("items") or [{}]
    return sum(len(json.dumps(i, separators=(",", ":"))) for i in items) / len(items)
