"""Start-up benchmark of the single-file executable, side by side with kubectl.

    .venv/bin/python hack/dist-bench-startup.py [--runs N] PATH/TO/kubectl-terminating

Starts an empty test control plane, then runs every command once per round, interleaved, so
machine noise hits all of them alike, and prints the median wall time of each. Also checks,
on the source tree, that `--help` and `--version` import neither `kubernetes` nor `urllib3`.
What `make bench-startup` runs; a benchmark, not a test (target: --help under 0.5 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness.controlplane import ControlPlane  # noqa: E402

HEAVY = ("kubernetes", "urllib3", "yaml")
TARGET_HELP = 0.5


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} exited {result.returncode}: {result.stderr.decode()}")
    return elapsed


def heavy_imports(flag: str) -> list[str]:
    """Top-level packages from HEAVY that `python -m kubectl_terminating FLAG` imports."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kubectl_terminating", flag],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    names = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    return sorted({n.split(".")[0] for n in names if n.split(".")[0] in HEAVY})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    binary = str(args.binary.resolve())

    with tempfile.TemporaryDirectory(prefix="bench-startup-") as state:
        cp = ControlPlane(state)
        cp.start()
        try:
            kubectl = str(cp.binaries_dir / "kubectl")
            env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
            env["KUBECONFIG"] = str(cp.kubeconfig_path)
            cache = ["--cache-dir", str(Path(state) / "kubectl-cache")]
            commands = {
                "kubectl-terminating --help": [binary, "--help"],
                "kubectl-terminating --version": [binary, "--version"],
                "kubectl-terminating pods -A (empty cluster)": [binary, "pods", "-A"],
                "kubectl version --client": [kubectl, "version", "--client"],
                "kubectl get pods -A (empty cluster)": [kubectl, *cache, "get", "pods", "-A"],
            }
            for cmd in commands.values():  # warm-up: page cache, kubectl's discovery cache
                timed(cmd, env)
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.runs):
                for name, cmd in commands.items():
                    times[name].append(timed(cmd, env))
        finally:
            cp.stop()

    width = max(map(len, times))
    print(
        f"\nstart-up, {args.runs} interleaved runs each, {os.cpu_count()} cores "
        f"(binary: {args.binary.stat().st_size / 1e6:.1f} MB)\n"
    )
    print(f"{'COMMAND':<{width}}   MEDIAN    MIN      MAX")
    for name, values in times.items():
        print(
            f"{name:<{width}}   {statistics.median(values):.3f} s  "
            f"{min(values):.3f} s  {max(values):.3f} s"
        )
    help_median = statistics.median(times["kubectl-terminating --help"])
    verdict = "OK" if help_median < TARGET_HELP else "OVER TARGET"
    print(f"\n--help median {help_median:.3f} s, target < {TARGET_HELP} s: {verdict}")
    for flag in ("--help", "--version"):
        found = heavy_imports(flag)
        what = "imports " + ", ".join(found) if found else "imports none of " + ", ".join(HEAVY)
        print(f"python -X importtime -m kubectl_terminating {flag}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
