"""Why a namespace stays Terminating: controller conditions, broken APIs, content left, finalizers.

The namespace controller (kube-controller-manager) deletes every object of every namespaced
type, then removes `kubernetes` from spec.finalizers. It stops short when discovery fails (any
unavailable APIService), when deletes are rejected (webhooks, conversion webhooks) and while
objects keep finalizers. Each of those becomes a blocker with the objects that prove it.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TypeVar

from kubectl_terminating.explain.common import (
    Explainer,
    as_dict,
    as_list,
    base_finding,
    meta,
    run_explainers,
    text,
)
from kubectl_terminating.explain.finalizers import (
    Held,
    finalizer_blockers,
    lease_liveness,
    owner_evidence,
    owner_liveness,
    owner_phrase,
    owner_remedies,
    service_backend,
    short_owner,
    try_read,
    webhook_service,
)
from kubectl_terminating.explain.knowledge import KCM_LEASE, lookup
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.explain.webhooks import webhook_blockers
from kubectl_terminating.model import (
    APISERVICE_UNAVAILABLE,
    CONTENT_REMAINING,
    CONVERSION_WEBHOOK,
    FINALIZER,
    GRACE_PERIOD,
    JSON,
    NAMESPACE_CONDITION,
    NAMESPACE_CONTROLLER,
    NAMESPACE_FINALIZER,
    Blocker,
    ContentType,
    Evidence,
    Finding,
    ObjectRef,
    Remedy,
)
from kubectl_terminating.resources import NAMESPACES
from kubectl_terminating.timeutil import human_duration, seconds_since
from kubectl_terminating.view import ClusterView, ContentListing

T = TypeVar("T")

# The conditions pkg/controller/namespace/deletion writes (status_condition_utils.go).
DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING_CONDITION = "NamespaceContentRemaining"
FINALIZERS_REMAINING_CONDITION = "NamespaceFinalizersRemaining"
CONDITION_TYPES = (
    DISCOVERY_FAILURE,
    GV_PARSING_FAILURE,
    CONTENT_FAILURE,
    CONTENT_REMAINING_CONDITION,
    FINALIZERS_REMAINING_CONDITION,
)
FAILURE_REASONS = {
    "DiscoveryFailed": "discovery failed",
    "GroupVersionParsingFailed": "group-version parsing failed",
    "ContentDeletionFailed": "content deletion failed",
}
FAILURE_TYPES = {
    DISCOVERY_FAILURE: "DiscoveryFailed",
    GV_PARSING_FAILURE: "GroupVersionParsingFailed",
    CONTENT_FAILURE: "ContentDeletionFailed",
}
# Reasons of the two "remaining" conditions; releases differ on the plural.
REMAINING_REASONS = frozenset(
    {"SomeResourcesRemain", "SomeFinalizersRemain", "SomeFinalizerRemain"}
)

KUBERNETES_FINALIZER = "kubernetes"
SILENT_CONTROLLER_SECONDS = 300  # the controller writes conditions within seconds of a delete
MAX_EXPLAINED_PER_TYPE = 20  # objects per type whose finalizers are explained one by one
MAX_MERGED = 10  # objects named in one merged blocker
MAX_EXPLAINED_PODS = 50  # remaining pods explained per namespace
SUMMARY_WIDTH = 70
# "Failed to delete all resource types, 1 remaining: Internal error occurred: ..."
BOILERPLATE = re.compile(
    r"^(Failed to delete all resource types, \d+ remaining: )?(Internal error occurred: )?"
)
FAILED_WEBHOOK = re.compile(r'failed calling webhook "([^"]+)"')
# "conversion webhook for widgets.example.com/v1, Kind=Widget failed: ..." (apiextensions)
FAILED_CONVERSION = re.compile(r"conversion webhook for ([a-z0-9.-]+)/[a-z0-9]+, Kind=(\w+) failed")
GROUP_VERSION = re.compile(r"([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+/v[0-9][a-z0-9]*):")


def clip(line: str, width: int = SUMMARY_WIDTH) -> str:
    line = " ".join(line.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def finalizers_of(obj: JSON) -> list[str]:
    return [f for f in as_list(meta(obj).get("finalizers")) if isinstance(f, str) and f]


def ns_ref(ns: JSON) -> ObjectRef:
    return ObjectRef("Namespace", text(meta(ns).get("name")), None, "v1")


# -- merging: one blocker per cause, not per object ------------------------------------------


def _unique(items: Iterable[T]) -> list[T]:
    seen: list[T] = []
    for item in items:
        if item not in seen:  # Evidence holds a dict: compare, do not hash
            seen.append(item)
    return seen


def merge_group(group: Sequence[Blocker]) -> Blocker:
    if len(group) == 1:
        return group[0]
    shown = group[:MAX_MERGED]
    evidence = _unique(e for b in shown for e in b.evidence)
    if len(group) > MAX_MERGED:
        evidence.append(Evidence(f"and {len(group) - MAX_MERGED} more objects with the same cause"))
    remedies = _unique(r for b in shown for r in b.remedy)
    # one of each safe step (they differ only in the object named), every destructive one
    safe = {r.description: r for r in reversed(remedies) if not r.destructive}
    remedies = [r for r in remedies if r.destructive or safe[r.description] is r]
    remedies.sort(key=lambda r: r.destructive)  # stable: safe steps first, in their order
    return replace(group[0], evidence=tuple(evidence), remedy=tuple(remedies))


def merge_blockers(blockers: Iterable[Blocker]) -> list[Blocker]:
    groups: dict[tuple[str, str], list[Blocker]] = {}
    for blocker in blockers:
        groups.setdefault((blocker.type, blocker.summary), []).append(blocker)
    return [merge_group(group) for group in groups.values()]


# -- conditions ------------------------------------------------------------------------------


def namespace_conditions(ns: JSON) -> list[JSON]:
    keys = ("type", "status", "reason", "message", "lastTransitionTime")
    return [
        {key: c.get(key) for key in keys}
        for c in as_list(as_dict(ns.get("status")).get("conditions"))
        if isinstance(c, dict)
    ]


def failure_reason(condition: JSON) -> str | None:
    """The failure a True condition reports, by reason or (for unknown reasons) by type."""
    if condition.get("status") != "True":
        return None
    reason = text(condition.get("reason"))
    if reason in FAILURE_REASONS:
        return reason
    return FAILURE_TYPES.get(text(condition.get("type")))


def condition_summary(reason: str, message: str) -> str:
    if reason == "DiscoveryFailed":
        groups = list(dict.fromkeys(GROUP_VERSION.findall(message)))
        more = f" (+{len(groups) - 1} more)" if len(groups) > 1 else ""
        return clip(f"discovery failed for {groups[0] if groups else 'some groups'}{more}")
    webhook = FAILED_WEBHOOK.search(message)
    cause = f"webhook {webhook.group(1)}" if webhook else BOILERPLATE.sub("", message)
    return clip(f"{FAILURE_REASONS[reason]}: {cause}")


CONDITION_REMEDIES = {
    "DiscoveryFailed": Remedy(
        "fix or remove the APIServices that fail discovery (the apiservice-unavailable "
        "blockers); the namespace controller then retries by itself",
        "kubectl get apiservices",
    ),
    "GroupVersionParsingFailed": Remedy(
        "fix the API group named in the message (a malformed APIService or CRD version)",
        "kubectl get apiservices",
    ),
    "ContentDeletionFailed": Remedy(
        "fix what rejects the deletes named in the message (often an admission or "
        "conversion webhook); the namespace controller then retries by itself"
    ),
}


def condition_blockers(ns: JSON, view: ClusterView) -> list[Blocker]:
    blockers = []
    for condition in namespace_conditions(ns):
        reason = failure_reason(condition)
        if reason is None:
            continue
        message = text(condition.get("message"))
        evidence = Evidence(
            f"{text(condition.get('type'))}={condition.get('status')} ({reason}): {message}",
            ns_ref(ns),
            condition,
        )
        blockers.append(
            Blocker(
                NAMESPACE_CONDITION,
                condition_summary(reason, message),
                (evidence,),
                (CONDITION_REMEDIES[reason],),
            )
        )
    return blockers


def remaining_condition_evidence(ns: JSON) -> list[Evidence]:
    return [
        Evidence(f"{c.get('type')}: {text(c.get('message'))}", ns_ref(ns), c)
        for c in namespace_conditions(ns)
        if c.get("status") == "True" and c.get("reason") in REMAINING_REASONS
    ]


# -- APIServices -----------------------------------------------------------------------------


def available_condition(apiservice: JSON) -> JSON | None:
    conditions = as_list(as_dict(apiservice.get("status")).get("conditions"))
    return next((as_dict(c) for c in conditions if as_dict(c).get("type") == "Available"), None)


def apiservice_remedies(name: str, service: JSON) -> tuple[Remedy, ...]:
    namespace, svc = text(service.get("namespace")), text(service.get("name"))
    fix = Remedy("fix the extension API server behind it; the namespace controller retries")
    if namespace and svc:
        fix = Remedy(
            f"fix the extension API server behind service {namespace}/{svc} (its pods and "
            "endpoints); the namespace controller then retries by itself",
            f"kubectl get endpointslices -n {shlex.quote(namespace)} "
            f"-l kubernetes.io/service-name={shlex.quote(svc)}",
        )
    delete = Remedy(
        f"LAST RESORT: delete APIService {name}; its API disappears from the cluster",
        f"kubectl delete apiservice {shlex.quote(name)}",
        destructive=True,
        when="the extension API server was uninstalled for good and nothing needs its API",
    )
    return fix, delete


def apiservice_blocker(apiservice: JSON) -> Blocker | None:
    condition = available_condition(apiservice)
    if condition is None or condition.get("status") == "True":
        return None
    name = text(meta(apiservice).get("name"))
    spec = as_dict(apiservice.get("spec"))
    service = as_dict(spec.get("service"))
    reason, message = text(condition.get("reason")), text(condition.get("message"))
    evidence = Evidence(
        f"Available={condition.get('status')} ({reason}): {message}",
        ObjectRef("APIService", name, None, "apiregistration.k8s.io/v1"),
        {
            "reason": reason,
            "message": message,
            "group": spec.get("group"),
            "version": spec.get("version"),
            "service": f"{text(service.get('namespace'))}/{text(service.get('name'))}"
            if service
            else None,
        },
    )
    return Blocker(
        APISERVICE_UNAVAILABLE,
        clip(f"APIService {name} unavailable: {reason or 'no reason given'}"),
        (evidence,),
        apiservice_remedies(name, service),
    )


def apiservice_blockers(ns: JSON, view: ClusterView) -> list[Blocker]:
    """Any unavailable APIService fails discovery, which stalls every namespace deletion."""
    found = (apiservice_blocker(a) for a in view.apiservices())
    return [b for b in found if b is not None]


# -- content left ----------------------------------------------------------------------------


def object_summary(obj: JSON) -> JSON:
    finalizers = finalizers_of(obj)
    return {
        "name": text(meta(obj).get("name")),
        "deletionTimestamp": meta(obj).get("deletionTimestamp"),
        "finalizers": finalizers,
        "owners": {f: short_owner(lookup(f)) for f in finalizers},
    }


def content_type(listing: ContentListing) -> ContentType:
    held = (i for i in listing.items if finalizers_of(i) or meta(i).get("deletionTimestamp"))
    return ContentType(
        resource=listing.resource.qualified,
        kind=listing.resource.kind,
        count=len(listing.items),
        objects=tuple(object_summary(i) for i in held),
        error=listing.error,
    )


@dataclass(frozen=True)
class Content:
    """What the namespace still holds, type by type, as listed (metadata only)."""

    listings: tuple[ContentListing, ...]

    @property
    def left(self) -> list[ContentListing]:
        return [c for c in self.listings if c.items]

    @property
    def unlisted(self) -> list[ContentListing]:
        return [c for c in self.listings if c.error]

    @property
    def empty(self) -> bool:
        return not self.left and not self.unlisted

    def types(self) -> list[ContentType]:
        return [content_type(c) for c in self.listings if c.items or c.error]

    def warnings(self) -> list[str]:
        return [f"could not list {c.resource.qualified}: {c.error}" for c in self.unlisted]


def type_evidence(listing: ContentListing) -> Evidence:
    counts: dict[str, int] = {}
    for item in listing.items:
        for finalizer in finalizers_of(item):
            counts[finalizer] = counts.get(finalizer, 0) + 1
    held = sum(1 for i in listing.items if finalizers_of(i))
    detail = f", {held} with finalizers ({', '.join(sorted(counts))})" if held else ""
    return Evidence(
        f"{listing.resource.qualified}: {len(listing.items)} left{detail}",
        fields={
            "resource": listing.resource.qualified,
            "count": len(listing.items),
            "finalizers": counts,
        },
    )


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def content_summary(content: Content) -> str:
    left = content.left
    total = sum(len(c.items) for c in left)
    held = sum(1 for c in left for i in c.items if finalizers_of(i))
    parts = [f"{count(total, 'object')} left in {count(len(left), 'type')}"] if left else []
    if held:
        parts.append(f"{held} with finalizers")
    if content.unlisted:
        parts.append(f"{count(len(content.unlisted), 'type')} not listable")
    return ", ".join(parts)


def content_blockers(content: Content, ns: JSON, view: ClusterView) -> list[Blocker]:
    if content.empty:
        return []
    name = text(meta(ns).get("name"))
    unlisted = [
        Evidence(
            f"{c.resource.qualified}: could not list ({c.error}); objects may be left",
            fields={"resource": c.resource.qualified, "error": c.error},
        )
        for c in content.unlisted
    ]
    remedies = [
        Remedy(
            "the namespace controller deletes these by itself once nothing holds them; fix "
            "the other blockers, then wait",
            f"kubectl terminating all -n {shlex.quote(name)} --explain",
        )
    ]
    if unlisted:
        remedies.append(Remedy("fix access to (or the API of) the types that could not be listed"))
    evidence = [*(type_evidence(c) for c in content.left), *unlisted]
    return [
        Blocker(
            CONTENT_REMAINING,
            content_summary(content),
            (*evidence, *remaining_condition_evidence(ns)),
            tuple(remedies),
        )
    ]


def content_finalizer_blockers(content: Content, ns: JSON, view: ClusterView) -> list[Blocker]:
    blockers: list[Blocker] = []
    for listing in content.left:
        held = [i for i in listing.items if finalizers_of(i)]
        for item in held[:MAX_EXPLAINED_PER_TYPE]:
            blockers.extend(finalizer_blockers(item, listing.resource, view))
    return merge_blockers(blockers)


def content_webhook_blockers(content: Content, ns: JSON, view: ClusterView) -> list[Blocker]:
    """Deleting the content needs DELETE; removing finalizers needs UPDATE."""
    name = text(meta(ns).get("name"))
    blockers: list[Blocker] = []
    for listing in content.left:
        held = any(finalizers_of(i) for i in listing.items)
        operations = ["DELETE", "UPDATE"] if held else ["DELETE"]
        blockers.extend(webhook_blockers(listing.resource, operations, name, view))
    return merge_blockers(blockers)


# -- conversion webhooks ---------------------------------------------------------------------


def conversion_service(crd: JSON) -> tuple[str, str] | None:
    """The conversion webhook's service, or None when the CRD converts without one (or by URL)."""
    conversion = as_dict(as_dict(crd.get("spec")).get("conversion"))
    if conversion.get("strategy") != "Webhook":
        return None
    # v1 nests clientConfig under `webhook`; v1beta1 called it webhookClientConfig
    config = as_dict(conversion.get("webhook")).get("clientConfig") or conversion.get(
        "webhookClientConfig"
    )
    namespace, name = webhook_service(config)
    return (namespace, name) if namespace and name else None


