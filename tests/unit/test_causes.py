"""Every blocker type has its row in the causes table (causes.py), and the rest of the code
reads the row: the rank, the summary's name and grouping, while what it holds, `fix`'s
proposer or refusal."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import kubectl_terminating
from kubectl_terminating import causes, model
from kubectl_terminating.causes import (
    CAUSES,
    GRACE_PERIOD,
    NETWORK_TEARDOWN,
    NOT_AUTOMATED,
    TABLE,
    cause_of,
)
from kubectl_terminating.explain.common import Facts, run_causes
from kubectl_terminating.fix.plan import PROPOSERS, Refusal, plan
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.summary import group_by_cause
from tests.unit.test_render_pods import network_teardown

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
ROOT = Path(__file__).resolve().parents[2]
TYPE = re.compile(r"^[a-z]+(-[a-z]+)*$")


def _modules() -> Iterator[tuple[Any, ast.Module]]:
    for info in pkgutil.walk_packages(kubectl_terminating.__path__, "kubectl_terminating."):
        if info.name.endswith("__main__"):
            continue  # runs the CLI
        module = importlib.import_module(info.name)
        yield module, ast.parse(Path(str(module.__file__)).read_text())


def _types_in_code() -> Iterator[tuple[str, str]]:
    """(where, type) of every blocker type the code names: the type of each Blocker(...) it
    builds, when that is a constant, and each `X.type == Y` comparison's constant."""
    for module, tree in _modules():
        for node in ast.walk(tree):
            named: list[ast.expr] = []
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Blocker":
                named = node.args[:1] + [k.value for k in node.keywords if k.arg == "type"]
            elif isinstance(node, ast.Compare) and getattr(node.left, "attr", "") == "type":
                named = list(node.comparators)
            for expr in named:
                value: object = None
                if isinstance(expr, ast.Constant):
                    value = expr.value
                elif isinstance(expr, ast.Name):
                    value = getattr(module, expr.id, None)  # a local variable: None
                if isinstance(value, str):
                    yield f"{module.__name__}:{expr.lineno}", value


