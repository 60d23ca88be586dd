"""The kinds `kubectl terminating` has a command for, one entry each: how its terminating
objects are found, explained and tabled, and what its `-o json` items carry beyond the common
fields. Any other kind is served by the generic entry (`all`).

To add a kind: write its finder (a `Source` method), its explainer (explain/), its table
columns (render/table.py), then one `Kind(...)` in KINDS and its name in options.KINDS.

The explainers are imported when first called: a run loads only those of its kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubectl_terminating.render.table import (
    NAMESPACE_COLUMNS,
    OBJECT_COLUMNS,
    POD_COLUMNS,
    Column,
    columns_table,
)
from kubectl_terminating.resources import NAMESPACES, PODS, Resource

if TYPE_CHECKING:
    from kubectl_terminating.model import JSON, Finding
    from kubectl_terminating.options import Request
    from kubectl_terminating.render.table import PrintOptions
    from kubectl_terminating.source import Found, Source
    from kubectl_terminating.view import ClusterView


@dataclass
class Targets:
    """What a kind's finder returns: the terminating objects, each with its resource type."""

    objects: list[tuple[Resource, JSON]]
    missing: list[str]  # names asked for that do not exist, as kubectl words them: pods "x"
    warnings: list[str]


@dataclass(frozen=True)
class Kind:
    command: str  # `kubectl terminating <command>` (options.KINDS)
    resource: Resource | None  # None: the generic entry, any kind
    # (source, request, early): early, when given, may get objects before all are found
    # (a batch as its read ends, in the reading thread), to explain them meanwhile
    find: Callable[[Source, Request, Early | None], Targets]
    # (object, its resource, the view, every detail?) -> its finding
    explain: Callable[[JSON, Resource, ClusterView, bool], Finding]
    columns: Sequence[Column]  # of its table (render/table.py)
    json_extras: Callable[[Finding], JSON]  # the fields of its `-o json` items after the common

    @property
    def namespaced(self) -> bool:
        return self.resource is None or self.resource.namespaced

    @property
    def progress(self) -> str:
        """The label of the `explaining 12/40` line."""
        return "explaining" if self.resource is None else f"explaining {self.command}"

    def table(self, findings: Sequence[Finding], printing: PrintOptions) -> str:
        return columns_table(findings, self.columns, printing, self.namespaced)

    def matches(self, finding: Finding) -> bool:
        r = self.resource
        return r is not None and (r.kind, r.api_version) == (finding.kind, finding.api_version)


def _targets(found: Found, resource: Resource) -> Targets:
    missing = [f'{resource.plural} "{name}"' for name in found.missing]
    return Targets([(resource, obj) for obj in found.objects], missing, found.warnings)


Early = Callable[[list["JSON"]], None]  # Kind.find's hand-over of objects found so far


def _find_pods(source: Source, request: Request, early: Early | None = None) -> Targets:
    from kubectl_terminating.explain.pod_facts import node_down, read_ahead
    from kubectl_terminating.source import Scope

    o, view = request.options, source.view
    # only the table, --summary or names will be shown: pods of a dead node are read brief
    down = (lambda name: node_down(view, name)) if request.brief else None
    found = source.find_pods(Scope(request.namespace, o.names, o.selector), down, early)
    read_ahead(view, found.objects, source.map)
    return _targets(found, PODS)


def _find_namespaces(source: Source, request: Request, _early: Early | None = None) -> Targets:
    return _targets(source.find_namespaces(request.options.names), NAMESPACES)


def _find_any(source: Source, request: Request, _early: Early | None = None) -> Targets:
    from kubectl_terminating.source import Scope

    objects, warnings = source.find_all(Scope(request.namespace, (), request.options.selector))
    return Targets(objects, [], warnings)


def _explain_pod(obj: JSON, _resource: Resource, view: ClusterView, _detailed: bool) -> Finding:
    from kubectl_terminating.explain.pods import explain_pod

    return explain_pod(obj, view)


def _explain_namespace(
    obj: JSON, _resource: Resource, view: ClusterView, detailed: bool
) -> Finding:
    from kubectl_terminating.explain.namespaces import explain_namespace

    # the pods inside are explained only where they are shown (--explain, -o json/yaml)
    return explain_namespace(obj, view, explain_pods=detailed)


def _explain_any(obj: JSON, resource: Resource, view: ClusterView, detailed: bool) -> Finding:
    """Every kind is explained, the table too: its BLOCKER column names the main blocker."""
    from kubectl_terminating.explain.objects import explain_object

    return explain_object(obj, resource, view, detailed)


def _pod_json(finding: Finding) -> JSON:
    return {"node": finding.node, "phase": finding.phase, "containers": list(finding.containers)}


def _no_json(_finding: Finding) -> JSON:
    return {}


POD = Kind("pods", PODS, _find_pods, _explain_pod, POD_COLUMNS, _pod_json)
NAMESPACE = Kind(
    "namespaces", NAMESPACES, _find_namespaces, _explain_namespace, NAMESPACE_COLUMNS, _no_json
)
ANY = Kind("all", None, _find_any, _explain_any, OBJECT_COLUMNS, _no_json)
KINDS = (POD, NAMESPACE, ANY)


def by_command(command: str) -> Kind:
    """The entry of `kubectl terminating <command>` (one of options.KINDS)."""
    return next(k for k in KINDS if k.command == command)


def of_finding(finding: Finding) -> Kind:
    """The entry a finding's kind has, the generic one for any other kind."""
    return next((k for k in KINDS if k.matches(finding)), ANY)


def json_extras(finding: Finding) -> JSON:
    """The fields of the finding's `-o json` item that its kind adds (Finding.to_json)."""
    return of_finding(finding).json_extras(finding)
