"""Every blocker type, one row each, in rank order (root causes above their symptoms).

Whatever varies by type is a field of its row; the rest of the package derives from the table.
Imports nothing of the package: every floor may read it.
"""

from __future__ import annotations

from collections.abc import Iterable
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
RESOURCE_CLAIM = "resource-claim"
CONTAINERS_RUNNING = "containers-running"
VOLUMES_NOT_RECLAIMED = "volumes-not-reclaimed"
TEARDOWN_UNFINISHED = "teardown-unfinished"
CSI_DRIVER_MISSING = "csi-driver-missing"
VOLUME_ATTACHMENT = "volume-attachment"
WEBHOOK = "webhook"
ADMISSION_POLICY = "admission-policy"
APISERVICE_UNAVAILABLE = "apiservice-unavailable"
CONVERSION_WEBHOOK = "conversion-webhook"
CORRUPT_OBJECT = "corrupt-object"
CONTENT_REMAINING = "content-remaining"
NAMESPACE_FINALIZER = "namespace-finalizer"
NAMESPACE_CONTROLLER = "namespace-controller"
NAMESPACE_TERMINATING = "namespace-terminating"
NAMESPACE_CONDITION = "namespace-condition"
PROTECTION_IN_USE = "protection-in-use"
GRACE_PERIOD = "grace-period"
UNKNOWN = "unknown"

# The kubelet's termination of a pod, in its order (kubelet.go SyncTerminatingPod: kill the
# containers, then the sandbox and its network, unprepare the DRA claims, write the terminal
# status; SyncTerminatedPod: the volumes). A pod type says which step it explains.
DELETION = "deletion"  # the kubelet has not processed the deletion (node gone, kubelet down)
CONTAINERS = "containers"
HOOKS = "hooks"
NETWORK = "network"
RESOURCES = "resources"
VOLUMES = "volumes"
TEARDOWN = (DELETION, CONTAINERS, HOOKS, NETWORK, RESOURCES, VOLUMES)

# What the summary can group a type by: the pod's node, or one object the blockers share
# (their evidence's typed subject of that kind).
NODE = "Node"
FINALIZER_ON = "finalizer"  # a finalizer (model.Subject.holder carries it)
DRA_DRIVER = "DRADriver"  # a DRA driver (no API object: its name in a claim's allocation)
WEBHOOK_CONFIGS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
ADMISSION_POLICIES = ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy")

# Whose log `--node-evidence` reads for a type: the kubelet's, or the runtime's too.
KUBELET_LOG = "kubelet"
RUNTIME_LOG = "runtime"

# The kinds of object a type can hold (a namespace, and a claim held by pvc-protection, take on
# the blockers of their stuck pods).
POD = ("Pod", "Namespace", "PersistentVolumeClaim")
NAMESPACE = ("Namespace",)

# How sure a blocker or a prediction is (DESIGN.md "How sure"), strongest first: as sure as its
# witness, no surer. certain: the component that does the step wrote it (an event, a condition,
# an object it owns); likely: it follows from other objects' state; possible: only the kubelet's
# order of teardown or a hint points there. One scale for --explain, fix and preflight.
CERTAIN = "certain"
LIKELY = "likely"
POSSIBLE = "possible"
CONFIDENCES = (CERTAIN, LIKELY, POSSIBLE)


def stronger(a: str, b: str) -> str:
    """The surer of two confidences."""
    return a if CONFIDENCES.index(a) <= CONFIDENCES.index(b) else b


def weaker(a: str, b: str) -> str:
    """The less sure of two confidences: a conclusion is no surer than its weakest step."""
    return a if CONFIDENCES.index(a) >= CONFIDENCES.index(b) else b


def weakest(confidences: Iterable[str | None]) -> str:
    """The least sure of several witnesses (one not stated counts as possible)."""
    return max((c or POSSIBLE for c in confidences), key=CONFIDENCES.index, default=POSSIBLE)


NOT_AUTOMATED = "not proven safe to automate"
PROPOSED = None  # `fix` proposes a write (fix/plan.PROPOSERS), once its checks allow it


