"""The pod explainer over JSON fixtures: one realistic cluster, varied one fact at a time."""

from __future__ import annotations

import copy
import shlex
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_terminating.explain.pods import container_states, explain_pod
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Blocker, Finding, Remedy
from kubectl_terminating.render.summary import summary_text
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.summary import group_by_cause
from tests.profiles import examples
from tests.unit.builders import PODS_NOW as NOW  # the pod is 10m past its deadline
from tests.unit.builders import explain_pod_among as explain
from tests.unit.builders import healthy_cluster as cluster
from tests.unit.builders import pod_fixture as load
from tests.unit.builders import terminated, types
from tests.unit.builders import web_0_events as events

UID = "3f2b6c1e-8d3a-4b5e-9c7d-1a2b3c4d5e6f"
PV = "pvc-c0ffee00-1234-4abc-8def-0123456789ab"
FORCE = "kubectl delete pod -n shop web-0 --grace-period=0 --force"


def event(reason: str, message: str, when: str = "2026-01-01T11:58:00Z") -> JSON:
    base = copy.deepcopy(events()[1])
    base.update(reason=reason, message=message, lastTimestamp=when)
    base["metadata"]["name"] = f"web-0.{reason.lower()}"
    return base


def pod(**changes: Any) -> JSON:
    """web-0 with top-level metadata/spec/status keys changed."""
    obj = load("pod-web-0")
    for path, value in changes.items():
        section, key = path.split("__")
        obj[section][key] = value
    return obj


def exited() -> JSON:
    """web-0 after its container exited: the kubelet waits for volume teardown."""
    return terminated(pod(), 143, "Error", "2026-01-01T11:49:45Z")


def blocker(finding: Finding, kind: str) -> Blocker:
    found = [b for b in finding.blockers if b.type == kind]
    assert found, f"no {kind} blocker in {types(finding)}"
    return found[0]


def commands(remedies: tuple[Remedy, ...]) -> list[str]:
    return [r.command or "" for r in remedies]


def assert_destructive_steps_say_when(finding: Finding) -> None:
    for b in finding.blockers:
        for r in b.remedy:
            assert not r.destructive or r.when, f"{b.type}: destructive step without when: {r}"


def node(**status: Any) -> JSON:
    obj = load("node-worker-1")
    for kind, (value, reason, since) in status.items():
        for condition in obj["status"]["conditions"]:
            if condition["type"] == kind:
                condition.update(status=value, reason=reason, lastTransitionTime=since)
    return obj


# -- grace period ------------------------------------------------------------------------------


def test_inside_grace_period_is_not_stuck() -> None:
    finding = explain(pod(metadata__deletionTimestamp="2026-01-01T12:00:20Z"), cluster())
    assert types(finding) == ["grace-period"]
    assert finding.overdue_seconds == -20
    assert not finding.stuck


def test_inside_grace_period_other_blockers_are_listed_but_not_stuck() -> None:
    obj = pod(metadata__deletionTimestamp="2026-01-01T12:00:20Z")
    finding = explain(obj, cluster("node-worker-1"))
    assert set(types(finding)) == {"grace-period", "node-missing"}
    assert not finding.stuck
    main = finding.main_blocker
    assert main is not None and main.type == "grace-period"


# -- containers still running ------------------------------------------------------------------


def test_healthy_node_running_container_past_deadline_is_containers_running() -> None:
    finding = explain(pod(), cluster())
    assert types(finding) == ["containers-running"]
    assert finding.stuck
    b = finding.blockers[0]
    assert b.summary == "app still running 10m past deadline"
    assert b.evidence[0].fields["running"] == ["app"]
    assert b.evidence[0].fields["overdueSeconds"] == 600
    assert commands(b.remedy)[0].startswith("kubectl get events -n shop")
    assert FORCE not in commands(b.remedy)  # never force-delete a pod whose kubelet is alive
    assert_destructive_steps_say_when(finding)


