"""What a terminating namespace still holds and why it cannot be deleted: the content left
type by type, finalizers and webhooks holding it (merged into one blocker per cause), and CRDs
whose conversion webhook is down.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    CERTAIN,
    CONTENT_REMAINING,
    CONVERSION_WEBHOOK,
    LIKELY,
    POSSIBLE,
    weakest,
)
from kubectl_terminating.explain.common import as_dict, meta, text
from kubectl_terminating.explain.finalizers import (
    finalizer_blockers,
    service_backend,
    short_owner,
    webhook_service,
)
from kubectl_terminating.explain.knowledge import lookup
from kubectl_terminating.explain.namespace_conditions import (
    FAILED_CONVERSION,
    SUMMARY_WIDTH,
    clip,
    failure_reason,
    namespace_conditions,
    ns_ref,
    remaining_condition_evidence,
)
from kubectl_terminating.explain.namespace_facts import Content, NamespaceFacts, finalizers_of
from kubectl_terminating.explain.webhooks import conversion_tls_problem, webhook_blockers
from kubectl_terminating.model import (
    JSON,
    Blocker,
    ContentType,
    Evidence,
    ObjectRef,
    Remedy,
    Subject,
)
from kubectl_terminating.view import ClusterView, ContentListing

T = TypeVar("T")

MAX_EXPLAINED_PER_TYPE = 20  # objects per type whose finalizers are explained one by one
MAX_MERGED = 10  # objects named in one merged blocker


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
    # one cause seen on several objects is as sure as its least sure witness
    least = weakest(b.confidence for b in group)
    basis = next(b.basis for b in group if (b.confidence or POSSIBLE) == least)
    return replace(
        group[0],
        evidence=tuple(evidence),
        remedy=tuple(remedies),
        confidence=least,
        basis=basis,
    )


def merge_blockers(blockers: Iterable[Blocker]) -> list[Blocker]:
    groups: dict[tuple[str, str], list[Blocker]] = {}
    for blocker in blockers:
        groups.setdefault((blocker.type, blocker.summary), []).append(blocker)
    return [merge_group(group) for group in groups.values()]


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


def content_types(content: Content) -> list[ContentType]:
    """The `remaining` of `-o json`: each type listed with objects or an error."""
    return [content_type(c) for c in content.listings if c.items or c.error]


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


NAMED_PER_TYPE = 2  # object names a summary shows per type; the rest is counted
# as wide as a namespace's summary may be (SUMMARY_WIDTH, and 10 for long finalizers)
CONTENT_WIDTH = SUMMARY_WIDTH + 10


def _type_named(listing: ContentListing) -> str:
    """`pods (web-0, web-1, +3 more)`: the type and the first objects left of it."""
    names = sorted(text(meta(i).get("name")) for i in listing.items)
    shown = ", ".join(n for n in names[:NAMED_PER_TYPE] if n)
    more = len(names) - NAMED_PER_TYPE
    said = f"{shown}, +{more} more" if more > 0 and shown else shown or count(len(names), "object")
    return f"{listing.resource.qualified} ({said})"


def content_summary(content: Content) -> str:
    """What is left, named: the finalizers they carry, the types and their objects, the types
    that could not be listed (never only a count). Too long a line gives each type's count
    instead of its objects' names, then only the types, then their plurals with counts, then
    is cut at its end (clip)."""
    left = content.left
    total = sum(len(c.items) for c in left)
    finalizers = sorted({f for c in left for i in c.items for f in finalizers_of(i)})
    unlisted = ", ".join(c.resource.qualified for c in content.unlisted)

    def line(named: Callable[[ContentListing], str]) -> str:
        parts = [("finalizer " if len(finalizers) == 1 else "finalizers ") + ", ".join(finalizers)]
        parts = parts if finalizers else []
        if left:
            said = "left" if finalizers else f"{count(total, 'object')} left"
            parts.append(f"{said}: " + ", ".join(map(named, left)))
        return "; ".join([*parts, f"not listable: {unlisted}"] if unlisted else parts)

    for named in (_type_named, _type_counted, _type_only, _plural_counted):
        found = line(named)
        if len(found) <= CONTENT_WIDTH:
            return found
    return clip(found, CONTENT_WIDTH)


def _type_counted(listing: ContentListing) -> str:
    return f"{listing.resource.qualified} ({len(listing.items)})"


def _plural_counted(listing: ContentListing) -> str:
    """`widgets (1)`: a long group's type by its plural alone (the evidence has it whole)."""
    return f"{listing.resource.plural} ({len(listing.items)})"


def _type_only(listing: ContentListing) -> str:
    return listing.resource.qualified


def content_blockers(facts: NamespaceFacts) -> list[Blocker]:
    content, ns = facts.content, facts.ns
    if content is None:
        return []
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
    # only types that could not be listed: objects may be left, or not (ranks after the proven)
    unchecked = None if content.left else content.warnings()[0]
    said = remaining_condition_evidence(ns)
    return [
        Blocker(
            CONTENT_REMAINING,
            content_summary(content),
            (*evidence, *said),
            tuple(remedies),
            unchecked=unchecked,
            # content is left, as listed (and said by the controller); what holds it is each
            # object's own blocker, which this one does not name: never more than likely
            confidence=LIKELY,
            basis="the namespace controller's condition says content remains, not what holds it"
            if said
            else "objects listed in the namespace, not what holds them",
        )
    ]


