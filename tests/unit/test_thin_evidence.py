"""Issue 37's classes: what a thin paste proves, and no more. Each file in
tests/fixtures/related is made by hand after what people paste; its `--explain` is a golden in
tests/golden/related. Each case is also run with its evidence thinned, and its confidence must
drop (DESIGN.md "How sure")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.builders import run_captured
from tests.unit.test_related_objects import RELATED, explained, main

JSON = dict[str, Any]


def items_of(data: JSON, tmp_path: Path, kind: str = "pods") -> list[JSON]:
    """`kubectl terminating <kind> -A -o json` of the objects in data (a List)."""
    path = tmp_path / "thinned.json"
    path.write_text(json.dumps(data))
    code, out, err = run_captured(kind, from_file=str(path), output="json", all_namespaces=True)
    assert code == 0, err
    items: list[JSON] = json.loads(out)["items"]
    return items


def fixture(name: str) -> JSON:
    data: JSON = json.loads((RELATED / f"{name}.json").read_text())
    return data


def of_kind(data: JSON, kind: str) -> JSON:
    found: JSON = next(o for o in data["items"] if o["kind"] == kind)
    return found


# -- 1. the catch-all names no step it never saw -----------------------------------------------


def test_containers_exited_and_nothing_else_is_teardown_unfinished_step_unknown() -> None:
    """gVisor pod, containers exited, no event, no volume: the sandbox, the claims, the status
    or the volumes may hang. Said as unknown, with what would tell, not the volume remedies."""
    item = explained("pod-teardown-step-unknown")
    blocker = main(item)
    assert blocker["type"] == "teardown-unfinished"
    assert blocker["summary"] == (
        "containers exited; kubelet's teardown unfinished, which step is unknown "
        "(runtime class gvisor: the sandbox step first)"
    )
    assert blocker["confidence"] == "possible"
    assert "runtimeClassName gvisor" in blocker["confidenceBasis"]
    commands = [r.get("command", "") for r in blocker["remedy"]]
    assert any(c.startswith("crictl pods --label io.kubernetes.pod.uid=") for c in commands)
    assert not any("umount" in c or "lsattr" in c for c in commands)


def test_the_kubelets_final_status_puts_the_hang_at_the_volumes(tmp_path: Path) -> None:
    """With the final status written (phase Failed, observedGeneration current) only the volumes
    follow: volumes-not-reclaimed, likely. Thinned back to the paste: possible, step unknown."""
    data = fixture("pod-teardown-step-unknown")
    pod = of_kind(data, "Pod")
    pod["metadata"]["generation"] = 2
    pod["status"].update(phase="Failed", observedGeneration=2)
    data["items"].append(  # the pod's events read: none says another step
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "sandbox-runner.1", "namespace": "agents"},
            "involvedObject": {
                "kind": "Pod",
                "name": pod["metadata"]["name"],
                "namespace": "agents",
                "uid": pod["metadata"]["uid"],
            },
            "reason": "Killing",
            "message": "Stopping container runner",
            "source": {"component": "kubelet", "host": "gvisor-pool-3"},
            "type": "Normal",
            "lastTimestamp": "2026-03-04T09:40:01Z",
        }
    )
    (richer,) = items_of(data, tmp_path)
    assert (main(richer)["type"], main(richer)["confidence"]) == ("volumes-not-reclaimed", "likely")
    thin = main(explained("pod-teardown-step-unknown"))
    assert (thin["type"], thin["confidence"]) == ("teardown-unfinished", "possible")


# -- 2. a partial Node does not hide the pod's own word ----------------------------------------


def test_a_pod_marked_node_lost_on_a_node_without_status_is_node_not_ready() -> None:
    """The node controller marked the pod NodeLost and its node NotReady (an event); the Node
    was pasted without status. Each witness says the node is down: likely, both named."""
    item = explained("pod-node-lost")
    blocker = main(item)
    assert blocker["type"] == "node-not-ready"
    assert blocker["confidence"] == "likely"
    said = json.dumps(blocker["evidence"])
    assert "NodeLost" in said and "NodeNotReady" in said
    assert "NodeLost" in blocker["confidenceBasis"]
    assert not any("health of node" in u for u in item.get("unknowns", []))


def test_node_witnesses_combine_and_thin_out(tmp_path: Path) -> None:
    """A stale Lease (the kubelet stopped) makes it certain; the pod's NodeLost alone, or the
    node controller's taint alone, likely; none of them: unknown, no node-not-ready."""
    data = fixture("pod-node-lost")
    data["items"].append(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "worker-12", "namespace": "kube-node-lease"},
            "spec": {
                "holderIdentity": "worker-12",
                "leaseDurationSeconds": 40,
                "renewTime": "2026-03-05T11:14:20.000000Z",
            },
        }
    )
    (stale,) = items_of(data, tmp_path)
    assert (main(stale)["type"], main(stale)["confidence"]) == ("node-not-ready", "certain")

    data = fixture("pod-node-lost")
    data["items"] = [o for o in data["items"] if o["kind"] != "Event"]
    (lost_only,) = items_of(data, tmp_path)
    assert (main(lost_only)["type"], main(lost_only)["confidence"]) == ("node-not-ready", "likely")
    assert main(lost_only)["summary"] == "node worker-12 unresponsive (the pod is marked NodeLost)"

    of_kind(data, "Pod")["status"].pop("reason")
    of_kind(data, "Node")["spec"] = {
        "taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]
    }
    (tainted,) = items_of(data, tmp_path)
    assert (main(tainted)["type"], main(tainted)["confidence"]) == ("node-not-ready", "likely")

    of_kind(data, "Node").pop("spec")
    (silent,) = items_of(data, tmp_path)
    assert all(b["type"] != "node-not-ready" for b in silent["blockers"])
    assert (
        "health of node worker-12 unknown: the file has the Node without status"
        in (silent["unknowns"])
    )