def test_failed_kill_pod_points_at_a_hung_runtime() -> None:
    finding = explain(pod(), [*cluster(), *events()])
    b = blocker(finding, "containers-running")
    assert b.summary.endswith("(runtime did not kill them)")
    reasons = [e.fields.get("reason") for e in b.evidence]
    assert "FailedKillPod" in reasons
    cmds = commands(b.remedy)
    ps = f"crictl ps -a --label io.kubernetes.pod.uid={UID}"
    assert cmds.index(ps) < cmds.index("systemctl restart containerd")
    restart = b.remedy[cmds.index("systemctl restart containerd")]
    assert restart.destructive and restart.when


def test_exceeded_grace_period_event_alone_is_enough() -> None:
    message = "Container runtime did not kill the pod within specified grace period."
    finding = explain(pod(), [*cluster(), event("ExceededGracePeriod", message)])
    assert "runtime did not kill them" in blocker(finding, "containers-running").summary


def test_full_disk_from_events_and_disk_pressure() -> None:
    full = node(DiskPressure=("True", "KubeletHasDiskPressure", "2026-01-01T11:40:00Z"))
    message = "failed to remove container: write /var/lib/containerd/x: no space left on device"
    objects = [full, *cluster("node-worker-1"), event("FailedKillPod", message)]
    b = blocker(explain(pod(), objects), "containers-running")
    assert any(e.fields.get("DiskPressure") == "True" for e in b.evidence)
    assert any(c.startswith("df -h /var/lib/containerd") for c in commands(b.remedy))


def test_disk_pressure_alone_gives_the_hint() -> None:
    full = node(DiskPressure=("True", "KubeletHasDiskPressure", "2026-01-01T11:40:00Z"))
    b = blocker(explain(pod(), [full, *cluster("node-worker-1")]), "containers-running")
    assert "node disk full" in b.summary


def test_immutable_file_path_comes_from_the_event() -> None:
    path = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/91/fs/etc/app.lock"
    message = f'failed to remove container "7e1c": unlinkat {path}: operation not permitted'
    finding = explain(pod(), [*cluster(), event("FailedKillPod", message)])
    cmds = commands(blocker(finding, "containers-running").remedy)
    assert f"lsattr -d {path}" in cmds
    assert f"chattr -i {path}" in cmds


def test_busy_mount_hint() -> None:
    rootfs = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/7e1c/rootfs"
    message = f"unmount {rootfs}: device or resource busy"
    finding = explain(pod(), [*cluster(), event("FailedKillPod", message)])
    assert f"grep {UID} /proc/*/mountinfo" in commands(
        blocker(finding, "containers-running").remedy
    )


def test_failed_prestop_hook_hint() -> None:
    message = 'PreStop hook for container app failed: command "/bin/drain" exited with 137'
    finding = explain(pod(), [*cluster(), event("FailedPreStopHook", message)])
    assert "preStop" in blocker(finding, "containers-running").summary


def test_host_pid_with_post_start_exec_hint() -> None:
    obj = pod(spec__hostPID=True)
    obj["spec"]["containers"][0]["lifecycle"] = {"postStart": {"exec": {"command": ["/init"]}}}
    b = blocker(explain(obj, cluster()), "containers-running")
    assert "postStart" in b.summary
    assert any(e.fields.get("hostPID") is True for e in b.evidence)


# -- the node ----------------------------------------------------------------------------------


def test_missing_node_is_node_missing_with_force_delete_last() -> None:
    finding = explain(pod(), cluster("node-worker-1", "lease-worker-1"))
    assert types(finding) == ["node-missing"]
    b = finding.blockers[0]
    assert b.summary == "node worker-1 no longer exists"
    assert b.evidence[0].fields == {"nodeName": "worker-1", "nodeExists": False}
    assert commands(b.remedy) == ["kubectl get node worker-1", FORCE]
    assert b.remedy[-1].destructive and b.remedy[-1].when


def words(command: str) -> list[str]:
    """command as a shell reads it: `;`, `|` and `&` end a command, quotes keep one word."""
    return list(shlex.shlex(command, posix=True, punctuation_chars=True))


