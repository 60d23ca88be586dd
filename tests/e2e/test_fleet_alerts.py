"""The shipped alerts evaluated once over many clusters' series (Thanos Ruler, Mimir's ruler:
docs/fleet.md): each alert keeps its cluster. Two clusters whose exporters share a job and an
instance (the same chart, the same pod address in two clusters' networks) go through the real
Prometheus engine of promtool's `test rules`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.harness.prometheus import Parts, parts
from tests.harness.tiers import skip_or_fail

pytestmark = pytest.mark.e2e

RULES = Path(__file__).parents[2] / "deploy" / "chart" / "files" / "prometheus-rules.yaml"
SAME = 'job="kubectl-terminating",instance="10.0.0.5:9101"'
INFO = {
    "finalizer": "finalizer set, no controller removes it",
    "apiservice-unavailable": "APIService unavailable",
}
# cluster -> (main_blocker, kind, namespace) of its one stuck group
STUCK = {
    "eu-1": ("finalizer", "Pod", "shop"),
    "us-1": ("apiservice-unavailable", "Namespace", "team-a"),
}


@pytest.fixture(scope="module")
def promtool() -> Path:
    found = parts()
    if isinstance(found, str):
        skip_or_fail("Prometheus", found)
    assert isinstance(found, Parts)
    return found.promtool


def series() -> list[dict[str, str]]:
    out = []
    for cluster, (blocker, kind, namespace) in STUCK.items():
        group = f'cluster="{cluster}",{SAME},main_blocker="{blocker}",kind="{kind}"'
        group += f',namespace="{namespace}"'
        out += [
            {"series": f"kubectl_terminating_stuck_oldest_seconds{{{group}}}", "values": "1800x10"},
            {"series": f"kubectl_terminating_stuck_objects{{{group}}}", "values": "3x10"},
        ]
        for name, summary in INFO.items():  # every type, as the exporter serves them
            labels = f'cluster="{cluster}",{SAME},main_blocker="{name}"'
            labels += f',summary="{summary}",external_url="https://pages.example"'
            out.append(
                {"series": f"kubectl_terminating_blocker_info{{{labels}}}", "values": "1x10"}
            )
    return out


def expected(value: int, *clusters: str) -> list[dict[str, object]]:
    samples = []
    for cluster in clusters:
        blocker, kind, namespace = STUCK[cluster]
        labels = (
            f'{{cluster="{cluster}",{SAME},main_blocker="{blocker}",kind="{kind}",'
            f'namespace="{namespace}",summary="{INFO[blocker]}",external_url="https://pages.example"}}'
        )
        samples.append({"labels": labels, "value": value})
    return samples


def test_every_alert_keeps_its_cluster_over_many_clusters(promtool: Path, tmp_path: Path) -> None:
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    exprs = {rule["alert"]: rule["expr"] for rule in rules}
    (tmp_path / "rules.yml").write_text(RULES.read_text())
    tests = {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series(),
                "promql_expr_test": [
                    {
                        "expr": exprs["KubernetesObjectsStuckTerminating"],
                        "eval_time": "5m",
                        "exp_samples": expected(1800, "eu-1", "us-1"),
                    },
                    {
                        "expr": exprs["APIServiceHoldsNamespaceDeletion"],
                        "eval_time": "5m",
                        "exp_samples": expected(3, "us-1"),
                    },
                ],
            }
        ],
    }
    path = tmp_path / "tests.yml"
    path.write_text(yaml.safe_dump(tests, sort_keys=False))
    done = subprocess.run(
        [str(promtool), "test", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
