"""The kubelet's own word turned into a pod's headline (explain/node_evidence.py, pure).

The log lines are the real kubelet's (v1.36.3, the harness's real node: tests/fixtures/
node-evidence/*.log); the stats/summary answer has the real kubelet's format (k8s.io/kubelet
pkg/apis/stats/v1alpha1: node.fs, node.runtime.imageFs/containerFs), as a node whose runtime
disk is full would send it (the harness's kubelet cannot answer stats/summary: its root is
not a block device)."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from typing import Any

import pytest

from kubectl_terminating.causes import (
    CONTAINERS_RUNNING,
    DISK_FULL,
    FINALIZER,
    RUNTIME_UNAVAILABLE,
    VOLUMES_NOT_RECLAIMED,
)
from kubectl_terminating.explain.node_evidence import confirm, not_read, wants_evidence
from kubectl_terminating.fix.plan import Refusal, plan
from kubectl_terminating.model import Blocker, Evidence, Finding, Remedy
from kubectl_terminating.nodeanswers import (
    NodeEvidence,
    free_space,
    kubelet_pods,
    matching,
    pod_keys,
    redact,
)
from kubectl_terminating.summary import group_by_cause
from tests.unit.builders import FIXTURES, run_captured
from tests.unit.golden import assert_golden

HERE = FIXTURES / "node-evidence"
UID = "aa3b8417-a918-4c38-a5f1-118787f31987"  # the pod of the captured immutable-file lines
LOCKED = (
    f"/tmp/i21/measure-state/node/kubelet/pods/{UID}/volumes/kubernetes.io~empty-dir/scratch/locked"
)
HINT = "containers exited; kubelet has not finished volume teardown"


def lines(name: str) -> tuple[str, ...]:
    return tuple((HERE / f"kubelet-{name}.log").read_text().splitlines())


def finding(blocker_type: str = VOLUMES_NOT_RECLAIMED, summary: str = HINT) -> Finding:
    found = Finding("Pod", "v1", "app-2", "real", UID, "2026-11-24T08:03:20Z", 60, 62, [])
    found.node = "real-1"
    found.blockers = [
        Blocker(
            blocker_type,
            summary,
            (Evidence("no container is running"),),
            (Remedy("read the kubelet's log", f"journalctl -u kubelet | grep {UID}"),),
        )
    ]
    return found


def evidence(**fields: Any) -> NodeEvidence:
    return NodeEvidence("real-1", "logs/kubelet.log", **fields)


def test_an_immutable_file_is_named_with_its_path_and_chattr() -> None:
    confirmed = confirm(finding(), (UID,), evidence(lines=lines("immutable")))
    main = confirmed.blockers[0]
    assert main.type == VOLUMES_NOT_RECLAIMED  # the type stays: it is still the teardown
    assert main.summary == f"immutable file {LOCKED} blocks the teardown (kubelet log)"
    proof = main.evidence[0]
    assert f"unlinkat {LOCKED}: operation not permitted" in proof.message
    assert proof.fields["source"] == "logs/kubelet.log"
    quoted = shlex.quote(LOCKED)  # `~` in the path
    assert [r.command for r in main.remedy[:2]] == [f"lsattr -d {quoted}", f"chattr -i {quoted}"]
    assert main.remedy[2].command == f"journalctl -u kubelet | grep {UID}"  # today's hint stays


def test_lines_about_other_pods_or_none_prove_nothing() -> None:
    """`Failed to set rlimit ... operation not permitted` is the kubelet's own, not the pod's."""
    other = [line for line in lines("immutable") if UID not in line]
    assert other and any("operation not permitted" in line for line in other)
    main = confirm(finding(), (UID,), evidence(lines=tuple(other))).blockers[0]
    assert main.summary == HINT
    assert main.evidence[-1].message.startswith(
        "node evidence read from logs/kubelet.log on real-1: no line about the pod names a known"
    )


@pytest.mark.parametrize(
    ("line", "summary", "first_command"),
    [
        (
            f'pod "{UID}" : unlinkat /var/lib/kubelet/pods/{UID}/volumes/x/held: device or '
            "resource busy",
            f"mount /var/lib/kubelet/pods/{UID}/volumes/x/held is busy (kubelet log)",
            f"grep -l {UID} /proc/*/mountinfo",
        ),
        (
            f'pod "{UID}" : kubernetes.io/csi: Unmounter.TearDownAt failed to get CSI client: '
            "driver name harness.csi.test not found in the list of registered CSI drivers",
            "CSI driver harness.csi.test not registered with the kubelet on real-1 (kubelet log)",
            "kubectl get pods -A -o wide --field-selector spec.nodeName=real-1",
        ),
    ],
)
def test_each_known_line_makes_its_headline(line: str, summary: str, first_command: str) -> None:
    main = confirm(finding(), (UID,), evidence(lines=(line,))).blockers[0]
    assert (main.summary, main.remedy[0].command) == (summary, first_command)


def test_full_disk_names_the_free_bytes_from_stats_summary() -> None:
    summary = json.loads((HERE / "stats-summary.json").read_text())
    free = free_space(summary)
    assert free["nodefs"].available == 75281231872 and not free["nodefs"].full
    assert free["imagefs"].full and free["containerfs"].full
    line = (
        f'"StopContainer from runtime service failed" containerID="{UID}" '
        'err="no space left on device"'
    )
    main = confirm(
        finding(CONTAINERS_RUNNING, "app still running 1m past the deadline"),
        (UID,),
        evidence(lines=(line,), free=free),
    ).blockers[0]
    assert main.summary == (
        "disk full on real-1: imagefs 0 B free, containerfs 0 B free (kubelet log and kubelet "
        "stats)"
    )
    assert main.remedy[0].command == "df -h /var/lib/kubelet /var/lib/containerd"


def test_stats_alone_confirm_a_full_disk_under_running_containers() -> None:
    free = free_space(json.loads((HERE / "stats-summary.json").read_text()))
    main = confirm(
        finding(CONTAINERS_RUNNING, "app still running"), (UID,), evidence(free=free)
    ).blockers[0]
    assert (
        main.summary
        == "app still running; disk full on real-1 (imagefs 0 B free, containerfs 0 B free, "
        "kubelet stats)"
    )


def test_a_full_disk_is_its_own_type_grouped_by_node_and_refused() -> None:
    """The real node's full disk: containerd cannot record the container's exit. The disk is
    the cause, not the runtime or the teardown it stalls: `disk-full`, grouped by node in the
    summary, and `fix` says why it does not remove the pod."""
    item, _ = from_dump("full-disk", node_evidence=True)
    assert item["blockers"][0]["type"] == DISK_FULL
    recorded = json.loads((HERE / "full-disk.json").read_text())["nodeEvidence"]["real-6a7847"]
    line = next(text for text in recorded["runtimeLines"] if "no space left on device" in text)
    container = line.split("containers/", 1)[1][:64]
    said = evidence(runtime_lines=(line,), runtime_source="logs/containerd.log")
    stalled = [
        confirm(finding(CONTAINERS_RUNNING, "app still running"), (container,), said),
        confirm(finding(), (container,), dataclasses.replace(said, node="real-2")),
    ]
    stalled[1].node = "real-2"
    assert [f.blockers[0].type for f in stalled] == [DISK_FULL, DISK_FULL]
    [group] = group_by_cause(stalled)
    assert (group.cause, group.subject_kind, group.subjects) == (
        "node disk full",
        "Node",
        ("real-1", "real-2"),
    )
    [section, _] = plan(stalled)
    refused = [step for step in section.steps if isinstance(step, Refusal)]
    assert refused and all("disk must have room" in step.reason for step in refused)


def test_journald_answer_of_the_log_query_is_matched_the_same() -> None:
    """With journald the node log query runs `journalctl --utc --no-pager
    --output=short-precise --unit=kubelet --grep=PATTERN` (kubelet_server_journal_linux.go):
    each line is prefixed by its time, host and unit."""
    raw = lines("immutable")[0]
    journald = f"Nov 24 08:04:00.201184 node-1 kubelet[3360]: {raw}"
    main = confirm(finding(), (UID,), evidence(lines=(journald,))).blockers[0]
    assert main.summary.startswith(f"immutable file {LOCKED} ")


def test_the_kubelets_own_pods_disagreeing_is_evidence() -> None:
    pods = kubelet_pods({"items": [{"metadata": {"uid": UID}}]})
    main = confirm(finding(), (UID,), evidence(kubelet_pods=pods)).blockers[0]
    assert any("without a deletionTimestamp" in e.message for e in main.evidence)
    main = confirm(finding(), (UID,), evidence(kubelet_pods={})).blockers[0]
    assert any("does not hold the pod" in e.message for e in main.evidence)


def test_credentials_in_lines_are_redacted() -> None:
    line = f'{UID} Authorization: Bearer abc.def token="s3cr3t" eyJhbGciOi.eyJzdWIiOi.sig'
    kept = matching([line, "unrelated token=zzz"], (UID,))
    assert kept == [redact(line)]
    assert "abc.def" not in kept[0] and "s3cr3t" not in kept[0] and "eyJhbGciOi" not in kept[0]


@pytest.mark.parametrize(
    ("said", "secret"),
    [
        ("Authorization: Bearer {}", "sha256~Xk3PqR7s-Tu_vW/AbC+dEf=="),  # OpenShift, base64
        ("Bearer {}", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"),  # a service account's JWT
        ("Authorization: Basic {}", "YWxpY2U6czNjcjN0"),
        ("token={}", "abc.def/ghi+jkl=="),
        ('"token": "{}"', "k8s-aws-v1.aHR0cHM6Ly9zdHM"),
        ("password: {}", "p@ss:w0rd!#$%^&*()"),
        ("client_secret='{}'", "a~b.c/d"),
        ("AUTHORIZATION={}", "bearer xyz-123"),
    ],
)
def test_credentials_of_any_shape_are_redacted_whole(said: str, secret: str) -> None:
    """A credential is cut at the first space, quote or comma, never earlier: no part of
    it is left (`\\w+` would stop at its first ~, / or +)."""
    line = f'{UID} level=error msg="{said.format(secret)}" next=field'
    [kept] = matching([line], (UID,))
    assert "<redacted>" in kept and kept.endswith('" next=field'), kept
    for part in re.split(r"[^0-9A-Za-z]+", secret.removeprefix("bearer ")):
        assert len(part) < 3 or part not in kept, (part, kept)


def test_keys_are_the_uid_and_container_ids_only() -> None:
    pod = {
        "metadata": {"uid": UID},
        "status": {"containerStatuses": [{"containerID": "containerd://0123abcd4567ef89"}]},
    }
    assert pod_keys(pod) == (UID, "0123abcd4567ef89")
    assert pod_keys({"metadata": {"uid": "a|b.*"}}) == ()  # never regular-expression syntax


def test_only_node_side_blockers_past_the_deadline_with_a_live_kubelet_are_asked() -> None:
    assert wants_evidence(finding(), kubelet_alive=True)
    assert not wants_evidence(finding(), kubelet_alive=False)
    assert not wants_evidence(finding(FINALIZER, "finalizer x"), kubelet_alive=True)


def test_not_read_keeps_the_hint_and_says_why() -> None:
    main = not_read(
        finding(), "--node-evidence not given", "kubectl terminating pods ..."
    ).blockers[0]
    assert main.summary == HINT
    assert main.remedy[0].command == f"journalctl -u kubelet | grep {UID}"
    assert main.remedy[-1].description.startswith(
        "node evidence not read (--node-evidence not given)"
    )
    assert "exec-equivalent" in main.remedy[-1].description


def test_evidence_round_trips_through_a_dump() -> None:
    free = free_space(json.loads((HERE / "stats-summary.json").read_text()))
    said = evidence(lines=lines("immutable"), free=free, kubelet_pods={UID: ""}, problems=("x",))
    assert NodeEvidence.from_json(json.loads(json.dumps(said.to_json()))) == said


# -- bundles `dump --node-evidence` wrote on the real node (tests/e2e/test_real_node.py,
# REAL_NODE_CAPTURE): what the kubelet and containerd really said, read back with --from-file


def from_dump(name: str, **flags: Any) -> tuple[dict[str, Any], str]:
    code, out, err = run_captured(from_file=str(HERE / f"{name}.json"), output="json", **flags)
    assert code == 0, err
    item: dict[str, Any] = json.loads(out)["items"][0]
    return item, err


@pytest.mark.parametrize(
    ("name", "headline", "quoted"),
    [
        ("immutable-file", "immutable file /tmp/", ": operation not permitted"),
        ("busy-mount", "is busy (kubelet log)", ": device or resource busy"),
        (
            "csi-driver-stopped",
            "CSI driver harness.csi.test not running on real-6a7847: the kubelet says it is not "
            "registered (kubelet log)",
            "driver name harness.csi.test not found in the list of registered CSI drivers",
        ),
        (
            "csi-driver-uninstalled",
            "CSI driver harness.csi.test not installed: the kubelet says it is not registered",
            "driver name harness.csi.test not found in the list of registered CSI drivers",
        ),
        ("csi-driver-crashed", "CSI driver call failing on real-", "code = Unavailable"),
        ("full-disk", "disk full on real-", "no space left on device"),
    ],
)
def test_real_node_lines_make_the_headline(name: str, headline: str, quoted: str) -> None:
    item, _ = from_dump(name, node_evidence=True)
    main = item["blockers"][0]
    assert headline in main["summary"]
    assert quoted in main["evidence"][0]["message"]
    assert main["evidence"][0]["object"]["kind"] == "Node"


def test_a_hook_that_never_returns_has_no_line_that_names_a_cause() -> None:
    """The kubelet's lines about the pod are its sync loop's; the hook's own headline stays."""
    item, _ = from_dump("posthook-never-returns", node_evidence=True)
    main = item["blockers"][0]
    assert main["type"] == "lifecycle-hook"
    assert main["summary"] == "postStart hook of app never returned"
    assert main["evidence"][-1]["message"].startswith("node evidence read from logs/kubelet.log")


