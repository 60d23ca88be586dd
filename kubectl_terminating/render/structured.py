"""`-o json`, `-o yaml` and `-o name`: the machine-readable contract of DESIGN.md."""

from __future__ import annotations

import json
from collections.abc import Sequence

from kubectl_terminating.model import API_VERSION, JSON, Finding
from kubectl_terminating.summary import group_by_cause


def as_list(findings: Sequence[Finding], warnings: Sequence[str]) -> JSON:
    return {
        "apiVersion": API_VERSION,
        "kind": "List",
        "items": [f.to_json() for f in findings],
        "warnings": list(warnings),
        "summary": [group.to_json() for group in group_by_cause(findings)],
    }


def to_json(findings: Sequence[Finding], warnings: Sequence[str]) -> str:
    # ensure_ascii keeps control characters escaped: safe to print to a terminal
    return json.dumps(as_list(findings, warnings), indent=4, ensure_ascii=True) + "\n"


def to_yaml(findings: Sequence[Finding], warnings: Sequence[str]) -> str:
    import yaml

    # yaml.safe_dump escapes non-printable characters in double-quoted scalars
    return yaml.safe_dump(as_list(findings, warnings), sort_keys=False, allow_unicode=False)


def to_names(findings: Sequence[Finding]) -> str:
    lines = []
    for f in findings:
        group = f.api_version.rpartition("/")[0]
        kind = f.kind.lower() + (f".{group}" if group else "")
        lines.append(json.dumps(f"{kind}/{f.name}")[1:-1])
    return "".join(line + "\n" for line in lines)
