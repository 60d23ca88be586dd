"""No container running, yet the pod stays: its volumes were not reclaimed. Each volume is
followed PVC -> PV -> CSI driver -> node -> VolumeAttachment to find what holds the teardown."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.causes import (
    CERTAIN,
    CSI_DRIVER_MISSING,
    LIKELY,
    NETWORK,
    POSSIBLE,
    VOLUME_ATTACHMENT,
    VOLUMES,
    VOLUMES_NOT_RECLAIMED,
)
from kubectl_terminating.explain.common import (
    as_dict,
    list_of,
    meta,
    pods_on_node,
    spec_of,
    status_of,
    text,
)
from kubectl_terminating.explain.events import event_evidence, event_time, newest_event
from kubectl_terminating.explain.node_health import node_ref
from kubectl_terminating.explain.pod_containers import busy_remedies
from kubectl_terminating.explain.pod_facts import (
    BEFORE_FINAL_STATUS,
    TEARDOWN_PENDING,
    PodFacts,
    past_text,
    pending_writes,
    unique_remedies,
)
from kubectl_terminating.explain.pod_node import (
    evicting_taints,
    taint_evidence,
    taint_text,
    untaint,
)
from kubectl_terminating.explain.pod_teardown import teardown_blocker
from kubectl_terminating.explain.webhooks import matching_webhooks, unverified_webhooks
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy, Subject
from kubectl_terminating.resources import PODS
from kubectl_terminating.view import ReadFailed

KUBELET_VOLUMES_LOG = "Pod is terminated, but some volumes have not been cleaned up"
# The events about a pod's volumes: the catalogue's volume-teardown-failed entry (the kubelet's
# and attach/detach controller's; older releases and some drivers spell the unmount one
# "FailedUnmount") and volume-setup-failed (the volumes were never all in place). The attach
# one's reason, on the pod the attach/detach controller attaches for, names a Multi-Attach.
TEARDOWN, SETUP = "volume-teardown-failed", "volume-setup-failed"
ATTACH_FAILED = "FailedAttachVolume"


def teardown_reasons() -> frozenset[str]:
    return catalogue.entry(TEARDOWN).event_reasons


def setup_reasons() -> frozenset[str]:
    return catalogue.entry(SETUP).event_reasons


# -- volumes not reclaimed ---------------------------------------------------------------------


@dataclass
class VolumeTrace:
    """One pod volume followed PVC -> PV -> CSI driver -> node -> VolumeAttachment."""

    volume: str
    claim: str = ""
    pv: str = ""
    driver: str = ""
    handle: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    driver_problem: Evidence | None = None
    attachment: JSON | None = None
    attachment_problem: Evidence | None = None
    in_use: bool = False
    registered: bool | None = None  # on the node's CSINode (None: not checked)
    taints: list[JSON] = field(default_factory=list)  # evicting the driver's node plugin
    multi_attach: bool = False  # a replacement pod's Multi-Attach event names its PV
    # the attachment was found on the node, not through the claim (its PVC or PV not in view)
    guessed: bool = False

    @property
    def unique_name(self) -> str:
        """The name the kubelet reports in node.status.volumesInUse."""
        return (
            f"kubernetes.io/csi/{self.driver}^{self.handle}" if self.driver and self.handle else ""
        )


def _claim_of(volume: JSON, pod_name: str) -> str:
    claim = text(as_dict(volume.get("persistentVolumeClaim")).get("claimName"))
    if claim:
        return claim
    # A generic ephemeral volume's PVC is named <pod>-<volume>.
    if isinstance(volume.get("ephemeral"), dict):
        return f"{pod_name}-{text(volume.get('name'))}"
    return ""


def _follow_claim(trace: VolumeTrace, facts: PodFacts) -> None:
    if not trace.claim:
        return
    pvc = reads.pvc(facts.view, facts.namespace, trace.claim)
    claim_ref = ObjectRef("PersistentVolumeClaim", trace.claim, facts.namespace, "v1")
    if pvc is None:
        trace.evidence.append(Evidence(f"PVC {trace.claim} not found", claim_ref))
        return
    trace.pv = text(spec_of(pvc).get("volumeName"))
    pv = reads.pv(facts.view, trace.pv) if trace.pv else None
    if pv is None:
        trace.evidence.append(
            Evidence(
                f"PVC {trace.claim} is bound to no existing PV",
                claim_ref,
                {"volumeName": trace.pv or None},
            )
        )
        return
    csi = as_dict(spec_of(pv).get("csi"))
    trace.driver, trace.handle = text(csi.get("driver")), text(csi.get("volumeHandle"))
    trace.evidence.append(
        Evidence(
            f"volume {trace.volume}: PVC {trace.claim} -> PV {trace.pv} -> "
            f"{'CSI driver ' + trace.driver if trace.driver else 'no CSI driver (in-tree)'}",
            ObjectRef("PersistentVolume", trace.pv, api_version="v1"),
            {
                "volume": trace.volume,
                "claim": trace.claim,
                "persistentVolume": trace.pv,
                "driver": trace.driver or None,
                "volumeHandle": trace.handle or None,
            },
        )
    )


def _check_driver(trace: VolumeTrace, facts: PodFacts) -> None:
    if not trace.driver:
        return
    driver = trace.driver
    try:
        installed: bool | None = reads.csi_driver(facts.view, driver) is not None
    except ReadFailed as failed:  # the node's CSINode may still tell
        facts.warn(failed)
        installed = None
    if installed is False:
        trace.driver_problem = Evidence(
            f"CSIDriver {driver} does not exist: the driver was uninstalled (or never registered)",
            ObjectRef("CSIDriver", driver, api_version="storage.k8s.io/v1"),
            {"driver": driver, "csiDriverExists": False},
            about=Subject("CSIDriver", driver),
        )
        return
    csi_node = reads.csi_node(facts.view, facts.node_name)
    registered = [
        text(as_dict(d).get("name")) for d in list_of(spec_of(csi_node or {}).get("drivers"))
    ]
    trace.registered = driver in registered
    if driver not in registered:
        trace.driver_problem = Evidence(
            f"driver {driver} is not registered on node {facts.node_name} (its node plugin is "
            "not running there)",
            ObjectRef("CSINode", facts.node_name, api_version="storage.k8s.io/v1"),
            {
                "driver": driver,
                "registeredDrivers": registered,
                "csiNodeExists": csi_node is not None,
            },
            about=Subject("CSIDriver", driver),
        )


def _check_in_use(trace: VolumeTrace, facts: PodFacts) -> None:
    unique = trace.unique_name
    if not unique or unique not in list_of(status_of(facts.node.node or {}).get("volumesInUse")):
        return
    trace.in_use = True
    trace.evidence.append(
        Evidence(
            f"node {facts.node_name} still reports {unique} in status.volumesInUse",
            node_ref(facts.node_name),
            {"volumesInUse": unique},
        )
    )


def _attachment_for(pv: str, node: str, attachments: list[JSON]) -> JSON | None:
    for attachment in map(as_dict, attachments):
        spec = spec_of(attachment)
        source = as_dict(spec.get("source"))
        if source.get("persistentVolumeName") == pv and spec.get("nodeName") == node:
            return attachment
    return None


def _check_attachment(trace: VolumeTrace, facts: PodFacts) -> None:
    if not trace.pv:
        return
    attachment = _attachment_for(trace.pv, facts.node_name, reads.volume_attachments(facts.view))
    if attachment is None:
        return
    trace.attachment = attachment
    trace.driver = trace.driver or text(spec_of(attachment).get("attacher"))
    name = text(meta(attachment).get("name"))
    status = status_of(attachment)
    error = as_dict(status.get("detachError"))
    deleting = text(meta(attachment).get("deletionTimestamp"))
    fields = {
        "attacher": text(spec_of(attachment).get("attacher")) or None,
        "attached": status.get("attached"),
        "detachError": text(error.get("message")) or None,
        "detachErrorTime": text(error.get("time")) or None,
        "deletionTimestamp": deleting or None,
    }
    ref = ObjectRef("VolumeAttachment", name, api_version="storage.k8s.io/v1")
    if error or deleting:
        trace.attachment_problem = Evidence(
            f"VolumeAttachment {name} of PV {trace.pv} to node {facts.node_name}: "
            + (f"detach failing: {text(error.get('message'))}" if error else "stuck deleting"),
            ref,
            fields,
        )
    else:
        trace.evidence.append(
            Evidence(
                f"VolumeAttachment {name} still attaches PV {trace.pv} to {facts.node_name}",
                ref,
                fields,
            )
        )


# What the attach/detach controller says of the replacement pod while the volume stays
# attached to the old node (pkg/controller/volume/attachdetach/reconciler): "Multi-Attach error
# for volume "<pv>" Volume is already exclusively attached to one node and can't be attached to
# another" or "... Volume is already used by pod(s) <pods>".
MULTI_ATTACH = "Multi-Attach error for volume"


def _check_taint(trace: VolumeTrace, facts: PodFacts) -> None:
    """A NoExecute taint the driver's node plugin (a DaemonSet pod) does not tolerate evicts it
    with the workloads: the kubelet can no longer reach the driver to unmount ("driver name X
    not found in the list of registered CSI drivers"), the VolumeAttachment stays, and the
    replacement pod waits on Multi-Attach. Said when the node's CSINode did not show the
    driver registered (a registered driver tolerates the taint)."""
    taints = evicting_taints(facts.node.node)
    gone = trace.driver_problem is not None and trace.registered is None  # not installed
    if not trace.driver or gone or trace.registered or not taints:
        return
    driver = trace.driver
    said = taint_evidence(
        facts.node_name,
        taints,
        f"the node plugin of CSI driver {driver} with them unless it tolerates the taint (the "
        f"kubelet then logs 'driver name {driver} not found in the list of registered CSI "
        "drivers' on each unmount retry)",
    )
    if trace.driver_problem is None:  # the node's CSINode not read: the taint is the evidence
        trace.driver_problem = said
    else:  # CSINode shows the driver gone from the node: the taint says why
        trace.evidence.insert(0, said)
    trace.taints = taints
    if trace.pv:
        waiting = reads.events_with_reason(facts.view, facts.namespace, ATTACH_FAILED)
        said_attached = [
            event_evidence(e)
            for e in waiting
            if MULTI_ATTACH in text(e.get("message")) and f'"{trace.pv}"' in text(e.get("message"))
        ][:2]
        trace.evidence += said_attached
        trace.multi_attach = bool(said_attached)


def _attachment_on_node(trace: VolumeTrace, facts: PodFacts) -> None:
    """A claim whose PVC or PV is not in view, on a node with an evicting taint: the node's
    VolumeAttachments of one CSI driver are the pod's volume's, possibly (the taint may have
    evicted that driver's node plugin). Several drivers there: none is guessed."""
    if not trace.claim or trace.pv or trace.driver or not evicting_taints(facts.node.node):
        return
    on_node = [
        a
        for a in map(as_dict, reads.volume_attachments(facts.view))
        if spec_of(a).get("nodeName") == facts.node_name and status_of(a).get("attached")
    ]
    drivers = {text(spec_of(a).get("attacher")) for a in on_node} - {""}
    if len(drivers) != 1:
        return
    trace.driver, trace.guessed = drivers.pop(), True
    pvs = ", ".join(
        sorted(text(as_dict(spec_of(a).get("source")).get("persistentVolumeName")) for a in on_node)
    )
    first = text(meta(on_node[0]).get("name"))
    trace.evidence.append(
        Evidence(
            f"VolumeAttachments of CSI driver {trace.driver} attach {pvs} to {facts.node_name}; "
            f"claim {trace.claim}'s volume is not in view, so which one is the pod's is not known",
            ObjectRef("VolumeAttachment", first, None, "storage.k8s.io/v1"),
            {"driver": trace.driver, "claim": trace.claim, "persistentVolumes": pvs},
        )
    )


def trace_volume(facts: PodFacts, volume: JSON) -> VolumeTrace:
    name = text(volume.get("name"))
    trace = VolumeTrace(name, claim=_claim_of(volume, facts.name))
    inline = text(as_dict(volume.get("csi")).get("driver"))
    if inline:
        trace.driver = inline
        trace.evidence.append(
            Evidence(
                f"volume {name}: inline CSI volume of driver {inline}",
                facts.ref,
                {"volume": name, "driver": inline},
            )
        )
    steps = (
        _follow_claim,
        _check_attachment,
        _attachment_on_node,
        _check_driver,
        _check_in_use,
        _check_taint,
    )
    for step in steps:
        try:
            step(trace, facts)
        except ReadFailed as failed:
            facts.warn(failed)  # keep what the other steps find (a file lacks some kinds)
    return trace


def _unmount_command(facts: PodFacts, traces: list[VolumeTrace]) -> str:
    if any(t.driver for t in traces):
        return f"umount /var/lib/kubelet/pods/{facts.uid}/volumes/kubernetes.io~csi/*/mount"
    return f"umount <mount point listed by: mount | grep {facts.uid}>"


def volume_remedies(facts: PodFacts, traces: list[VolumeTrace]) -> tuple[Remedy, ...]:
    """Restore the driver first, then look at and unmount on the node; the VolumeAttachment
    is deleted last, if ever (deleting it first can leave a disk attached to two nodes)."""
    node = facts.node_name
    steps: list[Remedy] = []
    broken = sorted({t.driver for t in traces if t.driver_problem is not None})
    gone = sorted({t.driver for t in traces if t.driver_problem is not None and not t.taints})
    steps += [
        untaint(node, t.taints, f"the node plugin of CSI driver {t.driver}")
        for t in traces
        if t.taints
    ][:1]
    if gone:
        steps.append(
            Remedy(
                f"restore CSI driver {', '.join(gone)} (reinstall it; its node plugin must "
                f"run on {node}); the kubelet then finishes the unmount itself",
                pods_on_node(node),
            )
        )
    steps += [
        Remedy(facts.on_node("see what is still mounted for the pod"), f"mount | grep {facts.uid}"),
        facts.kubelet_log(f"read why the kubelet waits ('{KUBELET_VOLUMES_LOG}')"),
    ]
    if newest_event(facts.events, phrases=("device or resource busy",)) is not None:
        steps += busy_remedies(facts, None)
    elif broken and not _volume_events(facts):
        steps.append(facts.log_errors("kubelet", facts.uid, _driver_gone_errors(broken)))
    elif not _volume_events(facts):
        steps += _teardown_log_remedies(facts, traces)
    steps.append(
        Remedy(
            facts.on_node("unmount what is left; the kubelet then removes the pod"),
            _unmount_command(facts, traces),
            destructive=True,
            when="the driver cannot be restored and no process holds the mount; this skips "
            "the driver's own cleanup",
        )
    )
    steps += [
        Remedy(
            f"delete VolumeAttachment {text(meta(t.attachment).get('name'))}",
            f"kubectl delete volumeattachment {shlex.quote(text(meta(t.attachment).get('name')))}",
            destructive=True,
            when="last, only once the volume is unmounted on the node and the storage backend "
            "shows it detached: deleting it first can leave the disk attached to two nodes",
        )
        for t in traces
        if t.attachment is not None
    ]
    return unique_remedies(steps)


# What the kubelet logs when a volume's teardown fails, and what each string means. A real
# kubelet writes no event for these (seen with an immutable file in an emptyDir): only its log
# (`UnmountVolume.TearDown failed ...`) tells the causes apart.
TEARDOWN_ERRORS = (
    ("operation not permitted", "a file with the immutable attribute"),
    ("device or resource busy", "a mount still held, often from another mount namespace"),
    ("no space left on device", "a full disk under the kubelet or the runtime"),
)
# A CSI volume whose driver is registered yet fails (no event): the kubelet logs the driver's
# rpc error after `kubernetes.io/csi: Unmounter.TearDownAt failed:` (v1.36; older kubelets
# `mounter.TearDownAt failed:`). Seen on v1.36 after the node plugin crashed with its socket
# left behind: `rpc error: code = Unavailable ... dial unix .../csi.sock: connect: connection
# refused`.
CSI_TEARDOWN_ERRORS = (
    (
        "TearDownAt failed",
        "the CSI driver failed the unmount or cannot be reached, its rpc error follows "
        "('connection refused': its node plugin is not running, its socket left behind)",
    ),
)


def _driver_gone_errors(drivers: list[str]) -> tuple[tuple[str, str], ...]:
    """What a real kubelet (v1.36) logs, with no event, on each retry of a CSI volume's
    teardown once the driver is deregistered: `UnmountVolume.TearDown failed ... Unmounter.
    TearDownAt failed to get CSI client: driver name <d> not found in the list of registered CSI
    drivers`."""
    return tuple(
        (
            f"driver name {d} not found in the list of registered CSI drivers",
            f"the kubelet cannot reach driver {d} to unmount",
        )
        for d in drivers
    )


def _teardown_log_remedies(facts: PodFacts, traces: list[VolumeTrace]) -> list[Remedy]:
    pod_dir = f"/var/lib/kubelet/pods/{facts.uid}"
    csi = CSI_TEARDOWN_ERRORS if any(t.driver for t in traces) else ()
    return [
        facts.log_errors("kubelet", facts.uid, (*csi, *TEARDOWN_ERRORS)),
        Remedy(
            facts.on_node("look for immutable files in the pod's volumes"),
            f"lsattr -R {pod_dir}/volumes 2>/dev/null | grep -- '-i-'",
        ),
        Remedy(
            facts.on_node("look for processes holding the pod's mounts"),
            f"grep -l {facts.uid} /proc/*/mountinfo",
        ),
        Remedy(facts.on_node("check the disk"), "df -h /var/lib/kubelet /var/lib/containerd"),
    ]


def _url_webhooks(facts: PodFacts) -> list[Evidence]:
    """URL webhooks on the writes deletion needs: unverifiable, so only named when nothing
    more concrete was found."""
    writes = pending_writes(facts)
    try:
        hooks = matching_webhooks(PODS, writes, facts.namespace, facts.view) if writes else []
    except ReadFailed:
        return []  # already a warning from the webhook check
    return unverified_webhooks(hooks, PODS)


def _volume_events(facts: PodFacts) -> list[JSON]:
    reasons = teardown_reasons() | setup_reasons()
    found = [e for e in facts.events if text(e.get("reason")) in reasons]
    return sorted(found, key=event_time, reverse=True)


def _exited_evidence(facts: PodFacts) -> Evidence:
    phase = facts.finding.phase
    # what the phase says of the kubelet's step, where it can tell (PodFacts.final_status)
    written = facts.final_status
    step = ""
    if written is not None:
        step = (
            ": its final status is written, the volumes are what is left"
            if written
            else ": its final status is not written yet, which the kubelet does after the "
            "network and the DRA claims, before the volumes"
        )
    return Evidence(
        f"no container is running, yet the pod is still here{past_text(facts.overdue, 'its')} "
        f"(phase {phase or '?'}){step}",
        facts.ref,
        {
            "phase": phase,
            "containers": {c["name"]: c["state"] for c in facts.finding.containers},
            "overdueSeconds": facts.overdue,
            "nodeName": facts.node_name,
        },
    )


def _taint_word(facts: PodFacts, traces: list[VolumeTrace]) -> list[Evidence]:
    """The node's evicting taint, where no traced driver already says it: the drivers the
    volumes need may have been evicted with the workloads."""
    taints = evicting_taints(facts.node.node)
    if not taints or any(t.taints for t in traces):
        return []
    return [taint_evidence(facts.node_name, taints, "the CSI node plugins the unmount needs")]


def _block_devices(pod: JSON) -> set[str]:
    """The volumes the pod's containers use as raw block devices (volumeDevices)."""
    spec = spec_of(pod)
    containers = [
        as_dict(c)
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in list_of(spec.get(key))
    ]
    return {
        text(as_dict(d).get("name")) for c in containers for d in list_of(c.get("volumeDevices"))
    }


def to_tear_down(facts: PodFacts, traces: list[VolumeTrace], most: int = 2) -> str:
    """The volumes the kubelet still has to tear down, as the pod spec names them: `volume
    data (PVC data-web-0, block, CSI ebs.csi.aws.com)`; past `most`, how many more."""
    block = _block_devices(facts.pod)
    named = []
    for t in traces:
        parts = [f"PVC {t.claim}"] if t.claim else []
        parts += ["block"] if t.volume in block else []
        parts += [f"CSI {t.driver}"] if t.driver else []
        named.append(f"{t.volume} ({', '.join(parts)})" if parts else t.volume)
    more = f" and {len(named) - most} more" if len(named) > most else ""
    return f"volume{'s' if len(named) > 1 else ''} {', '.join(named[:most])}{more}"


def _reclaim_blocker(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> Blocker:
    events = _volume_events(facts)
    in_use = [t.volume for t in traces if t.in_use]
    states = {c["state"] for c in facts.finding.containers}
    # "exited" only when the kubelet reported every container terminated
    done = "containers exited" if states == {"terminated"} else "no container running"
    if not (in_use or events or traces or facts.final_status):
        # no volume in view and nothing says the kubelet is at the volumes: which step hangs
        # is unknown (the sandbox, the claims, the status or the volumes)
        return teardown_blocker(facts, _exited_evidence(facts), done, _url_webhooks(facts))
    unchecked: str | None = None
    if in_use:
        what = f"volume {in_use[0]}" if len(in_use) == 1 else f"{len(in_use)} volumes"
        summary = f"{done}; {what} still in use on {facts.node_name}"
    elif events:
        reason = text(events[0].get("reason"))
        step = "set-up" if reason in setup_reasons() else "teardown"
        summary = f"{done}; volume {step} failing ({reason})"
    elif facts.node.unreadable:
        # nothing seen of the node: do not claim what its kubelet is doing
        named = f"; {to_tear_down(facts, traces)} to tear down" if traces else ""
        summary = f"{done}{named}; node {facts.node_name} not checked ({facts.node.unreadable})"
    elif facts.final_status is False:
        summary = f"{done}; {BEFORE_FINAL_STATUS} (phase {facts.finding.phase})"
    else:
        summary = f"{done}; {TEARDOWN_PENDING}"
    if not (in_use or events):  # a cause only the pod's events show (network teardown) unseen
        unchecked = facts.events_unread
    evidence = [
        _exited_evidence(facts),
        *facts.node.unknown_evidence(),
        *(e for t in traces for e in t.evidence),
        *(event_evidence(e) for e in events[:3]),
        *([] if in_use or events else _url_webhooks(facts)),
        *_taint_word(facts, traces),
    ]
    confidence, basis = _reclaim_confidence(facts, events, in_use)
    return Blocker(
        VOLUMES_NOT_RECLAIMED,
        summary,
        tuple(evidence),
        remedies,
        unchecked=unchecked,
        confidence=confidence,
        basis=basis,
    )


def _reclaim_confidence(facts: PodFacts, events: list[JSON], in_use: list[str]) -> tuple[str, str]:
    """As sure as the witness of the volume step: the kubelet's teardown event, its
    volumesInUse, its final status; else only its order of teardown points there."""
    failing = [e for e in events if text(e.get("reason")) in teardown_reasons()]
    if failing:
        return CERTAIN, f"the kubelet's {text(failing[0].get('reason'))} event"
    if in_use:
        return LIKELY, "the node's status.volumesInUse still lists the pod's volume"
    if any(text(e.get("reason")) == ATTACH_FAILED for e in events[:1]):
        return POSSIBLE, "the attach/detach controller's FailedAttachVolume (a set-up)"
    if events:
        return LIKELY, f"the kubelet's {text(events[0].get('reason'))} event (not a teardown)"
    if facts.node.unreadable:
        return POSSIBLE, "only the kubelet's order of teardown; its node not checked"
    if facts.final_status:
        return LIKELY, "the kubelet wrote the final status: the volumes are the step left"
    return POSSIBLE, "only the kubelet's order of teardown: no container running, nothing else seen"


def _driver_confidence(facts: PodFacts, t: VolumeTrace) -> tuple[str, str]:
    """The kubelet's event naming the driver unregistered is certain; the driver's objects
    (CSIDriver gone, the node's CSINode without it) likely; a taint alone possible."""
    said = f"driver name {t.driver} not found"
    if any(said in text(e.get("message")) for e in _volume_events(facts)):
        return CERTAIN, f"the kubelet's event says {said}"
    if t.driver_problem is not None and t.driver_problem.fields.get("csiDriverExists") is False:
        return LIKELY, f"no CSIDriver object {t.driver}"
    if t.registered is None and t.multi_attach:
        return LIKELY, (
            "a NoExecute taint on the node, and a replacement pod's Multi-Attach event: its "
            "volume is still attached there"
        )
    if t.registered is None:
        return POSSIBLE, "a NoExecute taint on the node; the driver's registration not read"
    return LIKELY, f"the node's CSINode does not list {t.driver}"


def _driver_blockers(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> list[Blocker]:
    blockers: dict[str, Blocker] = {}
    for t in traces:
        if t.driver_problem is None or t.driver in blockers:
            continue
        gone = t.driver_problem.fields.get("csiDriverExists") is False
        where = "not installed" if gone else f"not running on {facts.node_name}"
        confidence, basis = _driver_confidence(facts, t)
        if t.taints:  # the taint, the chain, the attachment left and who waits on it
            where = f"evicted from {facts.node_name} by taint {taint_text(t.taints[0])}"
        blockers[t.driver] = Blocker(
            CSI_DRIVER_MISSING,
            f"CSI driver {t.driver} {where}",
            (t.driver_problem, *(t.evidence if t.taints else t.evidence[:1])),
            remedies,
            confidence=confidence,
            basis=basis,
        )
    return list(blockers.values())


# The kubelet's unmount error once the driver's node plugin is gone (csi_plugin.go, v1.36):
# `Unmounter.TearDownAt failed to get CSI client: driver name X not found in the list of
# registered CSI drivers`, in its FailedUnMount event where it writes one.
CSI_NOT_REGISTERED = "csi-driver-not-registered"  # the catalogue's entry


def _event_driver_blockers(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> list[Blocker]:
    """A driver the kubelet's event names as unregistered that no traced volume showed (the
    PVC, PV or CSINode not in view): the event alone names the type and the driver."""
    traced = {t.driver for t in traces if t.driver_problem is not None}
    blockers: dict[str, Blocker] = {}
    for event in _volume_events(facts):
        driver = catalogue.name_in(CSI_NOT_REGISTERED, "driver", text(event.get("message")))
        if not driver or driver in traced or driver in blockers:
            continue
        said = event_evidence(event)
        restore = Remedy(
            f"restore CSI driver {driver} (its node plugin must run on {facts.node_name}); the "
            "kubelet then finishes the unmount itself",
            pods_on_node(facts.node_name),
        )
        blockers[driver] = Blocker(
            CSI_DRIVER_MISSING,
            f"CSI driver {driver} not registered on {facts.node_name}",
            (Evidence(said.message, said.object, said.fields, about=Subject("CSIDriver", driver)),),
            unique_remedies([restore, *remedies]),
            confidence=CERTAIN,
            basis=f"the kubelet's {text(event.get('reason'))} event: driver name {driver} not "
            "found in the list of registered CSI drivers",
        )
    return list(blockers.values())


def _attachment_blockers(
    facts: PodFacts, traces: list[VolumeTrace], remedies: tuple[Remedy, ...]
) -> list[Blocker]:
    return [
        Blocker(
            VOLUME_ATTACHMENT,
            f"detach of {t.pv} from {facts.node_name} failing"
            if t.attachment_problem.fields.get("detachError")
            else f"VolumeAttachment of {t.pv} stuck deleting",
            (t.attachment_problem,),
            remedies,
            confidence=CERTAIN if t.attachment_problem.fields.get("detachError") else LIKELY,
            basis="the VolumeAttachment's detachError"
            if t.attachment_problem.fields.get("detachError")
            else "the VolumeAttachment is stuck deleting",
        )
        for t in traces
        if t.attachment_problem is not None
    ]


def _volume_facts(facts: PodFacts, traces: list[VolumeTrace]) -> bool:
    """A volume shows a problem of its own (an event, in use, its driver or attachment)."""
    return bool(_volume_events(facts)) or any(
        t.in_use or t.driver_problem or t.attachment_problem for t in traces
    )


def explain_volumes(facts: PodFacts) -> list[Blocker]:
    # Holds once the kubelet, alive on a healthy node and past the deadline, is past its
    # containers (PodFacts.reached). "Volume teardown pending" is the catch-all of its later
    # steps: left out when a cause explains an earlier one (the network, a DRA claim) and no
    # volume shows a problem of its own.
    if not facts.kubelet_overdue:
        return []  # the events are read only where the kubelet is the one to act
    # the kubelet's teardown event puts it past the containers, whatever the paste hides
    seen = any(text(e.get("reason")) in teardown_reasons() for e in _volume_events(facts))
    if not facts.reached(NETWORK, seen):
        return []
    traces = [
        trace_volume(facts, as_dict(v))
        for v in list_of(spec_of(facts.pod).get("volumes"))
        if _claim_of(as_dict(v), facts.name) or as_dict(as_dict(v).get("csi")).get("driver")
    ]
    remedies = volume_remedies(facts, traces)
    pending = facts.reached(VOLUMES, seen) or _volume_facts(facts, traces)
    return [
        *([_reclaim_blocker(facts, traces, remedies)] if pending else []),
        *_driver_blockers(facts, traces, remedies),
        *_event_driver_blockers(facts, traces, remedies),
        *_attachment_blockers(facts, traces, remedies),
    ]