@dataclass(frozen=True)
class Cause:
    type: str
    label: str  # the summary's name of the cause
    holds_while: str  # while what the blocker can still hold an object (one line)
    # the step of the kubelet's teardown it explains (TEARDOWN); None: not the kubelet's
    stage: str | None = None
    # the kinds of subject the summary groups it by (NODE: the pod's node); (): none
    group: tuple[str, ...] = ()
    node_log: str | None = None  # whose log --node-evidence reads for it; None: not asked
    # the kinds of object it can hold; (): any (a kubelet step: pods, and their namespaces)
    kinds: tuple[str, ...] = ()
    # its summary names the finalizer that holds the object (content a namespace's condition
    # says a finalizer holds is then explained)
    names_finalizer: bool = False
    # how the summary reads a group that shares one object (`CSI driver X not installed`);
    # None: `label (X)`
    shared: str | None = None
    # why `fix` never writes for it (PROPOSED: fix has a remedy that its checks may allow)
    refusal: str | None = NOT_AUTOMATED
    context: bool = False  # says when the object goes; `fix` has nothing to do for it
    cluster_wide: bool = False  # one object holds many: `fix` refuses it once for them all
    # the object is not stuck yet (inside its grace period): no cause, dim in the table
    not_stuck: bool = False
    # its type when the object held is the Namespace itself (metadata.finalizers of a namespace)
    on_namespace: str | None = None
    # removing it by hand lets the object go, and the garbage collector its dependents with it
    frees_dependents: bool = False
    # it accounts for a namespace's remaining content (no other blocker needs to name it)
    names_content: bool = False
    # the log lines that prove it name no pod (the kubelet's failed calls to the runtime)
    unnamed_log_lines: bool = False
    # a full disk on the node (kubelet stats) explains it: the runtime cannot record the exit
    full_disk_explains: bool = False

    @property
    def kubelet(self) -> bool:
        """The kubelet of the pod's node is the one to act on it."""
        return self.stage is not None

    def holds(self, kind: str) -> bool:
        kinds = self.kinds or (POD if self.kubelet else ())
        return not kinds or kind in kinds


