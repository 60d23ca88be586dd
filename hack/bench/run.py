"""The benchmark's run: a fresh control plane filled and measured, the report written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from hack.bench.compare import Comparisons
from hack.bench.filler import Filler
from hack.bench.launcher import Launcher
from hack.bench.report import Results, pods_targets, write
from hack.bench.seed import (
    Seeded,
    seed_stuck_pods,
    seed_terminating_namespaces,
    wait_namespaces_settled,
)
from hack.bench.settings import (
    BIGNODE_STUCK,
    CRD_OBJECTS_PER_TYPE,
    STUCK_PER_DEAD_NODE,
    TARGET_PODS,
    VIRTUAL_SHARE,
    Settings,
    log,
)
from tests.harness.controlplane import STATE_FILE, ControlPlane, down
from tests.harness.kubelet import renew_lease
from tests.harness.users import binding_body


class Bench:
    def __init__(self, settings: Settings, launcher: Launcher) -> None:
        self.settings = settings
        self.cluster_dir = settings.state / "cluster"
        self.home = settings.state / "home"  # kubectl's discovery cache lives in ~/.kube/cache
        self.cp: ControlPlane | None = None
        self.results = Results()
        self.compare = Comparisons(launcher, settings, self.results)

    def start(self) -> ControlPlane:
        stopped = down(self.cluster_dir)  # what an earlier BENCH_KEEP=1 run left running
        if stopped:
            log(f"stopped {len(stopped)} processes a BENCH_KEEP=1 run left running")
        shutil.rmtree(self.settings.state, ignore_errors=True)
        self.settings.state.mkdir(parents=True)
        self.home.mkdir()
        started = time.monotonic()
        self.cp = ControlPlane(self.cluster_dir, die_with_parent=not self.settings.keep)
        self.cp.start()
        log(f"control plane up in {time.monotonic() - started:.1f}s at {self.cp.server}")
        return self.cp

    def stop(self) -> None:
        if self.cp is None:
            return
        if self.settings.keep:
            state = {
                "pids": self.cp.pids,
                "server": self.cp.server,
                "kubeconfig": str(self.cp.kubeconfig_path),
                "binaries_dir": str(self.cp.binaries_dir),
            }
            (self.cluster_dir / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")
            self.cp.detach()
            log(
                f"kept running; KUBECONFIG={self.settings.state / 'kubeconfig'}; stop with "
                ".venv/bin/python -m tests.harness.controlplane down "
                f"--state-dir {self.cluster_dir}"
            )
        else:
            self.cp.stop()
            log("control plane stopped")
        self.cp = None

    def user_kubeconfig(self, cp: ControlPlane) -> Path:
        """A person's credentials: cluster-admin through RBAC, but not system:masters, so
        API Priority and Fairness puts the requests in global-default, not exempt."""
        alice = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
        binding = binding_body("ClusterRole", "bench-alice", "cluster-admin", alice)
        cp.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
        return cp.write_kubeconfig(self.settings.state / "kubeconfig", cp.tokens["alice"])

    def environment(self, cp: ControlPlane) -> dict[str, str]:
        kubeconfig = self.user_kubeconfig(cp)
        env = dict(
            os.environ,
            KUBECONFIG=str(kubeconfig),
            HOME=str(self.home),
            PATH=f"{cp.binaries_dir}:{os.environ.get('PATH', '')}",
        )
        env.pop("NO_COLOR", None)
        return env

    def run(self) -> int:
        s = self.settings
        if not s.binary.exists():
            raise SystemExit(f"BENCH_BIN {s.binary} does not exist")
        if compile_package(s.binary):
            self.results.notes.append(
                "our package compiled to bytecode before timing, as pip installs it"
            )
        if s.outage:
            return self.run_outage(s.outage)
        if s.bignode:
            return self.run_bignode(s.bignode)
        if os.environ.get("BENCH_SCENARIO") == "exporter":
            from hack.bench.exporter import run_exporter, sizes

            return run_exporter(self, sizes(dict(os.environ)))
        cp = self.start()
        env = self.environment(cp)
        kubectl = str(Path(cp.binaries_dir) / "kubectl")
        filler = Filler(cp, s.threads)
        seeded = Seeded()
        fill_started = time.monotonic()
        filler.add_pods(s.sizes[0])  # namespaces for the CRD objects to live in
        seed_app_ns = [f"app-{i:04d}" for i in range(filler.namespaces)]
        filler.add_crds(s.crds, seed_app_ns)
        seed_stuck_pods(cp, filler, seeded)
        seed_terminating_namespaces(filler, seeded, s.namespaces, s.crds)
        # warm kubectl's discovery cache, as any user's ~/.kube/cache would be
        subprocess.run(
            [kubectl, "api-resources", "-o", "name"], env=env, check=True, capture_output=True
        )
        ours = str(s.binary)
        expected_pods = len(seeded.stuck_pods)
        for size in s.sizes:
            filler.add_pods(size)
            wait_namespaces_settled(filler, seeded.terminating_namespaces)
            log(
                f"cluster at {size} pods (+{expected_pods} terminating); fill so far "
                f"{filler.objects} objects in {filler.seconds:.0f}s of requests "
                f"({filler.objects / max(filler.seconds, 1e-9):.0f}/s)"
            )
            self.compare.measure_pods(size, ours, kubectl, env, seeded)
        size = s.sizes[-1]
        if s.namespaces:
            self.compare.measure_namespaces(size, ours, env, seeded)
        self.compare.measure_all(size, ours, env)
        fill_total = time.monotonic() - fill_started
        setup = (
            f"sizes {','.join(map(str, s.sizes))}; M={s.namespaces} terminating namespaces; "
            f"K={s.crds} extra CRD types ({s.crds * CRD_OBJECTS_PER_TYPE} objects); "
            f"{len(seeded.stuck_pods)} terminating pods"
        )
        write(self.results, s, filler, fill_total, setup, pods_targets(self.results), cp)
        return 0

    def run_outage(self, sizes: Sequence[tuple[int, int]]) -> int:
        """Healthy pods, then pods stuck on dead nodes, growing through `sizes`."""
        cp = self.start()
        env = self.environment(cp)
        kubectl = str(Path(cp.binaries_dir) / "kubectl")
        filler = Filler(cp, self.settings.threads)
        started = time.monotonic()
        verdicts: list[str] = []
        for healthy, stuck in sizes:
            filler.add_pods(healthy + len(filler.stuck))
            filler.add_outage(stuck)
            log(f"cluster at {healthy} healthy pods, {stuck} stuck on {filler.dead_nodes} nodes")
            ours = str(self.settings.binary)
            verdicts += self.compare.measure_outage(healthy, stuck, ours, kubectl, env, filler)
        setup = "outage: " + ", ".join(
            f"{stuck} pods stuck on {-(-stuck // STUCK_PER_DEAD_NODE)} dead nodes among "
            f"{healthy} healthy"
            for healthy, stuck in sizes
        )
        write(self.results, self.settings, filler, time.monotonic() - started, setup, verdicts, cp)
        return 0

    def run_bignode(self, sizes: Sequence[int]) -> int:
        """Most pods on one live virtual-kubelet node, BIGNODE_STUCK of them stuck there,
        growing through `sizes`; the node's Lease is renewed as its kubelet would."""
        cp = self.start()
        env = self.environment(cp)
        kubectl = str(Path(cp.binaries_dir) / "kubectl")
        filler = Filler(cp, self.settings.threads)
        node = filler.add_virtual_node()
        renewing = threading.Event()
        renewer = threading.Thread(target=_renew, args=(cp, node, renewing), daemon=True)
        renewer.start()
        started = time.monotonic()
        verdicts: list[str] = []
        try:
            for size in sizes:
                filler.add_pods(size - BIGNODE_STUCK)
                if not filler.stuck:
                    filler.add_stuck([node] * BIGNODE_STUCK)
                log(f"cluster at {size} pods, {VIRTUAL_SHARE}% on {node}, {BIGNODE_STUCK} stuck")
                ours = str(self.settings.binary)
                target = TARGET_PODS.get(size)
                verdicts += self.compare.measure_outage(
                    size - BIGNODE_STUCK,
                    BIGNODE_STUCK,
                    ours,
                    kubectl,
                    env,
                    filler,
                    (target, target),
                    f" on {node}",
                )
        finally:
            renewing.set()
        setup = (
            f"big node: {VIRTUAL_SHARE}% of {', '.join(map(str, sizes))} pods on one live "
            f"virtual-kubelet node, {BIGNODE_STUCK} of them stuck, the rest spread over "
            f"{filler.nodes} nodes"
        )
        write(self.results, self.settings, filler, time.monotonic() - started, setup, verdicts, cp)
        return 0