def _types_in_goldens() -> Iterator[tuple[str, str]]:
    def walk(value: Any, where: str) -> Iterator[tuple[str, str]]:
        if isinstance(value, dict):
            for blocker in value.get("blockers") or ():
                if isinstance(blocker, dict):
                    yield where, str(blocker.get("type"))
            for item in value.values():
                yield from walk(item, where)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item, where)

    for path in sorted((ROOT / "tests").rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        yield from walk(data, str(path.relative_to(ROOT)))


def test_every_type_used_anywhere_has_a_row() -> None:
    used = [*_types_in_code(), *_types_in_goldens()]
    assert len({t for _, t in used}) >= 15  # the walk does find them
    assert [(where, t) for where, t in used if t not in CAUSES] == []


def test_every_type_constant_has_a_row_and_model_ranks_by_the_table() -> None:
    constants = {v for k, v in vars(causes).items() if k.isupper() and isinstance(v, str)}
    other = {*causes.TEARDOWN, *causes.CONFIDENCES, causes.KUBELET_LOG, causes.RUNTIME_LOG}
    other -= set(CAUSES)
    assert {t for t in constants if TYPE.match(t)} - other == set(CAUSES)
    assert tuple(c.type for c in TABLE) == model.PRIORITY
    assert [model.priority(c.type) for c in TABLE] == list(range(len(TABLE)))


def _type_names(module: Any, node: ast.AST) -> Iterator[str]:
    """The blocker types named, through causes.py's constants, in node's direct parts."""
    parts = [*getattr(node, "args", ()), *(k.value for k in getattr(node, "keywords", ()))]
    parts += list(getattr(node, "elts", ()))
    for expr in parts:
        if isinstance(expr, ast.Name) and getattr(causes, expr.id, None) is not None:
            value = getattr(module, expr.id, None)
            if isinstance(value, str) and value in CAUSES:
                yield value


def _produced() -> set[str]:
    """The types some call outside causes.py passes on (a Blocker, a line's type, ...)."""
    found: set[str] = set()
    for module, tree in _modules():
        if module is causes:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") != "cause_of":
                found.update(_type_names(module, node))
    return found


def test_every_row_is_produced_by_some_cause() -> None:
    # a row no code produces is a type that can never be said
    assert {c.type for c in TABLE} - _produced() == set()


def test_no_hand_kept_set_of_types_outside_the_table() -> None:
    # what varies by type is a field of its row: a set of types elsewhere drifts from it
    kept = [
        f"{module.__name__}:{node.lineno}: {sorted(named)}"
        for module, tree in _modules()
        if module is not causes
        for node in ast.walk(tree)
        if isinstance(node, ast.Set | ast.Tuple | ast.List)
        if (named := set(_type_names(module, node)))
    ]
    assert kept == []


def _type_constant_names() -> set[str]:
    """The names of causes.py's type constants: the first argument of each row of TABLE
    (FINALIZER_ON shares FINALIZER's value but names a kind of subject, not a type)."""
    tree = ast.parse(Path(str(causes.__file__)).read_text())
    return {
        node.args[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Cause"
        if node.args and isinstance(node.args[0], ast.Name)
    }


def test_no_comparison_with_a_type_outside_the_table() -> None:
    # `b.type == CONTAINERS_RUNNING` is a hand-kept decision about one type: a row field says it
    names = _type_constant_names()
    assert {"FINALIZER", "GRACE_PERIOD", "CSI_DRIVER_MISSING"} <= names
    compared = [
        f"{module.__name__}:{node.lineno}: {expr.id}"
        for module, tree in _modules()
        if module is not causes
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for expr in (node.left, *node.comparators)
        if isinstance(expr, ast.Name) and expr.id in names
    ]
    assert compared == []


def _finding(kind: str) -> model.Finding:
    return model.Finding(kind, "v1", "x", None, "u", "", 60, 60, [])


def test_a_cause_returning_a_type_its_row_forbids_fails() -> None:
    def content(_: Facts) -> list[model.Blocker]:
        return [
            model.Blocker(
                causes.CONTENT_REMAINING, "objects left", confidence=causes.LIKELY, basis="listed"
            )
        ]

    with pytest.raises(TypeError, match="content-remaining cannot hold a Pod"):
        run_causes(Facts({}, StaticView([], NOW), _finding("Pod")), [content])
    assert run_causes(Facts({}, StaticView([], NOW), _finding("Namespace")), [content]).blockers


def test_every_blocker_in_the_goldens_is_one_its_row_allows_for_its_object() -> None:
    def items(value: Any) -> Iterator[dict[str, Any]]:
        if isinstance(value, dict):
            if isinstance(value.get("kind"), str) and isinstance(value.get("blockers"), list):
                yield value
            for inner in value.values():
                yield from items(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from items(inner)

    seen = [
        (item["kind"], blocker["type"])
        for path in sorted((ROOT / "tests").rglob("*.json"))
        for item in items(json.loads(path.read_text() or "null"))
        for blocker in item["blockers"]
        if isinstance(blocker, dict) and blocker.get("type") in CAUSES
    ]
    assert len(seen) > 20
    assert [(k, t) for k, t in seen if not cause_of(t).holds(k)] == []


def test_each_row_says_while_what_it_holds_in_one_line() -> None:
    for cause in TABLE:
        line = cause.holds_while
        assert line and "\n" not in line and len(line) <= 120, cause.type
        assert cause.label and "\n" not in cause.label, cause.type


def test_fix_has_a_proposer_exactly_for_the_rows_that_say_so() -> None:
    proposed = {c.type for c in TABLE if c.refusal is None and not c.context}
    assert set(PROPOSERS) == proposed


def test_a_type_from_elsewhere_is_named_after_itself() -> None:
    assert cause_of("new-kind-of-stuck").label == "new kind of stuck"
    assert cause_of("new-kind-of-stuck").refusal == NOT_AUTOMATED
    assert model.priority("new-kind-of-stuck") == model.priority(GRACE_PERIOD)


def test_network_teardown_is_grouped_by_node_and_refused_with_its_reason() -> None:
    first = network_teardown()
    second = replace(first, name="dns-1", uid="uid-dns-1", node="worker-2")
    [group] = group_by_cause([first, second])
    assert (group.type, group.cause) == (NETWORK_TEARDOWN, "pod network teardown failing")
    assert (group.subject_kind, group.subjects) == ("Node", ("worker-1", "worker-2"))
    [section, _] = plan([first, second])
    [refused] = [s for s in section.steps if isinstance(s, Refusal)]
    assert "CNI plugin" in refused.reason
