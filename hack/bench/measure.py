"""The commands the benchmark times, how their answers are checked, and timing them in rounds."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hack.bench.launcher import Launcher, Sample
from hack.bench.settings import Settings, log


@dataclass
class Command:
    key: str
    label: str  # how it reads in the report
    argv: list[str]
    ours: bool = False
    warm: bool = True  # one untimed warm-up run
    expect: int | None = None  # how many answers a correct run prints
    exact: set[str] | None = None  # for pods: exactly these namespace/name rows
    found: Callable[[str], int] = lambda out: 0
    samples: list[Sample] = field(default_factory=list)
    requests: int | None = None
    bytes: int | None = None
    retries: int = 0  # of the last run (each attempt also counts as a request)
    found_count: int | None = None


REQUESTS_RE = re.compile(r"requests: (\d+), bytes: (\d+), retries: (\d+)")


def check(command: Command, sample: Sample) -> None:
    if sample.exit_code not in (0, 1) or (sample.exit_code == 1 and command.ours):
        raise RuntimeError(f"{command.label} exited {sample.exit_code}\n{sample.stderr[-2000:]}")
    command.found_count = command.found(sample.stdout)
    if command.ours:
        match = REQUESTS_RE.search(sample.stderr)
        if match:
            command.requests, command.bytes = int(match.group(1)), int(match.group(2))
            command.retries = int(match.group(3))
        wrong = command.exact is not None and table_keys(sample.stdout) != command.exact
        if wrong or (command.expect is not None and command.found_count != command.expect):
            raise RuntimeError(
                f"{command.label}: found {command.found_count}, expected {command.expect}\n"
                f"{sample.stdout[-3000:]}\n{sample.stderr[-2000:]}"
            )


def measure(
    launcher: Launcher,
    group: Sequence[Command],
    env: dict[str, str],
    cwd: Path,
    settings: Settings,
) -> None:
    """Warm up, then REPEAT interleaved rounds; a command past its time budget stops early."""
    for command in group:
        if command.warm:
            sample = launcher.run(command.argv, env, cwd)
            check(command, sample)
    for _ in range(settings.repeat):
        for command in group:
            spent = sum(s.seconds for s in command.samples)
            if command.samples and spent + command.samples[-1].seconds > settings.budget:
                continue
            sample = launcher.run(command.argv, env, cwd)
            check(command, sample)
            command.samples.append(sample)
        log("  " + "; ".join(f"{c.key} {c.samples[-1].seconds:.2f}s" for c in group if c.samples))


def count_kubectl_requests(
    launcher: Launcher, argv: Sequence[str], env: dict[str, str], cwd: Path
) -> int:
    """One extra, untimed run of a kubectl command line with -v=6: its GET requests."""
    sample = launcher.run(argv, env, cwd)
    return len(re.findall(r'verb="GET"|\bGET https?://', sample.stderr + sample.stdout))


# --- commands ------------------------------------------------------------------------------


def shell(script: str) -> list[str]:
    return ["bash", "-c", script]


PY_FILTER = shlex.quote(
    "import json, sys\n"
    "for p in json.load(sys.stdin)['items']:\n"
    "    m = p['metadata']\n"
    "    if m.get('deletionTimestamp'): print(m['namespace'] + '/' + m['name'])"
)


def table_keys(out: str) -> set[str]:
    """namespace/name from a table whose first two columns are NAMESPACE and NAME (up to the
    blank line before a summary)."""
    keys = set()
    for line in out.partition("\n\n")[0].splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] != "NAMESPACE":
            keys.add(f"{parts[0]}/{parts[1]}")
    return keys


def summarised(out: str) -> int:
    """The pods a --summary counts (its first line: `Summary: 2,000 pods, 1 cause`)."""
    match = re.match(r"Summary: ([\d,]+) pods?", out)
    return int(match[1].replace(",", "")) if match else 0


def held_markers(out: str) -> int:
    return len(set(re.findall(r"held-term-\d+", out)))
