"""The comparisons the benchmark makes: each times our commands next to kubectl's and adds
rows to the results."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

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
from hack.bench.report import Results, rows_for
from hack.bench.seed import Seeded
from hack.bench.settings import (
    NS_TARGET_TYPES,
    REPO,
    TARGET_NS_EXPLAIN,
    TARGET_OUTAGE,
    TARGET_PODS,
    Settings,
    log,
)


@dataclass
class Comparisons:
    launcher: Launcher
    settings: Settings
    results: Results

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
            self.results.notes.append(
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
        self.results.rows += rows_for(
            size, mine, grep, [as_json] if with_json else [], target, expect
        )
        self.results.pods_requests[size] = str(mine.requests)
        self.results.pods_rss[size] = max(x.rss_mb for x in mine.samples)

    def measure_outage(
        self,
        healthy: int,
        stuck: int,
        ours: str,
        kubectl: str,
        env: dict[str, str],
        filler: Filler,
        targets: tuple[float | None, float | None] | None = None,
        where: str = "",
    ) -> list[str]:
        """`pods -A` and `pods -A --summary` next to `kubectl get pods -A | grep Terminating`
        with `stuck` pods (filler.stuck) among `healthy` ones; `targets` (of the two), by
        default the outage's, `where` the stuck pods are (for the labels)."""
        size = healthy + stuck
        table = Command(
            "ours",
            f"kubectl terminating pods -A ({stuck} stuck{where})",
            [ours, "pods", "-A", "-v", "1"],
            ours=True,
            expect=stuck,
            exact=set(filler.stuck),
            found=lambda out: len(table_keys(out)),
        )
        summary = Command(
            "summary",
            f"kubectl terminating pods -A --summary ({stuck} stuck{where})",
            [ours, "pods", "-A", "--summary", "-v", "1"],
            ours=True,
            expect=stuck,
            found=summarised,
        )
        grep = Command(
            "grep",
            f"kubectl get pods -A | grep Terminating ({stuck} stuck{where})",
            shell(f"{kubectl} get pods -A | grep Terminating"),
            found=lambda out: len(table_keys(out)),
        )
        log(f"measuring {stuck} stuck{where} among {size} pods")
        measure(self.launcher, [table, grep, summary], env, REPO, self.settings)
        grep.requests = count_kubectl_requests(
            self.launcher,
            shell(f"{kubectl} get pods -A -v=6 2>&1 | grep -v Terminating"),
            env,
            REPO,
        )
        if targets is None:
            targets = TARGET_OUTAGE.get((healthy, stuck), (None, None))
        table_target, summary_target = targets
        rows = rows_for(size, table, grep, [], table_target, stuck)
        rows += rows_for(size, summary, grep, [], summary_target, stuck)[:1]
        self.results.rows += rows
        self.results.pods_requests[size] = str(table.requests)
        self.results.pods_rss[size] = max(x.rss_mb for x in table.samples)
        return [
            f"- {r.label} ≤ {r.target}x `get pods -A | grep` at {healthy} healthy: "
            f"{r.ratio:.3f} -> {'met' if r.met == 'yes' else 'NOT met'}"
            for r in (rows[0], rows[-1])
            if r.target is not None and r.ratio is not None
        ]

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
        self.results.notes.append(f"namespaced resource types served: {types}")
        # the target is stated for about 130 types (a real cluster's count): not for fewer
        target = TARGET_NS_EXPLAIN if types >= NS_TARGET_TYPES else None
        self.results.rows += rows_for(size, mine, recipe, [], target, 1)

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
        self.results.rows += rows_for(size, every, loops, [], None, len(names))

    def recipe(self, ns: str, verbose: bool = False) -> str:
        v = " -v=6" if verbose else ""
        return (
            f"kubectl api-resources --verbs=list --namespaced -o name{v} "
            f"| xargs -n 1 kubectl get --show-kind --ignore-not-found -n {ns}{v}"
        )

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
        self.results.rows += rows_for(size, mine, None, [], None, None)
