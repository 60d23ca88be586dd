"""Why a namespace stays Terminating: the content phase's causes while `kubernetes` is in
spec.finalizers, then only the namespace's own finalizers (docs/explainers.md).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import replace

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    NAMESPACE_FINALIZER,
    POSSIBLE,
    UNKNOWN,
    cause_of,
    weakest,
)
from kubectl_terminating.explain.admission_policy import policy_denial_blockers
from kubectl_terminating.explain.common import (
    AGE_UNKNOWN,
    DELETION_TIME_UNKNOWN,
    add_warning,
    base_finding,
    meta,
    run_causes,
    text,
)
from kubectl_terminating.explain.corrupt import corrupt_content_blockers
from kubectl_terminating.explain.namespace_conditions import (
    SUMMARY_WIDTH,
    apiservice_blockers,
    clip,
    condition_blockers,
    condition_summary,
    controller_blocker,
    namespace_conditions,
    ns_ref,
)
from kubectl_terminating.explain.namespace_content import (
    MAX_MERGED,
    content_blockers,
    content_conversion_blockers,
    content_finalizer_blockers,
    content_types,
    content_webhook_blockers,
    conversion_blocker,
    crd_serves,
    merge_blockers,
)
from kubectl_terminating.explain.namespace_evidence import (
    condition_blockers_beyond_view,
    found_no_content,
    pods_listed,
)
from kubectl_terminating.explain.namespace_facts import (
    CONTENT_UNKNOWN,
    KUBERNETES_FINALIZER,
    PHASE_UNKNOWN,
    Content,
    NamespaceFacts,
    finalizers_of,
)
from kubectl_terminating.explain.namespace_finalizers import (
    metadata_finalizer_blockers,
    spec_finalizer_blockers,
)
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.model import JSON, Blocker, Evidence, Finding, ObjectRef, Remedy
from kubectl_terminating.view import ClusterView

MAX_EXPLAINED_PODS = 50  # remaining pods explained per namespace


# -- causes that put the others together -----------------------------------------------------


def beyond_view(facts: NamespaceFacts) -> list[Blocker]:
    """What the controller's current conditions prove and the tool's own view did not show
    (runs after the causes whose blockers it must not repeat)."""
    content = facts.content
    listed = content or Content(())
    shown = {c.resource.qualified for c in listed.listings if c.items or c.error}
    complete = content is not None and content.complete and not content.unlisted
    finalizers = content.finalizers() if content is not None and complete else None
    return condition_blockers_beyond_view(
        facts.ns, facts.view, list(facts.finding.blockers), shown, listed.covered, finalizers
    )


def stuck_pods(facts: NamespaceFacts) -> list[Blocker]:
    """The remaining pods, explained; their main blockers raised to the namespace."""
    facts.pods = remaining_pods(facts)
    raise_unknowns(facts.finding, facts.pods)
    return stuck_pod_blockers(facts.name, facts.pods)


def raise_unknowns(finding: Finding, pods: Sequence[Finding]) -> None:
    """What the pods' evidence could not show (a Node pasted without status) holds for the
    blockers raised from them too: said on the finding that raises them, once (not their age:
    the finding has its own)."""
    for pod in pods:
        for unknown in pod.unknowns:
            if unknown not in (*finding.unknowns, AGE_UNKNOWN, DELETION_TIME_UNKNOWN):
                finding.unknowns.append(unknown)


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


def finish_finalizer_phase(facts: NamespaceFacts) -> None:
    """Past the content phase: the namespace's own finalizers are the blockers; content left is
    a hazard (warned) and the step that avoids it comes first in their remedies."""
    finding, content = facts.finding, facts.content
    hazard = left_behind(content, finding.name) if content is not None else None
    if hazard is not None:
        facts.warn(hazard[0])
    finding.blockers = [
        replace(
            b,
            evidence=(*b.evidence, PAST_CONTENT_PHASE),
            remedy=(hazard[1], *b.remedy) if hazard else b.remedy,
        )
        for b in finding.blockers
    ]


def remaining_pods(facts: NamespaceFacts) -> list[Finding]:
    content = facts.content
    left = content is not None and any(c.resource.is_core("pods") for c in content.left)
    if not left:
        return []
    pods = facts.read(lambda: reads.pods(facts.view, facts.name), [])
    pods = sorted(pods, key=lambda p: text(meta(p).get("name")))
    if len(pods) > MAX_EXPLAINED_PODS:
        facts.warn(f"explained the first {MAX_EXPLAINED_PODS} of {len(pods)} pods")
    return [explain_pod(pod, facts.view) for pod in pods[:MAX_EXPLAINED_PODS]]


def stuck_pod_blockers(namespace: str, pods: Sequence[Finding]) -> list[Blocker]:
    """The pods' own main blockers, raised to the namespace: the namespace controller only
    says "unexpected items still remain", the pods say why."""
    by_type: dict[str, list[tuple[Finding, Blocker]]] = {}
    for pod in pods:
        main = pod.main_blocker
        if main is not None and not cause_of(main.type).not_stuck:
            by_type.setdefault(main.type, []).append((pod, main))
    blockers = []
    for blocker_type, group in by_type.items():
        first_pod, first = group[0]
        more = f" (+{len(group) - 1} more pods)" if len(group) > 1 else ""
        confidence, basis = _least_sure(group)
        explain = Remedy(
            f"see why pod {first_pod.name} is stuck, with evidence and every remedy",
            command=f"kubectl terminating pods -n {shlex.quote(namespace)} "
            f"{shlex.quote(first_pod.name)} --explain",
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
                # the pods' own witnesses, the least sure of them
                confidence=confidence,
                basis=basis,
            )
        )
    return blockers


def _least_sure(group: Sequence[tuple[Finding, Blocker]]) -> tuple[str, str]:
    """A blocker raised from several pods is as sure as the least sure of theirs."""
    least = weakest(main.confidence for _, main in group)
    pod, main = next((p, m) for p, m in group if (m.confidence or POSSIBLE) == least)
    return least, f"pod {pod.name}: {main.basis or 'not stated'}"


def nothing_found(facts: NamespaceFacts) -> list[Blocker]:
    """Last: no cause above found a blocker. Never "none found": name what the evidence points
    to (`kubernetes` still in spec.finalizers) and what it could not show."""
    if facts.finding.blockers:
        return []
    name = shlex.quote(facts.name)
    live = Remedy(
        "explain it against the live cluster: conditions, content, APIs and webhooks",
        f"kubectl terminating ns {name} --explain",
    )
    ref = ns_ref(facts.ns)
    if facts.spec_missing:
        return [
            Blocker(
                UNKNOWN,
                "nothing in the file names a blocker; spec and conditions would",
                (Evidence("the Namespace has no spec: a partial copy of the object", ref),),
                (live, Remedy("save the whole object", f"kubectl get ns {name} -o json")),
                unchecked=PHASE_UNKNOWN,
                confidence=POSSIBLE,
                basis="a partial copy: nothing in it names a blocker",
            )
        ]
    if facts.content_phase:
        unseen = CONTENT_UNKNOWN if facts.content is not None else "content could not be listed"
        said = [c for c in facts.finding.conditions or [] if c.get("status") == "True"]
        # "All content successfully removed" with no pod list to confirm it: from 1.33 the
        # controller writes it while pods remain (namespace_evidence.found_no_content)
        removed = found_no_content(facts.ns) and not pods_listed(facts)
        pods = [
            Evidence(
                "NamespaceContentRemaining=False does not prove the namespace empty: from "
                "Kubernetes 1.33 the controller deletes pods first and writes it while pods "
                "remain (kubernetes/kubernetes#138208); only the pod list proves it",
                ref,
            ),
        ][: int(removed)]
        list_pods = [
            Remedy("list the pods left in it: they go first", f"kubectl get pods -n {name}")
        ][: int(removed)]
        return [
            Blocker(
                NAMESPACE_FINALIZER,
                "finalizer kubernetes, content unseen: pods may remain"
                if removed
                else "finalizer kubernetes: the namespace controller is not done with the content",
                (
                    Evidence(
                        f"spec.finalizers lists {KUBERNETES_FINALIZER}: the controller removes "
                        "it once every object inside is gone",
                        ref,
                        {"specFinalizers": [KUBERNETES_FINALIZER]},
                    ),
                    Evidence(
                        f"{unseen}; "
                        + ("no condition names what is left" if not said else "conditions: ")
                        + ", ".join(f"{c.get('type')}={c.get('status')}" for c in said),
                        ref,
                    ),
                    *pods,
                ),
                (
                    live,
                    *list_pods,
                    Remedy("read the controller's conditions", f"kubectl get ns {name} -o yaml"),
                ),
                unchecked=unseen,
                confidence=POSSIBLE,
                basis="spec.finalizers lists kubernetes; what it waits for not seen",
            )
        ]
    return [
        Blocker(
            UNKNOWN,
            "no finalizer left: deletion should complete",
            (Evidence("spec.finalizers and metadata.finalizers are empty", ref),),
            (Remedy("list it again; if it stays, check the API server's logs"),),
            confidence=POSSIBLE,
            basis="no finalizer left: nothing holds it that could be seen",
        )
    ]


NamespaceCause = Callable[[NamespaceFacts], list[Blocker]]

# While `kubernetes` is in spec.finalizers: everything that stalls the namespace controller.
CONTENT_PHASE_CAUSES: tuple[NamespaceCause, ...] = (
    condition_blockers,
    apiservice_blockers,
    controller_blocker,
    spec_finalizer_blockers,
    metadata_finalizer_blockers,
    corrupt_content_blockers,
    content_blockers,
    content_finalizer_blockers,
    content_webhook_blockers,
    policy_denial_blockers,
    content_conversion_blockers,
    beyond_view,  # after the causes above: it adds only what they did not show
    stuck_pods,
    nothing_found,  # last: it looks at what the others found
)
# Once it is gone: only the namespace's own finalizers hold it.
FINALIZER_PHASE_CAUSES: tuple[NamespaceCause, ...] = (
    spec_finalizer_blockers,
    metadata_finalizer_blockers,
    nothing_found,
)


def explain_namespace(ns: JSON, view: ClusterView, explain_pods: bool = True) -> Finding:
    """Everything known about why a terminating namespace has not gone, safest fixes first.

    Remaining pods are explained while the content phase lasts (their blockers are then the
    namespace's); they are attached as `children` only when explain_pods (the detailed views).
    """
    finding = base_finding(ns, view, "Namespace", "v1")
    finding.conditions = namespace_conditions(ns)
    facts = NamespaceFacts(ns, view, finding)
    content = facts.content
    if content is not None:
        finding.remaining = content_types(content) if facts.content_known else None
        for warning in content.warnings():
            add_warning(finding, warning)
    if facts.spec_missing:
        finding.unknowns.append(PHASE_UNKNOWN)
    if content is not None and not facts.content_known:
        finding.unknowns.append(CONTENT_UNKNOWN)
    if facts.content_phase:
        run_causes(facts, CONTENT_PHASE_CAUSES)
    else:
        run_causes(facts, FINALIZER_PHASE_CAUSES)
        finish_finalizer_phase(facts)
        finding.sort_blockers()
    if explain_pods:
        finding.children = facts.pods
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
    "raise_unknowns",
    "stuck_pod_blockers",
]
