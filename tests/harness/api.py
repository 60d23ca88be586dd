"""Reading and writing any object of the test control plane, with plain JSON dicts.

The building blocks the other helpers stand on: time stamps as the API writes them, unique
names, polling, GET/DELETE, references between objects, conditions, namespaces, ConfigMaps,
Events. What stands in for absent components lives next door: tests/harness/kubelet.py (nodes,
leases, pods), tests/harness/storage.py (volumes), tests/harness/api_extensions.py (webhooks,
APIServices, CRDs).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, Concatenate, ParamSpec, TypeVar

from tests.harness.controlplane import ApiError, ControlPlane

JSON = dict[str, Any]
T = TypeVar("T")
P = ParamSpec("P")

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"

# --- time and names ------------------------------------------------------------------------


def now(offset_seconds: float = 0) -> datetime:
    return datetime.now(timezone.utc) + timedelta(seconds=offset_seconds)


def rfc3339(when: datetime | None = None) -> str:
    """metav1.Time: second precision, Z suffix."""
    return (when or now()).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(when: datetime | None = None) -> str:
    """metav1.MicroTime (Lease renewTime, events.k8s.io eventTime)."""
    return (when or now()).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def timestamp(when: datetime | str | None) -> str:
    """metav1.Time of `when` (now when None); a string passes through as written."""
    return when if isinstance(when, str) else rfc3339(when)


def unique_ns(prefix: str) -> str:
    """A namespace name no other test uses: prefix plus 6 random hex digits (max 63 chars)."""
    return f"{prefix[:56].rstrip('-')}-{secrets.token_hex(3)}"


def wait_for(
    predicate: Callable[[], T | None],
    timeout: float = 30.0,
    interval: float = 0.2,
    message: str = "condition",
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll until predicate returns something truthy and return it; TimeoutError otherwise.

    Exceptions in `ignore` (e.g. ApiError while an object does not exist yet) count as falsy.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = predicate()
            if last:
                return last
        except ignore as e:
            last = e
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {message}; last: {last!r}")
        time.sleep(interval)


def created_in(
    path: str, build: Callable[P, JSON]
) -> Callable[Concatenate[ControlPlane, str, P], JSON]:
    """A create function: (cp, namespace, then build's arguments) POSTs what build makes to
    path, whose `{ns}` is the namespace."""

    def create(cp: ControlPlane, ns: str, /, *args: P.args, **kwargs: P.kwargs) -> JSON:
        return cp.api("POST", path.format(ns=ns), build(*args, **kwargs))

    return create


def get(cp: ControlPlane, path: str) -> JSON:
    return cp.api("GET", path)


def get_or_none(cp: ControlPlane, path: str) -> JSON | None:
    try:
        return cp.api("GET", path)
    except ApiError as e:
        if e.status == 404:
            return None
        raise


def delete(
    cp: ControlPlane,
    path: str,
    grace_period: int | None = None,
    propagation: str | None = None,
) -> JSON:
    """DELETE with DeleteOptions; returns the object (now with deletionTimestamp) or a Status."""
    options: JSON = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if grace_period is not None:
        options["gracePeriodSeconds"] = grace_period
    if propagation is not None:
        options["propagationPolicy"] = propagation  # Foreground, Background, Orphan
    return cp.api("DELETE", path, options)


def ref(obj: JSON) -> JSON:
    """An ObjectReference (involvedObject) to obj."""
    meta = obj["metadata"]
    out: JSON = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj["kind"]}
    for key in ("name", "namespace", "uid", "resourceVersion"):
        if key in meta:
            out[key] = meta[key]
    return out


def owner_ref(obj: JSON, controller: bool = True, block_owner_deletion: bool = True) -> JSON:
    """An ownerReferences entry pointing at obj."""
    return {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": block_owner_deletion,
    }


def condition(
    type_: str,
    status: str,
    reason: str = "",
    message: str = "",
    last_transition: datetime | str | None = None,
    heartbeat: datetime | str | None = None,
) -> JSON:
    """A NodeCondition (also fine for most other condition lists)."""
    out: JSON = {
        "type": type_,
        "status": status,
        "lastHeartbeatTime": timestamp(heartbeat),
        "lastTransitionTime": timestamp(last_transition),
    }
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def remove_finalizers(cp: ControlPlane, path: str) -> JSON:
    """Empty metadata.finalizers (what the owning controller does when it is done)."""
    return cp.api("PATCH", path, {"metadata": {"finalizers": None}}, MERGE)


# --- namespaces ----------------------------------------------------------------------------


def create_namespace(
    cp: ControlPlane,
    name: str,
    finalizers: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    spec_finalizers: Sequence[str] | None = None,
    wait_for_service_account: bool = True,
) -> JSON:
    """A namespace (see namespace_body).

    Waits for the `default` ServiceAccount by default, since pod admission needs it.
    """
    body = namespace_body(name, finalizers, labels, spec_finalizers)
    ns = cp.api("POST", "/api/v1/namespaces", body)
    if wait_for_service_account:
        wait_for(
            lambda: get_or_none(cp, f"/api/v1/namespaces/{name}/serviceaccounts/default"),
            message=f"serviceaccount {name}/default",
        )
    return ns


def new_namespace(cp: ControlPlane, prefix: str) -> str:
    """A namespace of its own for one test (unique_ns(prefix)), ready for pods; its name."""
    name = unique_ns(prefix)
    create_namespace(cp, name)
    return name


def namespace_body(
    name: str,
    finalizers: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    spec_finalizers: Sequence[str] | None = None,
) -> JSON:
    """A Namespace; `finalizers` go to metadata, `spec_finalizers` next to "kubernetes"."""
    meta: JSON = {"name": name, "labels": dict(labels or {})}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    body: JSON = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    if spec_finalizers:
        body["spec"] = {"finalizers": ["kubernetes", *spec_finalizers]}
    return body


def namespace_conditions(cp: ControlPlane, name: str) -> dict[str, JSON]:
    """The namespace's status.conditions by type ({} before the controller's first pass)."""
    status = get(cp, f"/api/v1/namespaces/{name}").get("status", {})
    return {c["type"]: c for c in status.get("conditions") or []}


def wait_namespace_condition(
    cp: ControlPlane, name: str, type_: str, timeout: float = 60.0
) -> JSON:
    """The namespace's condition `type_` once the namespace controller sets it True."""

    def true() -> JSON | None:
        found = namespace_conditions(cp, name).get(type_)
        return found if found and found["status"] == "True" else None

    return wait_for(true, timeout=timeout, message=f"{type_} on {name}")


