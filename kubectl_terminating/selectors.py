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


# -- field selectors (k8s.io/apimachinery/pkg/fields): terms split on unescaped commas, values
# escaped with a backslash (`\\`, `\,`, `\=`), so any value, even a uid read from a file, fits.

_FIELD_OPERATORS = ("!=", "==", "=")


def escape_field_value(value: str) -> str:
    """A value as a field selector carries it (fields.EscapeValue)."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _field_terms(selector: str) -> list[str]:
    terms, current, escaped = [], "", False
    for char in selector:
        if escaped:
            current, escaped = current + "\\" + char, False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(current)
            current = ""
        else:
            current += char
    if escaped:
        raise UsageError(f"invalid field selector: {selector!r} ends in an escape")
    terms.append(current)
    return [t for t in terms if t]


def _unescape(value: str) -> str:
    out, escaped = "", False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise UsageError(f"invalid field selector value: {value!r}")
            out, escaped = out + char, False
        elif char == "\\":
            escaped = True
        elif char == "=":
            raise UsageError(f"invalid field selector value: {value!r} (unescaped =)")
        else:
            out += char
    return out


def _field_requirement(term: str) -> Matcher:
    for index in range(len(term)):
        for op in _FIELD_OPERATORS:
            if term.startswith(op, index) and (index == 0 or term[index - 1] != "\\"):
                key, value = term[:index].strip(), _unescape(term[index + len(op) :])
                if op == "!=":
                    return lambda fields: fields.get(key) != value
                return lambda fields: fields.get(key) == value
    raise UsageError(f"invalid field selector: {term!r} (no operator)")


def parse_field_selector(selector: str | None) -> Matcher:
    """A predicate over an object's field values, for the API's fieldSelector syntax."""
    if not selector:
        return lambda fields: True
    requirements = [_field_requirement(term) for term in _field_terms(selector)]
    return lambda fields: all(match(fields) for match in requirements)
