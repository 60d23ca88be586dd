"""The benchmark's table: one row per command, medians, ratios to kubectl, targets met."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from hack.bench.measure import Command


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
