"""`kubectl terminating all --explain`: explain a terminating object of any kind.

Namespaces and pods have their own explainers. Any other object is held by its finalizers, by
a webhook that rejects the UPDATE removing them, or by a broken conversion webhook of its CRD.
"""

from __future__ import annotations

from kubectl_terminating import reads
from kubectl_terminating.explain.common import (
    Explainer,
    base_finding,
    grace_period_blocker,
    meta,
    run_explainers,
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
from kubectl_terminating.model import JSON, UNKNOWN, Blocker, Evidence, Finding, Remedy
from kubectl_terminating.resources import CRDS, Resource
from kubectl_terminating.view import ClusterView


def is_core(resource: Resource, plural: str) -> bool:
    return resource.group == "" and resource.plural == plural


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


def object_explainers(resource: Resource) -> list[Explainer]:
    def finalizers(obj: JSON, view: ClusterView) -> list[Blocker]:
        return finalizer_blockers(obj, resource, view)

    def webhooks(obj: JSON, view: ClusterView) -> list[Blocker]:
        if not finalizers_of(obj):
            return []  # nothing to UPDATE away
        namespace = text(meta(obj).get("namespace")) or None
        return webhook_blockers(resource, ["UPDATE"], namespace, view, labels=labels_of(obj))

    def conversion(obj: JSON, view: ClusterView) -> list[Blocker]:
        crds = [obj] if resource == CRDS else reads.crds(view)
        serving = [
            c for c in crds if resource == CRDS or crd_serves(c, resource.group, resource.plural)
        ]
        found = (conversion_blocker(crd, view) for crd in serving)
        return [b for b in found if b is not None]

    return [finalizers, webhooks, conversion]


def nothing_found(finding: Finding) -> Blocker:
    return Blocker(
        UNKNOWN,
        "no finalizer or other blocker found: deletion should complete",
        (Evidence("metadata.finalizers is empty", fields={"finalizers": finding.finalizers}),),
        (Remedy("list it again; if it stays, check the API server's logs"),),
    )


def explain_object(obj: JSON, resource: Resource, view: ClusterView) -> Finding:
    """The explanation `all --explain` prints for one object of any kind."""
    if is_core(resource, "pods"):
        return explain_pod(obj, view)
    whole, warning = whole_object(obj, resource, view)
    if is_core(resource, "namespaces"):
        finding = explain_namespace(whole, view)
    else:
        finding = base_finding(whole, view, resource.kind, resource.api_version)
        grace = grace_period_blocker(whole, finding)
        finding.blockers.extend([grace] if grace else [])
        run_explainers(finding, whole, view, object_explainers(resource))
        if not finding.blockers and not finding.warnings:
            finding.blockers.append(nothing_found(finding))
    if warning is not None:
        finding.warnings.append(warning)
    return finding
