"""The kubelet's own word about a stuck pod (`--node-evidence`) turned into its headline, or why
it was not read; pure, over the real kubelet's lines (docs/node-evidence.md).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from kubectl_terminating.causes import (
    CERTAIN,
    CSI_DRIVER_MISSING,
    DISK_FULL,
    cause_of,
)
from kubectl_terminating.explain.common import pods_on_node
from kubectl_terminating.explain.node_health import node_ref
from kubectl_terminating.explain.pod_facts import unique_remedies
from kubectl_terminating.model import Evidence, Finding, Remedy
from kubectl_terminating.nodeanswers import (
    PERMISSION,
    NodeEvidence,
    matching,
)

# what the kubelet logs, with no pod named, each time a call to the runtime fails
# (remote_runtime.go: `"ListPodSandbox with filter from runtime service failed" err="rpc error:
# code = Unavailable ... dial unix <socket>: connect: ..."`): the proof of a runtime down
RUNTIME_FAILED = "from runtime service failed"


def wants_evidence(finding: Finding, kubelet_alive: bool) -> bool:
    """The pod's main blocker is on its node's side and the kubelet there answers."""
    main = finding.blockers[0] if finding.blockers else None
    return bool(
        kubelet_alive
        and finding.kind == "Pod"
        and finding.node
        and main is not None
        and cause_of(main.type).node_log is not None
        and (finding.overdue_seconds or 0) > 0
    )


QUOTE_LIMIT = 300  # characters of a log line in an evidence message (the field has it whole)


# -- what the lines say -------------------------------------------------------------------------


def _bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"


@dataclass(frozen=True)
class Said:
    """What one of the kubelet's lines proves: the headline and the steps it calls for."""

    summary: str
    remedies: tuple[Remedy, ...]
    match: re.Match[str]
    type: str | None = None  # the blocker type the line proves; None: the main one's stays
    # the type whose summary (from the API) the line confirms: that summary stays
    confirms: str | None = None


Reader = Callable[[re.Match[str], str, str], Said]


def _on(node: str, what: str) -> str:
    return f"on node {node}: {what}"


@dataclass(frozen=True)
class HeldPath:
    """A line about one path on the node that the teardown cannot remove: the headline, the
    steps that look at the path, then the one that frees it (what, its command, when it is
    right), after which the kubelet finishes by itself. `{path}` is the path, `{quoted}` the
    path quoted for a shell, `{uid}` the pod's uid."""

    headline: str
    looks: tuple[tuple[str, str], ...]
    frees: tuple[str, str, str]
    destructive: bool = False

    def read(self, found: re.Match[str], node: str, uid: str) -> Said:
        names = {"path": found.group(1), "quoted": shlex.quote(found.group(1)), "uid": uid}
        action, command, when = self.frees
        what = f"{action}; the kubelet then finishes the teardown by itself"
        return Said(
            self.headline.format(**names),
            (
                *(Remedy(_on(node, look), step.format(**names)) for look, step in self.looks),
                Remedy(_on(node, what), command.format(**names), self.destructive, when=when),
            ),
            found,
        )


IMMUTABLE = HeldPath(
    "immutable file {path} blocks the teardown",
    (("see the immutable attribute on the file", "lsattr -d {quoted}"),),
    (
        "clear it",
        "chattr -i {quoted}",
        "whoever set the attribute no longer needs the file protected",
    ),
)
BUSY = HeldPath(
    "mount {path} is busy",
    (
        (
            "find the processes whose mount namespace still holds it",
            "grep -l {uid} /proc/*/mountinfo",
        ),
        ("see what is mounted there", "findmnt {quoted}"),
    ),
    ("unmount it", "umount {quoted}", "no process still needs what is mounted there"),
    destructive=True,
)


