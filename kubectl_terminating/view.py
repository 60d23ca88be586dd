"""The read-only view of a cluster that the explainers ask for what they need.

Explainers are pure functions over the API's JSON; they get related objects only through
this protocol. The live implementation (live.py) reads lazily and memoises; another one can
serve the same reads from a saved dump.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import Resource


class ReadFailed(Exception):
    """A read the explainer needed could not be made (forbidden, unavailable, timed out).

    Explainers let it propagate: the runner turns it into a warning on the finding
    ("could not read nodes: forbidden") instead of a silent wrong answer.
    """

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"could not read {what}: {reason}")
        self.what = what
        self.reason = reason


@dataclass(frozen=True)
class ContentListing:
    """The objects of one namespaced resource type left in a namespace (metadata only)."""

    resource: Resource
    items: tuple[JSON, ...] = ()
    error: str | None = None  # set when the type could not be listed


@dataclass
class Discovery:
    resources: list[Resource] = field(default_factory=list)
    # group/version -> why discovery of it failed
    failed_groups: dict[str, str] = field(default_factory=dict)
    # False when the types are only guessed from the objects at hand (a `kubectl get` file)
    complete: bool = True


class ClusterView(Protocol):
    """Every cluster read an explainer may make. Methods raise ReadFailed when they cannot."""

    @property
    def now(self) -> datetime:
        """The time ages are computed against (the capture time for a dump)."""
        ...

    def namespace(self, name: str) -> JSON | None: ...

    def pod(self, namespace: str, name: str) -> JSON | None: ...

    def pods(self, namespace: str) -> list[JSON]:
        """Full pod objects of one namespace."""
        ...

    def node(self, name: str) -> JSON | None: ...

    def node_lease(self, node_name: str) -> JSON | None:
        """The node's heartbeat Lease in kube-node-lease."""
        ...

    def leases(self) -> list[JSON]:
        """Every Lease in the cluster (leader election shows which controllers are alive)."""
        ...

    def pvc(self, namespace: str, name: str) -> JSON | None: ...

    def pv(self, name: str) -> JSON | None: ...

    def csi_driver(self, name: str) -> JSON | None: ...

    def csi_node(self, name: str) -> JSON | None: ...

    def volume_attachments(self) -> list[JSON]: ...

    def events_for(self, namespace: str, uid: str) -> list[JSON]:
        """core/v1 Events whose involvedObject.uid is uid."""
        ...

    def webhook_configurations(self) -> list[JSON]:
        """Validating and mutating webhook configurations; each item carries its `kind`."""
        ...

    def service(self, namespace: str, name: str) -> JSON | None: ...

    def endpoint_slices(self, namespace: str, service: str) -> list[JSON]: ...

    def apiservices(self) -> list[JSON]: ...

    def crds(self) -> list[JSON]: ...

    def discovery(self) -> Discovery:
        """Every resource type the server serves (namespaced or not)."""
        ...

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        """Every namespaced, listable type with the objects left in namespace (metadata)."""
        ...

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        """Any object by type and name (owners, dependents)."""
        ...
