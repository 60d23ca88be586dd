"""Carry out a confirmed plan: before each write, read its target and facts again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubectl_terminating.errors import ApiError, ExitStatus, Forbidden, TerminatingError
from kubectl_terminating.explain.common import meta, text
from kubectl_terminating.fix.audit import Actor, AuditLog, record, response_summary
from kubectl_terminating.fix.observe import Outcome, Planned, Reader, evaluate
from kubectl_terminating.model import JSON

EXIT_DONE = ExitStatus.OK
EXIT_ERROR = ExitStatus.ERROR
EXIT_REFUSED = ExitStatus.STUCK  # refused or changed
CONFLICT_STATUSES = frozenset({409, 422})  # a precondition or a `test` op failed

DONE = "done"
CHANGED = "refused: changed"
NOT_CONFIRMED = "refused: not confirmed"
FORBIDDEN = "forbidden"
FAILED = "failed"


@dataclass(frozen=True)
class Result:
    action: Planned
    result: str
    message: str
    response: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {
            "action": self.action.proposal.action,
            "target": self.action.proposal.target.to_json(),
            "finalizer": self.action.proposal.finalizer or None,
            "result": self.result,
            "message": self.message,
            "response": self.response,
        }


Write = Callable[[str, str, object, str], tuple[int, JSON]]


def reverify(action: Planned, reader: Reader) -> tuple[tuple[Outcome, ...], str]:
    """The facts read again, and what changed since the plan ("" when nothing did)."""
    target = action.proposal.target
    try:
        obj = reader.get(target.path)
    except ApiError as error:
        return (), f"{target} could not be read again: {error.message}"
    if obj is None:
        return (), f"{target} is gone"
    uid, rv = text(meta(obj).get("uid")), text(meta(obj).get("resourceVersion"))
    if uid != action.uid:
        return (), f"{target} was replaced (uid {action.uid} -> {uid})"
    if rv != action.resource_version:
        return (), f"{target} changed (resourceVersion {action.resource_version} -> {rv})"
    outcomes = tuple(evaluate(o.check, reader) for o in action.outcomes)
    for before, now in zip(action.outcomes, outcomes, strict=True):
        if (before.holds, before.observed) != (now.holds, now.observed):
            return outcomes, f"{now.check.description}: was {before.observed}, now {now.observed}"
    return outcomes, ""


def apply_plan(
    actions: Sequence[Planned],
    reader: Reader,
    write: Write,
    audit: AuditLog,
    actor: Actor,
    digest: str,
    confirm: Callable[[Planned], bool],
) -> tuple[list[Result], int]:
    """Each action in order; the first refusal or error stops the run."""
    results: list[Result] = []

    def finish(action: Planned, outcomes: tuple[Outcome, ...], result: Result) -> None:
        results.append(result)
        audit.write(
            record(actor, action, outcomes, result.result, result.message, result.response, digest)
        )

    for action in actions:
        if not confirm(action):
            finish(action, action.outcomes, Result(action, NOT_CONFIRMED, "the name typed differs"))
            return results, EXIT_REFUSED
        outcomes, changed = reverify(action, reader)
        if changed:
            finish(action, outcomes, Result(action, CHANGED, changed))
            return results, EXIT_REFUSED
        request = action.request
        try:
            status, answer = write(request.verb, request.path, request.body, request.content_type)
        except Forbidden as error:
            finish(action, outcomes, Result(action, FORBIDDEN, error.message, {"status": 403}))
            return results, EXIT_ERROR
        except ApiError as error:
            response = {"status": error.status, "message": error.message}
            if error.status in CONFLICT_STATUSES:
                finish(action, outcomes, Result(action, CHANGED, error.message, response))
                return results, EXIT_REFUSED
            finish(action, outcomes, Result(action, FAILED, error.message, response))
            return results, EXIT_ERROR
        except TerminatingError as error:  # unreachable: whether it was written is unknown
            finish(action, outcomes, Result(action, FAILED, error.message))
            return results, EXIT_ERROR
        finish(action, outcomes, Result(action, DONE, "", response_summary(answer, status)))
    return results, EXIT_DONE