def conversion_remedies(crd_name: str, namespace: str, service: str) -> tuple[Remedy, ...]:
    no_conversion = json.dumps({"spec": {"conversion": {"strategy": "None", "webhook": None}}})
    return (
        Remedy(
            f"restore the conversion webhook behind service {namespace}/{service} (usually "
            "the operator that owns the CRD); deletion then resumes by itself",
            f"kubectl get endpointslices -n {shlex.quote(namespace)} "
            f"-l kubernetes.io/service-name={shlex.quote(service)}",
        ),
        Remedy(
            f"LAST RESORT: turn off conversion for CRD {crd_name}",
            f"kubectl patch crd {shlex.quote(crd_name)} --type=merge "
            f"-p {shlex.quote(no_conversion)}",
            destructive=True,
            when="every stored version has the same schema (objects are then served unconverted)",
        ),
    )


def conversion_blocker(crd: JSON, view: ClusterView) -> Blocker | None:
    """A CRD whose conversion webhook has no backend: its objects can be neither read nor
    deleted, so a namespace holding them (or the CRD's own cleanup) cannot finish."""
    service = conversion_service(crd)
    if service is None:
        return None
    backend = service_backend(*service, view)
    if backend.up is not False:
        return None
    name = text(meta(crd).get("name"))
    uses = Evidence(
        f"CRD {name} converts versions through service {service[0]}/{service[1]}",
        ObjectRef("CustomResourceDefinition", name, None, "apiextensions.k8s.io/v1"),
        {"strategy": "Webhook", "service": f"{service[0]}/{service[1]}"},
    )
    return Blocker(
        CONVERSION_WEBHOOK,
        clip(f"conversion webhook of {name} is down"),
        (uses, backend.evidence),
        conversion_remedies(name, *service),
    )


