"""The ClusterView over a live API server: lazy, memoised, thread-safe reads; a read that cannot
be made is ReadFailed, a warning, and losing the server stays an error.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from kubectl_terminating.client import ACCEPT_METADATA, Client
from kubectl_terminating.discovery import discover
from kubectl_terminating.errors import ApiError, Forbidden, NotFound, NotServed, Unauthorized
from kubectl_terminating.find import find_all, find_namespaces, find_pods
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import NAMESPACES, Resource, typed
from kubectl_terminating.source import Found, Scope
from kubectl_terminating.view import (
    ACCESS_REVIEWS,
    EVERYTHING,
    ContentListing,
    Discovery,
    ReadFailed,
    Selectors,
)

if TYPE_CHECKING:
    from kubectl_terminating.nodeanswers import NodeEvidence, Subject
    from kubectl_terminating.view import ClusterView

T = TypeVar("T")
R = TypeVar("R")
SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
# A type with at most this many objects in the whole cluster is listed once for every
# namespace being explained; past it one list per namespace moves fewer bytes (pods, events).
ACROSS_LIMIT = 100
_UNREAD = object()  # a memo key not read yet


def reason_of(error: ApiError) -> str:
    if isinstance(error, Forbidden):
        return "forbidden"
    return str(error)


class LiveView:
    def __init__(self, client: Client, now: datetime | None = None) -> None:
        self.client = client
        self._now = now  # None: the server's clock, taken when first asked
        self._values: dict[tuple[Any, ...], Any] = {}
        self._locks: dict[tuple[Any, ...], threading.Lock] = {}
        self._guard = threading.Lock()
        self._content_namespaces: frozenset[str] = frozenset()

    def expect_content(self, namespaces: Collection[JSON]) -> None:
        """The namespaces whose content will be asked for in this run. With two or more, each
        type is first listed cluster-wide in one request of at most ACROSS_LIMIT objects: when
        that is all of them (no `continue`), it answers for every namespace; otherwise, or when
        the user may only list per namespace, that type is listed per namespace. 20
        namespaces and 130 types: about 130 requests plus 20 per large type, not 2,600."""
        self._content_namespaces = frozenset(
            str((ns.get("metadata") or {}).get("name")) for ns in namespaces
        )

    @property
    def now(self) -> datetime:
        """The API server's time when first asked (after the finders' reads, so its Date
        header is known), then the same for the whole run: ages are the server's."""
        with self._guard:
            if self._now is None:
                self._now = self.client.server_now()
            return self._now

    # -- memo -----------------------------------------------------------------------------------
    def _memo(self, key: tuple[Any, ...], load: Callable[[], T]) -> T:
        """load() once per key, even from several threads; a ReadFailed is remembered too."""
        # read already: no lock (an outage's 2,000 pods ask for the same reads 10,000 times)
        value = self._values.get(key, _UNREAD)
        if value is _UNREAD:
            with self._guard:
                lock = self._locks.setdefault(key, threading.Lock())
            with lock:
                if key not in self._values:
                    try:
                        self._values[key] = load()
                    except ReadFailed as failed:
                        self._values[key] = failed
                value = self._values[key]
        if isinstance(value, ReadFailed):
            raise ReadFailed(value.what, value.reason)
        return value  # type: ignore[no-any-return]

    def _read(self, what: str, load: Callable[[], T]) -> T:
        try:
            return load()
        except Unauthorized:
            raise
        except NotServed:
            raise ReadFailed(what, self.not_served()) from None
        except ApiError as error:
            raise ReadFailed(what, reason_of(error)) from None

    def not_served(self) -> str:
        """Why a type cannot be read, with the server's version: it may be served by a newer
        (or older) one, so the check was not possible, and nothing is absent."""
        return self._memo(("not served",), lambda: f"not served by this server ({self._version()})")

    def _version(self) -> str:
        try:
            version = self.client.get("/version", deadline=self.client.check_deadline)
        except ApiError:
            return "version unknown"
        return version_of(version)

    def _get_or_none(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        try:
            return self.client.get(
                resource.path(namespace, name), deadline=self.client.check_deadline
            )
        except NotServed:
            raise ReadFailed(resource.qualified, self.not_served()) from None
        except NotFound:
            return None
        except Unauthorized:
            raise
        except ApiError as error:
            raise ReadFailed(resource.qualified, reason_of(error)) from None

    def _list(
        self,
        resource: Resource,
        namespace: str | None = None,
        params: dict[str, str] | None = None,
        metadata_only: bool = False,
    ) -> list[JSON]:
        key = ("list", resource, namespace, tuple(sorted((params or {}).items())), metadata_only)
        accept = ACCEPT_METADATA if metadata_only else "application/json"

        def load() -> list[JSON]:
            return self._read(
                resource.qualified,
                lambda: [
                    typed(item, resource)
                    for item in self.client.items(
                        resource.path(namespace),
                        params,
                        accept,
                        deadline=self.client.check_deadline,
                    )
                ],
            )

        return self._memo(key, load)

    # -- ClusterView ----------------------------------------------------------------------------
    def discovery(self) -> Discovery:
        # /api and /apis failing (or timing out) is a check not made, like any other read
        return self._memo(
            ("discovery",), lambda: self._read("API discovery", lambda: discover(self.client))
        )

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        return self._memo(("content", namespace), lambda: self._content(namespace))

    def _content(self, namespace: str) -> list[ContentListing]:
        types = [r for r in self.discovery().resources if r.namespaced]

        shared = len(self._content_namespaces) > 1 and namespace in self._content_namespaces

        def list_one(resource: Resource) -> ContentListing:
            try:
                across = self._listed_across(resource) if shared else None
                if across is not None:
                    items = across.get(namespace, [])
                else:
                    items = self._list(resource, namespace, metadata_only=True)
            except ReadFailed as failed:
                return ContentListing(resource=resource, error=failed.reason)
            return ContentListing(resource=resource, items=tuple(items))

        listings = self.client.map(list_one, types)
        return [c for c in listings if c.items or c.error]

    def _listed_across(self, resource: Resource) -> dict[str, list[JSON]] | None:
        """The objects of a type by namespace, from one cluster-wide request; None when the
        type has more than ACROSS_LIMIT objects or may not be listed cluster-wide."""

        def load() -> dict[str, list[JSON]] | None:
            try:
                page = self.client.get(
                    resource.path(None),
                    {"limit": ACROSS_LIMIT},
                    ACCEPT_METADATA,
                    deadline=self.client.check_deadline,
                )
            except Forbidden:  # RBAC may allow it namespace by namespace
                return None
            except Unauthorized:
                raise
            except ApiError as error:
                raise ReadFailed(resource.qualified, reason_of(error)) from None
            if (page.get("metadata") or {}).get("continue"):
                return None
            by_namespace: dict[str, list[JSON]] = defaultdict(list)
            for item in page.get("items") or []:
                if isinstance(item, dict):
                    namespace = (item.get("metadata") or {}).get("namespace")
                    by_namespace[str(namespace)].append(typed(item, resource))
            return by_namespace

        return self._memo(("across", resource), load)

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        return self._memo(
            ("get", resource, namespace, name),
            lambda: self._get_or_none(resource, namespace, name),
        )

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        return self._list(resource, namespace, selectors.params())

    def may(self, user: str, groups: tuple[str, ...], attributes: JSON) -> bool:
        """A SubjectAccessReview (view.may): asked once per question; a refusal to ask is
        remembered for the whole run, so a user without the right is refused once."""
        refused = self._values.get(("review-refused",))
        if isinstance(refused, ReadFailed):
            raise ReadFailed(refused.what, refused.reason)
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": list(groups), "resourceAttributes": attributes},
        }

        def ask() -> bool:
            try:
                _, answer = self.client.create(SAR_PATH, review)
            except Unauthorized:
                raise
            except ApiError as error:
                failed = ReadFailed(ACCESS_REVIEWS, reason_of(error))
                self._values[("review-refused",)] = failed
                raise failed from None
            return (answer.get("status") or {}).get("allowed") is True

        key = ("review", user, groups, tuple(sorted(attributes.items())))
        return self._memo(key, ask)