def _csi(found: re.Match[str], node: str, _uid: str) -> Said:
    driver = found.group(1)
    return Said(
        f"CSI driver {driver} not registered with the kubelet on {node}",
        (
            Remedy(
                f"restore CSI driver {driver}: its node plugin must run on {node} and register "
                "with the kubelet, which then finishes the unmount by itself",
                pods_on_node(node),
            ),
        ),
        found,
        confirms=CSI_DRIVER_MISSING,
    )


def _disk_remedies(node: str) -> tuple[Remedy, ...]:
    return (
        Remedy(
            _on(node, "see which filesystem is full"), "df -h /var/lib/kubelet /var/lib/containerd"
        ),
        Remedy(_on(node, "free space, unused images first"), "crictl rmi --prune"),
    )


def _disk(found: re.Match[str], node: str, _uid: str) -> Said:
    return Said(f"disk full on {node}", _disk_remedies(node), found, type=DISK_FULL)


def _csi_call(found: re.Match[str], node: str, _uid: str) -> Said:
    return Said(
        f"CSI driver call failing on {node}: {found.group(1)}",
        (
            Remedy(
                _on(
                    node,
                    "see whether the driver's node plugin runs (connection refused: it "
                    "stopped, its socket left behind)",
                ),
                pods_on_node(node),
            ),
        ),
        found,
    )


def _runtime(found: re.Match[str], node: str, _uid: str) -> Said:
    return Said(
        f"container runtime error on {node}: {found.group(1)}",
        (
            Remedy(
                _on(node, "read the container runtime's log"),
                "journalctl -u containerd --since -1h",
            ),
        ),
        found,
    )


PATH = r"(/[^\s:\"'\\]+)"
CSI_NOT_REGISTERED = re.compile(
    r"driver name (\S+?) not found in the list of registered CSI drivers"
)
# what each kind of line says, most specific first
READERS: tuple[tuple[re.Pattern[str], Reader], ...] = (
    (CSI_NOT_REGISTERED, _csi),
    (re.compile(PATH + r": operation not permitted"), IMMUTABLE.read),
    (re.compile(PATH + r": device or resource busy"), BUSY.read),
    (re.compile(r"no space left on device"), _disk),
    (re.compile(r"TearDownAt failed: rpc error: code = (\w+)"), _csi_call),
    (re.compile(r'rpc error: code = (\w+) desc = (?:[^"\\]|\\.){0,300}'), _runtime),
)


def _read_lines(
    logs: list[tuple[str, list[str]]], node: str, uid: str
) -> tuple[Said, str, str] | None:
    """The most specific cause any line of the logs names (the newest line of that kind),
    its line and the name of its log."""
    for pattern, reader in READERS:
        for log, lines in logs:
            for line in reversed(lines):
                found = pattern.search(line)
                if found:
                    return reader(found, node, uid), line, log
    return None


def _quote(line: str, found: re.Match[str]) -> str:
    start = max(0, found.start() - (QUOTE_LIMIT - (found.end() - found.start())))
    excerpt = line[start : found.end()]
    return ("..." if start else "") + excerpt


def _disk_note(evidence: NodeEvidence) -> tuple[str, Evidence | None]:
    full = {name: fs for name, fs in evidence.free.items() if fs.full}
    if not full:
        return "", None
    said = ", ".join(f"{name} {_bytes(fs.available or 0)} free" for name, fs in full.items())
    return said, Evidence(
        f"the kubelet's stats/summary on {evidence.node}: {said}",
        node_ref(evidence.node),
        {
            name: {"availableBytes": fs.available, "capacityBytes": fs.capacity}
            for name, fs in full.items()
        },
    )


def _kubelet_view(finding: Finding, evidence: NodeEvidence) -> Evidence | None:
    pods = evidence.kubelet_pods
    if pods is None or not finding.uid:
        return None
    if finding.uid not in pods:
        said = "does not hold the pod: the kubelet and the API server disagree about it"
    elif not pods[finding.uid]:
        said = "holds the pod without a deletionTimestamp: the kubelet has not seen the deletion"
    else:
        return None
    return Evidence(
        f"the kubelet's own list of pods on {evidence.node} {said}",
        node_ref(evidence.node),
        {"uid": finding.uid, "inKubeletPods": finding.uid in pods},
    )


