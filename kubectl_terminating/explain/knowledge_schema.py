"""The schema of a knowledge file's finalizer entries (docs/knowledge.md): the bundled
catalogue's `finalizers` part and the user's `--knowledge-file`s share it.

An entry is a mapping with named keys; `family` names a set of defaults in the same file's
`finalizer_families` (shared facts such as kube-controller-manager's Lease, written once). A
wrong key, a wrong type or a missing field is one line naming the file and the key
(catalogue.fail), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubectl_terminating.catalogue import fail

# What a value may be, by key; `str`-lists are YAML sequences of strings.
STR, BOOL, STRS, MAP = "a string", "true or false", "a list of strings", "a mapping"
ENTRY_KEYS: dict[str, str] = {
    "name": STR,  # the finalizer: exact, or a pattern (`*`, fnmatch) for a family of them
    "aliases": STRS,  # the same owner under other names (a renamed finalizer)
    "family": STR,
    "owner": STR,
    "waits_for": STR,
    "remedy": STR,
    "strands_infrastructure": BOOL,
    "risk": STR,
    "guards": STR,  # the user's word for what its cleanup does (shown as the risk)
    "lease_names": STRS,
    "in_apiserver": BOOL,
    "built_in": BOOL,
    "runs_as": STR,
    "workload": MAP,
    "removed_by_nobody_since": STR,
    "events": STRS,  # event reasons the owner's controller writes (a fresh one: it runs)
    "source": MAP,
    "safe_to_remove_when_owner_gone": BOOL,
    "note": STR,  # why, for the reader of the file; never shown
}
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
WORKLOAD_KEYS = {"kind": STR, "namespace": STR, "name": STR, "selector": STR}
SOURCE_KEYS = {"repo": STR, "path": STR, "ref": STR, "checked": BOOL}
# what a user's knowledge file may hold (the bundled catalogue's other parts have readers of
# their own, which check them)
FILE_KEYS = ("schema", "finalizers", "finalizer_families")


@dataclass(frozen=True)
class OwnerWorkload:
    """Where the owner runs: a workload by kind and name, or pods by label selector."""

    kind: str  # Deployment, StatefulSet, DaemonSet; "" with a selector
    namespace: str
    name: str = ""
    selector: str = ""  # a label selector of the owner's pods, e.g. app=acme-operator

    def __str__(self) -> str:
        if self.selector:
            where = f" in {self.namespace}" if self.namespace else ""
            return f"pods {self.selector}{where}"
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class Source:
    repo: str
    path: str = ""
    ref: str = ""
    checked: bool = True

    @property
    def url(self) -> str:
        if self.path:
            return f"https://github.com/{self.repo}/blob/{self.ref or 'HEAD'}/{self.path}"
        return f"https://github.com/{self.repo}" + (f"/tree/{self.ref}" if self.ref else "")


@dataclass(frozen=True)
class Entry:
    """One entry as read (defaults of its family applied), before it becomes FinalizerOwner."""

    values: dict[str, Any]
    workload: OwnerWorkload | None = None
    source: Source | None = None
    names: tuple[str, ...] = field(default=())


def _check(value: object, expected: str, path: Path | str, key: str) -> None:
    ok = {
        STR: isinstance(value, str) and bool(value.strip()),
        BOOL: isinstance(value, bool),
        STRS: isinstance(value, list) and all(isinstance(v, str) and v for v in value),
        MAP: isinstance(value, dict),
    }[expected]
    if not ok:
        raise fail(path, key, f"must be {expected}")


def _checked_map(
    value: dict[str, Any], keys: dict[str, str], path: Path | str, where: str
) -> dict[str, Any]:
    for key, inner in value.items():
        if key not in keys:
            raise fail(path, f"{where}.{key}", f"unknown key (known: {', '.join(keys)})")
        _check(inner, keys[key], path, f"{where}.{key}")
    return value


def _workload(value: dict[str, Any], path: Path | str, where: str) -> OwnerWorkload:
    _checked_map(value, WORKLOAD_KEYS, path, where)
    if "selector" in value:
        if "name" in value:
            raise fail(path, f"{where}.selector", "give a name or a selector, not both")
        return OwnerWorkload(
            value.get("kind", ""), value.get("namespace", ""), "", value["selector"]
        )
    for key in ("kind", "namespace", "name"):
        if key not in value:
            raise fail(path, f"{where}.{key}", "missing (or give a selector)")
    if value["kind"] not in WORKLOAD_KINDS:
        raise fail(path, f"{where}.kind", f"must be one of {', '.join(WORKLOAD_KINDS)}")
    return OwnerWorkload(value["kind"], value["namespace"], value["name"])


def _source(value: dict[str, Any], path: Path | str, where: str) -> Source:
    _checked_map(value, SOURCE_KEYS, path, where)
    if "repo" not in value:
        raise fail(path, f"{where}.repo", "missing")
    if value["repo"].count("/") != 1:
        raise fail(path, f"{where}.repo", "must be owner/name")
    # a ref given by the entry itself is checked unless it says otherwise
    return Source(value["repo"], value.get("path", ""), value.get("ref", ""), value["checked"])


def _merged_source(family: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    merged = {**family, **own}
    if "ref" in own and "checked" not in own:
        merged["checked"] = True
    merged.setdefault("checked", True)
    return merged


def families(document: dict[str, Any], path: Path | str) -> dict[str, dict[str, Any]]:
    raw = document.get("finalizer_families") or {}
    if not isinstance(raw, dict):
        raise fail(path, "finalizer_families", "must be a mapping of family names")
    found = {}
    for name, defaults in raw.items():
        where = f"finalizer_families.{name}"
        if not isinstance(defaults, dict):
            raise fail(path, where, "must be a mapping")
        for key in ("name", "aliases", "family"):
            if key in defaults:
                raise fail(path, f"{where}.{key}", "not allowed in a family")
        found[str(name)] = _checked_map(defaults, ENTRY_KEYS, path, where)
    return found


def read_entries(
    document: dict[str, Any], path: Path | str, required: tuple[str, ...], whole: bool = True
) -> list[Entry]:
    """The file's finalizer entries, each checked; `required` the keys each must end with;
    `whole`: the file holds only finalizers (a user's), so any other top-level key is wrong."""
    for key in document if whole else ():
        if key not in FILE_KEYS:
            raise fail(path, str(key), f"unknown key (known: {', '.join(FILE_KEYS)})")
    raw = document.get("finalizers")
    if raw is None:
        raise fail(path, "finalizers", "missing")
    if not isinstance(raw, list):
        raise fail(path, "finalizers", "must be a list of entries")
    known_families = families(document, path)
    return [_entry(item, index, known_families, path, required) for index, item in enumerate(raw)]


def _entry(
    item: object,
    index: int,
    known_families: dict[str, dict[str, Any]],
    path: Path | str,
    required: tuple[str, ...],
) -> Entry:
    where = f"finalizers[{index}]"
    if not isinstance(item, dict):
        raise fail(path, where, "must be a mapping (name: ..., owner: ...)")
    own = _checked_map(item, ENTRY_KEYS, path, where)
    values: dict[str, Any] = {}
    if "family" in own:
        if own["family"] not in known_families:
            raise fail(path, f"{where}.family", f"no family {own['family']!r} in the file")
        values.update(known_families[own["family"]])
    values.update(own)
    values["source"] = _merged_source(
        known_families.get(own.get("family", ""), {}).get("source", {}), own.get("source", {})
    )
    for key in ("name", *required):
        if key not in values or (key == "source" and "repo" not in values["source"]):
            raise fail(path, f"{where}.{key}", "missing")
    workload = (
        _workload(values["workload"], path, f"{where}.workload") if "workload" in values else None
    )
    source = (
        _source(values["source"], path, f"{where}.source") if "repo" in values["source"] else None
    )
    names = (values["name"], *values.get("aliases", ()))
    return Entry(values, workload, source, names)
