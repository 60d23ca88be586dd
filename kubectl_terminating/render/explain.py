"""`--explain`: every blocker of every finding with its evidence and remedies, safest first."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubectl_terminating.model import JSON, Blocker, ContentType, Finding, Remedy
from kubectl_terminating.render.structured import Extras
from kubectl_terminating.render.style import Style, safe
from kubectl_terminating.timeutil import human_duration

INDENT = "  "


def explain_text(findings: Sequence[Finding], style: Style, extras: Extras) -> str:
    """extras: the fields each finding's kind adds to it (kinds.json_extras): a kind whose
    findings carry a node (pods) has its node and phase printed."""
    return "\n".join(_finding(f, style, extras, 0) for f in findings)


def _title(finding: Finding) -> str:
    where = f"{finding.namespace}/" if finding.namespace else ""
    return f"{finding.kind} {where}{finding.name}"


def _field(lines: list[str], pad: str, label: str, value: str) -> None:
    lines.append(f"{pad}{INDENT}{label + ':':<14}{value}")


def _finding(finding: Finding, style: Style, extras: Extras, depth: int) -> str:
    pad = INDENT * depth
    lines = [pad + style.bold(safe(_title(finding)))]
    if "node" in extras(finding):
        _field(lines, pad, "Node", safe(finding.node or "<none>"))
        _field(lines, pad, "Phase", safe(finding.phase or "<unknown>"))
    when = safe(finding.deletion_timestamp) or "<unknown>"
    _field(
        lines,
        pad,
        "Terminating",
        f"{human_duration(finding.terminating_seconds)} (deadline {when})",
    )
    overdue = finding.overdue_seconds
    if overdue is None and finding.unknowns:
        _field(lines, pad, "Overdue", "<unknown>")
    if overdue is not None:
        _field(
            lines,
            pad,
            "Overdue",
            "no, inside its grace period" if overdue < 0 else human_duration(overdue),
        )
    _field(lines, pad, "Finalizers", safe(", ".join(finding.finalizers)) or "<none>")
    if finding.containers:
        states = ", ".join(f"{c.get('name')}={c.get('state')}" for c in finding.containers)
        _field(lines, pad, "Containers", safe(states))
    if finding.conditions:
        lines.append(f"{pad}{INDENT}Conditions:")
        for c in finding.conditions:
            lines.append(
                f"{pad}{INDENT * 2}{safe(c.get('type'))}={safe(c.get('status'))} "
                f"{safe(c.get('reason'))}: {safe(c.get('message'))}".rstrip(": ")
            )
    if finding.remaining is not None:
        lines.extend(_remaining(finding.remaining, pad))
    if finding.unknowns:
        _field(lines, pad, "Not known", safe("; ".join(finding.unknowns)))
    if finding.blockers:
        lines.append(f"{pad}{INDENT}Blockers (main first):")
        for index, blocker in enumerate(finding.blockers, 1):
            lines.extend(_blocker(blocker, index, style, pad + INDENT * 2))
    else:
        lines.append(f"{pad}{INDENT}Blockers:     none found")
    if finding.warnings:
        lines.append(f"{pad}{INDENT}Warnings (checks that could not be made):")
        lines.extend(f"{pad}{INDENT * 2}- {safe(w)}" for w in finding.warnings)
    text = "\n".join(lines) + "\n"
    for child in finding.children:
        text += "\n" + _finding(child, style, extras, depth + 1)
    return text


def _remaining(content: Sequence[ContentType], pad: str) -> list[str]:
    lines = [f"{pad}{INDENT}Remaining:" + ("" if content else "     nothing")]
    for c in content:
        state = f"cannot list: {safe(c.error)}" if c.error else str(c.count)
        lines.append(f"{pad}{INDENT * 2}{safe(c.resource)}: {state}")
        lines.extend(f"{pad}{INDENT * 3}{safe(remaining_object(obj))}" for obj in c.objects)
    return lines


def remaining_object(obj: JSON) -> str:
    """A remaining object's name, and its finalizers and whether it is terminating: `w1
    (finalizers: example.com/x; terminating)` (the --explain text and serve's pages)."""
    notes = []
    if obj.get("finalizers"):
        notes.append("finalizers: " + ", ".join(str(f) for f in obj["finalizers"]))
    if obj.get("deletionTimestamp"):
        notes.append("terminating")
    name = obj.get("name")
    return ("" if name is None else str(name)) + (f" ({'; '.join(notes)})" if notes else "")


def _blocker(blocker: Blocker, index: int, style: Style, pad: str) -> list[str]:
    head = f"{index}. [{safe(blocker.type)}] {safe(blocker.summary)}"
    lines = [pad + style.bold(head)]
    if blocker.confidence is not None:  # how sure, and the witness that makes it so
        basis = f" ({safe(blocker.basis)})" if blocker.basis else ""
        lines.append(f"{pad}{INDENT}Confidence: {safe(blocker.confidence)}{basis}")
    if blocker.evidence:
        lines.append(f"{pad}{INDENT}Evidence:")
        for e in blocker.evidence:
            where = f"{safe(str(e.object))}: " if e.object is not None else ""
            lines.append(f"{pad}{INDENT * 2}- {where}{safe(e.message)}")
    if blocker.remedy:
        lines.append(f"{pad}{INDENT}What to do (safest first):")
        lines.extend(remedy_steps(blocker.remedy, pad + INDENT * 2, style.red))
    return lines


def remedy_steps(
    remedies: Sequence[Remedy], pad: str, red: Callable[[str], str] = str
) -> list[str]:
    """Numbered steps, destructive ones labelled, each with its condition and command."""
    lines = []
    for step, remedy in enumerate(remedies, 1):
        label = red("DESTRUCTIVE: ") if remedy.destructive else ""
        lines.append(f"{pad}{step}. {label}{safe(remedy.description)}")
        if remedy.when:
            lines.append(f"{pad}{INDENT}only when: {safe(remedy.when)}")
        if remedy.command:
            lines.append(f"{pad}{INDENT}$ {safe(remedy.command)}")
    return lines