# -- 3. an event that names its blocker is enough ----------------------------------------------

DRA_MISSING = (
    "Failed to prepare dynamic resources: prepare dynamic resources: failed to get gRPC client "
    "for driver gpu.nvidia.com: plugin name gpu.nvidia.com not found in the list of registered "
    "DRA plugins"
)


def test_a_dra_event_alone_names_the_type_and_the_driver(tmp_path: Path) -> None:
    """Pod without spec, no ResourceClaim in the file: the kubelet's event names the driver
    (likely: said when preparing; the unprepare goes through the same client, with no event).
    Thinned to an event that names no driver: possible."""
    blocker = main(explained("pod-dra-event-only"))
    assert blocker["type"] == "resource-claim"
    assert blocker["summary"] == (
        "DRA driver gpu.nvidia.com not registered on gpu-node-4: the pod's claims cannot be "
        "unprepared"
    )
    assert blocker["confidence"] == "likely"
    data = fixture("pod-dra-event-only")
    of_kind(data, "Event")["message"] = (
        "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources "
        "failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    )
    (thin,) = items_of(data, tmp_path)
    assert (main(thin)["type"], main(thin)["confidence"]) == ("resource-claim", "possible")


CSI_MISSING = (
    'UnmountVolume.TearDown failed for volume "data" (UniqueName: '
    '"kubernetes.io/csi/ebs.csi.aws.com^vol-0abc") pod "3e8d1f2a-6b7c-4d9e-8f01-2a3b4c5d6e7f" '
    '(UID: "3e8d1f2a-6b7c-4d9e-8f01-2a3b4c5d6e7f") : kubernetes.io/csi: Unmounter.TearDownAt '
    "failed to get CSI client: driver name ebs.csi.aws.com not found in the list of registered "
    "CSI drivers"
)
CNI_DEL = (
    'error killing pod: failed to "KillPodSandbox" for "3e8d1f2a-6b7c-4d9e-8f01-2a3b4c5d6e7f" '
    'with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for '
    'sandbox \\"3bb4\\": plugin type=\\"calico\\" failed (delete): connection is unauthorized"'
)
KILL_TIMEOUT = (
    'error killing pod: failed to "KillPodSandbox" for "3e8d1f2a-6b7c-4d9e-8f01-2a3b4c5d6e7f" '
    'with KillPodSandboxError: "rpc error: code = DeadlineExceeded desc = context deadline '
    'exceeded"'
)


@pytest.mark.parametrize(
    ("reason", "message", "expected"),
    [
        ("FailedPrepareDynamicResources", DRA_MISSING, ("resource-claim", "gpu.nvidia.com")),
        # the 1.36 DRA manager's wording (pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go)
        (
            "FailedPrepareDynamicResources",
            "prepare dynamic resources: DRA driver gpu.nvidia.com is not registered",
            ("resource-claim", "gpu.nvidia.com"),
        ),
        ("FailedUnMount", CSI_MISSING, ("csi-driver-missing", "ebs.csi.aws.com")),
        ("FailedKillPod", CNI_DEL, ("network-teardown", "calico")),
        ("FailedKillPod", KILL_TIMEOUT, ("runtime-unavailable", "DeadlineExceeded")),
        (
            "FailedDetachVolume",
            'DetachVolume.Detach failed for volume "pvc-1f2e" : rpc error: code = Internal',
            ("volumes-not-reclaimed", "FailedDetachVolume"),
        ),
        (
            "FailedAttachVolume",
            'AttachVolume.Attach failed for volume "pvc-1f2e" : rpc error: code = Internal',
            ("volumes-not-reclaimed", "FailedAttachVolume"),
        ),
    ],
    ids=["dra", "dra-1.36", "csi", "cni", "runtime", "detach", "attach"],
)
def test_each_event_that_names_its_blocker_maps_to_its_type_on_a_thin_paste(
    tmp_path: Path, reason: str, message: str, expected: tuple[str, str]
) -> None:
    """Only the pod's metadata and one event (as `kubectl describe` shows it): the event names
    the type, and the summary or evidence the thing it names."""
    data = fixture("pod-dra-event-only")
    of_kind(data, "Pod").pop("status")
    event = of_kind(data, "Event")
    event.update(reason=reason, message=message)
    (item,) = items_of(data, tmp_path)
    kind, named = expected
    assert main(item)["type"] == kind, [(b["type"], b["summary"]) for b in item["blockers"]]
    assert named in json.dumps(main(item))
    if kind in ("resource-claim", "csi-driver-missing", "network-teardown"):
        assert named in main(item)["summary"]  # the headline names the driver or plugin


@pytest.mark.parametrize("cut", ["event", "both"])
def test_an_event_pasted_without_uids_is_still_the_pods(tmp_path: Path, cut: str) -> None:
    """`kubectl describe` prints events without any uid, and a thin paste may cut the pod's:
    in a file an event that names the pod (kind, namespace, name) is the pod's."""
    data = fixture("pod-dra-event-only")
    of_kind(data, "Pod").pop("status")
    event = of_kind(data, "Event")
    event.update(reason="FailedKillPod", message=CNI_DEL)
    event["involvedObject"].pop("uid", None)
    if cut == "both":
        of_kind(data, "Pod")["metadata"].pop("uid", None)
    (item,) = items_of(data, tmp_path)
    assert (main(item)["type"], "calico" in main(item)["summary"]) == ("network-teardown", True)


def test_an_event_of_an_earlier_pod_of_the_same_name_is_not_this_ones(tmp_path: Path) -> None:
    """A StatefulSet's pod comes back under the same name: an event that carries another uid
    is about the earlier pod, whatever its name says."""
    data = fixture("pod-dra-event-only")
    of_kind(data, "Pod").pop("status")
    event = of_kind(data, "Event")
    event.update(reason="FailedKillPod", message=CNI_DEL)
    event["involvedObject"]["uid"] = "an-earlier-pod"
    (item,) = items_of(data, tmp_path)
    assert main(item)["type"] != "network-teardown"


# -- 4. a cut message still names what it carried ---------------------------------------------


def ns_items(data: JSON, tmp_path: Path) -> JSON:
    (item,) = items_of(data, tmp_path, "namespaces")
    return item


def test_cut_namespace_conditions_still_name_the_finalizer_and_the_types() -> None:
    """Both conditions cut in the paste: `...remaining: kfdef-finalizer.kfdef.apps.kubeflow.org`
    (before ` in N resource instances`) and `..., pods. has 2 res`: the finalizer and both
    types are named, said as cut, likely."""
    item = explained("namespace-conditions-cut", "namespaces")
    blockers = {b["type"]: b for b in item["blockers"]}
    finalizer = blockers["finalizer"]
    assert finalizer["summary"].startswith(
        "finalizer kfdef-finalizer.kfdef.apps.kubeflow.org on objects"
    )
    assert finalizer["confidence"] == "likely"
    assert "cut" in finalizer["confidenceBasis"]
    content = blockers["content-remaining"]
    assert content["summary"].startswith("3 objects left (per the controller)")
    said = json.dumps(content["evidence"])
    assert "kfdefs.kfdef.apps.kubeflow.org" in said and "pods: the controller's count" in said
    assert content["confidence"] == "likely"


def test_a_finalizers_message_cut_before_its_count_is_not_content_of_no_type(
    tmp_path: Path,
) -> None:
    """The issue's paste: only the finalizers condition, cut before ` in N resource
    instances`. Whole, the same message is certain; cut, likely."""
    data = fixture("namespace-conditions-cut")
    data["status"]["conditions"] = [
        c for c in data["status"]["conditions"] if c["type"] != "NamespaceContentRemaining"
    ]
    cut = ns_items(data, tmp_path)
    assert "names no type" not in json.dumps(cut["blockers"])
    assert (main(cut)["type"], main(cut)["confidence"]) == ("finalizer", "likely")
    said = data["status"]["conditions"][-1]
    said["message"] += " in 1 resource instances"
    whole = ns_items(data, tmp_path)
    assert (main(whole)["type"], main(whole)["confidence"]) == ("finalizer", "certain")
    assert main(whole)["summary"].startswith(
        "finalizer kfdef-finalizer.kfdef.apps.kubeflow.org on 1 object"
    )


@pytest.mark.parametrize(
    ("tail", "left"),
    [
        ("pods. has 2 resource instances", "3 objects"),
        ("pods. has 2 res", "3 objects"),
        ("pods. has", "at least 2 objects"),
        ("pods.", "at least 2 objects"),
    ],
)
def test_a_resources_message_cut_anywhere_keeps_its_names(
    tmp_path: Path, tail: str, left: str
) -> None:
    data = fixture("namespace-conditions-cut")
    data["status"]["conditions"] = [
        c for c in data["status"]["conditions"] if c["type"] != "NamespaceFinalizersRemaining"
    ]
    data["status"]["conditions"][-1]["message"] = (
        "Some resources are remaining: kfdefs.kfdef.apps.kubeflow.org has 1 resource "
        f"instances, {tail}"
    )
    item = ns_items(data, tmp_path)
    assert main(item)["type"] == "content-remaining"
    assert main(item)["summary"].startswith(f"{left} left (per the controller)")
    notes = [e["message"] for e in main(item)["evidence"]]
    assert "pods: the controller's count; this view could not list the type" in notes


# -- 5. a chain without specs: the claim's terminating pod holds the rest -----------------------


def test_a_claim_held_by_a_pod_pasted_without_spec_names_the_pod() -> None:
    """Only metadata and conditions: a claim with pvc-protection and one terminating pod. The
    protection controller waits for the pods that use the claim; the pod is what holds the
    rest, likely (its spec, the claim it uses, not in view)."""
    item = explained("namespace-claim-held-by-pod-metadata-only", "namespaces")
    blocker = main(item)
    assert blocker["type"] == "protection-in-use"
    assert blocker["summary"] == "pvc-protection: claim in use by pod warehouse-loader-0"
    assert blocker["confidence"] == "likely"
    assert blocker["remedy"][0]["command"] == (
        "kubectl terminating pods -n analytics warehouse-loader-0 --explain"
    )


def test_a_pod_without_spec_that_is_not_terminating_is_only_possibly_the_holder(
    tmp_path: Path,
) -> None:
    data = fixture("namespace-claim-held-by-pod-metadata-only")
    pod = of_kind(data, "Pod")
    del pod["metadata"]["deletionTimestamp"], pod["metadata"]["deletionGracePeriodSeconds"]
    claim = next(i for i in items_of(data, tmp_path, "all") if i["kind"] == "PersistentVolumeClaim")
    assert main(claim)["type"] == "finalizer"
    assert main(claim)["confidence"] == "possible"
    assert "whether they use the claim is unknown" in json.dumps(main(claim))


# -- 6. a NoExecute taint and an attachment, without the Multi-Attach event ---------------------


def _taint_case(tmp_path: Path, *drop: str) -> JSON:
    """The taint fixture with the kinds in `drop` left out, as `pods -o json`."""
    data = fixture("pod-csi-node-plugin-evicted-by-taint")
    data["items"] = [o for o in data["items"] if o["kind"] not in drop]
    (item,) = items_of(data, tmp_path)
    return item


def test_a_taint_and_an_attachment_say_the_driver_was_evicted_less_surely(tmp_path: Path) -> None:
    """With the replacement pod's Multi-Attach event: likely. The taint and the attachment
    alone: possible. Without the PVC (the attachment found on the node): still said,
    possible."""
    full = main(explained("pod-csi-node-plugin-evicted-by-taint"))
    assert (full["type"], full["confidence"]) == ("csi-driver-missing", "likely")
    evicted = "CSI driver ebs.csi.aws.com evicted from worker-4 by taint maintenance=true:NoExecute"
    for drop in (("Event",), ("Event", "PersistentVolumeClaim")):
        thin = main(_taint_case(tmp_path, *drop))
        assert (thin["type"], thin["summary"], thin["confidence"]) == (
            "csi-driver-missing",
            evicted,
            "possible",
        ), drop


def test_a_node_pasted_with_only_a_noexecute_taint_is_evidence(tmp_path: Path) -> None:
    """A Node without status but with `maintenance=true:NoExecute`: the teardown's catch-all
    says what the taint evicts, and how to lift it."""
    item = explained("pod-node-noexecute-taint")
    blocker = main(item)
    assert blocker["type"] == "teardown-unfinished"
    said = json.dumps(blocker["evidence"])
    assert "node worker-5 has taint maintenance=true:NoExecute" in said
    assert blocker["remedy"][-1]["command"] == (
        "kubectl taint nodes worker-5 maintenance=true:NoExecute-"
    )


def test_the_node_controllers_own_taints_are_no_eviction_of_a_plugin(tmp_path: Path) -> None:
    """unreachable/not-ready NoExecute mean the node is down (class 2's witness), not that a
    plugin was evicted from a running node."""
    data = fixture("pod-node-noexecute-taint")
    of_kind(data, "Node")["spec"]["taints"] = [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
    ]
    (item,) = items_of(data, tmp_path)
    assert main(item)["type"] == "node-not-ready"
    assert "evicts every daemon pod" not in json.dumps(item["blockers"])


# -- 5. a long grace period in a file without capture time ---------------------------------------


def grace_paste(grace: int) -> JSON:
    """A pod pasted with its metadata only, nothing in the file later than its deletion."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "worker-0",
            "namespace": "batch",
            "uid": "6b1c",
            "creationTimestamp": "2026-01-01T10:00:00Z",
            "deletionTimestamp": "2026-01-01T12:05:00Z",
            "deletionGracePeriodSeconds": grace,
        },
    }
    return {"apiVersion": "v1", "kind": "List", "items": [pod]}


def test_a_long_grace_period_in_an_undated_file_says_it_may_not_be_over(tmp_path: Path) -> None:
    """No capture time, the deletion the newest timestamp, a 300 s grace period: the file
    cannot tell whether it was over; said with the grace's length, never as "not stuck"."""
    (item,) = items_of(grace_paste(300), tmp_path)
    main_blocker = main(item)
    assert item["overdueSeconds"] is None
    assert main_blocker["type"] == "unknown"
    assert "300s grace period" in main_blocker["summary"]
    (default,) = items_of(grace_paste(30), tmp_path)  # the default: no hint
    assert "grace period" not in main(default)["summary"]