@pytest.mark.parametrize("state", ["missing", "not ready", "no cause"])
def test_names_from_a_file_stay_one_word_in_every_command(state: str) -> None:
    """A file (--from-file) is not validated by an API server: a pod named `web-0;reboot` on a
    node named `worker 1` must stay one word in every command printed for it. (Fixed: the
    force delete, describe and node commands printed names unquoted, while the finalizer and
    namespace commands quoted them.)"""
    odd = pod(metadata__name="web-0;reboot", spec__nodeName="worker 1")
    ready = {"missing": [], "not ready": [node(Ready=("False", "KubeletNotReady", "x"))]}
    nodes = ready.get(state, [node()])
    for n in nodes:
        n["metadata"]["name"] = "worker 1"
    if state == "no cause":  # the kubelet confirmed, nothing else holds it
        odd["metadata"]["deletionGracePeriodSeconds"] = 0
    finding = explain(odd, [*nodes, *cluster("node-worker-1", "lease-worker-1")])
    printed = [c for b in finding.blockers for c in commands(b.remedy) if c.startswith("kubectl")]
    assert any("web-0" in c for c in printed), printed
    assert state == "no cause" or any("worker" in c for c in printed), printed
    for command in printed:
        if "web-0" in command:
            assert "web-0;reboot" in words(command), command
        if "worker" in command:
            assert "worker 1" in words(command), command


def test_not_ready_node_is_the_cause_not_its_stale_container_status() -> None:
    down = node(Ready=("Unknown", "NodeStatusUnknown", "2026-01-01T09:00:00Z"))
    finding = explain(pod(), [down, *cluster("node-worker-1")])
    assert types(finding) == ["node-not-ready"]
    b = finding.blockers[0]
    assert b.summary == "node worker-1 NotReady for 3h (kubelet stopped posting)"
    assert b.evidence[0].fields["Ready"] == "Unknown"
    assert b.evidence[0].fields["lastTransitionTime"] == "2026-01-01T09:00:00Z"
    cmds = commands(b.remedy)
    taint = "kubectl taint nodes worker-1 node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
    assert cmds[0] == "kubectl describe node worker-1"
    assert cmds.index(taint) < cmds.index(FORCE) == len(cmds) - 1  # taint is safer than force
    assert all(r.destructive and r.when for r in b.remedy[cmds.index(taint) :])


def test_stale_lease_with_ready_true_is_node_not_ready() -> None:
    lease = load("lease-worker-1")
    lease["spec"]["renewTime"] = "2026-01-01T11:55:00.000000Z"
    finding = explain(pod(), [lease, *cluster("lease-worker-1")])
    assert types(finding) == ["node-not-ready"]
    b = finding.blockers[0]
    assert b.summary == "node worker-1 lease not renewed for 5m"
    assert b.evidence[0].fields["secondsSinceRenew"] == 300
    assert b.evidence[0].fields["staleAfterSeconds"] == 40


def test_lease_within_40s_is_healthy() -> None:
    lease = load("lease-worker-1")
    lease["spec"]["renewTime"] = "2026-01-01T11:59:25Z"
    assert types(explain(pod(), [lease, *cluster("lease-worker-1")])) == ["containers-running"]


