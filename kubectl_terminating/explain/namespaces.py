"""Why a namespace stays Terminating: controller conditions, broken APIs, content left, finalizers.

The namespace controller (kube-controller-manager) deletes every object of every namespaced
type, then removes `kubernetes` from spec.finalizers. It stops short when discovery fails (any
unavailable APIService), when deletes are rejected (webhooks, conversion webhooks) and while
objects keep finalizers. Each of those becomes a blocker with the objects that prove it.

Phase first. While `kubernetes` is in spec.finalizers the controller deletes the content, and
all of the above can hold the namespace. Once `kubernetes` is gone (the controller finished, or
someone removed it through /finalize) the controller never looks at the namespace again: only
its own finalizers (metadata.finalizers, other spec.finalizers) hold it, the conditions written
earlier are history, and content still inside will be left in etcd without a namespace.

The controller's conditions, APIServices and silence are in namespace_conditions, the content
left (and conversion webhooks) in namespace_content, the namespace's own finalizers in
namespace_finalizers; this module puts them together and raises remaining pods' blockers.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from kubectl_terminating import reads
from kubectl_terminating.explain.common import (
    Explainer,
    as_dict,
    base_finding,
    list_of,
    meta,
    run_explainers,
    text,
)
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
from kubectl_terminating.explain.namespace_evidence import (
    condition_blockers_beyond_view,
    found_no_content,
    says_content_remains,
)
from kubectl_terminating.explain.namespace_finalizers import (
    KUBERNETES_FINALIZER,
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


# -- the phase of deletion ------------------------------------------------------------------


def in_content_phase(ns: JSON) -> bool:
    return KUBERNETES_FINALIZER in list_of(as_dict(ns.get("spec")).get("finalizers"))


def read_content(finding: Finding, view: ClusterView) -> Content | None:
    if not finding.name:
        return None
    listings, failure = try_read(lambda: view.namespace_content(finding.name))
    if failure is not None:
        finding.warnings.append(failure.message)
        return None
    listed = tuple(listings or ())
    discovery, _ = try_read(view.discovery)
    resources = discovery.resources if discovery is not None else []
    failed = {c.resource.qualified for c in listed if c.error}
    covered = frozenset(r.qualified for r in resources if r.namespaced) - failed
    complete = discovery is not None and discovery.complete
    seen = {c.resource.qualified for c in listed if not c.error}
    return Content(listed, covered | seen, complete)


def no_content(content: Content | None, ns: JSON) -> bool:
    """Nothing left, as both the listing and the controller's conditions say. An empty listing
    of only partly known types (a `kubectl get` file) counts only if the controller's last pass
    found nothing either (NamespaceContentRemaining=False)."""
    if content is None or not content.empty or says_content_remains(ns):
        return False
    return content.complete or found_no_content(ns)


def content_explainers(content: Content | None, ns: JSON) -> list[Explainer]:
    explainers: list[Explainer] = [
        condition_blockers,
        apiservice_blockers,
        controller_blocker,
        partial(spec_finalizer_blockers, no_content(content, ns)),
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


def beyond_view(content: Content | None, found: Sequence[Blocker]) -> Explainer:
    """What the controller's current conditions prove and the tool's own view did not show."""
    empty = Content(())
    listed = content or empty
    shown = {c.resource.qualified for c in listed.listings if c.items or c.error}

    complete = content is not None and content.complete and not content.unlisted
    finalizers = content.finalizers() if content is not None and complete else None

    def explain(ns: JSON, view: ClusterView) -> list[Blocker]:
        return condition_blockers_beyond_view(ns, view, found, shown, listed.covered, finalizers)

    return explain


def finalizer_phase_explainers() -> list[Explainer]:
    return [partial(spec_finalizer_blockers, False), metadata_finalizer_blockers]


def left_behind(content: Content, namespace: str) -> tuple[str, Remedy] | None:
    """The warning and the step that avoids it, for content inside a namespace past the
    content phase: once its last finalizer goes, these stay in etcd without a namespace."""
    objects = content.objects
    if not objects:
        return None
    names = [f"{c.resource.qualified}/{text(meta(i).get('name'))}" for c, i in objects]
    shown = ", ".join(names[:MAX_MERGED]) + (", ..." if len(names) > MAX_MERGED else "")
    noun = "object" if len(names) == 1 else "objects"
    warning = f"{len(names)} {noun} will be left behind without a namespace: {shown}"
    types = ",".join(dict.fromkeys(c.resource.qualified for c, _ in objects))
    quoted = shlex.quote(namespace)
    first = Remedy(
        f"FIRST delete the {len(names)} {noun} still inside and let their finalizers finish; "
        "removing the namespace's last finalizer before that leaves them in etcd without a "
        "namespace (they come back if the name is reused)",
        f"kubectl delete {types} -n {quoted} --all --wait=false; "
        f"kubectl terminating all -n {quoted} --explain",
    )
    return warning, first


PAST_CONTENT_PHASE = Evidence(
    "kubernetes is no longer in spec.finalizers: the namespace controller is done with this "
    "namespace; APIServices, webhooks and content cannot hold it, its conditions are history"
)


def finish_finalizer_phase(finding: Finding, content: Content | None) -> None:
    """Past the content phase: the namespace's own finalizers are the blockers; content left is
    a hazard (warned) and the step that avoids it comes first in their remedies."""
    hazard = left_behind(content, finding.name) if content is not None else None
    if hazard is not None:
        finding.warnings.append(hazard[0])
    finding.blockers = [
        replace(
            b,
            evidence=(*b.evidence, PAST_CONTENT_PHASE),
            remedy=(hazard[1], *b.remedy) if hazard else b.remedy,
        )
        for b in finding.blockers
    ]


def remaining_pods(content: Content | None, finding: Finding, view: ClusterView) -> list[Finding]:
    left = content is not None and any(
        c.resource.group == "" and c.resource.plural == "pods" for c in content.left
    )
    if not left:
        return []
    pods, failure = try_read(lambda: reads.pods(view, finding.name))
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

    Remaining pods are explained while the content phase lasts (their blockers are then the
    namespace's); they are attached as `children` only when explain_pods (the detailed views).
    """
    finding = base_finding(ns, view, "Namespace", "v1")
    finding.conditions = namespace_conditions(ns)
    content = read_content(finding, view)
    if content is not None:
        finding.remaining = content.types()
        finding.warnings.extend(w for w in content.warnings() if w not in finding.warnings)
    pods: list[Finding] = []
    if in_content_phase(ns):
        run_explainers(finding, ns, view, content_explainers(content, ns))
        run_explainers(finding, ns, view, [beyond_view(content, list(finding.blockers))])
        pods = remaining_pods(content, finding, view)
        finding.blockers.extend(stuck_pod_blockers(finding.name, pods))
    else:
        run_explainers(finding, ns, view, finalizer_phase_explainers())
        finish_finalizer_phase(finding, content)
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