def evidence_keys(keys: Iterable[str], main_type: str) -> tuple[str, ...]:
    """What a line about the pod contains: its keys (uid, container ids), and for a runtime
    down the kubelet's failed runtime calls, which name no pod."""
    return (*keys, RUNTIME_FAILED) if cause_of(main_type).unnamed_log_lines else tuple(keys)


def confirm(finding: Finding, keys: Iterable[str], evidence: NodeEvidence) -> Finding:
    """The main blocker with what the kubelet said about the pod as its headline and proof;
    unchanged (but for a note) when the kubelet said nothing that names a cause."""
    main = finding.blockers[0]
    keys = evidence_keys(keys, main.type)
    lines = matching(evidence.lines, keys)
    uid = finding.uid or "<pod uid>"
    logs = [("kubelet", lines), ("containerd", matching(evidence.runtime_lines, keys))]
    read = _read_lines(logs, evidence.node, uid)
    disk, disk_evidence = _disk_note(evidence)
    extra = [e for e in (_kubelet_view(finding, evidence), disk_evidence) if e is not None]
    if read is None and disk_evidence is not None and cause_of(main.type).full_disk_explains:
        summary = f"{main.summary}; disk full on {evidence.node} ({disk}, kubelet stats)"
        finding.blockers[0] = replace(
            main,
            summary=summary,
            evidence=(*extra, *main.evidence),
            remedy=_safest_first(*_disk_remedies(evidence.node), *main.remedy),
        )
        return finding
    if read is None:
        where = evidence.source or "the kubelet"
        note = Evidence(
            f"node evidence read from {where} on {evidence.node}: no line about the pod names a "
            f"known cause ({len(lines)} line(s) about it)",
            node_ref(evidence.node),
            {"source": evidence.source or None, "lines": lines[-3:]},
        )
        finding.blockers[0] = replace(main, evidence=(*main.evidence, *extra, note))
        return finding
    said, line, log = read
    source = evidence.source if log == "kubelet" else evidence.runtime_source
    summary = f"{said.summary} ({log} log)"
    if said.confirms is not None and said.confirms == main.type:
        # what the API shows (not installed, not running on the node) stays; the line proves it
        summary = f"{main.summary}: the kubelet says it is not registered ({log} log)"
    if disk and said.summary.startswith("disk full"):
        summary = f"disk full on {evidence.node}: {disk} ({log} log and kubelet stats)"
    proof = Evidence(
        f"the {log} log on {evidence.node} ({source}): {_quote(line, said.match)}",
        node_ref(evidence.node),
        {"source": source, "line": line},
    )
    finding.blockers[0] = replace(
        main,
        type=said.type or main.type,
        summary=summary,
        evidence=(proof, *extra, *main.evidence),
        remedy=_safest_first(*said.remedies, *main.remedy),
        # the component doing the step says why, in its own log
        confidence=CERTAIN,
        basis=f"the {log} log line on {evidence.node}",
    )
    return finding


def not_read(finding: Finding, why: str, command: str | None) -> Finding:
    """Today's hint stays; one more step says why the node's own word was not read and how."""
    main = finding.blockers[0]
    step = Remedy(
        f"node evidence not read ({why}): with {PERMISSION} (exec-equivalent), the tool can "
        "read the kubelet's log lines about the pod through the API server",
        command,
    )
    finding.blockers[0] = replace(main, remedy=_safest_first(*main.remedy, step))
    return finding


def _safest_first(*remedies: Remedy) -> tuple[Remedy, ...]:
    """The steps in order, each once, the destructive ones last (the remedy contract)."""
    return tuple(sorted(unique_remedies(remedies), key=lambda remedy: remedy.destructive))
