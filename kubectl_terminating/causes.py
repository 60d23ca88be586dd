"""Every blocker type, in one ordered table: a new type is its row here, its cause in
explain/, its slot in its kind's list of causes, and its tests.

The order of the rows is the rank: the main blocker of a finding is its blocker with the
first row (the most specific root cause first; a cause that explains others, an unavailable
APIService stalling every namespace, above the symptoms it produces). Each row says what the
summary calls the type, while what it can still hold an object, whether it happens on the
pod's node (the summary then groups it by node), how the summary names the one object a group
shares, and what `fix` does: propose a write (fix/plan.PROPOSERS), nothing (context), or
refuse, and why. tests/unit/test_causes.py fails for a type used anywhere without a row.

This module imports nothing of the package: every floor may read it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Stable blocker types: public API of `-o json`. Add new ones, never rename one.
FINALIZER = "finalizer"
OWNER_DEPENDENTS = "owner-dependents"
NODE_MISSING = "node-missing"
NODE_NOT_READY = "node-not-ready"
RUNTIME_UNAVAILABLE = "runtime-unavailable"
DISK_FULL = "disk-full"
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

NOT_AUTOMATED = "not proven safe to automate"
PROPOSED = None  # `fix` proposes a write (fix/plan.PROPOSERS), once its checks allow it


@dataclass(frozen=True)
class Cause:
    type: str
    label: str  # the summary's name of the cause
    holds_while: str  # while what the blocker can still hold an object (one line)
    on_node: bool = False  # happens on the pod's node: its shared object is the node
    # how the summary reads a group that shares one object (`CSI driver X not installed`);
    # None: `label (X)`
    shared: str | None = None
    # why `fix` never writes for it (PROPOSED: fix has a remedy that its checks may allow)
    refusal: str | None = NOT_AUTOMATED
    context: bool = False  # says when the object goes; `fix` has nothing to do for it
    cluster_wide: bool = False  # one object holds many: `fix` refuses it once for them all


TABLE: tuple[Cause, ...] = (
    Cause(
        NODE_MISSING,
        "node no longer exists",
        "the kubelet has not confirmed (deletionGracePeriodSeconds is not 0)",
        on_node=True,
        refusal=PROPOSED,
    ),
    Cause(
        NODE_NOT_READY,
        "node NotReady",
        "the kubelet has not confirmed (deletionGracePeriodSeconds is not 0)",
        on_node=True,
        refusal=PROPOSED,
    ),
    Cause(
        RUNTIME_UNAVAILABLE,
        "container runtime down",
        "the kubelet has not confirmed and its node says the runtime is down",
        on_node=True,
        refusal="the node is up and its containers still run: the runtime must come back "
        "(deleting the pod object or tainting the node would leave them running)",
    ),
    Cause(
        DISK_FULL,
        "node disk full",
        "the kubelet has not confirmed; the kubelet's or runtime's log says `no space left on "
        "device` for the pod",
        on_node=True,
        refusal="the node's disk must have room again for the runtime to record the exit and the "
        "kubelet to tear down: removing the pod object would leave both undone on the node",
    ),
    Cause(
        APISERVICE_UNAVAILABLE,
        "APIService unavailable",
        "kubernetes is in spec.finalizers: discovery of the group runs on every pass and fails",
        shared="APIService {} unavailable",
        refusal=PROPOSED,
        cluster_wide=True,
    ),
    Cause(
        CONVERSION_WEBHOOK,
        "conversion webhook down",
        "kubernetes is in spec.finalizers; the CRD's objects are here, fail to list in "
        "conversion, or a condition names it",
        shared="conversion webhook of {} down",
        refusal="a CRD's conversion webhook decides how every stored object is served: "
        "not automated",
        cluster_wide=True,
    ),
    Cause(
        WEBHOOK,
        "admission webhook down",
        "a write deletion still needs (finalizer UPDATE, content or kubelet DELETE) matches it",
        shared="admission webhook {} down",
        refusal=PROPOSED,
        cluster_wide=True,
    ),
    Cause(
        CSI_DRIVER_MISSING,
        "CSI driver not installed",
        "the kubelet has not confirmed and its volume teardown needs the driver",
        shared="CSI driver {} not installed",
        refusal="the CSI driver must unmount the volume: removing the pod would strand it",
    ),
    Cause(
        VOLUME_ATTACHMENT,
        "volume not detached",
        "the kubelet has not confirmed and the volume is still attached to the node",
        refusal="the volume is still attached: removing the pod would strand it",
    ),
    Cause(
        LIFECYCLE_HOOK,
        "postStart hook never returned",
        "the kubelet has not confirmed, is past the deadline and the hook's container still "
        "waits to start",
        on_node=True,
        refusal="the hook runs on the node: it must be ended there, then the kubelet finishes "
        "by itself",
    ),
    Cause(
        NETWORK_TEARDOWN,
        "pod network teardown failing",
        "the kubelet has not confirmed, is past the deadline and an event says the CNI plugin "
        "fails its DEL",
        on_node=True,
        refusal="the CNI plugin on the node must release the pod's sandbox: removing the pod "
        "object would leave the sandbox and its IP allocated there",
    ),
    Cause(
        VOLUMES_NOT_RECLAIMED,
        "volumes not reclaimed",
        "the kubelet has not confirmed and every container has exited",
        on_node=True,
        refusal="a volume is still mounted: removing the pod would strand it",
    ),
    Cause(
        CONTAINERS_RUNNING,
        "containers still running",
        "the kubelet has not confirmed and is past the deadline, node healthy",
        on_node=True,
        refusal="the container runtime still runs the containers: deleting the pod object "
        "would leave them running on the node",
    ),
    Cause(
        OWNER_DEPENDENTS,
        "waiting for dependents",
        "foregroundDeletion is set and dependents are left (or could not be listed)",
        refusal="dependents are still being deleted; they are the cause",
    ),
    Cause(
        PROTECTION_IN_USE,
        "still in use",
        "a pod bound to a node uses the claim / the volume is Bound to a claim",
        refusal="the claim or volume is still in use",
    ),
    Cause(
        FINALIZER,
        "finalizer",
        "the finalizer is still in metadata.finalizers (of content: NamespaceFinalizersRemaining "
        "names it)",
        shared="finalizer {}",
        refusal=PROPOSED,
    ),
    Cause(
        NAMESPACE_CONTROLLER,
        "namespace controller not running",
        "kubernetes is in spec.finalizers and no condition was ever written",
        refusal="the namespace controller itself must run: nothing to write",
    ),
    Cause(
        NAMESPACE_CONDITION,
        "namespace deletion failing",
        "kubernetes is in spec.finalizers and the failure condition is True",
        refusal="a symptom the namespace controller reports: the cause is another blocker",
    ),
    Cause(
        CONTENT_REMAINING,
        "content remaining",
        "kubernetes is in spec.finalizers and objects (or unlistable types) remain",
        refusal="the namespace controller deletes the content by itself once nothing blocks it",
    ),
    Cause(
        NAMESPACE_FINALIZER,
        "namespace finalizer",
        "the finalizer is in the namespace's spec or metadata",
        shared="namespace finalizer {}",
        refusal=PROPOSED,
    ),
    Cause(
        NAMESPACE_TERMINATING,
        "namespace terminating",
        "context only: the pod's namespace is terminating",
        refusal=PROPOSED,
        context=True,
    ),
    Cause(
        UNKNOWN,
        "no known cause",
        "context only: no known cause found while the object is past its deadline",
        refusal="no known cause: nothing is proven",
    ),
    Cause(
        GRACE_PERIOD,
        "inside the grace period (not stuck yet)",
        "context only: the deletionTimestamp is still in the future",
        refusal=PROPOSED,
        context=True,
    ),
)

CAUSES: dict[str, Cause] = {cause.type: cause for cause in TABLE}
RANK: dict[str, int] = {cause.type: rank for rank, cause in enumerate(TABLE)}


def cause_of(blocker_type: str) -> Cause:
    """The table's row; a type from elsewhere (a newer dump) is named after itself."""
    return CAUSES.get(blocker_type) or Cause(
        blocker_type, blocker_type.replace("-", " "), "unknown to this version"
    )


def rank(blocker_type: str) -> int:
    """Rank of a blocker type; a type from elsewhere ranks just before `grace-period`."""
    return RANK.get(blocker_type, len(TABLE) - 1)