def crd_serves(crd: JSON, group: str, plural: str) -> bool:
    spec = as_dict(crd.get("spec"))
    names = as_dict(spec.get("names"))
    return text(spec.get("group")) == group and text(names.get("plural")) == plural


def failing_conversions(ns: JSON) -> set[tuple[str, str]]:
    """(group, kind) of every conversion webhook a failure condition of ns names."""
    return {
        (m.group(1), m.group(2))
        for c in namespace_conditions(ns)
        if failure_reason(c) is not None
        for m in FAILED_CONVERSION.finditer(text(c.get("message")))
    }


def names_conversion(crd: JSON, failing: set[tuple[str, str]]) -> bool:
    spec = as_dict(crd.get("spec"))
    kind = text(as_dict(spec.get("names")).get("kind"))
    return (text(spec.get("group")), kind) in failing


def content_conversion_blockers(content: Content, ns: JSON, view: ClusterView) -> list[Blocker]:
    """CRDs with objects left here (or whose listing failed) hold this namespace, and so do
    CRDs its conditions name: a conversion webhook that fails for objects in another namespace
    still fails the controller's lists here (the watch cache of that version cannot start)."""
    involved = [c.resource for c in content.listings if c.items or c.error]
    failing = failing_conversions(ns)
    blockers = []
    for crd in view.crds():
        here = any(crd_serves(crd, r.group, r.plural) for r in involved)
        if not here and not names_conversion(crd, failing):
            continue
        blocker = conversion_blocker(crd, view)
        if blocker is not None and not here:
            named = Evidence(
                "none of its objects is here, but the namespace controller's lists of it fail "
                "in this namespace too (its content failure condition names the webhook)",
                ns_ref(ns),
            )
            blocker = replace(blocker, evidence=(*blocker.evidence, named))
        if blocker is not None:
            blockers.append(blocker)
    return blockers


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
        {"specFinalizers": as_list(as_dict(ns.get("spec")).get("finalizers"))},
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
    )


