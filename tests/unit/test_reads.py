"""Every read an explainer makes is of a kind declared once in reads.RELATED (or of the object
explained), so a `kubectl get` file without that kind says "not in the file", `-w` watches it
and the docs list it."""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating import reads
from kubectl_terminating.model import Finding
from kubectl_terminating.resources import Resource
from kubectl_terminating.staticview import StaticView
from tests.unit import test_render_namespaces as namespaces
from tests.unit import test_render_pods as pods
from tests.unit.builders import explain_pod_among, healthy_cluster, pod_fixture, terminated

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN = ROOT / "kubectl_terminating" / "explain"
OWN_READS = ("objects.py", "staticview.py")


def driver_not_on_node() -> Finding:
    """Its driver installed but not registered on the node: CSINode is read too."""
    csinode = pod_fixture("csinode-worker-1")
    csinode["spec"]["drivers"] = []
    pod = terminated(pod_fixture("pod-web-0"), 0, "Completed", "2026-01-01T11:49:45Z")
    return explain_pod_among(pod, [csinode, *healthy_cluster("csinode-worker-1")])


SCENARIOS: tuple[Callable[[], Finding], ...] = (
    driver_not_on_node,
    pods.hung_runtime,
    pods.node_not_ready,
    pods.node_missing,
    pods.volumes_stuck,
    pods.job_behind_webhook,
    pods.network_teardown,
    pods.evil,
)


def test_every_read_the_explainers_make_is_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    read: set[Resource] = set()
    get, list_ = StaticView.get, StaticView.list

    def record(resource: Resource) -> None:
        """A read an explainer makes: not the finder's, nor the view's own (namespace content),
        nor objects.py's of the object explained itself, whatever its kind."""
        callers = [f.filename for f in traceback.extract_stack()]
        caller = Path(callers[-3]).name
        if any(str(EXPLAIN) in c for c in callers) and caller not in OWN_READS:
            read.add(resource)

    def recorded_get(self: StaticView, resource: Resource, *args: Any) -> Any:
        record(resource)
        return get(self, resource, *args)

    def recorded_list(self: StaticView, resource: Resource, *args: Any) -> Any:
        record(resource)
        return list_(self, resource, *args)

    monkeypatch.setattr(StaticView, "get", recorded_get)
    monkeypatch.setattr(StaticView, "list", recorded_list)
    found = [scenario() for scenario in SCENARIOS]
    found += namespaces.findings() + namespaces.all_findings(detailed=True)
    assert len(read) >= 10  # the scenarios do read around
    assert {f.kind for f in found} >= {"Pod", "Namespace", "Widget"}
    undeclared = {r.qualified for r in read} - {r.qualified for r in reads.related_kinds()}
    assert undeclared == set()


def _view_reads(path: Path) -> list[str]:
    """`view.get(...)`/`view.list(...)` calls of a module: a read that bypasses reads.py."""
    tree = ast.parse(path.read_text())
    return [
        f"{path.name}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "list")
        and ast.unparse(node.func.value).endswith("view")
    ]


def test_explainers_read_related_kinds_only_through_their_declaration() -> None:
    # objects.py reads the explained object itself again, whatever its kind
    bypass = [r for p in sorted(EXPLAIN.glob("*.py")) for r in _view_reads(p)]
    assert [r.split(":")[0] for r in bypass] == ["objects.py"]
    # in reads.py, only the two helpers that take a declaration read the view, and a
    # declaration is made only by related(), which records it
    source = ROOT / "kubectl_terminating" / "reads.py"
    assert len(_view_reads(source)) == 2
    assert source.read_text().count("Related(") == 1


def test_each_kind_is_declared_once_with_why() -> None:
    declared = [r.resource.qualified for r in reads.RELATED]
    assert len(declared) == len(set(declared))
    assert all(r.why and "\n" not in r.why for r in reads.RELATED)


def test_the_watch_list_and_the_docs_come_from_the_declarations() -> None:
    assert set(reads.watched_kinds()) <= set(reads.related_kinds())
    docs = (ROOT / "docs" / "explainers.md").read_text()
    for declared in reads.RELATED:
        watched = "yes" if declared.watched else "no"
        row = f"| `{declared.resource.qualified}` | {declared.why} | {watched} |"
        assert row in docs, declared
