"""What is known of each blocker type beyond its explainer, in one table: the summary's name
for it, whether it happens on the pod's node (the summary groups those by node), and why
`fix` never acts on it. A new blocker type gets its row here (tests/unit/test_causes.py
checks that every type in model.PRIORITY has one).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_terminating.model import (
    APISERVICE_UNAVAILABLE,
    CONTAINERS_RUNNING,
    CONTENT_REMAINING,
    CONVERSION_WEBHOOK,
    CSI_DRIVER_MISSING,
    FINALIZER,
    GRACE_PERIOD,
    LIFECYCLE_HOOK,
    NAMESPACE_CONDITION,
    NAMESPACE_CONTROLLER,
    NAMESPACE_FINALIZER,
    NAMESPACE_TERMINATING,
    NETWORK_TEARDOWN,
    NODE_MISSING,
    NODE_NOT_READY,
    OWNER_DEPENDENTS,
    PROTECTION_IN_USE,
    RUNTIME_UNAVAILABLE,
    UNKNOWN,
    VOLUME_ATTACHMENT,
    VOLUMES_NOT_RECLAIMED,
    WEBHOOK,
)

NOT_AUTOMATED = "not proven safe to automate"


@dataclass(frozen=True)
class Cause:
    label: str  # the summary's name of the cause
    on_node: bool = False  # happens on the pod's node: its shared object is the node
    # why `fix` never writes for it (None: fix has a remedy that its checks may allow)
    refusal: str | None = NOT_AUTOMATED


CAUSES: dict[str, Cause] = {
    NODE_MISSING: Cause("node no longer exists", on_node=True, refusal=None),
    NODE_NOT_READY: Cause("node NotReady", on_node=True, refusal=None),
    RUNTIME_UNAVAILABLE: Cause(
        "container runtime down",
        on_node=True,
        refusal="the node is up and its containers still run: the runtime must come back "
        "(deleting the pod object or tainting the node would leave them running)",
    ),
    LIFECYCLE_HOOK: Cause(
        "postStart hook never returned",
        on_node=True,
        refusal="the hook runs on the node: it must be ended there, then the kubelet finishes "
        "by itself",
    ),
    NETWORK_TEARDOWN: Cause(
        "pod network teardown failing",
        on_node=True,
        refusal="the CNI plugin on the node must release the pod's sandbox: removing the pod "
        "object would leave the sandbox and its IP allocated there",
    ),
    CONTAINERS_RUNNING: Cause(
        "containers still running",
        on_node=True,
        refusal="the container runtime still runs the containers: deleting the pod object "
        "would leave them running on the node",
    ),
    VOLUMES_NOT_RECLAIMED: Cause(
        "volumes not reclaimed",
        on_node=True,
        refusal="a volume is still mounted: removing the pod would strand it",
    ),
    CSI_DRIVER_MISSING: Cause(
        "CSI driver not installed",
        refusal="the CSI driver must unmount the volume: removing the pod would strand it",
    ),
    VOLUME_ATTACHMENT: Cause(
        "volume not detached",
        refusal="the volume is still attached: removing the pod would strand it",
    ),
    WEBHOOK: Cause("admission webhook down", refusal=None),
    APISERVICE_UNAVAILABLE: Cause("APIService unavailable", refusal=None),
    CONVERSION_WEBHOOK: Cause(
        "conversion webhook down",
        refusal="a CRD's conversion webhook decides how every stored object is served: "
        "not automated",
    ),
    FINALIZER: Cause("finalizer", refusal=None),
    OWNER_DEPENDENTS: Cause(
        "waiting for dependents", refusal="dependents are still being deleted; they are the cause"
    ),
    PROTECTION_IN_USE: Cause("still in use", refusal="the claim or volume is still in use"),
    CONTENT_REMAINING: Cause(
        "content remaining",
        refusal="the namespace controller deletes the content by itself once nothing blocks it",
    ),
    NAMESPACE_FINALIZER: Cause("namespace finalizer", refusal=None),
    NAMESPACE_CONTROLLER: Cause(
        "namespace controller not running",
        refusal="the namespace controller itself must run: nothing to write",
    ),
    NAMESPACE_CONDITION: Cause(
        "namespace deletion failing",
        refusal="a symptom the namespace controller reports: the cause is another blocker",
    ),
    NAMESPACE_TERMINATING: Cause("namespace terminating", refusal=None),
    GRACE_PERIOD: Cause("inside the grace period (not stuck yet)", refusal=None),
    UNKNOWN: Cause("no known cause", refusal="no known cause: nothing is proven"),
}


def cause_of(blocker_type: str) -> Cause:
    """The table's row; a type from elsewhere (a newer dump) is named after itself."""
    return CAUSES.get(blocker_type) or Cause(blocker_type.replace("-", " "))