def compile_package(binary: Path) -> bool:
    """The package behind a Python entry point (a venv's script) compiled to bytecode, as pip
    does when it installs a wheel and PyInstaller when it bundles one: an editable install
    under PYTHONDONTWRITEBYTECODE=1 (this machine's environment) would compile every module
    it imports on every timed run, about 0.1 s no user pays. False for a frozen binary."""
    with binary.open("rb") as handle:
        first = handle.readline(200)
    if not first.startswith(b"#!") or b"python" not in first:
        return False
    python = first[2:].decode().split()[0]
    # -I: the installed package, not one in the working directory
    compiled = "import compileall, os, kubectl_terminating as k; "
    compiled += "compileall.compile_dir(os.path.dirname(k.__file__), quiet=1)"
    subprocess.run([python, "-I", "-c", compiled], check=True)
    return True


def _renew(cp: ControlPlane, node: str, stop: threading.Event) -> None:
    """The node's Lease renewed every 10 s, as a (virtual) kubelet does, until `stop`."""
    while not stop.wait(10):
        renew_lease(cp, node)


def main() -> int:
    settings = Settings.from_env()
    if settings.outage:
        scenario = f"outage (healthy, stuck) {settings.outage}"
    elif settings.bignode:
        scenario = f"big node, sizes {settings.bignode}"
    else:
        scenario = f"sizes {settings.sizes}, M={settings.namespaces}, K={settings.crds}"
    log(f"{scenario}, REPEAT={settings.repeat}, ours {settings.binary}")
    launcher = Launcher()  # first, while this process is still small
    bench = Bench(settings, launcher)

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
    try:
        return bench.run()
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        launcher.close()
        bench.stop()
