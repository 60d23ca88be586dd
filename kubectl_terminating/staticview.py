"""A ClusterView served from objects already in memory (unit fixtures, saved dumps)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import (
    ENDPOINT_SLICES,
    EVENTS,
    LEASES,
    PODS,
    PVCS,
    SERVICES,
    Resource,
    meta,
    typed,
)
from kubectl_terminating.selectors import parse_field_selector, parse_selector
from kubectl_terminating.view import EVERYTHING, ContentListing, Discovery, ReadFailed, Selectors


class FieldValues(Mapping[str, str]):
    """An object's fields by dotted path (`involvedObject.uid`), for a field selector."""

    def __init__(self, obj: JSON) -> None:
        self._obj = obj

    def __getitem__(self, path: str) -> str:
        value: Any = self._obj
        for key in path.split("."):
            if not isinstance(value, dict) or key not in value:
                raise KeyError(path)
            value = value[key]
        if isinstance(value, dict | list) or value is None:
            raise KeyError(path)
        return str(value)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def matcher(selectors: Selectors) -> Callable[[JSON], bool]:
    """Whether an object matches both selectors, as the API server would say."""
    labels_match = parse_selector(selectors.labels)
    fields_match = parse_field_selector(selectors.fields)

    def match(obj: JSON) -> bool:
        labels = meta(obj).get("labels")
        return labels_match(labels if isinstance(labels, dict) else {}) and fields_match(
            FieldValues(obj)
        )

    return match


def metadata_only(obj: JSON, resource: Resource) -> JSON:
    """What a metadata-only list returns of obj: its metadata, typed as the live view types it
    (resources.typed)."""
    return typed({"metadata": meta(obj)}, resource)


class StaticView:
    # objects someone saved or pasted: an event may name its object without its uid (as
    # `kubectl describe` prints them), so reads.events_named may match it (explain/events.py)
    in_memory = True

    def __init__(
        self,
        objects: Iterable[JSON],
        now: datetime,
        discovery: Discovery | None = None,
        unreadable: dict[str, str] | None = None,
        content: dict[str, list[ContentListing]] | None = None,
        undated: bool = False,
    ) -> None:
        """unreadable maps a kind ("Node") to why it could not be read; content optionally
        overrides namespace_content per namespace (as listed at capture time); undated: now is
        only the newest timestamp of a file without capture time (view.undated)."""
        self._now = now
        self.undated = undated
        self._by_kind: dict[str, list[JSON]] = defaultdict(list)
        for obj in objects:
            self._by_kind[str(obj.get("kind", ""))].append(obj)
        self._discovery = discovery or Discovery(resources=[r for r in _KNOWN if r.namespaced])
        self._unreadable = dict(unreadable or {})
        self._content = content

    @property
    def now(self) -> datetime:
        return self._now

    # -- ClusterView -----------------------------------------------------------------------
    def _all(self, resource: Resource) -> list[JSON]:
        reason = self._unreadable.get(resource.kind)
        if reason is not None:
            raise ReadFailed(resource.qualified, reason)
        return self._by_kind.get(resource.kind, [])

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        for obj in self._all(resource):
            m = meta(obj)
            if m.get("name") == name and (namespace is None or m.get("namespace") == namespace):
                return obj
        return None

    def discovery(self) -> Discovery:
        return self._discovery

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        """Metadata only, as the live view lists content (PartialObjectMetadata): code that
        reads a spec or status here would read nothing on a live cluster, and so here."""
        if self._content is not None and namespace in self._content:
            return [
                ContentListing(
                    c.resource, tuple(metadata_only(i, c.resource) for i in c.items), c.error
                )
                for c in self._content[namespace]
            ]
        listings = []
        for resource in self._discovery.resources:
            if not resource.namespaced:
                continue
            reason = self._unreadable.get(resource.kind)
            if reason is not None:
                listings.append(ContentListing(resource=resource, error=reason))
                continue
            items = tuple(metadata_only(i, resource) for i in self.list(resource, namespace))
            if items:
                listings.append(ContentListing(resource=resource, items=items))
        return listings

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        match = matcher(selectors)
        return [
            obj
            for obj in self._all(resource)
            if (namespace is None or meta(obj).get("namespace") == namespace) and match(obj)
        ]


# The namespaced types a StaticView without discovery lists for namespace content.
_KNOWN = (PODS, EVENTS, SERVICES, PVCS, LEASES, ENDPOINT_SLICES)
