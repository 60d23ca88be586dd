"""`-o json`, `-o yaml` and `-o name`: the machine-readable contract (docs/output.md)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from kubectl_terminating.model import API_VERSION, JSON, Finding
from kubectl_terminating.summary import group_by_cause

Extras = Callable[[Finding], JSON]  # the fields a finding's kind adds (kinds.json_extras)


def list_document(findings: Sequence[Finding], warnings: Sequence[str], extras: Extras) -> JSON:
    return {
        "apiVersion": API_VERSION,
        "kind": "List",
        "items": [f.to_json(extras) for f in findings],
        "warnings": [str(w) for w in warnings],  # plain strings (a FailedCheck is one too)
        "summary": [group.to_json() for group in group_by_cause(findings)],
    }


def to_json(findings: Sequence[Finding], warnings: Sequence[str], extras: Extras) -> str:
    return json_text(list_document(findings, warnings, extras))


def to_yaml(findings: Sequence[Finding], warnings: Sequence[str], extras: Extras) -> str:
    return yaml_text(list_document(findings, warnings, extras))


def json_text(document: JSON) -> str:
    # ensure_ascii keeps control characters escaped: safe to print to a terminal
    return json.dumps(document, indent=4, ensure_ascii=True) + "\n"


def yaml_text(document: JSON) -> str:
    import yaml

    # yaml.safe_dump escapes non-printable characters in double-quoted scalars
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=False)


def to_names(findings: Sequence[Finding]) -> str:
    """`kind.group/name` a line, as `kubectl get -o name` prints them."""
    lines = [json.dumps(f"{kind_group(f, f.kind.lower())}/{f.name}")[1:-1] for f in findings]
    return "".join(line + "\n" for line in lines)


def kind_group(finding: Finding, kind: str) -> str:
    """`kind.group` (the core group has no suffix), kubectl's way of naming a type."""
    group = finding.api_version.rpartition("/")[0]
    return f"{kind}.{group}" if group else kind