TABLE: tuple[Cause, ...] = (
    Cause(
        NODE_MISSING,
        "node no longer exists",
        "the kubelet has not confirmed (deletionGracePeriodSeconds is not 0)",
        stage=DELETION,
        group=(NODE,),
        refusal=PROPOSED,
    ),
    Cause(
        NODE_NOT_READY,
        "node NotReady",
        "the kubelet has not confirmed (deletionGracePeriodSeconds is not 0)",
        stage=DELETION,
        group=(NODE,),
        refusal=PROPOSED,
    ),
    Cause(
        RUNTIME_UNAVAILABLE,
        "container runtime down",
        "the kubelet has not confirmed and its node says the runtime is down, or its kill timed "
        "out in the runtime",
        stage=CONTAINERS,
        group=(NODE,),
        node_log=RUNTIME_LOG,
        refusal="the node is up and its containers still run: the runtime must come back "
        "(deleting the pod object or tainting the node would leave them running)",
        unnamed_log_lines=True,
    ),
    Cause(
        DISK_FULL,
        "node disk full",
        "the kubelet has not confirmed; the kubelet's or runtime's log says `no space left on "
        "device` for the pod",
        stage=CONTAINERS,
        group=(NODE,),
        refusal="the node's disk must have room again for the runtime to record the exit and the "
        "kubelet to tear down: removing the pod object would leave both undone on the node",
    ),
    Cause(
        APISERVICE_UNAVAILABLE,
        "APIService unavailable",
        "kubernetes is in spec.finalizers: discovery of the group runs on every pass and fails",
        group=("APIService",),
        shared="APIService {} unavailable",
        refusal=PROPOSED,
        cluster_wide=True,
    ),
    Cause(
        CONVERSION_WEBHOOK,
        "conversion webhook down",
        "kubernetes is in spec.finalizers; the CRD's objects are here, fail to list in "
        "conversion, or a condition names it",
        group=("CustomResourceDefinition",),
        shared="conversion webhook of {} down",
        refusal="a CRD's conversion webhook decides how every stored object is served: "
        "not automated",
        cluster_wide=True,
    ),
    Cause(
        CORRUPT_OBJECT,
        "object unreadable in storage (corrupt)",
        "kubernetes is in spec.finalizers and a list of one of its types fails with "
        "StorageReadError (corrupt object)",
        kinds=NAMESPACE,
        refusal="an unsafe delete of a corrupt object removes it from storage without its "
        "finalizers or the cleanup they guard, and may break the cluster: a person decides it, "
        "after restoring the encryption key or etcd data failed",
    ),
    Cause(
        WEBHOOK,
        "admission webhook down",
        "a write deletion still needs (finalizer UPDATE, content or kubelet DELETE) matches it",
        group=WEBHOOK_CONFIGS,
        shared="admission webhook {} down",
        refusal=PROPOSED,
        cluster_wide=True,
    ),
    Cause(
        ADMISSION_POLICY,
        "admission policy denies",
        "a write deletion still needs (content DELETE, finalizer UPDATE) is denied by a "
        "policy's binding",
        group=ADMISSION_POLICIES,
        shared="admission policy {} denies",
        refusal="a policy denies on purpose: whether the deletion or the policy is wrong is a "
        "person's call (removing its binding lets every write it guards through)",
        cluster_wide=True,
    ),
    Cause(
        CSI_DRIVER_MISSING,
        "CSI driver not installed or not running",
        "the kubelet has not confirmed and its volume teardown needs the driver",
        stage=VOLUMES,
        group=("CSIDriver",),
        node_log=KUBELET_LOG,
        shared="CSI driver {} not installed or not running",
        refusal="the CSI driver must unmount the volume: removing the pod would strand it",
    ),
    Cause(
        VOLUME_ATTACHMENT,
        "volume not detached",
        "the kubelet has not confirmed and the volume is still attached to the node",
        stage=VOLUMES,
        refusal="the volume is still attached: removing the pod would strand it",
    ),
    Cause(
        LIFECYCLE_HOOK,
        "postStart hook never returned",
        "the kubelet has not confirmed, is past the deadline and the hook's container still "
        "waits to start",
        stage=HOOKS,
        group=(NODE,),
        node_log=KUBELET_LOG,
        refusal="the hook runs on the node: it must be ended there, then the kubelet finishes "
        "by itself",
    ),
    Cause(
        NETWORK_TEARDOWN,
        "pod network teardown failing",
        "the kubelet has not confirmed, is past the deadline and an event says the CNI plugin "
        "fails its DEL",
        stage=NETWORK,
        group=(NODE,),
        node_log=KUBELET_LOG,
        refusal="the CNI plugin on the node must release the pod's sandbox: removing the pod "
        "object would leave the sandbox and its IP allocated there",
    ),
    Cause(
        RESOURCE_CLAIM,
        "DRA claim not unprepared",
        "the kubelet has not confirmed, the phase is not terminal and the claim's driver has no "
        "ResourceSlice on the node",
        stage=RESOURCES,
        group=(DRA_DRIVER,),
        node_log=KUBELET_LOG,
        shared="DRA driver {} not registered on the node",
        refusal="the DRA driver must unprepare the claim's devices on the node: removing the pod "
        "would free the claim while they are still prepared there",
    ),
    Cause(
        VOLUMES_NOT_RECLAIMED,
        "volumes not reclaimed",
        "the kubelet has not confirmed and every container has exited",
        stage=VOLUMES,
        group=(NODE,),
        node_log=KUBELET_LOG,
        refusal="a volume is still mounted: removing the pod would strand it",
    ),
    Cause(
        TEARDOWN_UNFINISHED,
        "teardown unfinished, step unknown",
        "the kubelet has not confirmed, no container runs, and nothing says which later step "
        "it is on",
        # the first step it may be on: killPod stops the sandbox once the containers are down
        stage=NETWORK,
        group=(NODE,),
        node_log=RUNTIME_LOG,
        refusal="which step of the teardown hangs is unknown: removing the pod could leave its "
        "sandbox, prepared devices or mounts behind on the node",
    ),
    Cause(
        CONTAINERS_RUNNING,
        "containers still running",
        "the kubelet has not confirmed and is past the deadline, node healthy",
        stage=CONTAINERS,
        group=(NODE,),
        node_log=RUNTIME_LOG,
        refusal="the container runtime still runs the containers: deleting the pod object "
        "would leave them running on the node",
        full_disk_explains=True,
    ),
    Cause(
        OWNER_DEPENDENTS,
        "waiting for dependents",
        "foregroundDeletion is set and dependents are left (or could not be listed)",
        names_finalizer=True,
        refusal="dependents are still being deleted; they are the cause",
    ),
    Cause(
        PROTECTION_IN_USE,
        "still in use",
        "a pod on a node uses the claim / the volume is Bound / claims name the VAC / unfinished "
        "pods name the PodGroup",
        names_finalizer=True,
        refusal="the claim or volume is still in use",
    ),
    Cause(
        FINALIZER,
        "finalizer",
        "the finalizer is still in metadata.finalizers (of content: NamespaceFinalizersRemaining "
        "names it)",
        group=(FINALIZER_ON,),
        shared="finalizer {}",
        names_finalizer=True,
        refusal=PROPOSED,
        on_namespace=NAMESPACE_FINALIZER,
        frees_dependents=True,
    ),
    Cause(
        NAMESPACE_CONTROLLER,
        "namespace controller not running",
        "kubernetes is in spec.finalizers and no condition was ever written",
        kinds=NAMESPACE,
        refusal="the namespace controller itself must run: nothing to write",
    ),
    Cause(
        NAMESPACE_CONDITION,
        "namespace deletion failing",
        "kubernetes is in spec.finalizers and the failure condition is True",
        kinds=NAMESPACE,
        refusal="a symptom the namespace controller reports: the cause is another blocker",
    ),
    Cause(
        CONTENT_REMAINING,
        "content remaining",
        "kubernetes is in spec.finalizers and objects (or unlistable types) remain",
        kinds=NAMESPACE,
        refusal="the namespace controller deletes the content by itself once nothing blocks it",
        names_content=True,
    ),
    Cause(
        NAMESPACE_FINALIZER,
        "namespace finalizer",
        "the finalizer is in the namespace's spec or metadata",
        group=(FINALIZER_ON,),
        kinds=NAMESPACE,
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
        not_stuck=True,
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