class LiveSource:
    """Terminating objects found on a live cluster, explained through a LiveView."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.live = LiveView(client)
        self.view: ClusterView = self.live  # what finders and explainers read through
        self.node_evidence_read: dict[str, NodeEvidence] = {}

    def find_pods(
        self,
        scope: Scope,
        node_down: Callable[[str], bool] | None = None,
        found_some: Callable[[list[JSON]], None] | None = None,
    ) -> Found:
        return find_pods(self.client, scope, node_down, found_some)

    def find_namespaces(self, names: tuple[str, ...]) -> Found:
        found = find_namespaces(self.client, names)
        self.live.expect_content(found.objects)
        return found

    def find_all(self, scope: Scope) -> tuple[list[tuple[Resource, JSON]], list[str]]:
        objects, warnings = find_all(self.client, self.view, scope)
        self.live.expect_content([obj for resource, obj in objects if resource == NAMESPACES])
        return objects, warnings

    def map(self, function: Callable[[T], R], inputs: Sequence[T]) -> list[R]:
        return self.client.map(function, inputs)

    def node_evidence(
        self, subjects: Mapping[str, Subject]
    ) -> tuple[Mapping[str, NodeEvidence], list[str]]:
        """--node-evidence: each node's kubelet asked through the node proxy (nodeproxy.py),
        once the user is known to be allowed to."""
        from kubectl_terminating.nodeproxy import NodeProxy

        evidence, warnings = NodeProxy(self.client).read_nodes(subjects)
        self.node_evidence_read.update(evidence)  # what `dump --node-evidence` saves
        return evidence, warnings


def version_numbers(answer: JSON) -> tuple[int, int] | None:
    """(major, minor) from /version: its major and minor, else its gitVersion (a build that
    did not stamp them, as Kubernetes before 1.33 built without its own scripts)."""
    major, minor = (re.sub(r"\D", "", str(answer.get(k, ""))) for k in ("major", "minor"))
    if not (major and minor):  # minor may carry a `+` (managed clusters: "36+")
        found = re.match(r"v?(\d+)\.(\d+)", str(answer.get("gitVersion", "")))
        major, minor = found.groups() if found else ("", "")
    return (int(major), int(minor)) if major and minor else None


def version_of(answer: JSON) -> str:
    """`vX.Y`, as the server's answer to /version says it."""
    numbers = version_numbers(answer)
    return f"v{numbers[0]}.{numbers[1]}" if numbers else "version unknown"
