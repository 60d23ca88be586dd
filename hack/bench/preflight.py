"""`make bench-preflight`: `preflight ns A` next to `ns B --explain` on the same cluster.

A fresh control plane in .bench/preflight with two namespaces of identical content: PREFLIGHT_N
objects (5,000 by default) in 30 types (pods on live nodes, ConfigMaps, Secrets, Services,
ServiceAccounts and 25 custom types). B is then deleted with the controller-manager stopped, so
it is Terminating with all its content: what `ns B --explain` reads is what preflight reads of
A. The two commands run interleaved REPEAT times; the medians and their ratio are printed and
written to .bench/preflight/report.md. Target (issue 31): preflight within 1.5x.

    PREFLIGHT_N=5000 REPEAT=5 make bench-preflight
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from hack.bench import objects
from hack.bench.filler import Filler
from hack.bench.settings import REPO, log
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import pod_body

CUSTOM_TYPES = 25
BUILT_IN = ("pods", "configmaps", "secrets", "services", "serviceaccounts")
NODES = 4


def _body(kind: str, name: str, index: int) -> dict[str, object]:
    if kind == "pods":
        return pod_body(name, node=objects.node_name(index % NODES))
    if kind == "services":
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                "spec": {"ports": [{"port": 80}], "clusterIP": "None"}}  # fmt: skip
    singular = {"configmaps": "ConfigMap", "secrets": "Secret", "serviceaccounts": "ServiceAccount"}
    return {"apiVersion": "v1", "kind": singular[kind], "metadata": {"name": name}}


def fill(filler: Filler, namespaces: list[str], total: int) -> None:
    per_type = total // (len(BUILT_IN) + CUSTOM_TYPES)

    def built_in(kind: str, ns: str) -> int:
        for i in range(per_type):
            filler.call("POST", f"/api/v1/namespaces/{ns}/{kind}", _body(kind, f"{kind}-{i}", i))
        return per_type

    def custom(index: int, ns: str) -> int:
        _, _, plural = objects.crd_names(index)
        for i in range(per_type):
            filler.create_custom(index, ns, objects.custom_object(index, f"{plural}-pf-{i}"))
        return per_type

    work = [partial(built_in, k, ns) for k in BUILT_IN for ns in namespaces]
    work += [partial(custom, c, ns) for c in range(CUSTOM_TYPES) for ns in namespaces]
    filler.run("content", work)


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 3, 4):
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-400:]}")
    return seconds


def main() -> int:
    total = int(os.environ.get("PREFLIGHT_N") or 5000)
    repeat = int(os.environ.get("REPEAT") or 5)
    directory = REPO / ".bench" / "preflight"
    cp = ControlPlane(directory / "cp")
    try:
        cp.start()
        filler = Filler(cp, 8)
        filler.add_nodes(NODES)
        filler.create_namespaces(["big-a", "big-b"])
        filler.add_crds(CUSTOM_TYPES, ["big-a"])  # a few objects of each type in A as well
        fill(filler, ["big-a", "big-b"], total)
        cp.stop_controller_manager()  # B stays Terminating with all of its content
        filler.call("DELETE", "/api/v1/namespaces/big-b")
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
        env.update(KUBECONFIG=str(cp.kubeconfig_path), PYTHONPATH=str(REPO))
        cli = [sys.executable, "-m", "kubectl_terminating"]
        commands = {
            "preflight ns big-a": [*cli, "preflight", "ns", "big-a"],
            "ns big-b --explain": [*cli, "ns", "big-b", "--explain"],
        }
        for argv in commands.values():  # warm the caches of the server
            timed(argv, env)
        samples: dict[str, list[float]] = {key: [] for key in commands}
        for _ in range(repeat):
            for key, argv in commands.items():
                samples[key].append(timed(argv, env))
            log("  " + "; ".join(f"{k} {v[-1]:.2f}s" for k, v in samples.items()))
    finally:
        cp.stop()
    medians = {key: statistics.median(values) for key, values in samples.items()}
    ratio = medians["preflight ns big-a"] / medians["ns big-b --explain"]
    lines = [
        f"# bench-preflight: {total} objects in {len(BUILT_IN) + CUSTOM_TYPES} types "
        f"per namespace, median of {repeat}",
        "",
        "| command | median |",
        "|---|---|",
        *(f"| `{key}` | {seconds:.2f}s |" for key, seconds in medians.items()),
        "",
        f"ratio: {ratio:.2f}x (target: at most 1.5x) {'met' if ratio <= 1.5 else 'NOT met'}",
    ]
    report = "\n".join(lines) + "\n"
    Path(directory / "report.md").write_text(report)
    print(report)
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
