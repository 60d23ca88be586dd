"""What the namespace controller says about a namespace it cannot finish: the conditions it
writes, the unavailable APIServices behind a discovery failure, and its silence when it writes
none. Also the summary clipping and Namespace reference every namespace explainer uses.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.causes import (
    APISERVICE_UNAVAILABLE,
    CERTAIN,
    LIKELY,
    NAMESPACE_CONDITION,
    NAMESPACE_CONTROLLER,
)
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.explain.finalizers import NOT_RUNNING, lease_liveness
from kubectl_terminating.explain.knowledge import KCM_LEASE
from kubectl_terminating.explain.namespace_facts import NamespaceFacts
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy, Subject
from kubectl_terminating.resources import (
    NAMESPACE_DELETION_CONDITIONS,
)
from kubectl_terminating.timeutil import human_duration, seconds_since

# The namespace controller's conditions and reasons are the catalogue's ns-* entries (its
# status_condition_utils.go); what each failure reads as here:
FAILURE_REASONS = {
    "DiscoveryFailed": "discovery failed",
    "GroupVersionParsingFailed": "group-version parsing failed",
    "ContentDeletionFailed": "content deletion failed",
}
FAILURE_ENTRIES = ("ns-discovery-failure", "ns-group-version-parsing", "ns-content-deletion-failed")
REMAINING_ENTRIES = ("ns-content-remaining", "ns-finalizers-remaining")


def _condition(key: str) -> Mapping[str, Any]:
    return catalogue.entry(key).condition or {}


def failure_types() -> dict[str, str]:
    """Each failure condition's type and the reason the controller writes with it."""
    return {str(_condition(k)["type"]): str(_condition(k)["reasons"][0]) for k in FAILURE_ENTRIES}


def remaining_reasons() -> frozenset[str]:
    """Reasons of the two "remaining" conditions (releases differ on the plural)."""
    return frozenset(r for k in REMAINING_ENTRIES for r in _condition(k).get("reasons", ()))


SILENT_CONTROLLER_SECONDS = 300  # the controller writes conditions within seconds of a delete
SUMMARY_WIDTH = 70
# "Failed to delete all resource types, 1 remaining: Internal error occurred: ..."
BOILERPLATE = re.compile(
    r"^(Failed to delete all resource types, \d+ remaining: )?(Internal error occurred: )?"
)
FAILED_WEBHOOK = re.compile(r'failed calling webhook "([^"]+)"')
GROUP_VERSION = re.compile(r"([a-z0-9][a-z0-9.-]*\.[a-z0-9-]+/v[0-9][a-z0-9]*):")
# "conversion webhook for widgets.example.com/v1, Kind=Widget failed" (apiextensions); kinds of
# CRDs made by the e2e suites contain dashes, so anything up to " failed"
FAILED_CONVERSION = re.compile(
    r"conversion webhook for ([a-z0-9.-]+)/([a-z0-9]+), Kind=(\S+?) failed"
)

# The controller deleted every object of a type, none carries a finalizer, yet some are still
# there (pkg/controller/namespace/deletion: "unexpected items still remain in namespace: %s for
# gvr: %v", the gvr as "<group>/<version>, Resource=<plural>"): content left, typically pods
# waiting on their kubelet, not a delete that was rejected.
STILL_REMAIN = re.compile(
    r"unexpected items still remain in namespace: \S+ for gvr: ([a-z0-9.-]*)/[a-z0-9]+, "
    r"Resource=([a-z0-9-]+)"
)


def still_remaining(message: str) -> list[str]:
    """The types (`pods`, `plural.group`) the message says are still there after deletion."""
    found = (
        f"{plural}.{group}" if group else plural for group, plural in STILL_REMAIN.findall(message)
    )
    return list(dict.fromkeys(found))


def rejected_part(message: str) -> str:
    """The message without the controller's boilerplate and its "still remain" errors: what
    failed beyond content still being there ("" when nothing did)."""
    rest = STILL_REMAIN.sub("", BOILERPLATE.sub("", message.strip()))
    return rest.strip(" ,[]")


def clip(line: str, width: int = SUMMARY_WIDTH) -> str:
    """line in at most width characters, cut between words (never mid-name) with an ellipsis."""
    line = " ".join(line.split())
    if len(line) <= width:
        return line
    head = line[: width - 1]
    cut = head.rfind(" ")
    if cut > width // 2:
        head = head[:cut]
    if head.count("(") > head.count(")"):  # a parenthesis cut open says less than none
        head = head[: head.rfind("(")]
    return head.rstrip(" ,;:(") + "…"


def ns_ref(ns: JSON) -> ObjectRef:
    return ObjectRef("Namespace", text(meta(ns).get("name")), None, "v1")


# -- conditions ------------------------------------------------------------------------------


