"""What the namespace causes share: the phase of deletion and the content left, read once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from kubectl_terminating.explain.common import Facts, as_dict, list_of, meta
from kubectl_terminating.model import JSON, FailedCheck, Finding
from kubectl_terminating.view import ClusterView, ContentListing, Discovery

PHASE_UNKNOWN = "phase unknown: the file has no spec"
CONTENT_UNKNOWN = "content not in the file"
# the namespace controller's own finalizer: while in spec.finalizers, it deletes the content
KUBERNETES_FINALIZER = "kubernetes"


def finalizers_of(obj: JSON) -> list[str]:
    return [f for f in list_of(meta(obj).get("finalizers")) if isinstance(f, str) and f]


@dataclass(frozen=True)
class Content:
    """What the namespace still holds, type by type, as listed (metadata only).

    covered: every type the listing looked at (found empty or not); complete: False when the
    types themselves are only partly known (a file of `kubectl get` output), so an empty
    listing proves nothing."""

    listings: tuple[ContentListing, ...]
    covered: frozenset[str] = frozenset()
    complete: bool = True

    @property
    def left(self) -> list[ContentListing]:
        return [c for c in self.listings if c.items]

    @property
    def unlisted(self) -> list[ContentListing]:
        return [c for c in self.listings if c.error]

    @property
    def empty(self) -> bool:
        return not self.left and not self.unlisted

    @property
    def known_empty(self) -> bool:
        return self.empty and self.complete

    @property
    def objects(self) -> list[tuple[ContentListing, JSON]]:
        return [(c, i) for c in self.left for i in c.items]

    def finalizers(self) -> set[str]:
        return {f for _, i in self.objects for f in finalizers_of(i)}

    def warnings(self) -> list[str]:
        return [
            FailedCheck(f"could not list {c.resource.qualified}: {c.error}") for c in self.unlisted
        ]


class NamespaceFacts(Facts):
    """The namespace, its finding, and the content left in it (one listing per type)."""

    # the remaining pods, explained by the stuck-pods cause (the detailed views show them)
    pods: list[Finding]

    def __init__(self, ns: JSON, view: ClusterView, finding: Finding) -> None:
        super().__init__(ns, view, finding)
        self.pods = []

    @property
    def ns(self) -> JSON:
        return self.obj

    @property
    def name(self) -> str:
        return self.finding.name

    @property
    def spec_missing(self) -> bool:
        """A Namespace read from the API always has spec (at least {}): without it the object
        is a partial paste, and its deletion phase is unknown."""
        return not isinstance(self.ns.get("spec"), dict)

    @property
    def content_phase(self) -> bool:
        """`kubernetes` is still in spec.finalizers: the namespace controller is deleting the
        content, and everything that stalls it can hold the namespace. With no spec at all the
        phase is unknown and the controller's current conditions decide, as in this phase."""
        if self.spec_missing:
            return True
        return KUBERNETES_FINALIZER in list_of(as_dict(self.ns.get("spec")).get("finalizers"))

    @property
    def content_known(self) -> bool:
        """The listing covers every type (a live read or a dump), or shows something: an empty
        listing of a `kubectl get` file that holds none of the namespace's content proves
        nothing."""
        content = self.content
        return content is not None and (content.complete or not content.empty)

    @cached_property
    def content(self) -> Content | None:
        """What the namespace still holds; None when it could not be listed (a warning)."""
        if not self.name:
            return None
        listings: list[ContentListing] | None = self.read(
            lambda: self.view.namespace_content(self.name), None
        )
        if listings is None:
            return None
        listed = tuple(listings)
        discovery: Discovery | None = self.read(self.view.discovery, None)
        resources = discovery.resources if discovery is not None else []
        failed = {c.resource.qualified for c in listed if c.error}
        covered = frozenset(r.qualified for r in resources if r.namespaced) - failed
        complete = discovery is not None and discovery.complete
        seen = {c.resource.qualified for c in listed if not c.error}
        return Content(listed, covered | seen, complete)
