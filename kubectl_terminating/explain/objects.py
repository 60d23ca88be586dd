"""`kubectl terminating all --explain`: explain a terminating object of any kind.

Namespaces and pods have their own explainers. Any other object is held by its finalizers, by
a webhook that rejects the UPDATE removing them, or by a broken conversion webhook of its CRD.
"""

from __future__ import annotations

from kubectl_terminating import reads
from kubectl_terminating.explain.common import (
    Facts,
    add_warning,
    base_finding,
    grace_period,
    meta,
    run_causes,
    text,
)
from kubectl_terminating.explain.finalizers import finalizer_blockers, try_read
from kubectl_terminating.explain.namespaces import (
    conversion_blocker,
    crd_serves,
    explain_namespace,
    finalizers_of,
)
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.explain.webhooks import labels_of, webhook_blockers
from kubectl_terminating.model import (
    JSON,
    UNKNOWN,
    Blocker,
    Evidence,
    FailedCheck,
    Finding,
    Remedy,
)
from kubectl_terminating.resources import CRDS, Resource
from kubectl_terminating.view import ClusterView


def is_custom(resource: Resource, view: ClusterView) -> bool:
    """Served by a CRD (the CRD list is read anyway, for conversion webhooks)."""
    crds, failure = try_read(lambda: reads.crds(view))
    return failure is None and any(
        crd_serves(c, resource.group, resource.plural) for c in crds or []
    )


def whole_object(obj: JSON, resource: Resource, view: ClusterView) -> tuple[JSON, str | None]:
    """`all` lists metadata only; spec and status (conditions, phase) need the full object.
    A custom resource's explainers read only its metadata (and the whole object themselves if
    ever): no read per object there, which keeps `all` with thousands of them cheap."""
    if "spec" in obj or "status" in obj or is_custom(resource, view):
        return obj, None
    m = meta(obj)
    namespace = text(m.get("namespace")) or None
    whole, failure = try_read(lambda: view.get(resource, namespace, text(m.get("name"))))
    if failure is not None:
        return obj, failure.message
    return whole or obj, None


class ObjectFacts(Facts):
    """An object of any kind but pods and namespaces, with its resource type."""

    def __init__(self, obj: JSON, resource: Resource, view: ClusterView, finding: Finding) -> None:
        super().__init__(obj, view, finding)
        self.resource = resource


def finalizers(facts: ObjectFacts) -> list[Blocker]:
    return finalizer_blockers(facts.obj, facts.resource, facts.view)


def webhooks(facts: ObjectFacts) -> list[Blocker]:
    if not finalizers_of(facts.obj):
        return []  # nothing to UPDATE away
    namespace = text(meta(facts.obj).get("namespace")) or None
    labels = labels_of(facts.obj)
    return webhook_blockers(facts.resource, ["UPDATE"], namespace, facts.view, labels=labels)


def conversion(facts: ObjectFacts) -> list[Blocker]:
    resource = facts.resource
    crds = [facts.obj] if resource == CRDS else reads.crds(facts.view)
    serving = [
        c for c in crds if resource == CRDS or crd_serves(c, resource.group, resource.plural)
    ]
    found = (conversion_blocker(crd, facts.view) for crd in serving)
    return [b for b in found if b is not None]


def nothing_found(facts: ObjectFacts) -> list[Blocker]:
    """Last: no blocker found by the causes before it and no check left undone."""
    finding = facts.finding
    if finding.blockers or finding.warnings:
        return []
    return [
        Blocker(
            UNKNOWN,
            "no finalizer or other blocker found: deletion should complete",
            (Evidence("metadata.finalizers is empty", fields={"finalizers": finding.finalizers}),),
            (Remedy("list it again; if it stays, check the API server's logs"),),
        )
    ]


OBJECT_CAUSES = (grace_period, finalizers, webhooks, conversion, nothing_found)


def explain_object(obj: JSON, resource: Resource, view: ClusterView) -> Finding:
    """The explanation `all --explain` prints for one object of any kind."""
    if resource.is_core("pods"):
        return explain_pod(obj, view)
    whole, warning = whole_object(obj, resource, view)
    if resource.is_core("namespaces"):
        finding = explain_namespace(whole, view)
    else:
        finding = base_finding(whole, view, resource.kind, resource.api_version)
        run_causes(ObjectFacts(whole, resource, view, finding), OBJECT_CAUSES)
    if warning is not None:
        add_warning(finding, FailedCheck(warning))  # the whole object could not be read
    return finding
