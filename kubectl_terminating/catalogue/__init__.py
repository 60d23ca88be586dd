"""Kubernetes' vocabulary and other projects' finalizers, as data (docs/catalogue.md).

One file, catalogue.yaml beside this module, holds two parts: `evidence` (what Kubernetes
components and the common add-ons write on the way to deletion: event reasons and message
patterns, status reasons, conditions; read by `catalogue.evidence`) and `finalizers` (who removes
a finalizer and what removing it skips; read by `explain.knowledge`). Every entry names its
provenance: the repository, path and tag of the upstream source it was taken from.

Loaded on first use only (a `--help` never parses it), checked against its schema at load: a
file that does not fit is one line naming the file and the key (`CatalogueError`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from kubectl_terminating.errors import TerminatingError

BUILTIN = Path(__file__).with_name("catalogue.yaml")
KNOWLEDGE_ENV = "KUBECTL_TERMINATING_KNOWLEDGE"  # os.pathsep-separated users' knowledge files


class CatalogueError(TerminatingError):
    """A catalogue or knowledge file that does not fit the schema: one line, exit 1."""


def read_document(path: Path) -> dict[str, Any]:
    """The mapping a catalogue file holds, or CatalogueError naming the file."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogueError(f"cannot read knowledge file {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise CatalogueError(
            f"error loading knowledge file {path}: not valid YAML{where}"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CatalogueError(f"error loading knowledge file {path}: not a mapping")
    return data


@functools.cache
def builtin() -> dict[str, Any]:
    """The bundled catalogue, parsed once per process."""
    return read_document(BUILTIN)


def fail(path: Path | str, key: str, problem: str) -> CatalogueError:
    """The one line for an entry that does not fit: the file, the key, what is wrong."""
    return CatalogueError(f"invalid knowledge file {path}: {key}: {problem}")