def test_out_of_service_taint_already_set_is_not_suggested_again() -> None:
    down = node(Ready=("False", "KubeletNotReady", "2026-01-01T11:00:00Z"))
    down["spec"]["taints"] = [
        {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
    ]
    b = blocker(explain(pod(), [down, *cluster("node-worker-1")]), "node-not-ready")
    assert not any("taint" in c for c in commands(b.remedy))
    assert any("out-of-service" in e.message for e in b.evidence)


def test_nodes_unreadable_warns_and_never_claims_node_missing() -> None:
    finding = explain(pod(), cluster(), unreadable={"Node": "forbidden"})
    assert "could not read nodes: forbidden" in finding.warnings
    assert types(finding) == ["containers-running"]
    assert any("not checked (forbidden)" in e.message for e in finding.blockers[0].evidence)
    # the headline says what was not checked instead of stating a running container as fact
    assert finding.blockers[0].summary == (
        "node worker-1 not checked (forbidden); app last reported running"
    )


def test_lease_unreadable_keeps_ready_true_as_healthy() -> None:
    finding = explain(pod(), cluster(), unreadable={"Lease": "forbidden"})
    assert types(finding) == ["containers-running"]
    assert finding.warnings == ["could not read leases.coordination.k8s.io: forbidden"]


def test_events_unreadable_still_reports_running_containers() -> None:
    finding = explain(pod(), cluster(), unreadable={"Event": "forbidden"})
    assert types(finding) == ["containers-running"]
    assert "could not read events: forbidden" in finding.warnings


# -- volumes -----------------------------------------------------------------------------------


def test_exited_containers_with_volume_in_use_is_volumes_not_reclaimed() -> None:
    finding = explain(exited(), cluster())
    assert types(finding) == ["volumes-not-reclaimed"]
    b = finding.blockers[0]
    assert b.summary == "containers exited; volume data still in use on worker-1"
    assert b.evidence[0].fields["phase"] == "Running"
    assert b.evidence[0].fields["containers"] == {"app": "terminated"}
    chain = next(e for e in b.evidence if e.fields.get("claim") == "data-web-0")
    assert chain.fields["persistentVolume"] == PV
    assert chain.fields["driver"] == "ebs.csi.aws.com"
    assert chain.fields["volumeHandle"] == "vol-0a1b2c3d4e5f60718"
    in_use = "kubernetes.io/csi/ebs.csi.aws.com^vol-0a1b2c3d4e5f60718"
    assert any(e.fields.get("volumesInUse") == in_use for e in b.evidence)
    cmds = commands(b.remedy)
    assert cmds[0] == f"mount | grep {UID}"
    assert cmds[-1].startswith("kubectl delete volumeattachment csi-")  # last, if ever
    assert b.remedy[-1].destructive
    assert FORCE not in cmds
    assert_destructive_steps_say_when(finding)


def test_missing_csi_driver_is_named_and_restored_first() -> None:
    finding = explain(exited(), cluster("csidriver-ebs"))
    assert types(finding) == ["csi-driver-missing", "volumes-not-reclaimed"]
    b = finding.blockers[0]
    assert b.summary == "CSI driver ebs.csi.aws.com not installed"
    assert b.evidence[0].fields["csiDriverExists"] is False
    assert b.remedy[0].description.startswith("restore CSI driver ebs.csi.aws.com")
    assert not b.remedy[0].destructive
    assert commands(b.remedy)[-1].startswith("kubectl delete volumeattachment")


def test_csi_driver_absent_from_the_nodes_csinode() -> None:
    csinode = load("csinode-worker-1")
    csinode["spec"]["drivers"] = []
    finding = explain(exited(), [csinode, *cluster("csinode-worker-1")])
    b = blocker(finding, "csi-driver-missing")
    assert b.summary == "CSI driver ebs.csi.aws.com not running on worker-1"
    assert b.evidence[0].fields["registeredDrivers"] == []


def test_volume_attachment_with_detach_error() -> None:
    attachment = load("volumeattachment-web-0")
    attachment["status"]["detachError"] = {
        "time": "2026-01-01T11:55:00Z",
        "message": "rpc error: code = Internal desc = Could not detach volume: timeout",
    }
    finding = explain(exited(), [attachment, *cluster("volumeattachment-web-0")])
    b = blocker(finding, "volume-attachment")
    assert b.summary == f"detach of {PV} from worker-1 failing"
    assert "Could not detach volume" in b.evidence[0].fields["detachError"]
    assert b.remedy[-1].destructive and b.remedy[-1].when
    assert "kubectl delete volumeattachment" in (b.remedy[-1].command or "")


def test_failed_unmount_events_are_evidence() -> None:
    node_obj = load("node-worker-1")
    node_obj["status"]["volumesInUse"] = []
    message = 'UnmountVolume.TearDown failed for volume "data": device or resource busy'
    objects = [node_obj, *cluster("node-worker-1"), event("FailedUnMount", message)]
    b = blocker(explain(exited(), objects), "volumes-not-reclaimed")
    assert b.summary == "containers exited; volume teardown failing (FailedUnMount)"
    assert any(e.fields.get("reason") == "FailedUnMount" for e in b.evidence)
    assert f"grep {UID} /proc/*/mountinfo" in commands(b.remedy)


def test_no_volume_in_view_says_the_teardown_step_is_unknown() -> None:
    """No PVC, event or final status: the sandbox, the claims or the volumes may hang (issue
    37, class 1); a PVC to tear down keeps volumes-not-reclaimed, as unsure."""
    obj = exited()
    obj["spec"]["volumes"] = obj["spec"]["volumes"][1:]  # the projected token volume only
    finding = explain(obj, cluster())
    assert types(finding) == ["teardown-unfinished"]
    main = finding.blockers[0]
    assert main.summary == "containers exited; kubelet's teardown unfinished, which step is unknown"
    assert main.confidence == "possible"
    assert "crictl pods --label io.kubernetes.pod.uid=" + UID in commands(main.remedy)
    assert "umount" not in " ".join(commands(main.remedy))  # not the volume remedies
    in_use = blocker(explain(exited(), cluster()), "volumes-not-reclaimed")
    assert in_use.confidence == "likely" and "volumesInUse" in (in_use.basis or "")
    node_obj = load("node-worker-1")
    node_obj["status"]["volumesInUse"] = []  # thinned: only the PVC says there is a volume
    thinned = explain(exited(), [node_obj, *cluster("node-worker-1")])
    assert blocker(thinned, "volumes-not-reclaimed").confidence == "possible"


# The kubelet's event when the CNI plugin's DEL fails, as pasted in projectcalico/calico#7647
# (the error) and spidernet-io/cni-plugins#47 (the event around it).
CNI_DEL_FAILED = (
    'error killing pod: failed to "KillPodSandbox" for "3f2b6c1e-8d3a-4b5e-9c7d-1a2b3c4d5e6f" '
    'with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for '
    'sandbox \\"3bb433e9ee32e3402ad828c97ddfe322b9f2d88348cb004d01efd226aa0bfd5d\\": plugin '
    'type=\\"calico\\" failed (delete): netplugin failed with no error message: signal: killed"'
)


def test_cni_teardown_failure_is_the_cause_not_volume_teardown() -> None:
    obj = exited()
    obj["spec"]["volumes"] = obj["spec"]["volumes"][1:]  # the projected token volume only
    finding = explain(obj, [*cluster(), event("FailedKillPod", CNI_DEL_FAILED)])
    assert types(finding) == ["network-teardown"]
    b = finding.blockers[0]
    assert b.summary == "pod network teardown failing (CNI plugin calico)"
    assert b.evidence[1].fields["reason"] == "FailedKillPod"
    assert commands(b.remedy)[0] == (
        "kubectl get pods -A -o wide --field-selector spec.nodeName=worker-1"
    )
    assert [r.destructive for r in b.remedy] == [False, False, True]
    assert_destructive_steps_say_when(finding)


def test_cni_teardown_failure_keeps_volume_evidence() -> None:
    """A volume still in use on the node is a fact of its own: it stays, ranked below."""
    finding = explain(exited(), [*cluster(), event("FailedKillPod", CNI_DEL_FAILED)])
    assert types(finding) == ["network-teardown", "volumes-not-reclaimed"]


def test_node_unreadable_says_so_instead_of_blaming_the_kubelet() -> None:
    obj = exited()
    obj["spec"]["volumes"] = obj["spec"]["volumes"][1:]  # the projected token volume only
    finding = explain(obj, cluster(), unreadable={"Node": "forbidden"})
    assert types(finding) == ["teardown-unfinished"]
    assert finding.blockers[0].summary == (
        "containers exited; node worker-1 not checked (forbidden); kubelet's teardown "
        "unfinished, which step is unknown"
    )


def test_pv_unreadable_keeps_the_blocker_and_warns() -> None:
    finding = explain(exited(), cluster(), unreadable={"PersistentVolume": "forbidden"})
    assert types(finding) == ["volumes-not-reclaimed"]
    assert "could not read persistentvolumes: forbidden" in finding.warnings


# -- namespace, webhooks, finalizers, nothing found --------------------------------------------


def test_terminating_namespace_is_context() -> None:
    namespace = load("namespace-shop")
    namespace["metadata"]["deletionTimestamp"] = "2026-01-01T11:49:00Z"
    namespace["status"]["phase"] = "Terminating"
    finding = explain(pod(), [namespace, *cluster("namespace-shop")])
    assert types(finding) == ["containers-running", "namespace-terminating"]
    b = finding.blockers[1]
    assert commands(b.remedy) == ["kubectl terminating ns shop --explain"]


def delete_webhook() -> list[JSON]:
    """The policy webhook, made to intercept DELETE of pods; its only endpoint is not ready."""
    config = load("webhook-policy")
    config["webhooks"][0]["rules"][0]["operations"] = ["DELETE"]
    return [config, load("service-policy-webhook"), load("endpointslice-policy-webhook")]


def test_webhook_rejecting_the_kubelets_final_delete() -> None:
    finding = explain(exited(), [*cluster(), *delete_webhook()])
    b = blocker(finding, "webhook")
    service = "policy-system/policy-webhook"
    assert (
        b.summary
        == f"webhook validate.pods.policy.example.com: service {service} has no ready endpoints"
    )
    assert b.evidence[0].fields["operations"] == ["DELETE"]


def test_webhook_rejecting_finalizer_removal() -> None:
    obj = exited()
    obj["metadata"]["finalizers"] = ["example.com/audit"]
    objects = [*cluster(), load("webhook-policy"), load("service-policy-webhook")]
    finding = explain(obj, objects)
    assert types(finding) == ["webhook", "volumes-not-reclaimed", "finalizer"]
    assert blocker(finding, "webhook").evidence[0].fields["operations"] == ["UPDATE"]


def test_kubelet_done_only_finalizers_hold_the_pod() -> None:
    # After the kubelet's final delete (or a forced one) deletionGracePeriodSeconds is 0: the
    # node, containers and volumes no longer matter.
    obj = exited()
    obj["metadata"].update(
        deletionGracePeriodSeconds=0, finalizers=["batch.kubernetes.io/job-tracking"]
    )
    finding = explain(obj, cluster("node-worker-1"))
    assert types(finding) == ["finalizer"]


def test_nothing_found_says_what_was_checked() -> None:
    obj = pod(spec__nodeName="")
    finding = explain(obj, cluster())
    assert types(finding) == ["unknown"]
    b = finding.blockers[0]
    assert b.summary == "10m overdue; no known cause found"
    assert b.evidence[0].message.startswith("checked: finalizers (none), node")
    assert any("not bound to a node" in e.message for e in b.evidence)


def test_unverifiable_url_webhook_is_named_when_nothing_concrete_is_found() -> None:
    config = load("webhook-policy")
    config["webhooks"][0]["clientConfig"] = {"url": "https://policy.example.com/validate"}
    config["webhooks"][0]["rules"][0]["operations"] = ["DELETE"]
    obj = exited()
    obj["spec"]["volumes"] = obj["spec"]["volumes"][1:]
    b = blocker(explain(obj, [*cluster(), config]), "teardown-unfinished")
    urls = [e.fields.get("url") for e in b.evidence]
    assert "https://policy.example.com/validate" in urls


# -- wide output and robustness ----------------------------------------------------------------


def test_container_states_for_wide_output() -> None:
    obj = exited()
    obj["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    obj["status"]["initContainerStatuses"] = [
        {"name": "init", "state": {"waiting": {"reason": "PodInitializing"}}}
    ]
    assert container_states(obj) == [
        {
            "name": "init",
            "state": "waiting",
            "reason": "PodInitializing",
            "exitCode": None,
            "startedAt": None,
            "finishedAt": None,
        },
        {
            "name": "app",
            "state": "terminated",
            "reason": "Error",
            "exitCode": 143,
            "startedAt": "2026-01-01T09:00:05Z",
            "finishedAt": "2026-01-01T11:49:45Z",
        },
        {
            "name": "sidecar",
            "state": "unknown",
            "reason": None,
            "exitCode": None,
            "startedAt": None,
            "finishedAt": None,
        },
    ]


def test_finding_fields_for_the_json_contract() -> None:
    out = explain(pod(), cluster()).to_json(json_extras)
    assert (out["node"], out["phase"], out["overdueSeconds"]) == ("worker-1", "Running", 600)
    assert out["containers"][0]["state"] == "running"
    assert out["blockers"][0]["type"] == "containers-running"


MALFORMED: list[JSON] = [
    {},
    {"metadata": []},
    {"metadata": {"deletionTimestamp": 5, "name": 3, "finalizers": "x"}},
    {"metadata": {"deletionTimestamp": "yesterday"}, "spec": [], "status": "Running"},
    {"metadata": {"deletionTimestamp": "2026-01-01T11:00:00Z"}, "spec": {"nodeName": 7}},
    {
        "metadata": {
            "deletionTimestamp": "2026-01-01T11:00:00Z",
            "deletionGracePeriodSeconds": "30",
        },
        "spec": {
            "nodeName": "worker-1",
            "volumes": ["data", {"persistentVolumeClaim": "x"}, {"csi": 1}],
        },
        "status": {"containerStatuses": [1, {"state": []}, {"state": {"running": "yes"}}]},
    },
]


@pytest.mark.parametrize("obj", MALFORMED)
def test_malformed_pods_never_crash(obj: JSON) -> None:
    finding = explain_pod(obj, StaticView(cluster(), NOW))
    assert isinstance(finding.blockers, list)


def test_malformed_related_objects_never_crash() -> None:
    garbage_node = {
        "kind": "Node",
        "metadata": {"name": "worker-1"},
        "status": {"conditions": "x", "volumesInUse": 1},
    }
    garbage: list[JSON] = [
        garbage_node,
        {
            "kind": "Lease",
            "metadata": {"name": "worker-1", "namespace": "kube-node-lease"},
            "spec": [],
        },
        {"kind": "CSINode", "metadata": {"name": "worker-1"}, "spec": {"drivers": [None, 3]}},
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-web-0", "namespace": "shop"},
            "spec": {"volumeName": 9},
        },
        {"kind": "VolumeAttachment", "metadata": {}, "spec": "x"},
        {
            "kind": "Event",
            "metadata": {"namespace": "shop"},
            "involvedObject": {"uid": UID},
            "reason": 3,
            "message": None,
        },
        {
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "w"},
            "webhooks": [None, {"rules": "x"}],
        },
    ]
    for obj in (pod(), exited()):
        finding = explain(obj, garbage)
        assert finding.blockers


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(150), deadline=None)
@given(
    metadata=st.dictionaries(
        st.sampled_from(["name", "deletionTimestamp", "finalizers", "uid"]), JSON_VALUES
    ),
    spec=JSON_VALUES,
    status=JSON_VALUES,
)
def test_fuzzed_pods_never_crash(metadata: JSON, spec: Any, status: Any) -> None:
    obj = {
        "metadata": {"deletionTimestamp": "2026-01-01T11:00:00Z", **metadata},
        "spec": spec,
        "status": status,
    }
    explain_pod(obj, StaticView(cluster(), NOW))


