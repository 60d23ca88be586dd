"""Why a namespace stays Terminating: controller conditions, broken APIs, content left, finalizers.

The namespace controller (kube-controller-manager) deletes every object of every namespaced
type, then removes `kubernetes` from spec.finalizers. It stops short when discovery fails (any
unavailable APIService), when deletes are rejected (webhooks, conversion webhooks) and while
objects keep finalizers. Each of those becomes a blocker with the objects that prove it.

The controller's conditions, APIServices and silence are in namespace_conditions, the content
left (and conversion webhooks) in namespace_content, the namespace's own finalizers in
namespace_finalizers; this module puts them together and raises remaining pods' blockers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from kubectl_terminating.explain.common import Explainer, base_finding, meta, run_explainers, text
from kubectl_terminating.explain.finalizers import try_read
from kubectl_terminating.explain.namespace_conditions import (
    SUMMARY_WIDTH,
    apiservice_blockers,
    clip,
    condition_blockers,
    condition_summary,
    controller_blocker,
    namespace_conditions,
)
from kubectl_terminating.explain.namespace_content import (
    MAX_MERGED,
    Content,
    content_blockers,
    content_conversion_blockers,
    content_finalizer_blockers,
    content_webhook_blockers,
    conversion_blocker,
    crd_serves,
    finalizers_of,
    merge_blockers,
)
from kubectl_terminating.explain.namespace_finalizers import (
    metadata_finalizer_blockers,
    spec_finalizer_blockers,
)
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.model import (
    GRACE_PERIOD,
    JSON,
    Blocker,
    Evidence,
    Finding,
    ObjectRef,
    Remedy,
)
from kubectl_terminating.view import ClusterView

MAX_EXPLAINED_PODS = 50  # remaining pods explained per namespace


# -- putting it together ---------------------------------------------------------------------


def read_content(finding: Finding, view: ClusterView) -> Content | None:
    if not finding.name:
        return None
    listings, failure = try_read(lambda: view.namespace_content(finding.name))
    if failure is not None:
        finding.warnings.append(failure.message)
        return None
    return Content(tuple(listings or ()))


def namespace_explainers(content: Content | None) -> list[Explainer]:
    explainers: list[Explainer] = [
        condition_blockers,
        apiservice_blockers,
        controller_blocker,
        partial(spec_finalizer_blockers, content),
        metadata_finalizer_blockers,
    ]
    if content is not None:
        per_content: list[Callable[[Content, JSON, ClusterView], list[Blocker]]] = [
            content_blockers,
            content_finalizer_blockers,
            content_webhook_blockers,
            content_conversion_blockers,
        ]
        explainers.extend(partial(explain, content) for explain in per_content)
    return explainers


def remaining_pods(content: Content | None, finding: Finding, view: ClusterView) -> list[Finding]:
    left = content is not None and any(
        c.resource.group == "" and c.resource.plural == "pods" for c in content.left
    )
    if not left:
        return []
    pods, failure = try_read(lambda: view.pods(finding.name))
    if failure is not None:
        finding.warnings.append(failure.message)
    pods = sorted(pods or [], key=lambda p: text(meta(p).get("name")))
    if len(pods) > MAX_EXPLAINED_PODS:
        finding.warnings.append(f"explained the first {MAX_EXPLAINED_PODS} of {len(pods)} pods")
    return [explain_pod(pod, view) for pod in pods[:MAX_EXPLAINED_PODS]]


def stuck_pod_blockers(namespace: str, pods: Sequence[Finding]) -> list[Blocker]:
    """The pods' own main blockers, raised to the namespace: the namespace controller only
    says "unexpected items still remain", the pods say why."""
    by_type: dict[str, list[tuple[Finding, Blocker]]] = {}
    for pod in pods:
        main = pod.main_blocker
        if main is not None and main.type != GRACE_PERIOD:
            by_type.setdefault(main.type, []).append((pod, main))
    blockers = []
    for blocker_type, group in by_type.items():
        first_pod, first = group[0]
        more = f" (+{len(group) - 1} more pods)" if len(group) > 1 else ""
        explain = Remedy(
            f"see why pod {first_pod.name} is stuck, with evidence and every remedy",
            command=f"kubectl terminating pods -n {namespace} {first_pod.name} --explain",
        )
        blockers.append(
            Blocker(
                type=blocker_type,
                summary=clip(f"pod {first_pod.name}: {first.summary}{more}"),
                evidence=tuple(
                    Evidence(message=main.summary, object=ObjectRef("Pod", pod.name, namespace))
                    for pod, main in group[:MAX_MERGED]
                ),
                remedy=(explain, *first.remedy),
            )
        )
    return blockers


def explain_namespace(ns: JSON, view: ClusterView, explain_pods: bool = True) -> Finding:
    """Everything known about why a terminating namespace has not gone, safest fixes first.

    Remaining pods are always explained (their blockers are the namespace's); they are
    attached as `children` only when explain_pods (the detailed views).
    """
    finding = base_finding(ns, view, "Namespace", "v1")
    finding.conditions = namespace_conditions(ns)
    content = read_content(finding, view)
    if content is not None:
        finding.remaining = content.types()
        finding.warnings.extend(w for w in content.warnings() if w not in finding.warnings)
    run_explainers(finding, ns, view, namespace_explainers(content))
    pods = remaining_pods(content, finding, view)
    finding.blockers.extend(stuck_pod_blockers(finding.name, pods))
    finding.sort_blockers()
    if explain_pods:
        finding.children = pods
    return finding


# explain_namespace, and what objects.py and the unit tests import from here.
__all__ = [
    "MAX_MERGED",
    "SUMMARY_WIDTH",
    "condition_summary",
    "conversion_blocker",
    "crd_serves",
    "explain_namespace",
    "finalizers_of",
    "merge_blockers",
]
