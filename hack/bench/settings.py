"""The benchmark's sizes, targets and environment variables (see hack/bench/__init__.py)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SIZES = (2000, 5000, 20000)
PODS_PER_NAMESPACE = 100
PODS_PER_NODE = 50
APPS_PER_NAMESPACE = 5
CRD_OBJECTS_PER_TYPE = 3
GROUP_SIZE = 5  # CRD kinds per API group
STUCK_COPIES = 3  # each stuck-pod scenario this many times, each in its own namespace
STUCK_SCENARIOS = (  # (function in tests/harness/scenarios.py, short name)
    ("pod_on_missing_node", "missing"),
    ("pod_on_dead_node", "dead"),
    ("pod_on_silent_node", "silent"),
    ("pod_with_running_containers", "hung"),
    ("pod_on_full_disk", "disk"),
    ("pod_with_exec_hang", "exec"),
    ("pod_with_unreclaimed_volume", "vol"),
    ("pod_with_unregistered_driver", "csi"),
    ("pod_with_failing_detach", "detach"),
    ("pod_with_finalizer", "fin"),
    ("pod_with_job_tracking_finalizer", "job"),
    ("pod_with_foreground_dependents", "fg"),
    ("pod_blocked_by_webhook", "wh"),
    ("pod_in_grace_period", "grace"),
)
# ratio to `get pods -A | grep`, in every topology (spread, and one big node: bench-bignode)
TARGET_PODS = {5000: 0.25, 20000: 0.25, 50000: 0.1}
# The mass outage: (healthy, stuck) -> targets of `pods -A` and of `pods -A --summary`.
OUTAGE_SIZES = ((20000, 2000), (50000, 20000))
# 5000:2000, about 7,000 pods, is where kubectl's own list is still quick (issue 46)
TARGET_OUTAGE = {(5000, 2000): (0.3, 0.3), (20000, 2000): (0.3, 0.2), (50000, 20000): (0.2, 0.2)}
STUCK_PER_DEAD_NODE = 100
# One virtual-kubelet node holding most pods (make bench-bignode): VIRTUAL_SHARE percent of the
# pods, and BIGNODE_STUCK stuck pods among them on that live node.
BIGNODE_SIZES = (5000, 50000)
VIRTUAL_SHARE = 90
BIGNODE_STUCK = 5
TARGET_NS_EXPLAIN = 0.05
NS_TARGET_TYPES = 120  # ns X --explain's target holds "with ~130 resource types"
TARGET_RSS_GROWTH = 1.5  # peak RSS of pods -A at RSS_SIZES[1] / at RSS_SIZES[0]
RSS_SIZES = (2000, 20000)


@dataclass
class Settings:
    sizes: tuple[int, ...]
    namespaces: int  # M
    crds: int  # K
    repeat: int
    binary: Path
    state: Path
    threads: int
    budget: float
    json_max: int
    keep: bool
    outage: tuple[tuple[int, int], ...] | None  # BENCH_SCENARIO=outage: (healthy, stuck)
    bignode: tuple[int, ...] | None = None  # BENCH_SCENARIO=bignode: pod counts

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Settings:
        if env.get("BENCH_SIZES"):
            sizes = _sizes(env["BENCH_SIZES"])
        elif env.get("N"):
            top = int(env["N"])
            sizes = (*[s for s in DEFAULT_SIZES if s < top], top)
        else:
            sizes = DEFAULT_SIZES
        binary = Path(env.get("BENCH_BIN") or REPO / ".venv" / "bin" / "kubectl-terminating")
        return cls(
            sizes=sizes,
            namespaces=int(env.get("M") or 20),
            crds=int(env.get("K") or 100),
            repeat=max(1, int(env.get("REPEAT") or 5)),
            binary=binary.resolve(),
            state=Path(env.get("BENCH_DIR") or REPO / ".bench").resolve(),
            threads=int(env.get("BENCH_THREADS") or 16),
            budget=float(env.get("BENCH_BUDGET") or 90),
            json_max=int(env.get("BENCH_JSON_MAX") or 20000),
            keep=env.get("BENCH_KEEP", "") not in ("", "0"),
            outage=cls.outage_sizes(env) if env.get("BENCH_SCENARIO") == "outage" else None,
            bignode=(
                _sizes(env.get("BIGNODE_SIZES") or ",".join(map(str, BIGNODE_SIZES)))
                if env.get("BENCH_SCENARIO") == "bignode"
                else None
            ),
        )

    @staticmethod
    def outage_sizes(env: Mapping[str, str]) -> tuple[tuple[int, int], ...]:
        if not env.get("OUTAGE_SIZES"):
            return OUTAGE_SIZES
        pairs = [p.split(":") for p in env["OUTAGE_SIZES"].split(",") if p.strip()]
        return tuple(sorted((int(healthy), int(stuck)) for healthy, stuck in pairs))


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(sorted({int(s) for s in text.split(",") if s.strip()}))


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