def foreign_spec_finalizer_blocker(
    ns: JSON, index: int, finalizer: str, view: ClusterView
) -> Blocker:
    """A spec finalizer some other controller put there: it has to remove it itself."""
    held = Held(ns, NAMESPACES, finalizer, index)
    owner = lookup(finalizer)
    liveness = owner_liveness(owner, finalizer, NAMESPACES, view)
    fact = Evidence(f"spec.finalizers lists {finalizer}", ns_ref(ns), {"specFinalizer": finalizer})
    finalize = Remedy(
        f"LAST RESORT: remove spec finalizer {finalizer} through /finalize",
        finalize_command(held.name, finalizer),
        destructive=True,
        when="its controller is gone for good and its cleanup is done by hand",
    )
    return Blocker(
        NAMESPACE_FINALIZER,
        clip(f"spec finalizer {finalizer} ({owner_phrase(owner, liveness.state)})"),
        (fact, owner_evidence(held, owner), *liveness.evidence),
        (*owner_remedies(held, owner, liveness.state), finalize),
    )


def spec_finalizer_blockers(content: Content | None, ns: JSON, view: ClusterView) -> list[Blocker]:
    blockers = []
    for index, finalizer in enumerate(as_list(as_dict(ns.get("spec")).get("finalizers"))):
        if not isinstance(finalizer, str) or not finalizer:
            continue
        if finalizer != KUBERNETES_FINALIZER:
            blockers.append(foreign_spec_finalizer_blocker(ns, index, finalizer, view))
        elif content is not None and content.empty:
            blockers.append(kubernetes_finalizer_blocker(ns, view))
    return blockers