def test_never_reported_containers_are_not_called_exited() -> None:
    obj = pod()
    del obj["status"]["containerStatuses"]
    finding = explain(obj, cluster())
    assert finding.containers[0]["state"] == "unknown"
    b = blocker(finding, "volumes-not-reclaimed")
    assert b.summary == "no container running; volume data still in use on worker-1"


def test_node_without_ready_condition_is_not_ready() -> None:
    bare = load("node-worker-1")  # registered by hand: no kubelet ever wrote its status
    bare["status"] = {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {}}
    finding = explain(pod(), [bare, *cluster("node-worker-1")])
    assert types(finding) == ["node-not-ready"]
    assert finding.blockers[0].summary == "node worker-1 has never reported Ready"


@pytest.mark.parametrize(
    ("cut", "why"),
    [
        ("status", "the file has the Node without status"),
        ("status.conditions", "the file has the Node's status without conditions"),
    ],
)
def test_node_pasted_without_its_status_is_unknown_not_never_ready(cut: str, why: str) -> None:
    """People paste a Node for its taints: its kubelet reported (nodeInfo), its conditions are
    not in the paste. Its health is unknown, not 'never reported Ready' (issue 32, class 1)."""
    node = load("node-worker-1")
    if cut == "status":
        del node["status"]
    else:
        del node["status"]["conditions"]
    lease = load("lease-worker-1")
    lease["spec"]["renewTime"] = "2026-01-01T11:59:55.000000Z"  # fresh: no proof either way
    finding = explain(pod(), [node, lease, *cluster("node-worker-1", "lease-worker-1")])
    assert "node-not-ready" not in types(finding)
    assert f"health of node worker-1 unknown: {why}" in finding.unknowns


