"""A DRA claim the kubelet cannot unprepare, its driver not registered on the pod's node
(docs/explainers.md, `resource-claim`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence
from kubectl_terminating.causes import DRA_DRIVER, LIKELY, POSSIBLE, RESOURCE_CLAIM, RESOURCES
from kubectl_terminating.explain.common import (
    as_dict,
    list_of,
    pods_on_node,
    spec_of,
    status_of,
    text,
)
from kubectl_terminating.explain.events import event_evidence, newest_event
from kubectl_terminating.explain.node_health import node_ref
from kubectl_terminating.explain.pod_facts import PodFacts
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy, Subject

TERMINAL = ("Succeeded", "Failed")  # written only once the claims are unprepared
# The kubelet's events about a pod's claims and its DRA manager's error when the driver's plugin
# is not registered on the node: the catalogue's dra-plugin-not-registered entry (its wordings
# from 1.31 to 1.36). The kubelet unprepares through the same plugin client, with no event: the
# prepare event is the word that names the driver.
NOT_REGISTERED = "dra-plugin-not-registered"


def claim_names(pod: JSON) -> Iterator[str]:
    """The ResourceClaims the pod uses: named in its spec, made from a template (named in
    status.resourceClaimStatuses), or made by the scheduler for extended resources a DRA
    driver backs (status.extendedResourceClaimStatus.resourceClaimName: DRAExtendedResource,
    beta in 1.36, GA in 1.37; k8s.io/api core/v1/types.go PodExtendedResourceClaimStatus and
    pkg/features/kube_features.go, v1.37.2): no spec.resourceClaims entry names that one."""
    made = {
        text(s.get("name")): text(s.get("resourceClaimName"))
        for s in map(as_dict, list_of(status_of(pod).get("resourceClaimStatuses")))
    }
    for claim in map(as_dict, list_of(spec_of(pod).get("resourceClaims"))):
        name = text(claim.get("resourceClaimName")) or made.get(text(claim.get("name")), "")
        if name:
            yield name
    extended = as_dict(status_of(pod).get("extendedResourceClaimStatus"))
    if name := text(extended.get("resourceClaimName")):
        yield name


# Operations a device's driver skips on the node (ResourceSlice spec.skipNodeOperations, copied
# into the claim's allocation results; DRAOptionalNodeOperations, alpha in 1.37). The kubelet
# skips a driver's NodeUnprepareResources only when every device of that driver in the claim
# skips it or `*` (pkg/kubelet/cm/dra/claiminfo.go computeDriverStates, manager.go, v1.37.2).
SKIPS_UNPREPARE = frozenset({"NodeUnprepareResources", "*"})


def unprepare_skipped(claim: JSON, driver: str) -> bool:
    """The kubelet makes no unprepare call to driver for claim: it cannot be what holds it."""
    devices = [d for d in _devices(claim) if d.get("driver") == driver]
    return bool(devices) and all(
        SKIPS_UNPREPARE & set(list_of(d.get("skipNodeOperations"))) for d in devices
    )


def _devices(claim: JSON) -> list[JSON]:
    allocation = as_dict(status_of(claim).get("allocation"))
    return [as_dict(d) for d in list_of(as_dict(allocation.get("devices")).get("results"))]


def _blocker(facts: PodFacts, claim: JSON, driver: str) -> Blocker:
    name, node = text(as_dict(claim.get("metadata")).get("name")), facts.node_name
    devices = [
        f"{text(d.get('pool'))}/{text(d.get('device'))}"
        for d in _devices(claim)
        if d.get("driver") == driver
    ]
    slices = shlex.quote(f"spec.driver={driver},spec.nodeName={node}")
    return Blocker(
        RESOURCE_CLAIM,
        f"DRA driver {driver} not registered on {node}: claim {name} cannot be unprepared",
        (
            Evidence(
                f"ResourceClaim {name} is allocated ({driver}: {', '.join(devices)}) and still "
                "reserved for the pod",
                ObjectRef("ResourceClaim", name, facts.namespace, "resource.k8s.io/v1"),
                {"driver": driver, "devices": devices, "reservedFor": facts.name},
                about=Subject(DRA_DRIVER, driver),
            ),
            Evidence(
                f"no ResourceSlice of {driver} for node {node}: the kubelet removes a driver's "
                "slices once its plugin is gone from the node",
                node_ref(node),
                {"driver": driver, "nodeName": node, "resourceSlices": 0},
            ),
            Evidence(
                f"phase {facts.finding.phase or '?'} with no container running: the kubelet "
                "has not written the terminal status it writes after unpreparing the claims",
                facts.ref,
                {"phase": facts.finding.phase},
            ),
        ),
        (
            Remedy(
                f"restore DRA driver {driver}'s kubelet plugin on {node} (its DaemonSet); the "
                "kubelet then unprepares the claim and finishes by itself",
                pods_on_node(shlex.quote(node)),
            ),
            Remedy(
                "check that the driver registered again (its slices for the node come back)",
                f"kubectl get resourceslices --field-selector {slices}",
            ),
            facts.kubelet_log("read the unprepare error the kubelet retries"),
            facts.force_delete(
                f"last, only after draining {node} (kubectl drain): the claim's devices are "
                "still prepared there, and the claim is freed for another pod"
            ),
        ),
        # from the claim's and the slices' state: no kubelet word names the unprepare
        confidence=LIKELY,
        basis=f"claim reserved for the pod, no ResourceSlice of {driver} on the node",
    )


def _event_blocker(facts: PodFacts, event: JSON) -> Blocker:
    """The kubelet's DRA event alone (no claim or slice in view): the driver it names, or,
    when it names none, only that the kubelet fails the claims."""
    driver = evidence.name_in(NOT_REGISTERED, "driver", text(event.get("message")))
    node = facts.node_name
    reason = text(event.get("reason"))
    said = event_evidence(event)
    if driver:
        said = Evidence(said.message, said.object, said.fields, about=Subject(DRA_DRIVER, driver))
    remedies = [
        Remedy(
            f"restore DRA driver {driver or '(see the event)'}'s kubelet plugin on {node} (its "
            "DaemonSet); the kubelet then unprepares the claim and finishes by itself",
            pods_on_node(shlex.quote(node)),
        ),
        Remedy(
            "see the pod's claims and their allocation (not in what was read)",
            f"kubectl get resourceclaims -n {shlex.quote(facts.namespace)} -o wide",
        ),
        facts.kubelet_log("read the unprepare error the kubelet retries"),
    ]
    return Blocker(
        RESOURCE_CLAIM,
        f"DRA driver {driver} not registered on {node}: the pod's claims cannot be unprepared"
        if driver
        else f"DRA claims failing on {node} ({reason})",
        (
            said,
            Evidence(
                "the kubelet unprepares the claims through the same plugin client before it "
                "writes the final status, and writes no event when that fails",
                facts.ref,
                {"driver": driver or None, "phase": facts.finding.phase},
            ),
            *facts.node.unknown_evidence(),
        ),
        tuple(remedies),
        confidence=LIKELY if driver else POSSIBLE,
        basis=f"the kubelet's {reason} event: plugin {driver} not registered on the node"
        if driver
        else f"the kubelet's {reason} event names no driver",
    )


def explain_resources(facts: PodFacts) -> list[Blocker]:
    # Holds once the kubelet is past the containers and the network, while the phase is not
    # terminal and a claim reserved for the pod has a driver with no slice on the node; or,
    # without the claims in view, the kubelet's DRA event names the driver it cannot reach.
    if not facts.kubelet_overdue or facts.finding.phase in TERMINAL:
        return []  # the events are read only where the kubelet is the one to act
    event = newest_event(facts.events, evidence.entry(NOT_REGISTERED).event_reasons)
    if not facts.reached(RESOURCES, seen=event is not None):
        return []
    blockers = []
    for name in claim_names(facts.pod):
        claim = reads.resource_claim(facts.view, facts.namespace, name)
        reserved = list_of(status_of(claim or {}).get("reservedFor"))
        if claim is None or not any(as_dict(r).get("uid") == facts.uid for r in reserved):
            continue
        for driver in sorted({text(d.get("driver")) for d in _devices(claim)} - {""}):
            if unprepare_skipped(claim, driver):
                continue
            if not reads.resource_slices(facts.view, driver, facts.node_name):
                blockers.append(_blocker(facts, claim, driver))
    if not blockers and event is not None:
        return [_event_blocker(facts, event)]
    return blockers
