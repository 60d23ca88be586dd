"""The namespace's own finalizers: `kubernetes` in spec.finalizers left with no content, spec
finalizers other controllers put there, and metadata.finalizers.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

from kubectl_terminating.causes import LIKELY, NAMESPACE_FINALIZER, cause_of
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.explain.finalizers import (
    Held,
    finalizer_blockers,
    finalizer_confidence,
    lease_liveness,
    owner_evidence,
    owner_liveness,
    owner_phrase,
    owner_remedies,
)
from kubectl_terminating.explain.knowledge import KCM_LEASE, lookup
from kubectl_terminating.explain.namespace_conditions import (
    clip,
    failure_reason,
    namespace_conditions,
    ns_ref,
)
from kubectl_terminating.explain.namespace_evidence import no_content
from kubectl_terminating.explain.namespace_facts import KUBERNETES_FINALIZER, NamespaceFacts
from kubectl_terminating.model import FINALIZER_ON, JSON, Blocker, Evidence, Remedy, Subject
from kubectl_terminating.resources import NAMESPACES
from kubectl_terminating.view import ClusterView

# -- the namespace's own finalizers ----------------------------------------------------------


def finalize_command(name: str, finalizer: str) -> str:
    jq = f".spec.finalizers -= [{json.dumps(finalizer)}]"
    quoted = shlex.quote(name)
    return (
        f"kubectl get namespace {quoted} -o json | jq {shlex.quote(jq)} | "
        f"kubectl replace --raw /api/v1/namespaces/{quoted}/finalize -f -"
    )


def kubernetes_finalizer_blocker(ns: JSON, view: ClusterView) -> Blocker:
    name = text(meta(ns).get("name"))
    controller = lease_liveness((KCM_LEASE,), view)
    left = Evidence(
        "spec.finalizers still lists kubernetes though no content is left",
        ns_ref(ns),
        {"specFinalizers": list_of(as_dict(ns.get("spec")).get("finalizers"))},
    )
    return Blocker(
        NAMESPACE_FINALIZER,
        "finalizer kubernetes left with no content (controller behind?)",
        (left, *controller.evidence),
        (
            Remedy(
                "make sure kube-controller-manager runs with its namespace controller; it "
                "removes the finalizer once the content is gone",
                "kubectl get lease -n kube-system kube-controller-manager -o yaml",
            ),
            Remedy(
                "LAST RESORT: remove the kubernetes finalizer through /finalize",
                finalize_command(name, KUBERNETES_FINALIZER),
                destructive=True,
                when="nothing is left in the namespace, no APIService is unavailable, and it "
                "still stays for several minutes",
            ),
        ),
        # no content seen: the controller should have removed it (behind, or content unseen)
        confidence=LIKELY,
        basis="no content left, yet the namespace controller's finalizer stays",
    )


def foreign_spec_finalizer_blocker(
    ns: JSON, index: int, finalizer: str, view: ClusterView
) -> Blocker:
    """A spec finalizer some other controller put there: it has to remove it itself."""
    held = Held(ns, NAMESPACES, finalizer, index)
    owner = lookup(finalizer)
    liveness = owner_liveness(owner, finalizer, NAMESPACES, view)
    fact = Evidence(
        f"spec.finalizers lists {finalizer}",
        ns_ref(ns),
        {"specFinalizer": finalizer},
        about=Subject(FINALIZER_ON, finalizer, holder=ns_ref(ns), spec=True),
    )
    finalize = Remedy(
        f"LAST RESORT: remove spec finalizer {finalizer} through /finalize",
        finalize_command(held.name, finalizer),
        destructive=True,
        when="its controller is gone for good and its cleanup is done by hand",
    )
    evidence = (fact, owner_evidence(held, owner), *liveness.evidence)
    confidence, basis = finalizer_confidence(evidence, "spec.finalizers")
    return Blocker(
        NAMESPACE_FINALIZER,
        clip(f"spec finalizer {finalizer} ({owner_phrase(owner, liveness.state)})"),
        evidence,
        (*owner_remedies(held, owner, liveness.state), finalize),
        confidence=confidence,
        basis=basis,
    )


def spec_finalizer_blockers(facts: NamespaceFacts) -> list[Blocker]:
    """Other controllers' spec finalizers always; `kubernetes` only when nothing is left (as
    both the listing and the controller's conditions say): otherwise the content holds it."""
    ns, view = facts.ns, facts.view
    blockers = []
    for index, finalizer in enumerate(list_of(as_dict(ns.get("spec")).get("finalizers"))):
        if not isinstance(finalizer, str) or not finalizer:
            continue
        if finalizer != KUBERNETES_FINALIZER:
            blockers.append(foreign_spec_finalizer_blocker(ns, index, finalizer, view))
        elif no_content(facts) and not any(failure_reason(c) for c in namespace_conditions(ns)):
            # a True failure condition is what holds it: the controller is not behind
            blockers.append(kubernetes_finalizer_blocker(ns, view))
    return blockers


def metadata_finalizer_blockers(facts: NamespaceFacts) -> list[Blocker]:
    """metadata.finalizers on the namespace itself: explained like any object's finalizer."""
    ns, view = facts.ns, facts.view
    return [
        replace(b, type=cause_of(b.type).on_namespace or b.type)
        for b in finalizer_blockers(ns, NAMESPACES, view)
    ]
