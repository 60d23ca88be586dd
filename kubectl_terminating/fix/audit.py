"""The audit record of each write: who, what, when, the evidence, the request, the response.

One JSON object per line, written to stderr (prefixed `audit: `) and appended to --audit-file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any

from kubectl_terminating.fix.observe import Outcome, Planned
from kubectl_terminating.model import JSON


@dataclass(frozen=True)
class Actor:
    user: str  # as the API server knows it (SelfSubjectReview), else the kubeconfig user
    context: str
    server: str


def record(
    actor: Actor,
    action: Planned,
    outcomes: tuple[Outcome, ...],
    result: str,
    message: str,
    response: JSON,
    digest: str,
    when: datetime | None = None,
) -> JSON:
    p = action.proposal
    return {
        "time": (when or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "user": actor.user,
        "context": actor.context,
        "server": actor.server,
        "digest": digest,
        "action": p.action,
        "target": {
            **p.target.to_json(),
            "uid": action.uid,
            "resourceVersion": action.resource_version,
        },
        "finalizer": p.finalizer or None,
        "because": p.blocker.type,
        "evidence": [o.to_json() for o in outcomes],
        "request": action.request.to_json(),
        "recreate": action.recreate,
        "result": result,
        "message": message or None,
        "response": response,
    }


class AuditLog:
    def __init__(self, err: IO[str], path: str | None) -> None:
        self.err = err
        self.path = path

    def write(self, entry: JSON) -> None:
        line = json.dumps(entry, sort_keys=False, ensure_ascii=True, separators=(",", ":"))
        self.err.write(f"audit: {line}\n")
        self.err.flush()
        if self.path:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")


def response_summary(answer: Any, status: int) -> JSON:
    """The part of the server's answer worth keeping: status, and the object's new state."""
    out: JSON = {"status": status}
    if isinstance(answer, dict):
        meta = answer.get("metadata") if isinstance(answer.get("metadata"), dict) else {}
        out["kind"] = answer.get("kind")
        if meta:
            out["resourceVersion"] = meta.get("resourceVersion")
            out["deletionTimestamp"] = meta.get("deletionTimestamp")
        if answer.get("kind") == "Status":
            out["message"] = answer.get("message")
    return out