def test_node_pasted_without_status_with_a_stale_lease_is_down() -> None:
    node = load("node-worker-1")
    del node["status"]
    lease = load("lease-worker-1")
    lease["spec"]["renewTime"] = "2026-01-01T10:00:00.000000Z"
    finding = explain(pod(), [node, lease, *cluster("node-worker-1", "lease-worker-1")])
    assert types(finding)[0] == "node-not-ready"
    assert finding.blockers[0].summary.startswith("node worker-1 lease not renewed for")


def test_a_driver_not_running_on_its_node_is_grouped_by_driver_not_called_uninstalled() -> None:
    # the summary groups by the row's subject kind, not by the first evidence object in order
    csinode = load("csinode-worker-1")
    csinode["spec"]["drivers"] = []
    finding = explain(exited(), [csinode, *cluster("csinode-worker-1")])
    [group] = group_by_cause([finding])
    assert (group.subject_kind, group.subjects) == ("CSIDriver", ("ebs.csi.aws.com",))
    assert "not installed or not running" in summary_text([finding])


def test_a_kill_that_timed_out_in_the_runtime_is_the_runtime_while_no_status_shows_it() -> None:
    # The kubelet's event as pasted in METR/vivaria#537: the pod's status was not in the paste.
    message = (
        'error killing pod: failed to "KillPodSandbox" for "web-0" with KillPodSandboxError: '
        '"rpc error: code = DeadlineExceeded desc = context deadline exceeded"'
    )
    unknown = pod(status__containerStatuses=[])
    b = blocker(
        explain(unknown, [*cluster(), event("FailedKillPod", message)]), "runtime-unavailable"
    )
    assert "timed out stopping the pod" in b.summary
    assert FORCE not in commands(b.remedy)
    # seen running: containers-running names the hung runtime with the containers
    running = explain(pod(), [*cluster(), event("FailedKillPod", message)])
    assert types(running)[0] == "containers-running"
    # seen terminated: the event is history, the runtime is not what holds the pod now
    done = terminated(pod(), 0, "Completed", "2026-01-01T11:57:00Z")
    assert "runtime-unavailable" not in types(
        explain(done, [*cluster(), event("FailedKillPod", message)])
    )


class CountingView(StaticView):
    """A view that counts the event lists asked of it (one request each on a live cluster)."""

    in_memory = False  # as a live server: no by-name read of uid-less events
    event_lists = 0

    def list(self, resource: Any, namespace: Any = None, selectors: Any = None) -> list[JSON]:
        if resource.kind == "Event":
            self.event_lists += 1
        return super().list(resource, namespace, *(() if selectors is None else (selectors,)))


def test_a_pod_on_a_missing_node_reads_no_events() -> None:
    """A mass outage's pods are held by their node: explaining one asks no event list (20,000
    stuck pods would be 20,000 requests)."""
    view = CountingView([pod(), *cluster("node-worker-1", "lease-worker-1")], NOW)
    assert types(explain_pod(pod(), view)) == ["node-missing"]
    assert view.event_lists == 0
    # nor on a node whose kubelet stopped (Ready Unknown, its Lease gone)
    down = node(Ready=("Unknown", "NodeStatusUnknown", "2026-01-01T11:00:00Z"))
    view = CountingView([pod(), down, *cluster("node-worker-1", "lease-worker-1")], NOW)
    assert types(explain_pod(pod(), view))[0] == "node-not-ready"
    assert view.event_lists == 0
