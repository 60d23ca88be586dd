"""The plan and the results of `fix`: text for people, `-o json` for scripts."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubectl_terminating.fix.apply import Result
from kubectl_terminating.fix.observe import ObservedSection, Planned, canonical, planned
from kubectl_terminating.fix.plan import Refusal
from kubectl_terminating.model import API_VERSION, JSON
from kubectl_terminating.render.style import Style, safe

PAD = "     "
LABEL = 10


def _line(label: str, value: str) -> str:
    return f"{PAD}{label:<{LABEL}}{safe(value)}\n"


def _more(label: str, values: Sequence[str]) -> str:
    return "".join(_line(label if i == 0 else "", v) for i, v in enumerate(values))


def _action_text(number: int, action: Planned, style: Style) -> str:
    p, request = action.proposal, action.request
    out = f"  {style.bold(f'{number}. {safe(p.describe())}')}\n"
    out += _line("because", f"{p.blocker.type}: {p.blocker.summary}")
    out += _more("proof", [f"{o.check.description}: {o.observed}" for o in action.outcomes])
    body = (
        f"the object as read, spec.finalizers without {p.finalizer}"
        if request.verb == "PUT"
        else "body " + canonical(request.body)
    )
    out += _more(
        "request",
        [f"{request.verb} {request.path}", f"precondition: {request.precondition}", body],
    )
    if action.recreate is not None:
        out += _line("recreate", canonical(action.recreate))
    return out


def _refusal_text(refusal: Refusal, style: Style) -> str:
    b = refusal.blocker
    out = f"  {style.yellow('refused')}  {safe(b.type)}: {safe(b.summary)}\n"
    out += _line("why", refusal.reason)
    remedies = [
        (r.command or r.description) + ("   (DESTRUCTIVE)" if r.destructive else "")
        for r in b.remedy
    ]
    return out + _more("remedy", remedies)


def plan_text(sections: Sequence[ObservedSection], digest: str, style: Style) -> str:
    numbers = {id(a): i for i, a in enumerate(planned(sections), 1)}
    out = []
    for section in sections:
        text = style.bold(safe(str(section.section.subject))) + "\n"
        for step in section.steps:
            if isinstance(step, Planned):
                text += _action_text(numbers[id(step)], step, style)
            else:
                text += _refusal_text(step, style)
        for shared in section.shared:
            text += f"  also     {safe(shared.what)} (listed under {safe(str(shared.first))})\n"
        for done in section.done:
            text += f"  nothing to do: {safe(done)}\n"
        if not section.steps and not section.shared and not section.done:
            text += "  nothing the plan can do\n"
        out.append(text)
    count = len(numbers)
    refused = sum(1 for s in sections for r in s.steps if isinstance(r, Refusal))
    summary = f"Plan {digest}: {count} write{'s' if count != 1 else ''}, {refused} refused\n"
    return "\n".join(out) + ("\n" if out else "") + summary


def dry_run_footer(digest: str, count: int, command: str) -> str:
    if not count:
        return "Nothing to write.\n"
    writes = "write 1" if count == 1 else f"writes 1-{count}"
    return (
        f"Dry run: nothing was written. To carry out {writes}:\n"
        f"  {safe(command)} --apply --confirm {digest}\n"
    )


def results_text(results: Sequence[Result]) -> str:
    lines = []
    for number, result in enumerate(results, 1):
        what = safe(result.action.proposal.describe())
        status = result.response.get("status")
        tail = f" ({status})" if status else ""
        detail = f": {safe(result.message)}" if result.message else ""
        lines.append(f"{number}. {what}: {result.result}{tail}{detail}\n")
    return "".join(lines)


def _section_json(section: ObservedSection) -> JSON:
    actions, refused = [], []
    for step in section.steps:
        if isinstance(step, Planned):
            p = step.proposal
            actions.append(
                {
                    "action": p.action,
                    "target": {
                        **p.target.to_json(),
                        "uid": step.uid,
                        "resourceVersion": step.resource_version,
                    },
                    "finalizer": p.finalizer or None,
                    "because": p.blocker.to_json(),
                    "proof": [o.to_json() for o in step.outcomes],
                    "request": step.request.to_json(),
                    "recreate": step.recreate,
                }
            )
        else:
            refused.append(
                {
                    "blocker": step.blocker.to_json(),
                    "reason": step.reason,
                    "target": step.target.to_json() if step.target else None,
                }
            )
    return {
        "object": section.section.subject.to_json(),
        "actions": actions,
        "refused": refused,
        "shared": [{"step": s.what, "listedUnder": str(s.first)} for s in section.shared],
        "nothingToDo": list(section.done),
    }


def plan_json(
    sections: Sequence[ObservedSection],
    digest: str,
    applied: bool,
    results: Sequence[Result] = (),
    warnings: Sequence[str] = (),
) -> str:
    doc: JSON = {
        "apiVersion": API_VERSION,
        "kind": "FixPlan",
        "digest": digest,
        "dryRun": not applied,
        "objects": [_section_json(s) for s in sections],
        "results": [r.to_json() for r in results],
        "warnings": list(warnings),
    }
    return json.dumps(doc, indent=4, ensure_ascii=True) + "\n"


@dataclass(frozen=True)
class FixPrinter:
    """What `fix` prints at each point of a run, chosen once from -o (fix_printer)."""

    plan: Callable[[Sequence[ObservedSection], str], str]  # (sections, digest) first
    dry_run: Callable[[Sequence[ObservedSection], str, int], str]  # (..., writes planned)
    refused: Callable[[Sequence[ObservedSection], str], str]  # --apply not confirmed
    applied: Callable[[Sequence[ObservedSection], str, Sequence[Result]], str]


def fix_printer(
    output: str | None, style: Style, command: str, warnings: Sequence[str]
) -> FixPrinter:
    """-o json: one FixPlan document at the end; text: the plan, then the footer or results.
    command: the dry run's command line, repeated with --apply --confirm in the footer."""
    if output == "json":
        return FixPrinter(
            plan=lambda _sections, _digest: "",
            dry_run=lambda s, d, _count: plan_json(s, d, False, warnings=warnings),
            refused=lambda s, d: plan_json(s, d, False, warnings=warnings),
            applied=lambda s, d, results: plan_json(s, d, True, results, warnings),
        )
    return FixPrinter(
        plan=lambda s, d: plan_text(s, d, style),
        dry_run=lambda _s, d, count: dry_run_footer(d, count, command),
        refused=lambda _s, _d: "",  # the plan above says it all; stderr says why
        applied=lambda _s, _d, results: "\n" + results_text(results),
    )
