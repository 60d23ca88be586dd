"""The catalogue's `evidence` part: what components write on the way to deletion, read one way.

`read_event` and `read_status` match what an event or a status says against every entry, first
match wins (the file lists the more specific entries first). An entry names the blocker type it
proves, how sure that witness is, and the names its message carries; explain/readings.py turns a
reading into a blocker. The entries are checked at load (`entries`): a wrong key, type or value
is one line naming the file and the key.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_terminating import catalogue
from kubectl_terminating.causes import CONFIDENCES, TABLE

REQUIRED = ("meaning", "about", "proves", "confidence", "summary", "source")
OPTIONAL = ("event", "status", "condition", "names", "finalizer", "remedy", "reader")
SOURCE_KEYS = ("repo", "path", "ref")
MATCH_KEYS = {"event": ("reasons", "messages"), "status": ("reasons", "messages")}
CONDITION_KEYS = ("type", "reasons", "messages")


@dataclass(frozen=True)
class Remedy:
    action: str
    command: str = ""


@dataclass(frozen=True)
class Entry:
    key: str
    meaning: str
    about: tuple[str, ...]
    proves: str
    confidence: str
    summary: str  # a template: {name} for each of `names`, {reason}
    source: Mapping[str, str]
    event_reasons: frozenset[str] = frozenset()
    event_messages: tuple[str, ...] = ()  # lower case
    status_reasons: frozenset[str] = frozenset()
    status_messages: tuple[str, ...] = ()
    condition: Mapping[str, Any] | None = None
    names: tuple[tuple[str, re.Pattern[str]], ...] = ()
    finalizer: str = ""
    remedy: tuple[Remedy, ...] = ()
    reader: str = ""  # a module that reads it with more context first (explain/...)

    @property
    def reads_events(self) -> bool:
        return bool(self.event_reasons or self.event_messages)

    @property
    def reads_status(self) -> bool:
        return bool(self.status_reasons or self.status_messages)


@dataclass(frozen=True)
class Reading:
    """What one event or status says, as an entry reads it: the names its message carries."""

    entry: Entry
    reason: str
    message: str
    names: Mapping[str, str]

    def summary(self) -> str:
        """The entry's summary with the names filled in; a name the message did not carry reads
        as what it is ("the driver")."""
        values = {name: self.names.get(name) or f"the {name}" for name, _ in self.entry.names}
        return self.entry.summary.format(reason=self.reason or "no reason", **values)


def _strings(value: object, where: str, path: Path | str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise catalogue.fail(path, where, "must be a list of non-empty strings")
    return tuple(value)


def _text(value: object, where: str, path: Path | str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise catalogue.fail(path, where, "must be a non-empty string")
    return value


def _mapping(value: object, where: str, path: Path | str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise catalogue.fail(path, where, "must be a mapping")
    return value


def _match(raw: object, part: str, where: str, path: Path | str) -> dict[str, tuple[str, ...]]:
    found = _mapping(raw, where, path)
    allowed = MATCH_KEYS.get(part, CONDITION_KEYS)
    for key in found:
        if key not in allowed:
            raise catalogue.fail(
                path, f"{where}.{key}", f"unknown key (known: {', '.join(allowed)})"
            )
    said = {k: _strings(found[k], f"{where}.{k}", path) for k in found if k != "type"}
    if not said.get("reasons") and not said.get("messages"):
        raise catalogue.fail(path, where, "needs reasons or messages")
    return said


def _names(raw: object, where: str, path: Path | str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    found = []
    for name, pattern in _mapping(raw, where, path).items():
        try:
            compiled = re.compile(_text(pattern, f"{where}.{name}", path))
        except re.error as exc:
            raise catalogue.fail(
                path, f"{where}.{name}", f"not a regular expression: {exc}"
            ) from None
        if compiled.groups < 1:
            raise catalogue.fail(path, f"{where}.{name}", "needs a group: the name it captures")
        found.append((str(name), compiled))
    return tuple(found)


def _remedies(raw: object, where: str, path: Path | str) -> tuple[Remedy, ...]:
    if not isinstance(raw, list):
        raise catalogue.fail(path, where, "must be a list of {action, command}")
    found = []
    for i, item in enumerate(raw):
        step = _mapping(item, f"{where}[{i}]", path)
        unknown = set(step) - {"action", "command"}
        if unknown:
            raise catalogue.fail(path, f"{where}[{i}].{sorted(unknown)[0]}", "unknown key")
        command = step.get("command", "")
        found.append(
            Remedy(
                _text(step.get("action"), f"{where}[{i}].action", path),
                _text(command, f"{where}[{i}].command", path) if command else "",
            )
        )
    return tuple(found)


def parse_entry(key: str, raw: object, path: Path | str) -> Entry:
    """One entry, checked: every required key, no unknown key, values of the right kind."""
    where = f"evidence.{key}"
    entry = _mapping(raw, where, path)
    for name in entry:
        if name not in REQUIRED + OPTIONAL:
            raise catalogue.fail(path, f"{where}.{name}", "unknown key")
    for name in REQUIRED:
        if name not in entry:
            raise catalogue.fail(path, f"{where}.{name}", "missing")
    types = {row.type for row in TABLE}
    if entry["proves"] not in types:
        raise catalogue.fail(path, f"{where}.proves", f"not a blocker type: {entry['proves']!r}")
    if entry["confidence"] not in CONFIDENCES:
        raise catalogue.fail(path, f"{where}.confidence", f"one of {', '.join(CONFIDENCES)}")
    source = _mapping(entry["source"], f"{where}.source", path)
    for name in SOURCE_KEYS:
        _text(source.get(name), f"{where}.source.{name}", path)
    event = _match(entry["event"], "event", f"{where}.event", path) if "event" in entry else {}
    status = _match(entry["status"], "status", f"{where}.status", path) if "status" in entry else {}
    condition = None
    if "condition" in entry:
        condition = dict(_mapping(entry["condition"], f"{where}.condition", path))
        _text(condition.get("type"), f"{where}.condition.type", path)
        _match(
            {k: v for k, v in condition.items() if k != "type"},
            "condition",
            f"{where}.condition",
            path,
        )
    if not (event or status or condition):
        raise catalogue.fail(path, where, "needs event, status or condition: what it reads")
    names = _names(entry.get("names", {}), f"{where}.names", path)
    parsed = Entry(
        key=key,
        meaning=_text(entry["meaning"], f"{where}.meaning", path),
        about=_strings(entry["about"], f"{where}.about", path),
        proves=str(entry["proves"]),
        confidence=str(entry["confidence"]),
        summary=_text(entry["summary"], f"{where}.summary", path),
        source={k: str(source[k]) for k in SOURCE_KEYS},
        event_reasons=frozenset(event.get("reasons", ())),
        event_messages=tuple(m.lower() for m in event.get("messages", ())),
        status_reasons=frozenset(status.get("reasons", ())),
        status_messages=tuple(m.lower() for m in status.get("messages", ())),
        condition=condition,
        names=names,
        finalizer=_text(entry["finalizer"], f"{where}.finalizer", path)
        if "finalizer" in entry
        else "",
        remedy=_remedies(entry.get("remedy", []), f"{where}.remedy", path),
        reader=_text(entry["reader"], f"{where}.reader", path) if "reader" in entry else "",
    )
    try:  # every placeholder of the summary is a name the entry captures
        Reading(parsed, "", "", {}).summary()
    except (KeyError, IndexError) as exc:
        raise catalogue.fail(path, f"{where}.summary", f"unknown placeholder {exc}") from None
    return parsed


def parse(document: Mapping[str, Any], path: Path | str) -> tuple[Entry, ...]:
    raw = document.get("evidence", {})
    return tuple(parse_entry(str(k), v, path) for k, v in _mapping(raw, "evidence", path).items())


@functools.cache
def entries() -> tuple[Entry, ...]:
    """The bundled entries, parsed and checked once per process (on first use)."""
    return parse(catalogue.builtin(), catalogue.BUILTIN)


def ignored() -> Mapping[str, str]:
    """Reasons upstream defines that prove no blocker of deletion, each with why."""
    return _mapping(catalogue.builtin().get("ignored") or {}, "ignored", catalogue.BUILTIN)


@dataclass(frozen=True)
class Holder:
    """What usually holds a kind whose finalizers a paste left out."""

    kind: str
    finalizer: str
    holds_while: str
    likely_when: str  # a fact of the file, named (explain/objects.py reads it)
    source: Mapping[str, str]


HOLDER_KEYS = ("finalizer", "while", "likely_when", "source")


def parse_holders(document: Mapping[str, Any], path: Path | str) -> dict[str, Holder]:
    found = {}
    for kind, raw in _mapping(document.get("usual_holders", {}), "usual_holders", path).items():
        where = f"usual_holders.{kind}"
        holder = _mapping(raw, where, path)
        for key in holder:
            if key not in HOLDER_KEYS:
                raise catalogue.fail(path, f"{where}.{key}", "unknown key")
        source = _mapping(holder.get("source"), f"{where}.source", path)
        for key in SOURCE_KEYS:
            _text(source.get(key), f"{where}.source.{key}", path)
        found[str(kind)] = Holder(
            str(kind),
            _text(holder.get("finalizer"), f"{where}.finalizer", path),
            _text(holder.get("while"), f"{where}.while", path),
            _text(holder.get("likely_when"), f"{where}.likely_when", path),
            {k: str(source[k]) for k in SOURCE_KEYS},
        )
    return found


@functools.cache
def _holders() -> dict[str, Holder]:
    return parse_holders(catalogue.builtin(), catalogue.BUILTIN)


def usual_holder(kind: str) -> Holder | None:
    """The finalizer that usually holds a `kind` being deleted, or None."""
    return _holders().get(kind)


def _said(phrases: Iterable[str], message: str) -> bool:
    lowered = message.lower()
    return any(p in lowered for p in phrases)


def _names_in(entry: Entry, message: str) -> dict[str, str]:
    found = {}
    for name, pattern in entry.names:
        hit = pattern.search(message)
        if hit:
            found[name] = hit.group(1)
    return found


def _fits(reasons: frozenset[str], phrases: tuple[str, ...], reason: str, message: str) -> bool:
    """Reasons (any of; none: any reason) and phrases (any of; none: any message), both."""
    if reasons and reason not in reasons:
        return False
    return not phrases or _said(phrases, message)


Said = Callable[[Entry], tuple[frozenset[str], tuple[str, ...]]]


def _read(kind: str, reason: str, message: str, part: Said) -> Reading | None:
    """The first entry about a `kind` whose `part` (event or status) the words fit."""
    for entry in entries():
        reasons, phrases = part(entry)
        if (
            kind in entry.about
            and (reasons or phrases)
            and _fits(reasons, phrases, reason, message)
        ):
            return Reading(entry, reason, message, _names_in(entry, message))
    return None


def read_event(reason: str, message: str, kind: str) -> Reading | None:
    """The first entry an event about a `kind` matches (reason and message as pasted)."""
    return _read(kind, reason, message, lambda e: (e.event_reasons, e.event_messages))


def read_status(reason: str, message: str, kind: str) -> Reading | None:
    """The first entry an object's status.reason and message match."""
    return _read(kind, reason, message, lambda e: (e.status_reasons, e.status_messages))


def entry(key: str) -> Entry:
    """One entry by its key (a reader that needs its reasons or phrases)."""
    for found in entries():
        if found.key == key:
            return found
    raise KeyError(key)


def matches(key: str, reason: str, message: str) -> bool:
    """Whether an event says what entry `key` reads (its reasons and phrases)."""
    found = entry(key)
    return _fits(found.event_reasons, found.event_messages, reason, message)


def condition_said(key: str, message: str) -> bool:
    """Whether a condition's message says one of the phrases entry `key` reads."""
    phrases = (entry(key).condition or {}).get("messages", ())
    return _said([p.lower() for p in phrases], message)


def name_in(key: str, name: str, message: str) -> str:
    """The name (`driver`, `plugin`, ...) entry `key` reads in a message, or ""."""
    return _names_in(entry(key), message).get(name, "")


def kinds_read() -> frozenset[str]:
    """The kinds whose events some entry reads (the generic reader reads no other's events)."""
    return frozenset(k for e in entries() if e.reads_events for k in e.about)