def content_finalizer_blockers(facts: NamespaceFacts) -> list[Blocker]:
    content, view = facts.content, facts.view
    if content is None:
        return []
    blockers: list[Blocker] = []
    for listing in content.left:
        held = [i for i in listing.items if finalizers_of(i)]
        for item in held[:MAX_EXPLAINED_PER_TYPE]:
            blockers.extend(finalizer_blockers(item, listing.resource, view))
    return merge_blockers(blockers)


def pending_operations(listing: ContentListing) -> list[str]:
    """The writes the content of one type still needs: DELETE for objects not deleted yet,
    UPDATE (finalizer removal) for objects with finalizers. A DELETE-only webhook cannot hold
    objects that are already terminating: the controller's repeated DELETE changes nothing."""
    operations = []
    if any(not meta(i).get("deletionTimestamp") for i in listing.items):
        operations.append("DELETE")
    if any(finalizers_of(i) for i in listing.items):
        operations.append("UPDATE")
    return operations


def content_webhook_blockers(facts: NamespaceFacts) -> list[Blocker]:
    content, ns, view = facts.content, facts.ns, facts.view
    if content is None:
        return []
    name = text(meta(ns).get("name"))
    blockers: list[Blocker] = []
    for listing in content.left:
        operations = pending_operations(listing)
        if operations:
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


def conversion_blocker(crd: JSON, view: ClusterView, said: Sequence[str] = ()) -> Blocker | None:
    """A CRD whose conversion webhook has no backend, or one it cannot call over TLS (its
    caBundle's certificate, an x509 failure in `said`, the namespace's condition messages):
    its objects can be neither read nor deleted, so a namespace holding them (or the CRD's own
    cleanup) cannot finish."""
    service = conversion_service(crd)
    if service is None:
        return None
    backend = service_backend(*service, view)
    name = text(meta(crd).get("name"))
    ref = ObjectRef("CustomResourceDefinition", name, None, "apiextensions.k8s.io/v1")
    uses = Evidence(
        f"CRD {name} converts versions through service {service[0]}/{service[1]}",
        ref,
        {"strategy": "Webhook", "service": f"{service[0]}/{service[1]}"},
        about=Subject("CustomResourceDefinition", name),
    )
    if backend.up is not False:
        tls = conversion_tls_problem(crd, view.now, said)
        if tls is None:
            return None
        return Blocker(
            CONVERSION_WEBHOOK,
            clip(f"TLS: conversion webhook of {name}: {tls.what}"),
            (uses, backend.evidence, tls.evidence),
            (tls.remedy, *conversion_remedies(name, *service)[1:]),
            confidence=tls.confidence,
            basis=tls.basis,
        )
    return Blocker(
        CONVERSION_WEBHOOK,
        clip(f"conversion webhook of {name} is down"),
        (uses, backend.evidence),
        conversion_remedies(name, *service),
        # from the Service's state: the API server's call to it is not seen failing
        confidence=LIKELY,
        basis=f"its conversion Service {service[0]}/{service[1]} is down",
    )


def crd_serves(crd: JSON, group: str, plural: str) -> bool:
    spec = as_dict(crd.get("spec"))
    names = as_dict(spec.get("names"))
    return text(spec.get("group")) == group and text(names.get("plural")) == plural


def failing_conversions(ns: JSON) -> set[tuple[str, str]]:
    """(group, kind) of every conversion webhook a failure condition of ns names."""
    return {
        (m.group(1), m.group(3))
        for c in namespace_conditions(ns)
        if failure_reason(c) is not None
        for m in FAILED_CONVERSION.finditer(text(c.get("message")))
    }


def names_conversion(crd: JSON, failing: set[tuple[str, str]]) -> bool:
    spec = as_dict(crd.get("spec"))
    kind = text(as_dict(spec.get("names")).get("kind"))
    return (text(spec.get("group")), kind) in failing


def content_conversion_blockers(facts: NamespaceFacts) -> list[Blocker]:
    """CRDs with objects left here (or whose listing fails in conversion) hold this namespace,
    and so do CRDs its conditions name: a conversion webhook that fails for objects in another
    namespace still fails the controller's lists here (the watch cache cannot start)."""
    content, ns, view = facts.content, facts.ns, facts.view
    if content is None:
        return []
    # a listing refused for another reason (forbidden, not in a file) says nothing of conversion
    involved = [c.resource for c in content.listings if c.items or "conversion" in (c.error or "")]
    failing = failing_conversions(ns)
    blockers = []
    for crd in reads.crds(view):
        here = any(crd_serves(crd, r.group, r.plural) for r in involved)
        if not here and not names_conversion(crd, failing):
            continue
        said = [text(c.get("message")) for c in namespace_conditions(ns)]
        blocker = conversion_blocker(crd, view, said)
        if blocker is not None and names_conversion(crd, failing):
            blocker = replace(
                blocker,
                confidence=CERTAIN,
                basis="the namespace controller's condition names the conversion webhook",
            )
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
