"""The report as text (a table; `--explain`: every prediction with its evidence, what to do
before, and what `--explain` will say once stuck), JSON or YAML."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_terminating.model import JSON, Remedy
from kubectl_terminating.preflight.report import Prediction, Report
from kubectl_terminating.render.explain import remedy_steps
from kubectl_terminating.render.structured import yaml_text
from kubectl_terminating.terminal import safe


def _target(report: Report) -> str:
    t = report.target
    if t.get("release"):
        return f"helm release {t['release']} (Helm's uninstall order)"
    if t.get("namespaces"):
        return "namespace " + ", ".join(t["namespaces"])
    if t.get("objects"):
        return ", ".join(t["objects"]) + f" in {t.get('namespace')}"
    return f"{t.get('manifestObjects', 0)} objects of the manifest (as {t.get('deleter')})"


def _counts(report: Report) -> str:
    parts = [f"{n} {kind}" for kind, n in sorted(report.doomed.items(), key=lambda kv: -kv[1])]
    return ", ".join(parts[:8]) + (f", ... {len(parts) - 8} more kinds" if len(parts) > 8 else "")


def _table(predictions: Sequence[Prediction]) -> list[str]:
    rows = [("CONFIDENCE", "TYPE", "OBJECT", "SUMMARY")] + [
        (p.confidence, p.type, str(p.object), p.summary) for p in predictions
    ]
    widths = [max(len(safe(r[i])) for r in rows) for i in range(3)]
    return [
        "   ".join(safe(c).ljust(w) for c, w in zip(r[:3], widths, strict=True))
        + "   "
        + safe(r[3])
        for r in rows
    ]


def _steps(title: str, remedies: Sequence[Remedy]) -> list[str]:
    return [f"  {title}:", *remedy_steps(remedies, "    ")]


def _explained(p: Prediction) -> list[str]:
    lines = [f"{safe(p.object)}: {p.type} ({p.confidence})", f"  {safe(p.summary)}", "  Evidence:"]
    lines += [f"    - {safe(e.message)}" for e in p.evidence]
    lines += _steps("Prevent (before deleting)", p.prevent)
    lines += _steps("Once stuck (what --explain will say)", p.remedy)
    return lines


def _survivor(owner: JSON) -> str:
    more = f" (+{owner['objects'] - 1} more)" if owner["objects"] > 1 else ""
    obj = owner["object"]
    where = f"{obj.get('namespace')}/" if obj.get("namespace") else ""
    return safe(
        f"  - {owner['finalizer']} on {obj['kind']} {where}{obj['name']}{more}: "
        f"{owner['owner'] or 'its owner'}, {owner['why']}"
    )


def text(report: Report, explain: bool) -> str:
    lines = [
        f"Preflight: {safe(_target(report))}",
        f"Verdict:   {report.verdict} (fail on {report.fail_on})",
        f"Deletes:   {safe(_counts(report)) or 'nothing'}",
    ]
    if report.predictions:
        lines.append("")
        if explain:
            for p in report.predictions:
                lines += [*_explained(p), ""]
            lines.pop()
        else:
            lines += _table(report.predictions)
    if explain and report.surviving_owners:
        lines += ["", "Finalizer owners that run after the deletion:"]
        lines += [_survivor(o) for o in report.surviving_owners]
    if report.order:
        lines += ["", "Safe order:"]
        for step in report.order:
            how = "delete, then wait until gone" if step["wait"] else "then delete"
            lines.append(f"  {step['step']}. {how}: {safe(', '.join(step['delete']))}")
    if report.unchecked:
        lines += ["", f"Not checked ({len(report.unchecked)}):"]
        lines += [f"  - {safe(u)}" for u in report.unchecked]
    return "\n".join(lines) + "\n"


def render(report: Report, output: str | None, explain: bool) -> str:
    if output == "json":
        import json

        return json.dumps(report.to_json(), indent=2) + "\n"
    if output == "yaml":
        return yaml_text(report.to_json())
    return text(report, explain)