def create_configmap(
    cp: ControlPlane,
    ns: str,
    name: str,
    finalizers: Sequence[str] | None = None,
    annotations: dict[str, str] | None = None,
) -> JSON:
    """A ConfigMap: the simplest namespaced content to hold a namespace with a finalizer."""
    body = configmap_body(name, finalizers, annotations)
    return cp.api("POST", f"/api/v1/namespaces/{ns}/configmaps", body)


def configmap_body(
    name: str,
    finalizers: Sequence[str] | None = None,
    annotations: dict[str, str] | None = None,
    data: Mapping[str, str] | None = None,
) -> JSON:
    meta: JSON = {"name": name}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": dict(data or {"k": "v"}),
    }


# --- events --------------------------------------------------------------------------------


def create_event(
    cp: ControlPlane,
    ns: str,
    involved_object: JSON,
    reason: str,
    message: str,
    type: str = "Warning",
    count: int = 1,
    first_timestamp: datetime | str | None = None,
    last_timestamp: datetime | str | None = None,
    component: str = "kubelet",
    host: str | None = None,
) -> JSON:
    """A core/v1 Event about `involved_object` (an object dict or an ObjectReference)."""
    obj_ref = ref(involved_object) if "metadata" in involved_object else dict(involved_object)
    source: JSON = {"component": component}
    if host:
        source["host"] = host
    body: JSON = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{obj_ref['name']}.{secrets.token_hex(8)}", "namespace": ns},
        "involvedObject": obj_ref,
        "reason": reason,
        "message": message,
        "type": type,
        "count": count,
        "firstTimestamp": timestamp(first_timestamp),
        "lastTimestamp": timestamp(last_timestamp),
        "source": source,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }
    return cp.api("POST", f"/api/v1/namespaces/{ns}/events", body)
