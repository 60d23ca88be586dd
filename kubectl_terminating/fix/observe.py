"""Read what each proposal rests on: its target (uid, resourceVersion) and its Checks."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from typing import Any, Protocol

from kubectl_terminating.errors import ApiError, Forbidden
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.fix.plan import (
    ABSENT,
    DELETE_APISERVICE,
    DELETE_WEBHOOK_CONFIGURATION,
    FINALIZE_NAMESPACE,
    FORCE_DELETE_POD,
    GONE_OR_TERMINATING,
    MIN_STALE_LEASE_SECONDS,
    NO_LIVE_LEASE,
    NONE_NAMED,
    NOT_READY,
    OUT_OF_SERVICE_TAINT,
    REMOVE_FINALIZER,
    STALE_LEASE_FACTOR,
    TAINT_OUT_OF_SERVICE,
    Check,
    Proposal,
    Refusal,
    Section,
    Shared,
    step_text,
)
from kubectl_terminating.model import JSON
from kubectl_terminating.timeutil import seconds_since

CONTENT_JSON = "application/json"
CONTENT_JSON_PATCH = "application/json-patch+json"
MAX_NAMED = 5  # matching items named in an observation
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"  # a copy of the rest


class Reader(Protocol):
    def get(self, path: str) -> JSON | None:
        """The object, or None when the server answers 404; raises ApiError otherwise."""
        ...

    def list(self, path: str) -> list[JSON]: ...


@dataclass(frozen=True)
class Outcome:
    check: Check
    holds: bool
    observed: str  # what was read: "absent", "terminating", "none", "found: a, b", ...

    def to_json(self) -> JSON:
        return {**self.check.to_json(), "holds": self.holds, "observed": self.observed}


@dataclass(frozen=True)
class Request:
    """The exact write: verb, path, body, and what makes the server refuse a changed object."""

    verb: str
    path: str
    body: Any
    content_type: str
    precondition: str

    def to_json(self) -> JSON:
        return {
            "verb": self.verb,
            "path": self.path,
            "contentType": self.content_type,
            "precondition": self.precondition,
            "body": self.body,
        }


@dataclass(frozen=True)
class Planned:
    """A proposal whose target and facts were read: ready to be confirmed."""

    proposal: Proposal
    uid: str
    resource_version: str
    outcomes: tuple[Outcome, ...]
    request: Request
    recreate: JSON | None = None  # the full object, for deletions of configuration

    def identity(self) -> JSON:
        """What the digest covers: target, resourceVersion, action, request and evidence."""
        p = self.proposal
        return {
            "action": p.action,
            "target": p.target.path,
            "uid": self.uid,
            "resourceVersion": self.resource_version,
            "finalizer": p.finalizer,
            "request": {
                "verb": self.request.verb,
                "path": self.request.path,
                "body": self.request.body,
            },
            "because": p.blocker.type,
            "evidenceObjects": sorted(
                str(e.object) for e in p.blocker.evidence if e.object is not None
            ),
            "proof": [(o.check.description, o.holds, o.observed) for o in self.outcomes],
        }


@dataclass
class ObservedSection:
    section: Section
    steps: list[Planned | Refusal] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # proposals already carried out by others
    # steps listed under an earlier object, worded as they turned out there (a proposal the
    # facts did not prove is a refusal everywhere it is mentioned)
    shared: list[Shared] = field(default_factory=list)


# -- checks ----------------------------------------------------------------------------------


def _field(item: JSON, dotted: str) -> str:
    value: Any = item
    for part in dotted.split("."):
        value = as_dict(value).get(part)
    return text(value)


def _ready(node: JSON) -> bool:
    conditions = list_of(as_dict(node.get("status")).get("conditions"))
    return any(
        as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True" for c in conditions
    )


def _named(item: JSON) -> str:
    namespace = text(meta(item).get("namespace"))
    return f"{namespace + '/' if namespace else ''}{text(meta(item).get('name'))}"


def _found(names: Sequence[str]) -> str:
    more = f" (+{len(names) - MAX_NAMED} more)" if len(names) > MAX_NAMED else ""
    return ", ".join(sorted(names)[:MAX_NAMED]) + more


def _lease_live(lease: JSON, now: datetime) -> bool:
    """Renewed within STALE_LEASE_FACTOR durations; a Lease that never says when it was
    renewed is taken as live (it cannot prove absence)."""
    spec = as_dict(lease.get("spec"))
    age = seconds_since(spec.get("renewTime"), now)
    duration = spec.get("leaseDurationSeconds")
    limit = STALE_LEASE_FACTOR * duration if isinstance(duration, int) else 0
    return age is None or age <= max(limit, MIN_STALE_LEASE_SECONDS)


def _judge_leases(check: Check, items: list[JSON], now: datetime) -> Outcome:
    """Stale Leases are reported with their last renewal time (absolute: the same at plan and
    apply time, so the digest holds)."""
    matching = [
        i for i in items if any(fnmatchcase(_field(i, check.field), p) for p in check.patterns)
    ]
    live = [i for i in matching if _lease_live(i, now)]
    if live:
        return Outcome(check, False, "found: " + _found([_named(i) for i in live]))
    stale = [
        f"{_named(i)} last renewed {text(as_dict(i.get('spec')).get('renewTime'))}"
        for i in matching
    ]
    return Outcome(check, True, "stale: " + _found(stale) if stale else "none")


def judge(check: Check, answer: JSON | list[JSON] | None, now: datetime | None = None) -> Outcome:
    """Whether check holds, given what was read (None: 404) at `now`. Pure."""
    if check.kind == ABSENT:
        return Outcome(check, answer is None, "absent" if answer is None else "exists")
    if check.kind == GONE_OR_TERMINATING:
        if answer is None:
            return Outcome(check, True, "absent")
        terminating = isinstance(answer, dict) and bool(meta(answer).get("deletionTimestamp"))
        return Outcome(check, terminating, "terminating" if terminating else "exists")
    if check.kind == NOT_READY:
        if not isinstance(answer, dict):
            return Outcome(check, False, "absent")
        ready = _ready(answer)
        return Outcome(check, not ready, "Ready" if ready else "not Ready")
    items = answer if isinstance(answer, list) else []
    if check.kind == NO_LIVE_LEASE:
        return _judge_leases(check, items, now or datetime.now(timezone.utc))
    if check.kind == NONE_NAMED:
        found = [
            _named(i)
            for i in items
            if any(fnmatchcase(_field(i, check.field), p) for p in check.patterns)
        ]
        if not found:
            return Outcome(check, True, "none")
        return Outcome(check, False, "found: " + _found(found))
    return Outcome(check, False, f"unknown check {check.kind}")


def evaluate(check: Check, reader: Reader, now: datetime | None = None) -> Outcome:
    try:
        listed = check.kind in (NONE_NAMED, NO_LIVE_LEASE)
        answer = reader.list(check.path) if listed else reader.get(check.path)
    except ApiError as error:
        reason = "forbidden" if isinstance(error, Forbidden) else error.message
        return Outcome(check, False, f"unreadable: {reason}")
    return judge(check, answer, now)


# -- requests --------------------------------------------------------------------------------


def _preconditions(uid: str, rv: str) -> str:
    return f"uid {uid}, resourceVersion {rv}"


def _delete(path: str, uid: str, rv: str, grace: int | None = None) -> Request:
    body: JSON = {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "preconditions": {"uid": uid, "resourceVersion": rv},
    }
    if grace is not None:
        body["gracePeriodSeconds"] = grace
    return Request("DELETE", path, body, CONTENT_JSON, _preconditions(uid, rv))


def _json_patch(path: str, rv: str, ops: list[JSON], what: str) -> Request:
    test = {"op": "test", "path": "/metadata/resourceVersion", "value": rv}
    return Request(
        "PATCH",
        path,
        [test, *ops],
        CONTENT_JSON_PATCH,
        f"test op: resourceVersion {rv}" + (f", {what}" if what else ""),
    )


def recreatable(obj: JSON) -> JSON:
    """The object as it can be created again: no status, server-set metadata removed."""
    kept = {k: v for k, v in obj.items() if k not in ("status",)}
    m = meta(obj)
    kept["metadata"] = {k: v for k, v in m.items() if k in ("name", "namespace", "labels")}
    annotations = {k: v for k, v in as_dict(m.get("annotations")).items() if k != LAST_APPLIED}
    if annotations:
        kept["metadata"]["annotations"] = annotations
    return kept


def _taint_request(path: str, node: JSON, rv: str) -> Request | None:
    taints = list_of(as_dict(node.get("spec")).get("taints"))
    if any(as_dict(t).get("key") == OUT_OF_SERVICE_TAINT for t in taints):
        return None
    taint = {"key": OUT_OF_SERVICE_TAINT, "value": "nodeshutdown", "effect": "NoExecute"}
    op: JSON = (
        {"op": "add", "path": "/spec/taints/-", "value": taint}
        if taints
        else {"op": "add", "path": "/spec/taints", "value": [taint]}
    )
    return _json_patch(path, rv, [op], "")


def _finalizer_request(p: Proposal, obj: JSON, uid: str, rv: str) -> Request | None:
    if p.action == FINALIZE_NAMESPACE:
        spec = as_dict(obj.get("spec"))
        left = [f for f in list_of(spec.get("finalizers")) if f != p.finalizer]
        if len(left) == len(list_of(spec.get("finalizers"))):
            return None
        body = copy.deepcopy(obj)
        body["spec"] = dict(spec, finalizers=left)
        path = p.target.path + "/finalize"
        return Request("PUT", path, body, CONTENT_JSON, f"metadata.resourceVersion {rv} in body")
    finalizers = list_of(meta(obj).get("finalizers"))
    if p.finalizer not in finalizers:
        return None
    at = f"/metadata/finalizers/{finalizers.index(p.finalizer)}"
    ops: list[JSON] = [
        {"op": "test", "path": at, "value": p.finalizer},
        {"op": "remove", "path": at},
    ]
    return _json_patch(p.target.path, rv, ops, f"{at} is {p.finalizer}")


def build_request(p: Proposal, obj: JSON) -> Request | None:
    """The narrowest write for p on obj as just read; None when there is nothing to do."""
    uid, rv = text(meta(obj).get("uid")), text(meta(obj).get("resourceVersion"))
    if p.action == FORCE_DELETE_POD:
        return _delete(p.target.path, uid, rv, grace=0)
    if p.action in (DELETE_APISERVICE, DELETE_WEBHOOK_CONFIGURATION):
        return _delete(p.target.path, uid, rv)
    if p.action == TAINT_OUT_OF_SERVICE:
        return _taint_request(p.target.path, obj, rv)
    if p.action in (REMOVE_FINALIZER, FINALIZE_NAMESPACE):
        return _finalizer_request(p, obj, uid, rv)
    return None


# -- observing a plan ------------------------------------------------------------------------


def observe_one(
    p: Proposal, reader: Reader, now: datetime | None = None
) -> Planned | Refusal | str:
    """Planned, a Refusal (a fact does not hold), or why nothing is left to do (a str)."""
    try:
        obj = reader.get(p.target.path)
    except ApiError as error:
        return Refusal(p.subject, p.blocker, f"{p.target} could not be read: {error.message}")
    if obj is None:
        return f"{p.describe()}: already gone"
    uid = text(meta(obj).get("uid"))
    if p.target.uid and uid != p.target.uid:
        return Refusal(p.subject, p.blocker, f"{p.target} was replaced since it was explained")
    outcomes = tuple(evaluate(c, reader, now) for c in p.checks)
    failed = [f"{o.check.description}: {o.observed}" for o in outcomes if not o.holds]
    if failed:
        return Refusal(p.subject, p.blocker, "not proven: " + "; ".join(failed), p.target)
    request = build_request(p, obj)
    if request is None:
        return f"{p.describe()}: already done"
    keep = p.action in (DELETE_APISERVICE, DELETE_WEBHOOK_CONFIGURATION)
    rv = text(meta(obj).get("resourceVersion"))
    return Planned(p, uid, rv, outcomes, request, recreatable(obj) if keep else None)


def observe(
    sections: Sequence[Section], reader: Reader, now: datetime | None = None
) -> list[ObservedSection]:
    """now: when Lease renewals are judged from (default: this machine's clock)."""
    observed = []
    turned_out: dict[str, str] = {}  # a proposal's text -> what it became when observed
    for section in sections:
        out = ObservedSection(section)
        for step in section.steps:
            if isinstance(step, Refusal):
                out.steps.append(step)
                continue
            result = observe_one(step, reader, now)
            if isinstance(result, str):
                out.done.append(result)
                turned_out[step.describe()] = f"nothing to do: {result}"
            else:
                out.steps.append(result)
                if isinstance(result, Refusal):
                    turned_out[step.describe()] = step_text(result)
        out.shared = [replace(s, what=turned_out.get(s.what, s.what)) for s in section.shared]
        observed.append(out)
    return observed


def planned(sections: Sequence[ObservedSection]) -> list[Planned]:
    return [s for section in sections for s in section.steps if isinstance(s, Planned)]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