def namespace_conditions(ns: JSON) -> list[JSON]:
    """The conditions, each with its string fields only: a value of another type (a corrupted
    or hand-edited object) reads as absent, so no explainer has to guard against it."""
    keys = ("type", "status", "reason", "message", "lastTransitionTime")
    return [
        {key: c[key] if isinstance(c.get(key), str) else None for key in keys}
        for c in list_of(as_dict(ns.get("status")).get("conditions"))
        if isinstance(c, dict)
    ]


def failure_reason(condition: JSON) -> str | None:
    """The failure a True condition reports, by reason or (for unknown reasons) by type."""
    if condition.get("status") != "True":
        return None
    reason = text(condition.get("reason"))
    if reason in FAILURE_REASONS:
        return reason
    return failure_types().get(text(condition.get("type")))


def condition_summary(reason: str, message: str) -> str:
    if reason == "DiscoveryFailed":
        groups = list(dict.fromkeys(GROUP_VERSION.findall(message)))
        more = f" (+{len(groups) - 1} more)" if len(groups) > 1 else ""
        return clip(f"discovery failed for {groups[0] if groups else 'some groups'}{more}")
    webhook = FAILED_WEBHOOK.search(message)
    conversion = FAILED_CONVERSION.search(message)
    cause = BOILERPLATE.sub("", message).strip()
    if webhook:
        cause = f"webhook {webhook.group(1)}"
    elif conversion:  # the names, not "conversion webhook for <group>/<version>, Kind=" cut short
        return clip(
            f"deletes fail: conversion webhook of {conversion.group(3)}.{conversion.group(1)}"
        )
    return clip(f"{FAILURE_REASONS[reason]}: {cause or 'the condition gives no message'}")


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


def condition_blockers(facts: NamespaceFacts) -> list[Blocker]:
    ns = facts.ns
    blockers = []
    for condition in namespace_conditions(ns):
        reason = failure_reason(condition)
        if reason is None:
            continue
        message = said = text(condition.get("message"))
        if reason == "ContentDeletionFailed" and still_remaining(message):
            said = rejected_part(message)
            if not said:
                continue  # content still there, not a failed delete: the content blockers say
        evidence = Evidence(
            f"{text(condition.get('type'))}={condition.get('status')} ({reason}): {message}",
            ns_ref(ns),
            condition,
        )
        blockers.append(
            Blocker(
                NAMESPACE_CONDITION,
                condition_summary(reason, said),
                (evidence,),
                (CONDITION_REMEDIES[reason],),
                confidence=CERTAIN,
                basis=f"the namespace controller's {text(condition.get('type'))} condition",
            )
        )
    return blockers


def remaining_condition_evidence(ns: JSON) -> list[Evidence]:
    return [
        Evidence(f"{c.get('type')}: {text(c.get('message'))}", ns_ref(ns), c)
        for c in namespace_conditions(ns)
        if c.get("status") == "True" and c.get("reason") in remaining_reasons()
    ]


# -- APIServices -----------------------------------------------------------------------------


def available_condition(apiservice: JSON) -> JSON | None:
    conditions = list_of(as_dict(apiservice.get("status")).get("conditions"))
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
    backend = ObjectRef("Service", text(service.get("name")), text(service.get("namespace")))
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
        about=Subject(
            "APIService", name, backend=backend if backend.name and backend.namespace else None
        ),
    )
    return Blocker(
        APISERVICE_UNAVAILABLE,
        clip(f"APIService {name} unavailable: {reason or 'no reason given'}"),
        (evidence,),
        apiservice_remedies(name, service),
        # False: the aggregator's availability check failed; discovery then fails for every
        # namespace deletion. Unknown: it has not said
        confidence=CERTAIN if condition.get("status") == "False" else LIKELY,
        basis=f"the APIService's Available={condition.get('status')} condition",
    )


def apiservice_blockers(facts: NamespaceFacts) -> list[Blocker]:
    """Any unavailable APIService fails discovery, which stalls every namespace deletion."""
    found = (apiservice_blocker(a) for a in reads.apiservices(facts.view))
    return [b for b in found if b is not None]


# -- the namespace controller itself ---------------------------------------------------------


def controller_blocker(facts: NamespaceFacts) -> list[Blocker]:
    """No condition long after the delete: the namespace controller never looked at it."""
    ns, view = facts.ns, facts.view
    if facts.spec_missing:
        return []  # a partial paste: conditions it lacks may just have been left out
    written = {c.get("type") for c in namespace_conditions(ns)}
    deleted = meta(ns).get("deletionTimestamp")
    age = seconds_since(deleted, view.now)
    if written & NAMESPACE_DELETION_CONDITIONS or age is None or age <= SILENT_CONTROLLER_SECONDS:
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
            # a stale Lease says it is down; otherwise only the silence points at it
            confidence=CERTAIN if controller.state == NOT_RUNNING else LIKELY,
            basis="kube-controller-manager's Lease is stale"
            if controller.state == NOT_RUNNING
            else "no deletion condition written long after the delete",
        )
    ]
