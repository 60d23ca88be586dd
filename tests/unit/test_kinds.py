"""The kind registry, the completed options and the connection's error handling."""

from __future__ import annotations

import copy
import io
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

import pytest

from kubectl_terminating import kinds, kubeconfig
from kubectl_terminating.dump import run_dump
from kubectl_terminating.explain import pods as pods_module
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.options import Options, complete
from kubectl_terminating.run import collect
from kubectl_terminating.source import Found, Scope, Source
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import ClusterView
from tests.unit.builders import PODS_NOW, healthy_cluster, pod_fixture

T = TypeVar("T")
R = TypeVar("R")


def finding(kind: str, api_version: str) -> Finding:
    return Finding(kind, api_version, "default", "x", "u", "", 0, 0, [], node="n1")


def test_a_finding_takes_its_kinds_entry_and_any_other_the_generic_one() -> None:
    assert kinds.of_finding(finding("Pod", "v1")) is kinds.POD
    assert kinds.of_finding(finding("Namespace", "v1")) is kinds.NAMESPACE
    assert kinds.of_finding(finding("Widget", "example.com/v1")) is kinds.ANY
    assert finding("Pod", "v1").to_json(json_extras)["node"] == "n1"


def test_a_custom_kind_named_pod_is_no_pod_in_json() -> None:
    # matched by group and kind, not by the kind's name alone
    assert kinds.of_finding(finding("Pod", "example.com/v1")) is kinds.ANY
    assert "node" not in finding("Pod", "example.com/v1").to_json(json_extras)


@pytest.mark.parametrize(
    ("flags", "context_namespace", "namespace", "all_namespaces"),
    [
        ({}, "team", "team", False),  # the context's namespace
        ({"namespace": "shop"}, "team", "shop", False),  # the flag wins
        ({"all_namespaces": True}, "team", None, True),
        ({"from_file": "f.json"}, None, None, True),  # a snapshot: everything in it
        ({"from_file": "f.json", "namespace": "shop"}, None, "shop", False),
    ],
)
def test_the_namespace_is_settled_once(
    flags: dict[str, object],
    context_namespace: str | None,
    namespace: str | None,
    all_namespaces: bool,
) -> None:
    request = complete(Options(kind="pods", **flags), context_namespace)  # type: ignore[arg-type]
    assert (request.namespace, request.options.all_namespaces) == (namespace, all_namespaces)


@pytest.mark.parametrize(
    ("flags", "detailed"),
    [
        ({}, False),
        ({"output": "wide"}, False),
        ({"explain": True}, True),
        ({"output": "yaml"}, True),
    ],
)
def test_detail_level(flags: dict[str, object], detailed: bool) -> None:
    assert complete(Options(kind="ns", **flags), "x").detailed is detailed  # type: ignore[arg-type]


def test_dump_interrupted_exits_130_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(kubeconfig, "resolve", interrupted)
    err = io.StringIO()
    assert run_dump(Options(kind="all"), "bundle.json", err) == 130
    assert err.getvalue() == ""


class _HandingOver:
    """A source whose finder hands its pods over before it answers, last first, and then
    answers with a fresh copy of the last one (a pod read twice: the later read is kept)."""

    def __init__(self, pods: list[JSON], fresh: JSON) -> None:
        self.pods, self.fresh = pods, fresh
        self.view = StaticView(healthy_cluster(), PODS_NOW)

    def find_pods(
        self,
        scope: Scope,
        node_down: Callable[[str], bool] | None = None,
        found_some: Callable[[list[JSON]], None] | None = None,
    ) -> Found:
        if found_some is not None:
            found_some(list(reversed(self.pods)))
        return Found([*self.pods[:-1], self.fresh], [], [])

    def map(self, function: Callable[[T], R], inputs: Sequence[T]) -> list[R]:
        return [function(x) for x in inputs]


def test_pods_handed_over_early_are_explained_once_each_in_the_answers_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pods the finder hands over as it reads them are explained then, not again; the table
    keeps the finder's order, and a pod read twice is explained as last read."""
    pods = []
    for name in ("a", "b", "c"):
        pod = copy.deepcopy(pod_fixture("pod-web-0"))
        pod["metadata"]["name"] = name
        pods.append(pod)
    fresh = copy.deepcopy(pods[-1])
    fresh["metadata"]["deletionTimestamp"] = "2025-06-01T09:00:00Z"
    explained: list[str] = []
    real = pods_module.explain_pod

    def counted(pod: JSON, view: ClusterView) -> Finding:
        explained.append(pod["metadata"]["name"])
        return real(pod, view)

    monkeypatch.setattr(pods_module, "explain_pod", counted)
    request = complete(Options(kind="pods", all_namespaces=True), None)
    result = collect(request, cast(Source, _HandingOver(pods, fresh)), io.StringIO())
    assert [f.name for f in result.findings] == ["a", "b", "c"]
    assert result.findings[2].deletion_timestamp == "2025-06-01T09:00:00Z"
    assert sorted(explained) == ["a", "b", "c", "c"]  # c again: its later read
