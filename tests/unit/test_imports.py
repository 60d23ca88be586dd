"""The floors of the package: a module imports only from its own floor or those below, and no
import cycle closes, counting the imports made inside functions and those made only for the
type checker (a type-only cycle is a knot all the same: what a module needs should sit below
it). An AST walk over every module; a new module gets its floor here."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "kubectl_terminating"

# Lowest first. Within a floor modules may import one another (never in a cycle).
FLOORS: tuple[tuple[str, ...], ...] = (
    # what every floor may read: the blocker table, errors, times, types, terminal safety
    (
        "kubectl_terminating",
        "causes",
        "errors",
        "timeutil",
        "resources",
        "terminal",
        "bounded",
        "catalogue",
    ),
    (
        "model",
        "selectors",
        "kubeconfig",
        "credential_policy",
        "options",
        "nodeanswers",
        "nodeaccess",
    ),
    ("view", "proxy", "socks", "gather"),
    ("client", "reads", "source", "staticview", "discovery", "nodehttp"),
    # where terminating objects come from: no explainer, no renderer
    ("find", "live", "snapshot", "nodeproxy"),
    ("explain",),
    # renderers take findings and what the registry says of them as data
    ("summary", "render", "nodeevidence"),
    ("kinds",),
    # the hub's inventory is read through a connection (--cluster-profiles)
    ("connection", "clusterprofiles"),
    ("run", "dump", "completion", "typelist"),
    # the layers above one run: several contexts, watching (fix --wait watches)
    ("fleet", "watch", "preflight"),
    # fix --wait watches, and so does serve (runs as soon as a watch sees a change); agents
    # answers with the commands' own runs (commands, fix)
    ("fix", "commands", "exporter", "agents"),
    ("cli", "__main__"),
)
FLOOR = {name: level for level, names in enumerate(FLOORS) for name in names}


def _unit(module: str) -> str:
    """A module's name in FLOORS: a subpackage (explain, render, fix) is one unit."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of the package in the file, inside functions and
    `if TYPE_CHECKING:` too."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                yield node.lineno, name if name in modules else node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)


def _graph() -> dict[str, dict[str, int]]:
    modules = _modules()
    return {
        name: {
            target: line
            for line, target in _imports(path, modules)
            if target.split(".")[0] == "kubectl_terminating" and target != name
        }
        for name, path in modules.items()
    }


def test_every_module_has_a_floor() -> None:
    assert {_unit(m) for m in _modules()} - set(FLOOR) == set()


def test_no_module_imports_from_a_higher_floor() -> None:
    upward = [
        f"{module}:{line} imports {target}"
        for module, targets in _graph().items()
        for target, line in targets.items()
        if FLOOR.get(_unit(target), 0) > FLOOR.get(_unit(module), 0)
    ]
    assert upward == []


def _cycle(graph: dict[str, dict[str, int]]) -> list[str]:
    """One import cycle, or [] (a depth-first search for a back edge)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in graph.get(module, {}):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_import_cycle_type_only_imports_included() -> None:
    assert _cycle(_graph()) == []


@pytest.mark.parametrize(
    ("graph", "cycle"),
    [
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {}}, []),
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}, ["a", "b", "c", "a"]),
    ],
)
def test_the_cycle_search_finds_one(graph: dict[str, dict[str, int]], cycle: list[str]) -> None:
    assert _cycle(graph) == cycle
