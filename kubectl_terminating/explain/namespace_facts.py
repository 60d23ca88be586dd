"""What the namespace causes share: the phase of deletion and the content left, read once."""

from __future__ import annotations

from functools import cached_property

from kubectl_terminating.explain.common import Facts, as_dict, list_of
from kubectl_terminating.explain.namespace_content import Content
from kubectl_terminating.explain.namespace_evidence import found_no_content, says_content_remains
from kubectl_terminating.explain.namespace_finalizers import KUBERNETES_FINALIZER
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.view import ClusterView, ContentListing, Discovery

PHASE_UNKNOWN = "phase unknown: the file has no spec"
CONTENT_UNKNOWN = "content not in the file"


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

    @cached_property
    def no_content(self) -> bool:
        """Nothing left, as both the listing and the controller's conditions say. An empty
        listing of only partly known types (a `kubectl get` file) counts only if the
        controller's last pass found nothing either (NamespaceContentRemaining=False)."""
        content = self.content
        if content is None or not content.empty or says_content_remains(self.ns):
            return False
        return content.complete or found_no_content(self.ns)
