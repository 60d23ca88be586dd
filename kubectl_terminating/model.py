"""The findings the explainers produce and the renderers print (the `-o json` contract: README.md,
"Output contract"; blockers: docs/explainers.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

API_VERSION = "terminating.kubectl.io/v1"

# Stable blocker types: public API of `-o json`. Add new ones, never rename one.
FINALIZER = "finalizer"
OWNER_DEPENDENTS = "owner-dependents"
NODE_MISSING = "node-missing"
NODE_NOT_READY = "node-not-ready"
RUNTIME_UNAVAILABLE = "runtime-unavailable"
LIFECYCLE_HOOK = "lifecycle-hook"
NETWORK_TEARDOWN = "network-teardown"
CONTAINERS_RUNNING = "containers-running"
VOLUMES_NOT_RECLAIMED = "volumes-not-reclaimed"
CSI_DRIVER_MISSING = "csi-driver-missing"
VOLUME_ATTACHMENT = "volume-attachment"
WEBHOOK = "webhook"
APISERVICE_UNAVAILABLE = "apiservice-unavailable"
CONVERSION_WEBHOOK = "conversion-webhook"
CONTENT_REMAINING = "content-remaining"
NAMESPACE_FINALIZER = "namespace-finalizer"
NAMESPACE_CONTROLLER = "namespace-controller"
NAMESPACE_TERMINATING = "namespace-terminating"
NAMESPACE_CONDITION = "namespace-condition"
PROTECTION_IN_USE = "protection-in-use"
GRACE_PERIOD = "grace-period"
UNKNOWN = "unknown"

# Which blocker is "the" blocker in one-line views: the most specific root cause first.
# A cause that explains others (an unavailable APIService stalls every namespace) ranks above
# the symptoms it produces (content remaining, finalizers left).
PRIORITY: tuple[str, ...] = (
    NODE_MISSING,
    NODE_NOT_READY,
    RUNTIME_UNAVAILABLE,
    APISERVICE_UNAVAILABLE,
    CONVERSION_WEBHOOK,
    WEBHOOK,
    CSI_DRIVER_MISSING,
    VOLUME_ATTACHMENT,
    LIFECYCLE_HOOK,
    NETWORK_TEARDOWN,
    VOLUMES_NOT_RECLAIMED,
    CONTAINERS_RUNNING,
    OWNER_DEPENDENTS,
    PROTECTION_IN_USE,
    FINALIZER,
    NAMESPACE_CONTROLLER,
    NAMESPACE_CONDITION,
    CONTENT_REMAINING,
    NAMESPACE_FINALIZER,
    NAMESPACE_TERMINATING,
    UNKNOWN,
    GRACE_PERIOD,
)


def priority(blocker_type: str) -> int:
    """Rank of a blocker type; unknown types rank just before `grace-period`."""
    try:
        return PRIORITY.index(blocker_type)
    except ValueError:
        return len(PRIORITY) - 1


@dataclass(frozen=True)
class ObjectRef:
    kind: str
    name: str
    namespace: str | None = None
    api_version: str | None = None

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}" if not where else f"{self.kind} {where}{self.name}"

    def to_json(self) -> JSON:
        out: JSON = {"kind": self.kind, "name": self.name}
        if self.namespace:
            out["namespace"] = self.namespace
        if self.api_version:
            out["apiVersion"] = self.api_version
        return out


@dataclass(frozen=True)
class Evidence:
    """A fact read from the cluster that proves a blocker: which object, what it says."""

    message: str
    object: ObjectRef | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> JSON:
        out: JSON = {"message": self.message}
        if self.object is not None:
            out["object"] = self.object.to_json()
        if self.fields:
            out["fields"] = dict(self.fields)
        return out


@dataclass(frozen=True)
class Remedy:
    """One step a user can take. Remedies are listed safest first; nothing is ever run."""

    description: str
    command: str | None = None
    destructive: bool = False
    when: str | None = None  # the condition under which the step is safe

    def to_json(self) -> JSON:
        out: JSON = {"description": self.description, "destructive": self.destructive}
        if self.command:
            out["command"] = self.command
        if self.when:
            out["when"] = self.when
        return out


@dataclass(frozen=True)
class Blocker:
    type: str
    summary: str
    evidence: tuple[Evidence, ...] = ()
    remedy: tuple[Remedy, ...] = ()

    def to_json(self) -> JSON:
        return {
            "type": self.type,
            "summary": self.summary,
            "evidence": [e.to_json() for e in self.evidence],
            "remedy": [r.to_json() for r in self.remedy],
        }


@dataclass(frozen=True)
class ContentType:
    """Remaining objects of one resource type in a terminating namespace."""

    resource: str  # plural.group, e.g. "widgets.example.com" or "pods"
    kind: str
    count: int
    # objects that have finalizers or are terminating themselves
    objects: tuple[JSON, ...] = ()
    error: str | None = None  # why the type could not be listed

    def to_json(self) -> JSON:
        out: JSON = {"resource": self.resource, "kind": self.kind, "count": self.count}
        out["objects"] = list(self.objects)
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class Finding:
    """One terminating object, with everything known about why it has not gone."""

    kind: str
    api_version: str
    name: str
    namespace: str | None
    uid: str
    deletion_timestamp: str
    overdue_seconds: int | None
    terminating_seconds: int | None
    finalizers: list[str]
    blockers: list[Blocker] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # pods
    node: str | None = None
    phase: str | None = None
    containers: list[JSON] = field(default_factory=list)
    # namespaces
    conditions: list[JSON] | None = None
    remaining: list[ContentType] | None = None
    # explanations of objects inside (pods of a terminating namespace)
    children: list[Finding] = field(default_factory=list)
    # the kubeconfig context it was found in, in a run over several (fleet.py)
    context: str | None = None

    @property
    def main_blocker(self) -> Blocker | None:
        if not self.blockers:
            return None
        if not self.stuck:
            # Inside the grace period the honest one-liner is "not stuck yet", whatever else
            # is listed (those say what would hold the object once the period ends).
            grace = [b for b in self.blockers if b.type == GRACE_PERIOD]
            if grace:
                return grace[0]
        return min(self.blockers, key=lambda b: priority(b.type))

    @property
    def stuck(self) -> bool:
        if self.overdue_seconds is not None and self.overdue_seconds < 0:
            return False  # still inside the grace period: nothing can be stuck yet
        return any(b.type != GRACE_PERIOD for b in self.blockers) or (
            self.overdue_seconds is not None and self.overdue_seconds > 0
        )

    @property
    def remaining_count(self) -> int | None:
        if self.remaining is None:
            return None
        return sum(c.count for c in self.remaining)

    def sort_blockers(self) -> None:
        self.blockers.sort(key=lambda b: priority(b.type))

    def to_json(self) -> JSON:
        from kubectl_terminating.kinds import of_finding

        out: JSON = {
            "kind": self.kind,
            "apiVersion": self.api_version,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "deletionTimestamp": self.deletion_timestamp,
            "overdueSeconds": self.overdue_seconds,
            "terminatingSeconds": self.terminating_seconds,
            "finalizers": list(self.finalizers),
            "blockers": [b.to_json() for b in self.blockers],
            "warnings": list(self.warnings),
        }
        out.update(of_finding(self).json_extras(self))  # its kind's own fields (kinds.py)
        if self.conditions is not None:
            out["conditions"] = list(self.conditions)
        if self.remaining is not None:
            out["remaining"] = [c.to_json() for c in self.remaining]
        if self.children:
            out["pods"] = [c.to_json() for c in self.children]
        if self.context is not None:
            out = {"context": self.context, **out}
        return out
