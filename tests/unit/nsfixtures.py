"""Shared test data: namespace fixtures (tests/fixtures/namespaces/*.json) as StaticView dumps,
and the clock and custom resource type the finalizer and object tests use.

A fixture holds `now`, the `namespace` to explain, the extra resource types discovery serves
(`resources`), kinds that cannot be read (`unreadable`, kind -> reason) and the `objects`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from kubectl_terminating import reads
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import (
    ENDPOINT_SLICES,
    EVENTS,
    LEASES,
    PODS,
    PVCS,
    SERVICES,
    Resource,
)
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.timeutil import format_time, parse_time
from kubectl_terminating.view import Discovery
from tests.unit.builders import FIXTURES as ALL_FIXTURES
from tests.unit.builders import NAMESPACES_NOW as NOW

FIXTURES = ALL_FIXTURES / "namespaces"
BASE_TYPES = (PODS, EVENTS, SERVICES, PVCS, LEASES, ENDPOINT_SLICES)


def at(seconds: int) -> str:
    """A timestamp `seconds` after NOW (negative: before)."""
    return format_time(NOW + timedelta(seconds=seconds))


@dataclass
class Scenario:
    data: dict[str, Any]
    view: StaticView

    @property
    def namespace(self) -> JSON:
        found = reads.namespace(self.view, self.data["namespace"])
        assert found is not None
        return found


def resource_of(entry: dict[str, Any]) -> Resource:
    return Resource(
        entry["group"],
        entry["version"],
        entry["plural"],
        entry["kind"],
        entry.get("namespaced", True),
    )


def scenario(name: str, **overrides: Any) -> Scenario:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    data.update(overrides)
    now = parse_time(data["now"])
    assert now is not None
    types = [*BASE_TYPES, *(resource_of(r) for r in data.get("resources", []))]
    view = StaticView(
        data["objects"],
        now,
        discovery=Discovery(resources=types),
        unreadable=data.get("unreadable"),
    )
    return Scenario(data, view)
