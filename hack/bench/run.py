"""The benchmark's run: a fresh control plane filled and measured, the report written."""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from hack.bench.filler import Filler
from hack.bench.launcher import Launcher
from hack.bench.measure import (
    PY_FILTER,
    Command,
    count_kubectl_requests,
    held_markers,
    measure,
    shell,
    summarised,
    table_keys,
)
from hack.bench.report import Row, markdown, rows_for
from hack.bench.seed import (
    Seeded,
    seed_stuck_pods,
    seed_terminating_namespaces,
    wait_namespaces_settled,
)
from hack.bench.settings import (
    CRD_OBJECTS_PER_TYPE,
    NS_TARGET_TYPES,
    REPO,
    RSS_SIZES,
    STUCK_PER_DEAD_NODE,
    TARGET_NS_EXPLAIN,
    TARGET_OUTAGE,
    TARGET_PODS,
    TARGET_RSS_GROWTH,
    Settings,
    log,
)
from tests.e2e.controlplane import STATE_FILE, ControlPlane, down


class Bench:
    def __init__(self, settings: Settings, launcher: Launcher) -> None:
        self.settings = settings
        self.launcher = launcher
        self.cluster_dir = settings.state / "cluster"
        self.home = settings.state / "home"  # kubectl's discovery cache lives in ~/.kube/cache
        self.cp: ControlPlane | None = None
        self.rows: list[Row] = []
        self.notes: list[str] = []
        self.pods_requests: dict[int, str] = {}
        self.pods_rss: dict[int, float] = {}

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
                f".venv/bin/python -m tests.e2e.controlplane down --state-dir {self.cluster_dir}"
            )
        else:
            self.cp.stop()
            log("control plane stopped")
        self.cp = None

    def user_kubeconfig(self, cp: ControlPlane) -> Path:
        """A person's credentials: cluster-admin through RBAC, but not system:masters, so
        API Priority and Fairness puts the requests in global-default, not exempt."""
        cp.api(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "bench-alice"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "cluster-admin",
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}
                ],
            },
        )
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
        if s.outage:
            return self.run_outage(s.outage)
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
            self.measure_pods(size, ours, kubectl, env, seeded)
        size = s.sizes[-1]
        if s.namespaces:
            self.measure_namespaces(size, ours, env, seeded)
        self.measure_all(size, ours, env)
        fill_total = time.monotonic() - fill_started
        setup = (
            f"sizes {','.join(map(str, s.sizes))}; M={s.namespaces} terminating namespaces; "
            f"K={s.crds} extra CRD types ({s.crds * CRD_OBJECTS_PER_TYPE} objects); "
            f"{len(seeded.stuck_pods)} terminating pods"
        )
        self.report(filler, fill_total, setup, self.pods_targets(), cp)
        return 0

    def run_outage(self, sizes: Sequence[tuple[int, int]]) -> int:
        """Healthy pods, then pods stuck on dead nodes, growing through `sizes`."""
        cp = self.start()
        env = self.environment(cp)
        kubectl = str(Path(cp.binaries_dir) / "kubectl")
        filler = Filler(cp, self.settings.threads)
        started = time.monotonic()
        targets = []
        for healthy, stuck in sizes:
            filler.add_pods(healthy + len(filler.stuck))
            filler.add_outage(stuck)
            log(f"cluster at {healthy} healthy pods, {stuck} stuck on {filler.dead_nodes} nodes")
            ours = str(self.settings.binary)
            targets += self.measure_outage(healthy, stuck, ours, kubectl, env, filler)
        setup = "outage: " + ", ".join(
            f"{stuck} pods stuck on {-(-stuck // STUCK_PER_DEAD_NODE)} dead nodes among "
            f"{healthy} healthy"
            for healthy, stuck in sizes
        )
        self.report(filler, time.monotonic() - started, setup, targets, cp)
        return 0

    def measure_outage(
        self,
        healthy: int,
        stuck: int,
        ours: str,
        kubectl: str,
        env: dict[str, str],
        filler: Filler,
    ) -> list[str]:
        size = healthy + stuck
        table = Command(
            "ours",
            f"kubectl terminating pods -A ({stuck} stuck)",
            [ours, "pods", "-A", "-v", "1"],
            ours=True,
            expect=stuck,
            exact=set(filler.stuck),
            found=lambda out: len(table_keys(out)),
        )
        summary = Command(
            "summary",
            f"kubectl terminating pods -A --summary ({stuck} stuck)",
            [ours, "pods", "-A", "--summary", "-v", "1"],
            ours=True,
            expect=stuck,
            found=summarised,
        )
        grep = Command(
            "grep",
            f"kubectl get pods -A | grep Terminating ({stuck} stuck)",
            shell(f"{kubectl} get pods -A | grep Terminating"),
            found=lambda out: len(table_keys(out)),
        )
        log(f"measuring the outage: {stuck} stuck among {size} pods")
        measure(self.launcher, [table, grep, summary], env, REPO, self.settings)
        grep.requests = count_kubectl_requests(
            self.launcher,
            shell(f"{kubectl} get pods -A -v=6 2>&1 | grep -v Terminating"),
            env,
            REPO,
        )
        table_target, summary_target = TARGET_OUTAGE.get((healthy, stuck), (None, None))
        rows = rows_for(size, table, grep, [], table_target, stuck)
        rows += rows_for(size, summary, grep, [], summary_target, stuck)[:1]
        self.rows += rows
        self.pods_requests[size] = str(table.requests)
        self.pods_rss[size] = max(x.rss_mb for x in table.samples)
        return [
            f"- {r.label} ≤ {r.target}x `get pods -A | grep` at {healthy} healthy: "
            f"{r.ratio:.3f} -> {'met' if r.met == 'yes' else 'NOT met'}"
            for r in (rows[0], rows[-1])
            if r.target is not None and r.ratio is not None
        ]

    def pods_targets(self) -> list[str]:
        lines = []
        for size, target in TARGET_PODS.items():
            row = next((r for r in self.rows if r.size == size and r.target == target), None)
            verdict = (
                "not measured"
                if row is None
                else (f"{row.ratio:.3f} -> {'met' if row.met == 'yes' else 'NOT met'}")
            )
            lines.append(f"- pods -A ≤ {target}x `get pods -A | grep` at {size}: {verdict}")
        ns_row = next((r for r in self.rows if r.target == TARGET_NS_EXPLAIN), None)
        if ns_row is None:
            lines.append(f"- ns X --explain: not measured with {NS_TARGET_TYPES}+ types")
        elif ns_row.ratio is not None:
            lines.append(
                f"- ns X --explain ≤ {TARGET_NS_EXPLAIN}x the recipe: {ns_row.ratio:.3f}"
                f" -> {'met' if ns_row.met == 'yes' else 'NOT met'}"
            )
        small, large = RSS_SIZES
        if small in self.pods_rss and large in self.pods_rss:
            growth = self.pods_rss[large] / self.pods_rss[small]
            lines.append(
                f"- pods -A peak RSS at {large} within {TARGET_RSS_GROWTH}x of {small}: "
                f"{self.pods_rss[large]:.0f} / {self.pods_rss[small]:.0f} MB = {growth:.2f}x"
                f" -> {'met' if growth <= TARGET_RSS_GROWTH else 'NOT met'}"
            )
        else:
            lines.append(f"- pods -A peak RSS at {large} vs {small}: not measured")
        return lines

    def measure_pods(
        self, size: int, ours: str, kubectl: str, env: dict[str, str], seeded: Seeded
    ) -> None:
        expect = len(seeded.stuck_pods)
        jq = (
            ".items[] | select(.metadata.deletionTimestamp != null) "
            '| .metadata.namespace + "/" + .metadata.name'
        )
        mine = Command(
            "ours",
            "kubectl terminating pods -A",
            [ours, "pods", "-A", "-v", "1"],
            ours=True,
            expect=expect,
            exact=seeded.stuck_pods,
            found=lambda out: len(table_keys(out)),
        )
        grep = Command(
            "grep",
            "kubectl get pods -A | grep Terminating",
            shell(f"{kubectl} get pods -A | grep Terminating"),
            found=lambda out: len(table_keys(out)),
        )
        if shutil.which("jq"):
            label, script = "jq", f"{kubectl} get pods -A -o json | jq -r '{jq}'"
        else:  # no jq here: the same filter in Python
            label = "python"
            script = f"{kubectl} get pods -A -o json | {shlex.quote(sys.executable)} -c {PY_FILTER}"
        as_json = Command(
            "json",
            f"kubectl get pods -A -o json | {label} (deletionTimestamp)",
            shell(script),
            found=lambda out: len(out.split()),
            warm=False,  # slow: its budget caps its runs
        )
        log(f"measuring pods -A at {size} pods")
        # kubectl -o json holds the whole list decoded (5 GB at 20,000 pods), jq the text too:
        # past json_max pods that would run a 24 GB machine out of memory
        with_json = size <= self.settings.json_max
        if not with_json:
            self.notes.append(
                f"`kubectl get pods -A -o json | ...` not run at {size} pods (BENCH_JSON_MAX="
                f"{self.settings.json_max}): its peak RSS grows by about 0.25 GB per 1,000 pods"
            )
        measure(
            self.launcher, [mine, grep, *([as_json] if with_json else [])], env, REPO, self.settings
        )
        grep.requests = count_kubectl_requests(
            self.launcher,
            shell(f"{kubectl} get pods -A -v=6 2>&1 | grep -v Terminating"),
            env,
            REPO,
        )
        as_json.requests = grep.requests  # the same chunked list (limit=500), as JSON
        target = TARGET_PODS.get(size)
        self.rows += rows_for(size, mine, grep, [as_json] if with_json else [], target, expect)
        self.pods_requests[size] = str(mine.requests)
        self.pods_rss[size] = max(x.rss_mb for x in mine.samples)

    def recipe(self, ns: str, verbose: bool = False) -> str:
        v = " -v=6" if verbose else ""
        return (
            f"kubectl api-resources --verbs=list --namespaced -o name{v} "
            f"| xargs -n 1 kubectl get --show-kind --ignore-not-found -n {ns}{v}"
        )

    def measure_namespaces(self, size: int, ours: str, env: dict[str, str], seeded: Seeded) -> None:
        names = seeded.terminating_namespaces
        one = names[0]
        mine = Command(
            "ours-ns",
            f"kubectl terminating ns {one} --explain",
            [ours, "ns", one, "--explain", "-v", "1"],
            ours=True,
            expect=1,
            found=held_markers,
        )
        recipe = Command(
            "recipe",
            f"api-resources | xargs -n 1 kubectl get -n {one}",
            shell(self.recipe(one)),
            found=held_markers,
            warm=False,
        )
        log(f"measuring ns {one} --explain")
        measure(self.launcher, [mine, recipe], env, REPO, self.settings)
        recipe.requests = count_kubectl_requests(
            self.launcher, shell(self.recipe(one, True) + " 2>&1"), env, REPO
        )
        types = self.namespaced_types(env)
        self.notes.append(f"namespaced resource types served: {types}")
        # the target is stated for about 130 types (a real cluster's count): not for fewer
        target = TARGET_NS_EXPLAIN if types >= NS_TARGET_TYPES else None
        self.rows += rows_for(size, mine, recipe, [], target, 1)

        loop = "; ".join(f"{{ {self.recipe(ns)}; }}" for ns in names)
        every = Command(
            "ours-all-ns",
            f"kubectl terminating ns --explain ({len(names)} ns)",
            [ours, "ns", "--explain", "-v", "1"],
            ours=True,
            expect=len(names),
            found=held_markers,
        )
        loops = Command(
            "recipe-loop",
            f"the recipe once per namespace ({len(names)} ns)",
            shell(loop),
            found=held_markers,
            warm=False,
        )
        log(f"measuring ns --explain over {len(names)} namespaces")
        measure(self.launcher, [every, loops], env, REPO, self.settings)
        self.rows += rows_for(size, every, loops, [], None, len(names))

    def namespaced_types(self, env: dict[str, str]) -> int:
        out = subprocess.run(
            ["kubectl", "api-resources", "--verbs=list", "--namespaced", "-o", "name"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return len(out.split())

    def measure_all(self, size: int, ours: str, env: dict[str, str]) -> None:
        mine = Command(
            "ours-all",
            "kubectl terminating all -A",
            [ours, "all", "-A", "-v", "1"],
            ours=True,
            found=lambda out: max(0, len(out.splitlines()) - 1),
        )
        log("measuring all -A")
        measure(self.launcher, [mine], env, REPO, self.settings)
        self.rows += rows_for(size, mine, None, [], None, None)

    def report(
        self, filler: Filler, fill_total: float, setup: str, targets: list[str], cp: ControlPlane
    ) -> None:
        s = self.settings
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
        pod_bytes = self.pod_json_size(cp)
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
            *self.notes,
            "",
            markdown(self.rows),
            "",
            "ratio: median time over the first kubectl row of the same group. peak RSS: "
            "ru_maxrss from wait4; for a pipeline, the largest single process in it. requests: "
            "ours from `-v 1`, kubectl's from a separate `-v=6` run. found: terminating pods "
            "(or held namespaces) printed / created.",
            "",
            "Targets:",
            *targets,
        ]
        lines.append(
            "- pods -A peak RSS per size: "
            + ", ".join(f"{n}: {r:.0f} MB" for n, r in self.pods_rss.items())
        )
        lines.append(
            "- pods -A requests per size: "
            + ", ".join(f"{n}: {r}" for n, r in self.pods_requests.items())
        )
        text = "\n".join(lines) + "\n"
        (s.state / "report.md").write_text(text)
        print(text)
        log(f"report written to {s.state / 'report.md'}")

    def pod_json_size(self, cp: ControlPlane) -> float:
        listed = cp.api("GET", "/api/v1/namespaces/app-0000/pods?limit=20")
        items = listed.get("items") or [{}]
        return sum(len(json.dumps(i, separators=(",", ":"))) for i in items) / len(items)


def main() -> int:
    settings = Settings.from_env()
    log(
        f"sizes {settings.sizes}, M={settings.namespaces}, K={settings.crds}, "
        f"REPEAT={settings.repeat}, ours {settings.binary}"
    )
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
