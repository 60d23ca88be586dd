"""`make bench-fleet`: `--all-contexts` over N real control planes next to each context alone.

Each cluster gets its own size (cluster i: FLEET_PODS*(i+1) healthy pods and FLEET_STUCK*(i+1)
stuck on dead nodes, so one is the slowest); `pods -A` is timed on each context alone, then
`pods -A --all-contexts` on all of them. Targets (the issue's): the fleet run takes at most
1.5x the slowest single run, for N up to the fleet's concurrency (fleet.FLEET_WORKERS); its
peak RSS grows with the stuck objects, not with N.

    FLEET_N=3 FLEET_PODS=1000 FLEET_STUCK=100 REPEAT=3 make bench-fleet
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

import yaml

from hack.bench.filler import Filler
from hack.bench.launcher import Launcher, Sample
from hack.bench.settings import REPO, log
from tests.harness.controlplane import ControlPlane

TARGET_RATIO = 1.5


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def kubeconfig(path: Path, clusters: list[ControlPlane]) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": f"c{i}",
                "cluster": {"server": cp.server, "certificate-authority-data": cp.ca_data_b64},
            }
            for i, cp in enumerate(clusters)
        ],
        "users": [
            {"name": f"c{i}", "user": {"token": cp.admin_token}} for i, cp in enumerate(clusters)
        ],
        "contexts": [
            {"name": f"cluster-{i}", "context": {"cluster": f"c{i}", "user": f"c{i}"}}
            for i in range(len(clusters))
        ],
        "current-context": "cluster-0",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def timed(
    launcher: Launcher, args: list[str], config: Path, repeat: int
) -> tuple[float, float, str]:
    """Median seconds, peak RSS (MiB) and the last stdout of `kubectl terminating args`."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
    env.update(KUBECONFIG=str(config), PYTHONPATH=str(REPO))
    samples: list[Sample] = []
    for _ in range(repeat):
        sample = launcher.run([sys.executable, "-m", "kubectl_terminating", *args], env, REPO)
        if sample.exit_code != 0:
            raise RuntimeError(f"{args} exited {sample.exit_code}: {sample.stderr}")
        samples.append(sample)
    return (
        statistics.median(s.seconds for s in samples),
        max(s.rss_mb for s in samples),
        samples[-1].stdout,
    )


def main() -> int:
    launcher = Launcher()  # first: its children's RSS must not start from ours
    count, pods, stuck = _int("FLEET_N", 3), _int("FLEET_PODS", 1000), _int("FLEET_STUCK", 100)
    repeat = _int("REPEAT", 3)
    state = REPO / ".bench" / "fleet"
    state.mkdir(parents=True, exist_ok=True)
    clusters = [ControlPlane(state / f"cp-{i}") for i in range(count)]
    try:
        for index, cp in enumerate(clusters):
            log(f"cluster-{index}: starting")
            cp.start()
            filler = Filler(cp, 8)
            filler.add_pods(pods * (index + 1))
            filler.add_outage(stuck * (index + 1))
        config = kubeconfig(state / "kubeconfig", clusters)
        rows = []
        for index in range(count):
            seconds, rss, out = timed(
                launcher, ["pods", "-A", "--context", f"cluster-{index}"], config, repeat
            )
            rows.append((f"cluster-{index}", seconds, rss, len(out.splitlines()) - 1))
        fleet, fleet_rss, out = timed(launcher, ["pods", "-A", "--all-contexts"], config, repeat)
        found = len(out.splitlines()) - 1
    finally:
        launcher.close()
        for cp in clusters:
            cp.stop()
    slowest = max(seconds for _, seconds, _, _ in rows)
    lines = [
        f"# bench-fleet: {count} clusters, {pods}*(i+1) healthy and {stuck}*(i+1) stuck pods each, "
        f"median of {repeat}",
        "",
        "| run | lines out (rows + summary) | seconds | peak RSS MiB |",
        "|---|---|---|---|",
        *(f"| `pods -A --context {name}` | {n} | {s:.2f} | {r:.0f} |" for name, s, r, n in rows),
        f"| `pods -A --all-contexts` | {found} | {fleet:.2f} | {fleet_rss:.0f} |",
        "",
        f"all-contexts / slowest single: {fleet / slowest:.2f}x (target <= {TARGET_RATIO}x): "
        + ("met" if fleet <= TARGET_RATIO * slowest else "MISSED"),
    ]
    report = "\n".join(lines) + "\n"
    (state / "report.md").write_text(report)
    print(report)
    return 0 if fleet <= TARGET_RATIO * slowest else 1


if __name__ == "__main__":
    sys.exit(main())
