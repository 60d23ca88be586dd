"""The kind registry, the completed options and the connection's error handling."""

from __future__ import annotations

import io

import pytest

from kubectl_terminating import kinds, kubeconfig
from kubectl_terminating.dump import run_dump
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import Finding
from kubectl_terminating.options import Options, complete


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
