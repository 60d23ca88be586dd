"""Rendering of pod findings, compared with reviewed golden files in tests/golden/pods.

Six representative stuck (or not yet stuck) pods, each explained over its own view of the
cluster built from the JSON fixtures in tests/fixtures/pods, at a fixed `now`.
UPDATE_GOLDENS=1 rewrites the goldens; review the diff.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable

import pytest

from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.render.structured import to_json, to_names
from kubectl_terminating.render.style import Style
from kubectl_terminating.render.table import PrintOptions, pods_table
from tests.unit.builders import explain_pod_among as explained
from tests.unit.builders import healthy_cluster, pod_fixture, terminated, web_0_events
from tests.unit.golden import assert_golden

PLAIN = Style(color=False)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def renamed(pod: JSON, name: str, uid: str, namespace: str = "shop") -> JSON:
    out = copy.deepcopy(pod)
    out["metadata"].update(name=name, uid=uid, namespace=namespace)
    out["metadata"]["labels"] = {"app": name.rsplit("-", 1)[0]}
    out["metadata"].pop("ownerReferences", None)
    return out


# -- the six pods ------------------------------------------------------------------------------


def hung_runtime() -> Finding:
    """web-0: 10m past its deadline on a healthy node, FailedKillPod events."""
    return explained(pod_fixture("pod-web-0"), [*healthy_cluster(), *web_0_events()])


def node_not_ready() -> Finding:
    """api-0 on worker-2: Ready=Unknown for 20m, Lease stale."""
    pod = renamed(pod_fixture("pod-web-0"), "api-0", "11111111-2222-4333-8444-555555555555")
    pod["spec"]["nodeName"] = "worker-2"
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]  # no claim
    node = pod_fixture("node-worker-1")
    node["metadata"]["name"] = "worker-2"
    node["status"]["volumesInUse"] = node["status"]["volumesAttached"] = []
    for condition in node["status"]["conditions"]:
        condition.update(
            status="Unknown",
            reason="NodeStatusUnknown",
            message="Kubelet stopped posting node status.",
            lastHeartbeatTime="2026-01-01T11:39:50Z",
            lastTransitionTime="2026-01-01T11:40:40Z",
        )
    lease = pod_fixture("lease-worker-1")
    lease["metadata"]["name"] = "worker-2"
    lease["spec"].update(holderIdentity="worker-2", renewTime="2026-01-01T11:39:55.000000Z")
    return explained(pod, [node, lease, pod_fixture("namespace-shop")])


def node_missing() -> Finding:
    """cache-0: its node worker-9 was deleted 2h ago (scaled down)."""
    pod = renamed(pod_fixture("pod-web-0"), "cache-0", "22222222-3333-4444-8555-666666666666")
    pod["spec"]["nodeName"] = "worker-9"
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T10:00:00Z"
    return explained(pod, [*healthy_cluster(), pod_fixture("namespace-shop")])


def volumes_stuck() -> Finding:
    """db-0: container exited, ebs driver uninstalled, detach failing, volume still in use."""
    pod = renamed(pod_fixture("pod-web-0"), "db-0", "33333333-4444-4555-8666-777777777777")
    pod = terminated(pod, 143, "Error", "2026-01-01T11:49:45Z")
    attachment = pod_fixture("volumeattachment-web-0")
    attachment["status"]["detachError"] = {
        "time": "2026-01-01T11:58:30Z",
        "message": "rpc error: code = Unavailable desc = connection refused",
    }
    unmount = copy.deepcopy(web_0_events()[1])
    unmount["metadata"]["name"] = "db-0.1816a2c0d1e2f3b5"
    unmount["involvedObject"].update(name="db-0", uid=pod["metadata"]["uid"])
    unmount.update(
        reason="FailedUnMount",
        message='UnmountVolume.TearDown failed for volume "data": kubernetes.io/csi: '
        "driver name ebs.csi.aws.com not found in the list of registered CSI drivers",
        count=9,
    )
    csinode = pod_fixture("csinode-worker-1")
    csinode["spec"]["drivers"] = []
    others = healthy_cluster("csidriver-ebs", "volumeattachment-web-0", "csinode-worker-1")
    return explained(pod, [*others, csinode, attachment, unmount])


def job_behind_webhook() -> Finding:
    """report-28461 in batch: a Succeeded Job pod whose job-tracking finalizer cannot be
    removed: the policy webhook intercepts pod UPDATEs and has no ready endpoints."""
    pod = renamed(
        pod_fixture("pod-web-0"),
        "report-28461-x7k2p",
        "44444444-5555-4666-8777-888888888888",
        "batch",
    )
    pod = terminated(pod, 0, "Completed", "2026-01-01T11:41:00Z")
    pod["status"]["phase"] = "Succeeded"
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    pod["metadata"].update(
        finalizers=["batch.kubernetes.io/job-tracking"],
        deletionTimestamp="2026-01-01T11:45:00Z",
        deletionGracePeriodSeconds=0,
    )
    namespace = pod_fixture("namespace-shop")
    namespace["metadata"].update(
        name="batch",
        uid="55555555-6666-4777-8888-999999999999",
        labels={"kubernetes.io/metadata.name": "batch"},
    )
    policy = [
        pod_fixture("webhook-policy"),
        pod_fixture("service-policy-webhook"),
        pod_fixture("endpointslice-policy-webhook"),
    ]
    return explained(pod, [*healthy_cluster("namespace-shop"), namespace, *policy])


def in_grace_period() -> Finding:
    """slow-0: deleted 10s ago with 120s of grace; listed, not stuck."""
    pod = renamed(pod_fixture("pod-web-0"), "slow-0", "66666666-7777-4888-8999-000000000000")
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    pod["metadata"].update(deletionTimestamp="2026-01-01T12:01:50Z", deletionGracePeriodSeconds=120)
    return explained(pod, healthy_cluster())


CASES: dict[str, Callable[[], Finding]] = {
    "hung-runtime": hung_runtime,
    "node-not-ready": node_not_ready,
    "node-missing": node_missing,
    "volumes": volumes_stuck,
    "job-behind-webhook": job_behind_webhook,
    "grace-period": in_grace_period,
}


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    """In the order the finder returns them: by namespace, then name."""
    found = [case() for case in CASES.values()]
    return sorted(found, key=lambda f: (f.namespace or "", f.name))


def main_types(findings: list[Finding]) -> dict[str, str]:
    return {f.name: (f.main_blocker.type if f.main_blocker else "") for f in findings}


def test_cases_are_what_they_claim(findings: list[Finding]) -> None:
    assert main_types(findings) == {
        "report-28461-x7k2p": "webhook",
        "api-0": "node-not-ready",
        "cache-0": "node-missing",
        "db-0": "csi-driver-missing",
        "slow-0": "grace-period",
        "web-0": "containers-running",
    }
    by_name = {f.name: f for f in findings}
    assert [b.type for b in by_name["db-0"].blockers] == [
        "csi-driver-missing",
        "volume-attachment",
        "volumes-not-reclaimed",
    ]
    assert [b.type for b in by_name["report-28461-x7k2p"].blockers] == ["webhook", "finalizer"]
    assert [f.name for f in findings if not f.stuck] == ["slow-0"]
    assert not any(f.warnings for f in findings)


def test_table(findings: list[Finding]) -> None:
    assert_golden("pods/table.txt", pods_table(findings, PrintOptions()))


def test_table_all_namespaces(findings: list[Finding]) -> None:
    assert_golden(
        "pods/table-all-namespaces.txt", pods_table(findings, PrintOptions(all_namespaces=True))
    )


def test_table_wide(findings: list[Finding]) -> None:
    assert_golden("pods/table-wide.txt", pods_table(findings, PrintOptions(wide=True)))


def test_table_all_namespaces_wide_no_headers(findings: list[Finding]) -> None:
    table = pods_table(findings, PrintOptions(all_namespaces=True, wide=True, no_headers=True))
    assert_golden("pods/table-all-namespaces-wide-no-headers.txt", table)
    with_headers = pods_table(findings, PrintOptions(all_namespaces=True, wide=True)).splitlines()
    assert with_headers[0].split() == [
        "NAMESPACE",
        "NAME",
        "NODE",
        "TERMINATING",
        "OVERDUE",
        "BLOCKER",
        "CONFIDENCE",
        "PHASE",
        "CONTAINERS",
        "FINALIZERS",
    ]
    assert len(table.splitlines()) == len(with_headers) - 1 == 6


def test_table_header_is_kubectl_like(findings: list[Finding]) -> None:
    header = pods_table(findings, PrintOptions()).splitlines()[0]
    assert re.fullmatch(r"NAME {3,}NODE {3,}TERMINATING {3}OVERDUE {3}BLOCKER", header)


def test_explain(findings: list[Finding]) -> None:
    text = explain_text(findings, PLAIN, json_extras)
    assert_golden("pods/explain.txt", text)
    assert text.count("DESTRUCTIVE: ") == sum(
        r.destructive for f in findings for b in f.blockers for r in b.remedy
    )


def test_json(findings: list[Finding]) -> None:
    text = to_json(findings, [], json_extras)
    assert_golden("pods/list.json", text)
    data = json.loads(text)
    assert data["apiVersion"] == "terminating.kubectl.io/v1" and data["kind"] == "List"
    item = data["items"][0]
    for key in ("kind", "apiVersion", "namespace", "name", "uid", "deletionTimestamp"):
        assert key in item
    for key in ("overdueSeconds", "finalizers", "blockers", "node", "phase", "containers"):
        assert key in item


def test_names(findings: list[Finding]) -> None:
    assert to_names(findings).splitlines() == [
        "pod/report-28461-x7k2p",
        "pod/api-0",
        "pod/cache-0",
        "pod/db-0",
        "pod/slow-0",
        "pod/web-0",
    ]


def test_colour_marks_stuck_red_and_grace_dim(findings: list[Finding]) -> None:
    table = pods_table(findings, PrintOptions(style=Style(color=True)))
    rows = {line.split()[0]: line for line in table.splitlines()[1:]}
    assert "\x1b[31mnode worker-9 no longer exists\x1b[0m" in rows["cache-0"]
    assert "\x1b[2mstill inside its grace period" in rows["slow-0"]


# -- terminal safety ---------------------------------------------------------------------------

EVIL_NAME = "web-\x1b]0;owned\x07-0\u202e"
EVIL_MESSAGE = 'error killing pod: \x1b[2J\x1b[31m"DeadlineExceeded"\r\nfake: line\x9b'


def evil() -> Finding:
    pod = renamed(pod_fixture("pod-web-0"), EVIL_NAME, "77777777-8888-4999-8000-111111111111")
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]
    pod["status"]["containerStatuses"][0]["name"] = "app\x1b[8m"
    kill = copy.deepcopy(web_0_events()[1])
    kill["involvedObject"].update(name=EVIL_NAME, uid=pod["metadata"]["uid"])
    kill["message"] = EVIL_MESSAGE
    return explained(pod, [*healthy_cluster(), kill])


def _no_raw_controls(text: str) -> None:
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), text


@pytest.mark.parametrize("color", [False, True], ids=["plain", "color"])
def test_control_characters_are_escaped(color: bool) -> None:
    finding = evil()
    assert finding.main_blocker is not None
    assert "\x1b[2J" in finding.main_blocker.evidence[-1].message  # the data really has them
    style = Style(color=color)
    table = pods_table([finding], PrintOptions(all_namespaces=True, wide=True, style=style))
    text = explain_text([finding], style, json_extras)
    for out in (table, text):
        _no_raw_controls(SGR.sub("", out) if color else out)  # only our own colour codes
        assert "web-\\x1b]0;owned\\x07-0\\u202e" in out
        assert "app\\x1b[8m=running" in out
    assert '\\x1b[2J\\x1b[31m"DeadlineExceeded"\\x0d\\x0afake: line\\x9b' in text
    assert len(table.splitlines()) == 2  # the CR/LF in the message did not break rows


def test_control_characters_in_json_and_names_are_escaped() -> None:
    finding = evil()
    for out in (to_json([finding], [], json_extras), to_names([finding])):
        _no_raw_controls(out)
        assert "\x1b" not in out and "\u202e" not in out
    assert json.loads(to_json([finding], [], json_extras))["items"][0]["name"] == EVIL_NAME


# -- one cause on its own --------------------------------------------------------------------


def network_teardown() -> Finding:
    """dns-0: its container exited, but the CNI plugin fails to delete its network (the event
    as pasted in projectcalico/calico#7647 and spidernet-io/cni-plugins#47)."""
    uid = "77777777-8888-4999-8aaa-bbbbbbbbbbbb"
    pod = renamed(pod_fixture("pod-web-0"), "dns-0", uid)
    pod = terminated(pod, 0, "Completed", "2026-01-01T11:49:50Z")
    pod["spec"]["volumes"] = pod["spec"]["volumes"][1:]  # the projected token volume only
    event = copy.deepcopy(web_0_events()[1])
    event["metadata"].update(name="dns-0.failedkillpod", namespace="shop")
    event["involvedObject"].update(name="dns-0", uid=uid)
    event.update(
        reason="FailedKillPod",
        type="Warning",
        count=42,
        lastTimestamp="2026-01-01T11:58:00Z",
        message=f'error killing pod: failed to "KillPodSandbox" for "{uid}" with '
        'KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for '
        'sandbox \\"3bb433e9ee32e3402ad828c97ddfe322b9f2d88348cb004d01efd226aa0bfd5d\\": plugin '
        'type=\\"calico\\" failed (delete): netplugin failed with no error message: signal: '
        'killed"',
    )
    return explained(pod, [*healthy_cluster(), event])


def test_explain_network_teardown() -> None:
    finding = network_teardown()
    assert [b.type for b in finding.blockers] == ["network-teardown"]
    assert_golden("pods/explain-network-teardown.txt", explain_text([finding], PLAIN, json_extras))