def metadata_finalizer_blockers(ns: JSON, view: ClusterView) -> list[Blocker]:
    """metadata.finalizers on the namespace itself: explained like any object's finalizer."""
    return [
        replace(b, type=NAMESPACE_FINALIZER) if b.type == FINALIZER else b
        for b in finalizer_blockers(ns, NAMESPACES, view)
    ]


# -- the namespace controller itself ---------------------------------------------------------


def controller_blocker(ns: JSON, view: ClusterView) -> list[Blocker]:
    """No condition long after the delete: the namespace controller never looked at it."""
    written = {c.get("type") for c in namespace_conditions(ns)}
    deleted = meta(ns).get("deletionTimestamp")
    age = seconds_since(deleted, view.now)
    if written & set(CONDITION_TYPES) or age is None or age <= SILENT_CONTROLLER_SECONDS:
        return []
    controller = lease_liveness((KCM_LEASE,), view)
    silent = Evidence(
        f"deleted {human_duration(age)} ago and no deletion condition was written",
        ns_ref(ns),
        {"deletionTimestamp": deleted, "conditions": []},
    )
    return [
        Blocker(
            NAMESPACE_CONTROLLER,
            f"no conditions {human_duration(age)} after delete: namespace controller down?",
            (silent, *controller.evidence),
            (
                Remedy(
                    "make sure kube-controller-manager runs and its namespace controller is "
                    "enabled (--controllers)",
                    "kubectl get pods -n kube-system -l component=kube-controller-manager",
                ),
                Remedy(
                    "check its leader-election lease is renewed",
                    "kubectl get lease -n kube-system kube-controller-manager -o yaml",
                ),
            ),
        )
    ]


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
