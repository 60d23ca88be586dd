"""Label selectors evaluated locally (for snapshots; a live server evaluates its own)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from kubectl_terminating.errors import UsageError

Matcher = Callable[[Mapping[str, str]], bool]

_SET = re.compile(r"^\s*(!?)([^\s!=(),]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQUALITY = re.compile(r"^\s*([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)\s*$")


def _split(selector: str) -> list[str]:
    """Split on commas that are not inside a set's parentheses."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p.strip()]


def _requirement(text: str) -> Matcher:
    equality = _EQUALITY.match(text)
    if equality:
        key, op, value = equality.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    found = _SET.match(text)
    if not found:
        raise UsageError(f"unable to parse requirement: {text.strip()!r}")
    negate, key, op, values = found.groups()
    if op is None:
        return (lambda labels: key not in labels) if negate else (lambda labels: key in labels)
    if negate:
        raise UsageError(f"unable to parse requirement: {text.strip()!r}")
    allowed = {v.strip() for v in values.split(",") if v.strip()}
    if op == "in":
        return lambda labels: labels.get(key) in allowed
    return lambda labels: labels.get(key) not in allowed


def parse_selector(selector: str | None) -> Matcher:
    """A predicate over an object's labels, for kubectl's -l syntax."""
    if not selector:
        return lambda labels: True
    requirements = [_requirement(part) for part in _split(selector)]
    return lambda labels: all(match(labels) for match in requirements)
