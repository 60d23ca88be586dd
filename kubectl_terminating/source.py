"""Where terminating objects come from, without the HTTP client: the scope of a search, what
a finder returns, and the `Source` protocol that a live cluster (live.py) and a saved snapshot
(snapshot.py) both implement. The snapshot path imports this module, never find.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import Resource
from kubectl_terminating.view import ClusterView

if TYPE_CHECKING:
    from kubectl_terminating.nodeanswers import NodeEvidence, Subject

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Scope:
    namespace: str | None  # None: all namespaces
    names: tuple[str, ...] = ()
    selector: str | None = None


@dataclass
class Found:
    objects: list[JSON]
    missing: list[str]  # names asked for that do not exist
    warnings: list[str]


class Source(Protocol):
    """Where terminating objects come from: a live cluster or a saved snapshot."""

    @property
    def view(self) -> ClusterView: ...

    def find_pods(
        self,
        scope: Scope,
        node_down: Callable[[str], bool] | None = None,
        found_some: Callable[[list[JSON]], None] | None = None,
    ) -> Found:
        """node_down: a node whose pods it says are all held by it (the table, --summary and
        names need no more of them: see find.find_pods); found_some: given the pods as they
        are read, batch by batch, before all are (a source may never call it)."""
        ...

    def find_namespaces(self, names: tuple[str, ...]) -> Found: ...

    def find_all(self, scope: Scope) -> tuple[list[tuple[Resource, JSON]], list[str]]: ...

    def map(self, function: Callable[[T], R], inputs: Sequence[T]) -> list[R]: ...

    def node_evidence(
        self, subjects: Mapping[str, Subject]
    ) -> tuple[Mapping[str, NodeEvidence], list[str]]:
        """--node-evidence: what each node's kubelet said (live: read now; a snapshot: as
        recorded by `dump --node-evidence`); NodeEvidenceRefused when it cannot be had."""
        ...
