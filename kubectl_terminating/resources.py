"""Identity of an API resource type, as discovery reports it; what every object carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class Resource:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`plural.group` as kubectl prints it (`pods`, `deployments.apps`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def is_core(self, plural: str) -> bool:
        """A core-group type by its plural (`pods`), whatever version or kind a file gave."""
        return self.group == "" and self.plural == plural

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and self.namespaced:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
        return base


def list_of(value: Any) -> list[Any]:
    """value when it is a list (fields of the API's JSON may be missing or malformed)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    """An object's metadata ({} when missing or malformed)."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


# Written by the namespace controller only while it deletes a namespace's content
# (pkg/controller/namespace/deletion, status_condition_utils.go).
DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING_CONDITION = "NamespaceContentRemaining"
FINALIZERS_REMAINING_CONDITION = "NamespaceFinalizersRemaining"
NAMESPACE_DELETION_CONDITIONS = frozenset(
    {
        DISCOVERY_FAILURE,
        GV_PARSING_FAILURE,
        CONTENT_FAILURE,
        CONTENT_REMAINING_CONDITION,
        FINALIZERS_REMAINING_CONDITION,
    }
)


def is_terminating(obj: dict[str, Any]) -> bool:
    """Deletion was requested: metadata.deletionTimestamp is set.

    A Namespace pasted without its metadata (only its status, or `kubectl describe` turned into
    conditions) still shows it: phase Terminating, or a deletion condition that is True. On a
    live server these never appear without a deletionTimestamp.
    """
    if meta(obj).get("deletionTimestamp"):
        return True
    if obj.get("kind") != "Namespace":
        return False
    status = as_dict(obj.get("status"))
    return status.get("phase") == "Terminating" or any(
        c.get("type") in NAMESPACE_DELETION_CONDITIONS and c.get("status") == "True"
        for c in map(as_dict, list_of(status.get("conditions")))
    )


def metadata_only(resource: Resource) -> bool:
    """A type whose objects are never read whole: a Secret's data is all a whole read would
    add, no finding carries it, and serve's API shows findings to whoever may use its
    service proxy (docs/integrations.md)."""
    return resource.is_core("secrets")


def typed(obj: dict[str, Any], resource: Resource) -> dict[str, Any]:
    """obj with its kind and apiVersion: list items and metadata-only items lack them."""
    if obj.get("kind") in (None, "", "PartialObjectMetadata"):
        return dict(obj, kind=resource.kind, apiVersion=resource.api_version)
    if "apiVersion" not in obj:
        return dict(obj, apiVersion=resource.api_version)
    return obj


def _v1(group: str, kind: str, namespaced: bool = True) -> Resource:
    """A built-in type at v1 whose plural is its kind in lower case plus `s` (each below)."""
    return Resource(group, "v1", f"{kind.lower()}s", kind, namespaced)


CLUSTER_SCOPED = False
PODS = _v1("", "Pod")
NAMESPACES = _v1("", "Namespace", CLUSTER_SCOPED)
NODES = _v1("", "Node", CLUSTER_SCOPED)
EVENTS = _v1("", "Event")
SERVICES = _v1("", "Service")
PVCS = _v1("", "PersistentVolumeClaim")
PVS = _v1("", "PersistentVolume", CLUSTER_SCOPED)
LEASES = _v1("coordination.k8s.io", "Lease")
ENDPOINT_SLICES = _v1("discovery.k8s.io", "EndpointSlice")
CSI_DRIVERS = _v1("storage.k8s.io", "CSIDriver", CLUSTER_SCOPED)
CSI_NODES = _v1("storage.k8s.io", "CSINode", CLUSTER_SCOPED)
VOLUME_ATTACHMENTS = _v1("storage.k8s.io", "VolumeAttachment", CLUSTER_SCOPED)
VALIDATING_WEBHOOKS = _v1(
    "admissionregistration.k8s.io", "ValidatingWebhookConfiguration", CLUSTER_SCOPED
)
MUTATING_WEBHOOKS = _v1(
    "admissionregistration.k8s.io", "MutatingWebhookConfiguration", CLUSTER_SCOPED
)
APISERVICES = _v1("apiregistration.k8s.io", "APIService", CLUSTER_SCOPED)
CRDS = _v1("apiextensions.k8s.io", "CustomResourceDefinition", CLUSTER_SCOPED)
DEPLOYMENTS = _v1("apps", "Deployment")
STATEFULSETS = _v1("apps", "StatefulSet")
DAEMONSETS = _v1("apps", "DaemonSet")
