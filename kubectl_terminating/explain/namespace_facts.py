"""What the namespace causes share: the phase of deletion and the content left, read once."""

from __future__ import annotations

from functools import cached_property

from kubectl_terminating.explain.common import Facts, as_dict, list_of
from kubectl_terminating.explain.namespace_content import Content
from kubectl_terminating.explain.namespace_evidence import found_no_content, says_content_remains
from kubectl_terminating.explain.namespace_finalizers import KUBERNETES_FINALIZER
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.view import ClusterView, ContentListing, Discovery


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
    def content_phase(self) -> bool:
        """`kubernetes` is still in spec.finalizers: the namespace controller is deleting the
        content, and everything that stalls it can hold the namespace."""
        return KUBERNETES_FINALIZER in list_of(as_dict(self.ns.get("spec")).get("finalizers"))

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
