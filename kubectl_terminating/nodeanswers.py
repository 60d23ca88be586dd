"""What a node's kubelet answered through the API server's node proxy, as data (no I/O, no
interpretation): the log lines about the stuck pods (redacted), free space per filesystem,
the kubelet's own pods; how they are asked for (`Subject`, `log_pattern`) and kept
(`to_json`/`from_json`, for `dump --node-evidence`). nodeproxy.py reads them;
explain/node_evidence.py says what they mean."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import as_dict, list_of, meta, text

PERMISSION = "get nodes/proxy"
# a key goes into the log query's `pattern` (a regular expression) as it is: uids and
# container ids only, nothing a regular expression would read as syntax
KEY = re.compile(r"^[0-9A-Za-z-]{8,}$")
SECRET = re.compile(
    r"(?i)((?:bearer|basic)\s+|(?:token|password|secret|authorization)[\"']?\s*[=:]\s*[\"']?"
    r"(?:(?:bearer|basic)\s+)?)[^\s\"',]+"
)
JWT = re.compile(r"eyJ[\w-]{6,}\.[\w-]{6,}\.[\w-]*")


class NodeEvidenceRefused(Exception):
    """The node evidence may not be read at all (the permission is missing): `why` for each
    pod's hint, the message as the run's one warning."""

    def __init__(self, why: str, warning: str) -> None:
        super().__init__(warning)
        self.why = why


def redact(line: str) -> str:
    """A log line with bearer tokens, passwords and JWTs replaced by <redacted>."""
    return JWT.sub("<redacted>", SECRET.sub(r"\1<redacted>", line))


@dataclass(frozen=True)
class FreeSpace:
    """One filesystem of `stats/summary`: bytes available and capacity (None: not reported)."""

    available: int | None
    capacity: int | None

    @property
    def full(self) -> bool:
        return self.available is not None and (
            self.available == 0
            or (self.capacity is not None and self.available * 100 < self.capacity)
        )


@dataclass(frozen=True)
class NodeEvidence:
    """What one node's kubelet said: matching log lines (redacted), free space per
    filesystem (nodefs, imagefs, containerfs), its own pods (uid -> deletionTimestamp, '' when
    none; None: not read), and why any part could not be read."""

    node: str
    source: str = ""  # where the lines came from, e.g. `logs/kubelet.log`
    lines: tuple[str, ...] = ()
    # the container runtime's lines about the pods' containers (containerd's log), read when
    # one of them is held by the runtime: a full disk shows only there
    runtime_source: str = ""
    runtime_lines: tuple[str, ...] = ()
    free: Mapping[str, FreeSpace] = field(default_factory=dict)
    kubelet_pods: Mapping[str, str] | None = None
    problems: tuple[str, ...] = ()

    def to_json(self) -> JSON:
        return {
            "node": self.node,
            "source": self.source,
            "lines": list(self.lines),
            "runtimeSource": self.runtime_source,
            "runtimeLines": list(self.runtime_lines),
            "free": {
                k: {"available": v.available, "capacity": v.capacity} for k, v in self.free.items()
            },
            "kubeletPods": dict(self.kubelet_pods) if self.kubelet_pods is not None else None,
            "problems": list(self.problems),
        }

    @classmethod
    def from_json(cls, data: Any) -> NodeEvidence:
        data = as_dict(data)
        pods = data.get("kubeletPods")
        return cls(
            node=text(data.get("node")),
            source=text(data.get("source")),
            lines=tuple(text(x) for x in list_of(data.get("lines"))),
            runtime_source=text(data.get("runtimeSource")),
            runtime_lines=tuple(text(x) for x in list_of(data.get("runtimeLines"))),
            free={
                text(k): FreeSpace(
                    _count(as_dict(v).get("available")), _count(as_dict(v).get("capacity"))
                )
                for k, v in as_dict(data.get("free")).items()
            },
            kubelet_pods={text(k): text(v) for k, v in pods.items()}
            if isinstance(pods, dict)
            else None,
            problems=tuple(text(x) for x in list_of(data.get("problems"))),
        )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# -- what is read, for which pods ---------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """What to look for on one node: the keys of its stuck pods and since when (RFC 3339)."""

    keys: tuple[str, ...]
    since: str = ""
    runtime: bool = False  # also read the container runtime's log (containers it holds)


def pod_keys(pod: JSON) -> tuple[str, ...]:
    """What the kubelet's lines about the pod contain: its uid and its containers' ids."""
    uid = text(meta(pod).get("uid"))
    status = as_dict(pod.get("status"))
    ids = [
        text(as_dict(s).get("containerID")).split("://")[-1]
        for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses")
        for s in list_of(status.get(key))
    ]
    return tuple(k for k in dict.fromkeys([uid, *ids]) if KEY.match(k))


def log_pattern(keys: Iterable[str]) -> str:
    """The node log query's `pattern`: any of the keys."""
    return "|".join(sorted(set(keys)))


def matching(lines: Iterable[str], keys: Iterable[str]) -> list[str]:
    """The lines naming one of keys, redacted."""
    wanted = [k for k in keys if k]
    return [redact(line) for line in lines if any(k in line for k in wanted)]


def kubelet_pods(pod_list: Any) -> dict[str, str]:
    """The kubelet's own pods (its `/pods` answer): uid -> deletionTimestamp ('' when none)."""
    return {
        text(meta(as_dict(p)).get("uid")): text(meta(as_dict(p)).get("deletionTimestamp"))
        for p in list_of(as_dict(pod_list).get("items"))
    }


def free_space(summary: Any) -> dict[str, FreeSpace]:
    """nodefs, imagefs and containerfs of a kubelet's `stats/summary` answer."""
    node = as_dict(as_dict(summary).get("node"))
    runtime = as_dict(node.get("runtime"))
    found = {
        "nodefs": as_dict(node.get("fs")),
        "imagefs": as_dict(runtime.get("imageFs")),
        "containerfs": as_dict(runtime.get("containerFs")),
    }
    return {
        name: FreeSpace(_count(fs.get("availableBytes")), _count(fs.get("capacityBytes")))
        for name, fs in found.items()
        if fs
    }