def test_without_the_flag_the_dump_gives_todays_hint_and_why() -> None:
    item, err = from_dump("immutable-file")
    main = item["blockers"][0]
    assert main["summary"] == "containers exited; kubelet has not finished volume teardown"
    steps = [r["description"] for r in main["remedy"]]
    said = [d for d in steps if d.startswith("node evidence not read (--node-evidence not given)")]
    assert len(said) == 1
    # before the destructive steps, which stay last
    assert (
        main["remedy"][-1]["destructive"]
        and not main["remedy"][steps.index(said[0])]["destructive"]
    )
    assert err == ""


def test_a_snapshot_without_node_evidence_says_so_once() -> None:
    code, out, err = run_captured(
        from_file=str(FIXTURES / "real-node" / "csi-driver-stopped.json"),
        output="json",
        node_evidence=True,
    )
    assert code == 0
    assert err.count("node evidence not read: the snapshot holds none") == 1
    main = json.loads(out)["items"][0]["blockers"][0]
    assert main["summary"] == "CSI driver harness.csi.test not running on real-38aca4"


@pytest.mark.parametrize("name", ["immutable-file", "full-disk"])
def test_node_evidence_rendering(name: str) -> None:
    code, out, err = run_captured(
        from_file=str(HERE / f"{name}.json"), explain=True, node_evidence=True
    )
    assert code == 0, err
    assert_golden(f"node-evidence/{name}.txt", out)


def test_a_runtime_down_is_confirmed_by_the_kubelets_failed_runtime_calls() -> None:
    """With the runtime down the kubelet may never reach the pod (observedGeneration 1); its
    failed runtime calls name no pod, but they are the proof: the socket it cannot dial."""
    down = finding(
        RUNTIME_UNAVAILABLE, "container runtime on real-1 is down (the kubelet is alive)"
    )
    main = confirm(down, (UID,), evidence(lines=lines("runtime-down"))).blockers[0]
    assert main.summary == "container runtime error on real-1: Unavailable (kubelet log)"
    assert "containerd.sock: connect: no such file or directory" in main.evidence[0].message
    # a pod's own teardown is not proven by the runtime's failures for everyone
    main = confirm(finding(), (UID,), evidence(lines=lines("runtime-down"))).blockers[0]
    assert main.summary == HINT
