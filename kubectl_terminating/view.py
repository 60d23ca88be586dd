"""The read-only view of a cluster that the explainers ask for what they need."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import Resource


class ReadFailed(Exception):
    """A read the explainer needed could not be made (forbidden, unavailable, timed out).

    Causes let it propagate, or read through Facts.read: either way it becomes one warning on
    the finding ("could not read nodes: forbidden") instead of a silent wrong answer.
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


@dataclass(frozen=True)
class Selectors:
    """A list's label and field selectors, in the API's syntax (`a=b,c!=d`); empty: none."""

    labels: str = ""
    fields: str = ""

    def params(self) -> dict[str, str]:
        """The query parameters of a list request."""
        params = {"labelSelector": self.labels, "fieldSelector": self.fields}
        return {key: value for key, value in params.items() if value}


EVERYTHING = Selectors()

NO_CAPTURE_TIME = "the file has no capture time"


def undated(view: ClusterView) -> bool:
    """The view's clock is only the newest timestamp of a file without capture time: an age
    counted from it is a lower bound, and a deletion at (or after) that timestamp has no known
    age at all (StaticView of a `kubectl get` file; live views and dumps know their time)."""
    return bool(getattr(view, "undated", False))


def in_memory(view: ClusterView) -> bool:
    """The view holds objects saved or pasted (StaticView), not a live API server: events may
    lack their object's uid, and a read costs no request."""
    return bool(getattr(view, "in_memory", False))


class ClusterView(Protocol):
    """The few generic reads every view serves (kubectl's dynamic client is the model).

    The named reads the explainers make (a node, its Lease, the events of an object, webhook
    configurations, ...) are functions over these in reads.py. Methods raise ReadFailed when
    they cannot read; a missing object is None, never an error.
    """

    @property
    def now(self) -> datetime:
        """The time ages are computed against (the capture time for a dump)."""
        ...

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        """One object by type and name (None when it does not exist)."""
        ...

    def discovery(self) -> Discovery:
        """Every resource type the server serves (namespaced or not)."""
        ...

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        """Every namespaced, listable type with the objects left in namespace (metadata)."""
        ...

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        """Full objects of one type, in one namespace (None: every namespace), that match
        selectors; each item carries its kind and apiVersion."""
        ...


ACCESS_REVIEWS = "subjectaccessreviews.authorization.k8s.io"


def may(view: ClusterView, user: str, groups: tuple[str, ...], attributes: JSON) -> bool:
    """Whether `user` (with `groups`) may do what `attributes` says: a SubjectAccessReview,
    which stores nothing. A view that cannot ask (a file) or a user who may not `create
    subjectaccessreviews` raises ReadFailed: the question was not checked."""
    ask = getattr(view, "may", None)
    if ask is None:
        raise ReadFailed(ACCESS_REVIEWS, "not asked: a file cannot answer an access review")
    return bool(ask(user, groups, attributes))
