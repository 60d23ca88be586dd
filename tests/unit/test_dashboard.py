"""The fleet dashboard (deploy/grafana-dashboard.json) and the alerts read only series that
exist: every metric name of their queries is one our /metrics serves or one kube-state-metrics
documents (tests/fixtures/kube-state-metrics/series.txt, vendored with its provenance)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from prometheus_client import generate_latest

from kubectl_terminating.client import Stats
from kubectl_terminating.exporter.metrics import Metrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana-dashboard.json"
RULES = ROOT / "deploy" / "chart" / "files" / "prometheus-rules.yaml"
KSM = ROOT / "tests" / "fixtures" / "kube-state-metrics" / "series.txt"

# PromQL words that are not series: operators, modifiers and what follows them in parentheses
KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}
GROUPING = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)"


def metric_names(expr: str) -> set[str]:
    """The series names an expression reads: identifiers that are neither a function (one
    followed by `(`), a keyword, a label (inside {...} or a grouping clause) nor a string."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings: label values, $variables
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(GROUPING, "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)  # range and subquery durations
    words = re.findall(r"(?<![\w$.])([A-Za-z_:][\w:]*)(\s*\()?", text)
    return {word for word, call in words if not call and word.lower() not in KEYWORDS}


def dashboard_queries() -> list[str]:
    data = json.loads(DASHBOARD.read_text())
    queries = [target["expr"] for panel in data["panels"] for target in panel["targets"]]
    for variable in data["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):  # label_values(METRIC, LABEL): Grafana's, not PromQL
            found = re.fullmatch(r"label_values\((\w+),\s*\w+\)", query["query"])
            assert found, query
            queries.append(found.group(1))
    return queries


def rule_queries() -> list[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def ours() -> set[str]:
    """The names our /metrics serves after a run, each sample's and each family's."""
    metrics = Metrics()
    metrics.record([], 1.0, Stats(), finished_at=1.0)
    text = generate_latest(metrics.registry).decode()
    samples = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line[:1] != "#"}
    families = set(re.findall(r"^# TYPE (\S+)", text, re.MULTILINE))
    return samples | families


def kube_state_metrics() -> set[str]:
    return {line for line in KSM.read_text().splitlines() if line and not line.startswith("#")}


def test_the_name_reader_finds_series_and_nothing_else() -> None:
    expr = (
        'max by (cluster, main_blocker) (a_total{kind="Pod", x=~"$cluster"}[5m] offset 1m)\n'
        "* on (cluster) group_left (summary) b_info > bool 0 or time() - c:rate unless d"
    )
    assert metric_names(expr) == {"a_total", "b_info", "c:rate", "d"}


@pytest.mark.parametrize("expr", [*dashboard_queries(), *rule_queries()])
def test_every_query_reads_series_that_exist(expr: str) -> None:
    names = metric_names(expr)
    assert names, expr
    unknown = names - ours() - kube_state_metrics()
    assert not unknown, f"{sorted(unknown)} in {expr}"


def test_the_dashboard_joins_kube_state_metrics_deletion_series_with_ours() -> None:
    used = set().union(*map(metric_names, dashboard_queries()))
    assert "kube_pod_deletion_timestamp" in used
    assert used & ours() and used & kube_state_metrics()
    # a panel whose one query reads both: the join
    joined = [q for q in dashboard_queries() if {"kube_pod_deletion_timestamp"} < metric_names(q)]
    assert any(metric_names(q) & ours() for q in joined)
