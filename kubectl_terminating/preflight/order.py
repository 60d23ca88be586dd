"""The order a deleter issues a manifest's deletes in, and a safe order to suggest.

Helm v4 uninstalls in one pass, sorted by kind (pkg/release/v1/util/kind_sorter.go,
UninstallOrder): webhook configurations and APIServices first, workloads, CRDs, and kinds it
does not know (every custom resource) last, alphabetically. `kubectl delete -f` deletes in the
file's order. Neither waits between kinds: an operator and its custom resources in one pass is
a race the operator loses.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_terminating.model import JSON, ObjectRef

HELM_UNINSTALL_ORDER = (
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "Ingress",
    "IngressClass",
    "Service",
    "CronJob",
    "Job",
    "StatefulSet",
    "HorizontalPodAutoscaler",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "DaemonSet",
    "RoleBindingList",
    "RoleBinding",
    "RoleList",
    "Role",
    "ClusterRoleBindingList",
    "ClusterRoleBinding",
    "ClusterRoleList",
    "ClusterRole",
    "CustomResourceDefinition",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ConfigMap",
    "SecretList",
    "Secret",
    "ServiceAccount",
    "PodDisruptionBudget",
    "PodSecurityPolicy",
    "LimitRange",
    "ResourceQuota",
    "NetworkPolicy",
    "Namespace",
    "PriorityClass",
)
_RANK = {kind: index for index, kind in enumerate(HELM_UNINSTALL_ORDER)}


def helm_sorted(refs: Sequence[ObjectRef]) -> list[ObjectRef]:
    """Helm's stable sort: known kinds by rank, unknown kinds after them by kind name."""
    return sorted(
        refs,
        key=lambda r: (
            r.kind not in _RANK,
            _RANK.get(r.kind, 0),
            "" if r.kind in _RANK else r.kind,
        ),
    )


def object_name(ref: ObjectRef) -> str:
    return f"{ref.kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind}/{ref.name}"


def safe_order(refs: Sequence[ObjectRef], held: set[str]) -> list[JSON]:
    """Steps: first the objects predicted to be held by a finalizer (and every custom resource:
    their owners must still run), waiting until they are gone; then the rest in Helm's order.
    held: str(ObjectRef) of the objects with a finalizer prediction."""
    ordered = helm_sorted(refs)
    first = [r for r in ordered if str(r) in held or r.kind not in _RANK]
    rest = [r for r in ordered if r not in first]
    steps: list[JSON] = []
    if first:
        steps.append(
            {
                "step": 1,
                "delete": [object_name(r) for r in first],
                "wait": True,
                "why": "custom resources and objects with finalizers first, while the "
                "controllers that remove their finalizers still run",
            }
        )
    if rest:
        steps.append(
            {
                "step": len(steps) + 1,
                "delete": [object_name(r) for r in rest],
                "wait": False,
                "why": "then the rest, webhook configurations and APIServices first "
                "(Helm's uninstall order)",
            }
        )
    return steps
