"""Kubernetes objects out of decoded JSON documents from a file (snapshots, `kubectl get`).

Lists (`List`, `PodList`, ...) are flattened, their items given the list's kind when they
lack one. An entry is kept only if its identity has the shape every part of the tool relies
on (finders, views, tables): an object with a string `kind`, a string `apiVersion` if any,
an object `metadata` with a string `name` and, if any, a string `namespace`. Any other entry
is skipped and named in one warning (where it is in the file and why), so a file that is
partly broken still gives what it holds. Fields below the identity (spec, status, the
values of labels, timestamps) are the explainers' to judge: they read them defensively,
which the property tests in tests/unit/test_properties.py and test_hostile_files.py hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubectl_terminating.model import JSON

SHOWN = 3  # skipped entries named in the warning


def json_type(value: object) -> str:
    """What a JSON value is, in the words of the format."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _wrong(field_name: str, value: object, expected: str) -> str:
    return f"{field_name} is {json_type(value)}, not {expected}"


def _string(field_name: str, value: object, required: bool = False) -> str | None:
    """Why value cannot be the string field_name is; None if it can."""
    if isinstance(value, str) and (value or not required):
        return None
    if value is None or value == "":
        return f"no {field_name}" if required else None
    return _wrong(field_name, value, "a string")


def shape_problem(entry: object) -> str | None:
    """Why entry cannot be taken for a Kubernetes object; None if it can."""
    if not isinstance(entry, dict):
        return f"{json_type(entry)}, not an object"
    problem = _string("kind", entry.get("kind"), required=True) or _string(
        "apiVersion", entry.get("apiVersion")
    )
    if problem:
        return problem
    metadata = entry.get("metadata")
    if not isinstance(metadata, dict):
        return "no metadata" if metadata is None else _wrong("metadata", metadata, "an object")
    return _string("metadata.name", metadata.get("name"), required=True) or _string(
        "metadata.namespace", metadata.get("namespace")
    )


def _is_list(document: object) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("items"), list)
        and isinstance(document.get("kind"), str)
        and document["kind"].endswith("List")
    )


@dataclass
class Gathered:
    objects: list[JSON] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why)

    def entry(self, entry: Any, where: str) -> None:
        """Keep entry if it is a Kubernetes object, flatten it if it is a List (iteratively:
        a hostile file may nest Lists as deep as JSON allows). where: its place, for the
        warning (`pods.json document 2`)."""
        stack = [(entry, where)]
        while stack:
            item, at = stack.pop()
            if not _is_list(item):
                problem = shape_problem(item)
                if problem is None:
                    self.objects.append(item)
                else:
                    self.skipped.append((at, problem))
                continue
            of_kind = item["kind"][: -len("List")]
            for number, inner in reversed(list(enumerate(item["items"]))):
                typed = {"kind": of_kind, **inner} if of_kind and isinstance(inner, dict) else inner
                stack.append((typed, f"{at} items[{number}]"))

    def documents(self, documents: list[Any], source: str) -> None:
        """Every object of a file's documents (source: the file's name)."""
        several = len(documents) > 1
        for number, document in enumerate(documents, 1):
            self.entry(document, f"{source} document {number}" if several else source)

    def entries(self, entries: Iterable[Any], where: str) -> list[JSON]:
        """The objects among the entries of an array of a snapshot (where: its place)."""
        before = len(self.objects)
        for number, entry in enumerate(entries):
            self.entry(entry, f"{where}[{number}]")
        kept = self.objects[before:]
        del self.objects[before:]
        return kept

    def why_none(self, source: str) -> str:
        """Why no object was found in source: the reason if one entry was skipped."""
        if len(self.skipped) != 1:
            return ""
        where, why = self.skipped[0]
        return f" ({why})" if where == source else f" ({where}: {why})"

    def warnings(self) -> list[str]:
        if not self.skipped:
            return []
        shown = ", ".join(f"{where} ({why})" for where, why in self.skipped[:SHOWN])
        more = f" and {len(self.skipped) - SHOWN} more" if len(self.skipped) > SHOWN else ""
        count = len(self.skipped)
        return [
            f"skipped {count} {'entry' if count == 1 else 'entries'} that "
            f"{'is' if count == 1 else 'are'} not a Kubernetes object: {shown}{more}"
        ]
