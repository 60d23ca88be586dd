"""Rendering of namespace findings, compared with reviewed golden files in tests/golden/namespaces.

Each fixture of tests/fixtures/namespaces is one terminating namespace with what the cluster
held around it, explained over its own view at the fixture's fixed `now`.
UPDATE_GOLDENS=1 rewrites the goldens; review the diff.
"""

from __future__ import annotations

import json
import re

import pytest

from kubectl_terminating.explain.common import base_finding, meta
from kubectl_terminating.explain.namespaces import explain_namespace
from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.render.structured import to_json, to_names
from kubectl_terminating.render.style import Style
from kubectl_terminating.render.table import PrintOptions, namespaces_table, objects_table
from kubectl_terminating.resources import NAMESPACES, PODS, Resource
from tests.unit.builders import NAMESPACES_NOW as NOW
from tests.unit.golden import assert_golden
from tests.unit.nsfixtures import BASE_TYPES, Scenario, resource_of, scenario

# In the order `kubectl terminating ns` lists them: by name.
FIXTURES = sorted(
    [
        "controller-silent",
        "conversion-webhook",
        "discovery-failure",
        "operator-gone",
        "own-finalizers",
        "pods-left",
        "webhook-old-release",
    ],
    key=lambda name: scenario(name).data["namespace"],
)
PLAIN = Style(color=False)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def findings(explain_pods: bool = True) -> list[Finding]:
    """One finding per fixture, as `ns` (explain_pods False) or `ns -o json|--explain` makes it."""
    out = []
    for name in FIXTURES:
        found = scenario(name)
        out.append(explain_namespace(found.namespace, found.view, explain_pods=explain_pods))
    return out


def warnings(found: list[Finding]) -> list[str]:
    return list(dict.fromkeys(w for f in found for w in f.warnings))


def test_fixtures_are_dated_alike() -> None:
    # The goldens' ages are only comparable if every fixture is seen from the same moment.
    assert {scenario(name).data["now"] for name in FIXTURES} == {"2026-03-01T12:00:00Z"}
    assert all(scenario(name).view.now == NOW for name in FIXTURES)


def test_namespaces_table() -> None:
    assert_golden("namespaces/table.txt", namespaces_table(findings(False), PrintOptions()))


def test_namespaces_table_wide() -> None:
    assert_golden(
        "namespaces/table-wide.txt", namespaces_table(findings(False), PrintOptions(wide=True))
    )


def test_namespaces_table_without_headers() -> None:
    # columns as wide as their cells only, as kubectl sizes them when it prints no header
    bare = namespaces_table(findings(False), PrintOptions(no_headers=True)).splitlines()
    full = namespaces_table(findings(False), PrintOptions()).splitlines()
    assert [row.split() for row in bare] == [row.split() for row in full[1:]]
    assert bare[0].startswith("db         60m    2   ")


def test_explain_text() -> None:
    assert_golden("namespaces/explain.txt", explain_text(findings(), PLAIN, json_extras))


def test_explain_text_in_colour_differs_only_by_escapes() -> None:
    coloured = explain_text(findings(), Style(color=True), json_extras)
    assert coloured != explain_text(findings(), PLAIN, json_extras)
    assert SGR.sub("", coloured) == explain_text(findings(), PLAIN, json_extras)


def test_json_list() -> None:
    found = findings()
    out = to_json(found, warnings(found), json_extras)
    assert_golden("namespaces/list.json", out)
    data = json.loads(out)
    assert [i["name"] for i in data["items"]] == [f.name for f in found]
    for item in data["items"]:
        assert item["kind"] == "Namespace" and item["namespace"] is None
        assert isinstance(item["conditions"], list) and isinstance(item["remaining"], list)


def test_names() -> None:
    expected = "".join(f"namespace/{f.name}\n" for f in findings(False))
    assert to_names(findings(False)) == expected


# -- `kubectl terminating all`: every terminating object of the fixtures -----------------------


def resources(found: Scenario) -> dict[str, Resource]:
    types = [*BASE_TYPES, NAMESPACES, *(resource_of(r) for r in found.data.get("resources", []))]
    return {r.kind: r for r in types}


def all_findings(detailed: bool) -> list[Finding]:
    """What `all -A` lists: pods and namespaces always explained, other kinds only when detailed
    (`-o json`; the table shows metadata), sorted by kind, namespace and name (as find_all)."""
    pairs: list[tuple[Resource, JSON, Scenario]] = []
    for name in FIXTURES:
        found = scenario(name)
        by_kind = resources(found)
        pairs.extend(
            (by_kind[obj["kind"]], obj, found)
            for obj in found.data["objects"]
            if meta(obj).get("deletionTimestamp") and obj["kind"] in by_kind
        )
    pairs.sort(key=lambda p: (p[0].kind, meta(p[1]).get("namespace") or "", meta(p[1])["name"]))
    out = []
    for resource, obj, found in pairs:
        if detailed or resource in (PODS, NAMESPACES):
            out.append(explain_object(obj, resource, found.view))
        else:
            out.append(base_finding(obj, found.view, resource.kind, resource.api_version))
    return out


def test_all_objects_table() -> None:
    found = all_findings(detailed=False)
    kinds = {f.kind for f in found}
    assert {"Namespace", "Pod", "Widget", "Challenge"} <= kinds, kinds
    assert_golden(
        "namespaces/all-table.txt", objects_table(found, PrintOptions(all_namespaces=True))
    )


def test_all_objects_table_in_one_namespace() -> None:
    found = [f for f in all_findings(detailed=False) if f.namespace == "payments"]
    table = objects_table(found, PrintOptions())
    assert table.splitlines()[0].split() == ["KIND", "NAME", "TERMINATING", "FINALIZERS", "BLOCKER"]
    assert [line.split()[:2] for line in table.splitlines()[1:]] == [
        ["Widget.widgets.example.com", "checkout"],
        ["Widget.widgets.example.com", "ledger"],
    ]


@pytest.mark.parametrize("kind", ["Widget", "Challenge"])
def test_all_explains_custom_resources_when_detailed(kind: str) -> None:
    detailed = [f for f in all_findings(detailed=True) if f.kind == kind]
    assert detailed and all(f.blockers for f in detailed)
    assert all(f.blockers[0].type in ("finalizer", "webhook") for f in detailed)
