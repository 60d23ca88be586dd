"""`serve` under tracemalloc: where its memory goes, by file and line.

    KUBECONFIG=... TRACE_SECONDS=120 TRACE_OUT=trace.txt \
        .venv/bin/python hack/bench/traced_serve.py serve --interval=10s

Runs `kubectl terminating ARGS` in this process with tracemalloc on (25 frames) and,
after TRACE_SECONDS, writes to TRACE_OUT the resident set, the traced total, the top
allocations still held by line, and the same grouped by the thread-level caller that holds
them (the watch loop, the diagnosis loop), then exits. The memory bench (make bench-exporter)
measures the resident set without tracing; this says what makes it up.
"""

from __future__ import annotations

import os
import sys
import threading
import tracemalloc
from pathlib import Path

TOP = 40


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def report(out: Path) -> None:
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    current, peak = tracemalloc.get_traced_memory()
    lines = [
        f"RSS {rss_mb():.0f} MB; traced now {current / 2**20:.1f} MB, peak {peak / 2**20:.1f} MB",
        "",
        "by line (what allocated what is still held):",
    ]
    for stat in snapshot.statistics("lineno")[:TOP]:
        lines.append(f"  {stat.size / 2**20:8.2f} MB {stat.count:8d}  {stat.traceback[0]}")
    # who holds it: the outermost frame of ours in each allocation's stack
    holders: dict[str, int] = {}
    for stat in snapshot.statistics("traceback"):
        ours = [f for f in stat.traceback if "kubectl_terminating" in f.filename]
        where = f"{ours[0].filename.rsplit('/', 2)[-1]}:{ours[0].lineno}" if ours else "other"
        holders[where] = holders.get(where, 0) + stat.size
    lines += ["", "by the outermost frame of ours:"]
    for where, size in sorted(holders.items(), key=lambda kv: -kv[1])[:TOP]:
        lines.append(f"  {size / 2**20:8.2f} MB  {where}")
    out.write_text("\n".join(lines) + "\n")


def main() -> None:
    seconds = float(os.environ.get("TRACE_SECONDS") or 120)
    out = Path(os.environ.get("TRACE_OUT") or "trace.txt")
    tracemalloc.start(25)

    def later() -> None:
        threading.Event().wait(seconds)
        report(out)
        os._exit(0)

    threading.Thread(target=later, daemon=True).start()
    from kubectl_terminating.cli import main as cli

    cli(sys.argv[1:])


if __name__ == "__main__":
    main()
