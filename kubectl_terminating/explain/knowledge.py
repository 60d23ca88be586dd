"""Who removes a finalizer, what it waits for, and what removing it by hand leaves behind.

The facts are data: the `finalizers` part of the bundled catalogue (catalogue/catalogue.yaml,
each entry with the upstream source it was checked against), and the user's own knowledge
files (`--knowledge-file`, KUBECTL_TERMINATING_KNOWLEDGE; docs/knowledge.md), whose entries
come first. This module reads them, lazily (a `--help` never parses YAML), into FinalizerOwner.
A finalizer that is in neither is reported as "owner unknown" rather than guessed. Patterns use
shell-style wildcards (fnmatch) for families such as `external-attacher/<driver>`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from kubectl_terminating import catalogue
from kubectl_terminating.explain.knowledge_schema import Entry, OwnerWorkload, read_entries

KCM_LEASE = "kube-controller-manager"  # kube-system, the default --leader-elect-resource-name
CCM_LEASE = "cloud-controller-manager"
ENV = catalogue.KNOWLEDGE_ENV
# what every bundled entry must say (a user's entry needs only a name and an owner)
BUILTIN_REQUIRED = ("owner", "waits_for", "remedy", "source")
USER_REQUIRED = ("owner",)


@dataclass(frozen=True)
class FinalizerOwner:
    pattern: str  # the finalizer, or an fnmatch pattern for a family of them
    owner: str  # the controller that removes it
    waits_for: str  # what that controller waits for before removing it
    remedy: str  # the safe way to get it removed
    strands_infrastructure: bool = False  # removing it by hand leaves real resources behind
    risk: str = ""  # what removing it by hand skips
    # Leader-election Lease names (fnmatch) of the owner; `{group0}` is the first DNS label of
    # the object's API group (Flux runs one controller per group: kustomize-, helm-, ...).
    lease_names: tuple[str, ...] = ()
    in_apiserver: bool = False  # run by kube-apiserver itself: alive whenever it answers
    built_in: bool = False  # part of Kubernetes (kube-controller-manager and friends)
    runs_as: str = ""  # how to tell it runs: the workload (default install) that removes it
    source: str = ""  # where the owning project defines the finalizer (checked against it)
    # the owner's release from which nothing removes it any more ("Gatekeeper 3.15"): restoring
    # the owner is then no remedy, whether or not it runs
    removed_by_nobody_since: str = ""
    workload: OwnerWorkload | None = None  # the owner's workload in its default install
    events: tuple[str, ...] = ()  # event reasons its controller writes
    # a user's knowledge file: where the entry came from ("" for the bundled catalogue), and
    # whether it lets `fix` remove the finalizer once the workload is proven gone
    knowledge_file: str = ""
    safe_to_remove_when_owner_gone: bool = False


def _owner(entry: Entry, name: str, knowledge_file: str) -> FinalizerOwner:
    v: dict[str, Any] = entry.values
    workload = entry.workload
    guards = v.get("guards", "")
    return FinalizerOwner(
        name,
        v["owner"],
        v.get("waits_for") or (f"its cleanup: {guards}" if guards else "its own cleanup"),
        v.get("remedy") or (f"restore {workload}, then retry" if workload else "restore it"),
        strands_infrastructure=v.get("strands_infrastructure", False),
        risk=v.get("risk") or (f"its cleanup is skipped: {guards}" if guards else ""),
        lease_names=tuple(v.get("lease_names", ())),
        in_apiserver=v.get("in_apiserver", False),
        built_in=v.get("built_in", False),
        runs_as=v.get("runs_as") or (str(workload) if workload else ""),
        source=entry.source.url if entry.source else "",
        removed_by_nobody_since=v.get("removed_by_nobody_since", ""),
        workload=workload,
        events=tuple(v.get("events", ())),
        knowledge_file=knowledge_file,
        safe_to_remove_when_owner_gone=v.get("safe_to_remove_when_owner_gone", False),
    )


def read_file(path: Path | str, user: bool = True) -> tuple[FinalizerOwner, ...]:
    """The owners a knowledge file names, checked (catalogue.CatalogueError: one line)."""
    document = catalogue.read_document(Path(path))
    return _owners(document, path, user)


def _owners(document: dict[str, Any], path: Path | str, user: bool) -> tuple[FinalizerOwner, ...]:
    required = USER_REQUIRED if user else BUILTIN_REQUIRED
    origin = str(path) if user else ""
    return tuple(
        _owner(entry, name, origin)
        for entry in read_entries(document, path, required, whole=user)
        for name in entry.names
    )


@functools.cache
def builtin_entries() -> tuple[FinalizerOwner, ...]:
    return _owners(catalogue.builtin(), catalogue.BUILTIN, user=False)


# the user's entries, read by use_files (once, at the command's start)
_USER: list[FinalizerOwner] = []


def user_files(flags: Sequence[str] = (), environ: dict[str, str] | None = None) -> list[str]:
    """The knowledge files to read: the flags' in order, then the environment variable's."""
    env = (os.environ if environ is None else environ).get(ENV, "")
    return [*flags, *(p for p in env.split(os.pathsep) if p)]


def use_files(paths: Sequence[str]) -> None:
    """Read the user's knowledge files now (a broken one: CatalogueError, nothing else runs);
    their entries then come before the bundled ones."""
    _USER[:] = [owner for path in paths for owner in read_file(path)]
    _index.cache_clear()


def _is_pattern(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


@functools.cache
def _index() -> tuple[dict[str, FinalizerOwner], tuple[FinalizerOwner, ...]]:
    exact: dict[str, FinalizerOwner] = {}
    for entry in entries():
        if not _is_pattern(entry.pattern):
            exact.setdefault(entry.pattern, entry)  # the first (a user's) wins
    return exact, tuple(entry for entry in entries() if _is_pattern(entry.pattern))


def lookup(finalizer: str) -> FinalizerOwner | None:
    """The owner of a finalizer: an exact entry first (a user's before a bundled one), then
    the first pattern that matches (a user's first)."""
    exact, patterns = _index()
    found = exact.get(finalizer)
    if found is not None:
        return found
    return next((entry for entry in patterns if fnmatchcase(finalizer, entry.pattern)), None)


def entries() -> tuple[FinalizerOwner, ...]:
    """Every entry: the user's first, then the bundled ones."""
    return (*_USER, *builtin_entries())
