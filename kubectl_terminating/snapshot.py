"""Saved snapshots: `dump` records what the explainers read (RecordingView), `--from-file`
replays it, and plain `kubectl get` files load the same way.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kubectl_terminating import __version__
from kubectl_terminating.bounded import DEFAULT_MAX_BYTES, TooLarge, read_json
from kubectl_terminating.errors import ConfigError
from kubectl_terminating.gather import Gathered
from kubectl_terminating.model import JSON
from kubectl_terminating.reads import expected_kinds, related_kinds
from kubectl_terminating.resources import (
    Resource,
    as_dict,
    is_terminating,
    list_of,
    meta,
    text,
    typed,
)
from kubectl_terminating.selectors import parse_selector
from kubectl_terminating.source import Found, Scope
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.timeutil import format_time, parse_time
from kubectl_terminating.view import (
    EVERYTHING,
    ClusterView,
    ContentListing,
    Discovery,
    ReadFailed,
    Selectors,
    may,
)

SNAPSHOT_API_VERSION = "terminating.kubectl.io/v1"
SNAPSHOT_KIND = "Snapshot"
SNAPSHOT_LIST_KIND = "SnapshotList"  # one Snapshot per kubeconfig context (`dump --contexts`)
NOT_IN_FILE = "not in the snapshot"
# Never saved: what a support bundle must not carry.
SECRET_FIELDS = {"Secret": ("data", "stringData"), "ConfigMap": ("data", "binaryData")}

SHOWN_FILES = 5  # unreadable files of a folder named one by one

if TYPE_CHECKING:
    from kubectl_terminating.nodeanswers import NodeEvidence, Subject

T = TypeVar("T")
R = TypeVar("R")


def scrub(obj: JSON, resource: Resource | None = None) -> JSON:
    """obj with kind/apiVersion set (list items lack them) and secret payloads removed."""
    out = dict(typed(obj, resource) if resource is not None else obj)
    annotations = meta(out).get("annotations")
    if (
        isinstance(annotations, dict)
        and "kubectl.kubernetes.io/last-applied-configuration" in annotations
    ):
        # the last applied configuration of a Secret carries its data in clear
        out["metadata"] = dict(
            meta(out),
            annotations={
                k: v
                for k, v in annotations.items()
                if k != "kubectl.kubernetes.io/last-applied-configuration"
            },
        )
    for key in SECRET_FIELDS.get(str(out.get("kind")), ()):
        out.pop(key, None)
    return out


# -- recording -----------------------------------------------------------------------------------


@dataclass
class Capture:
    objects: dict[tuple[str, str, str], JSON] = field(default_factory=dict)
    content: dict[str, list[ContentListing]] = field(default_factory=dict)
    discovery: Discovery | None = None
    unreadable: dict[str, str] = field(default_factory=dict)

    def add(self, obj: JSON, resource: Resource | None = None) -> None:
        clean = scrub(obj, resource)
        m = meta(clean)
        key = (str(clean.get("kind")), str(m.get("namespace") or ""), str(m.get("name")))
        self.objects[key] = clean


class RecordingView:
    """A ClusterView that passes reads to another and remembers what they returned."""

    def __init__(self, inner: ClusterView, capture: Capture) -> None:
        self.inner = inner
        self.capture = capture

    @property
    def now(self) -> datetime:
        return self.inner.now

    def may(self, user: str, groups: tuple[str, ...], attributes: JSON) -> bool:
        return may(self.inner, user, groups, attributes)

    def _record(self, resource: Resource, read: Callable[[], T]) -> T:
        try:
            value = read()
        except ReadFailed as failed:
            self.capture.unreadable.setdefault(resource.kind, failed.reason)
            raise
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                self.capture.add(item, resource)
        return value

    def get(self, resource: Resource, namespace: str | None, name: str) -> JSON | None:
        return self._record(resource, lambda: self.inner.get(resource, namespace, name))

    def discovery(self) -> Discovery:
        self.capture.discovery = self.inner.discovery()
        return self.capture.discovery

    def namespace_content(self, namespace: str) -> list[ContentListing]:
        listings = self.inner.namespace_content(namespace)
        self.capture.content[namespace] = [
            ContentListing(
                listing.resource,
                tuple(scrub(i, listing.resource) for i in listing.items),
                listing.error,
            )
            for listing in listings
        ]
        return listings

    def list(
        self, resource: Resource, namespace: str | None = None, selectors: Selectors = EVERYTHING
    ) -> list[JSON]:
        return self._record(resource, lambda: self.inner.list(resource, namespace, selectors))


def _resource_json(resource: Resource) -> JSON:
    return {
        "group": resource.group,
        "version": resource.version,
        "plural": resource.plural,
        "kind": resource.kind,
        "namespaced": resource.namespaced,
    }


def _resource(data: Any) -> Resource:
    if not isinstance(data, dict):
        raise ValueError("a resource entry is not an object")
    return Resource(
        group=str(data.get("group", "")),
        version=str(data["version"]),
        plural=str(data["plural"]),
        kind=str(data["kind"]),
        namespaced=bool(data.get("namespaced", True)),
    )


def bundle(capture: Capture, header: JSON) -> JSON:
    discovery = capture.discovery or Discovery()
    return {
        "apiVersion": SNAPSHOT_API_VERSION,
        "kind": SNAPSHOT_KIND,
        "header": header,
        "discovery": {
            "resources": [_resource_json(r) for r in discovery.resources],
            "failedGroups": dict(discovery.failed_groups),
        },
        "unreadable": dict(capture.unreadable),
        "namespaceContent": {
            ns: [
                {
                    "resource": _resource_json(listing.resource),
                    "items": list(listing.items),
                    "error": listing.error,
                }
                for listing in listings
            ]
            for ns, listings in capture.content.items()
        },
        "objects": list(capture.objects.values()),
    }


def snapshot_list(bundles: list[JSON], warnings: list[str]) -> JSON:
    """The snapshots of several contexts in one file; warnings: the contexts not saved."""
    return {
        "apiVersion": SNAPSHOT_API_VERSION,
        "kind": SNAPSHOT_LIST_KIND,
        "items": bundles,
        "warnings": warnings,
    }


def write_bundle(path: str, data: JSON) -> int:
    """Write the bundle (gzip when the name ends in .gz, mtime 0 for stable bytes)."""
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    if path.endswith(".gz"):
        raw = gzip.compress(raw, mtime=0)
    try:
        Path(path).write_bytes(raw)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None
    return len(raw)


def header(captured_at: datetime, server_version: str, context: str, scope: Scope) -> JSON:
    return {
        "capturedAt": format_time(captured_at),
        "toolVersion": __version__,
        "serverVersion": server_version,
        "context": context,
        "namespace": scope.namespace,
        "omitted": "Secret and ConfigMap data are never saved",
    }


# -- loading -------------------------------------------------------------------------------------


@dataclass
class Loaded:
    objects: list[JSON]
    captured_at: datetime | None = None
    discovery: Discovery | None = None
    unreadable: dict[str, str] = field(default_factory=dict)
    content: dict[str, list[ContentListing]] | None = None
    warnings: list[str] = field(default_factory=list)
    # captured_at is only the newest timestamp in the file (no capture time was recorded)
    estimated: bool = False
    # a SnapshotList: each context's snapshot (objects is then empty)
    contexts: list[tuple[str, Loaded]] = field(default_factory=list)
    node_evidence: JSON | None = None  # node -> NodeEvidence.to_json(), from dump --node-evidence


def _guess_plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("y") and not lower.endswith("ey"):
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


def _discovery_of(objects: Iterable[JSON]) -> Discovery:
    """Resource types guessed from the objects present (plural names are not in the data)."""
    seen: dict[tuple[str, str], Resource] = {}
    for obj in objects:
        group, _, version = str(obj.get("apiVersion", "v1")).rpartition("/")
        kind = str(obj.get("kind"))
        namespaced = bool(meta(obj).get("namespace"))
        seen.setdefault(
            (group, kind), Resource(group, version, _guess_plural(kind), kind, namespaced)
        )
    return Discovery(resources=sorted(seen.values()), complete=False)


_TIME_KEYS = frozenset(
    {
        "creationTimestamp",
        "deletionTimestamp",
        "firstTimestamp",
        "lastTimestamp",
        "eventTime",
        "renewTime",
        "lastTransitionTime",
        "lastHeartbeatTime",
    }
)


def newest_timestamp(value: Any) -> datetime | None:
    """The latest timestamp anywhere in value: the earliest the data can have been taken."""
    newest: datetime | None = None
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        for key, inner in item.items():
            when = parse_time(inner) if key in _TIME_KEYS else None
            if when is not None and (newest is None or when > newest):
                newest = when
            if isinstance(inner, dict | list):
                stack.append(inner)
    return newest


def _loose(objects: list[JSON]) -> Loaded:
    present = {str(o.get("kind")) for o in objects}
    missing = {r.kind: NOT_IN_FILE for r in related_kinds() if r.kind not in present}
    named = sorted(r.kind for r in expected_kinds() if r.kind in missing)
    warnings = []
    if named:
        warnings.append("checks not possible, kinds not in the file: " + ", ".join(named))
    captured = newest_timestamp(objects)
    if captured is not None:
        warnings.append(
            f"the file has no capture time: ages are computed from its newest timestamp "
            f"({format_time(captured)}); --now uses the current time"
        )
    return Loaded(
        objects,
        captured_at=captured,
        discovery=_discovery_of(objects),
        unreadable=missing,
        warnings=warnings,
        estimated=True,
    )


def _from_bundle(data: JSON, source: Path) -> Loaded:
    gathered = Gathered()
    try:
        captured = parse_time((data.get("header") or {}).get("capturedAt"))
        disc = data.get("discovery") or {}
        discovery = Discovery(
            resources=[_resource(r) for r in disc.get("resources") or []],
            failed_groups=dict(disc.get("failedGroups") or {}),
        )
        content = {
            str(ns): [
                ContentListing(
                    _resource(listing["resource"]),
                    tuple(
                        gathered.entries(
                            listing.get("items") or [], f"{source} namespaceContent.{ns}.items"
                        )
                    ),
                    listing.get("error"),
                )
                for listing in listings
            ]
            for ns, listings in (data.get("namespaceContent") or {}).items()
        }
        objects = gathered.entries(data.get("objects") or [], f"{source} objects")
        unreadable = {str(k): str(v) for k, v in (data.get("unreadable") or {}).items()}
        node_evidence = data.get("nodeEvidence")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"cannot read {source}: malformed snapshot ({exc})") from None
    estimated = captured is None  # a dump whose header lost its time: like a `kubectl get` file
    loaded = Loaded(
        objects,
        newest_timestamp(objects) if estimated else captured,
        discovery,
        unreadable,
        content,
        gathered.warnings(),
        estimated=estimated,
    )
    loaded.node_evidence = node_evidence if isinstance(node_evidence, dict) else None
    return loaded


def _from_list(data: JSON, source: Path) -> Loaded:
    items = data.get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ConfigError(f"cannot read {source}: malformed snapshot list (items)")
    contexts = [
        (text(as_dict(item.get("header")).get("context")), _from_bundle(item, source))
        for item in items
    ]
    warnings = [str(w) for w in list_of(data.get("warnings"))]
    return Loaded([], warnings=warnings, contexts=contexts)


def _json_files(path: Path, skipped: list[str]) -> list[Path]:
    """The .json files under path, sorted; folders that cannot be listed go to skipped."""
    found: list[Path] = []

    def unlistable(error: OSError) -> None:
        skipped.append(f"cannot read {error.filename}: {error.strerror} (skipped)")

    for folder, _, names in os.walk(path, onerror=unlistable):
        found += [Path(folder, n) for n in names if n.endswith(".json")]
    return sorted(f for f in found if f.is_file())


def _from_directory(path: Path, max_bytes: int) -> Loaded:
    """The objects of a `cluster-info dump` folder; files that cannot be read are skipped
    with a warning each, but the cap holds for all files together."""
    skipped: list[str] = []
    files = _json_files(path, skipped)
    if not files and not skipped:
        raise ConfigError(f"cannot read {path}: no .json files (expected a cluster-info dump)")
    gathered, warnings, used = Gathered(), [], 0
    for file in files:
        try:
            decoded = read_json(file, max_bytes - used)
            used += decoded.size
        except TooLarge:
            raise TooLarge(str(path), max_bytes) from None
        except ConfigError as error:
            skipped.append(f"{error.message} (skipped)")
            continue
        warnings += decoded.warnings
        gathered.documents(decoded.documents, str(file))
    if not gathered.objects:
        reason = f": {skipped[0]}" if skipped else ""
        raise ConfigError(f"cannot read {path}: no Kubernetes objects in it{reason}")
    loaded = _loose(gathered.objects)
    loaded.warnings[:0] = skipped[:SHOWN_FILES] + warnings + gathered.warnings()
    if len(skipped) > SHOWN_FILES:
        loaded.warnings.insert(SHOWN_FILES, f"{len(skipped) - SHOWN_FILES} more files skipped")
    return loaded


def _from_documents(documents: list[Any], source: Path) -> Loaded:
    if not documents:
        raise ConfigError(f"cannot read {source}: the file is empty")
    first = documents[0]
    kind = first.get("kind") if isinstance(first, dict) else None
    if len(documents) == 1 and kind in (SNAPSHOT_KIND, SNAPSHOT_LIST_KIND):
        if first.get("apiVersion") != SNAPSHOT_API_VERSION:
            raise ConfigError(
                f"cannot read {source}: unknown snapshot version {first.get('apiVersion')}"
            )
        if kind == SNAPSHOT_LIST_KIND:
            return _from_list(first, source)
        return _from_bundle(first, source)
    gathered = Gathered()
    gathered.documents(documents, str(source))
    if not gathered.objects:
        raise ConfigError(
            f"cannot read {source}: no Kubernetes objects in it{gathered.why_none(str(source))}"
        )
    loaded = _loose(gathered.objects)
    loaded.warnings[:0] = gathered.warnings()
    return loaded


def load(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Loaded:
    """A snapshot file or folder, read with bounded memory (bounded.py): past max_bytes
    expanded, TooLarge; anything malformed, one ConfigError line or the objects that could
    be read with warnings naming the rest."""
    source = Path(path)
    if source.is_dir():
        return _from_directory(source, max_bytes)
    decoded = read_json(source, max_bytes)
    loaded = _from_documents(decoded.documents, source)
    loaded.warnings[:0] = decoded.warnings
    return loaded


# -- the offline source --------------------------------------------------------------------------


def _in_scope(obj: JSON, namespace: str | None, selector: str | None) -> bool:
    m = meta(obj)
    if namespace is not None and m.get("namespace") != namespace:
        return False
    labels = m.get("labels")
    return parse_selector(selector)(labels if isinstance(labels, dict) else {})


def _sorted(objects: Iterable[JSON]) -> list[JSON]:
    return sorted(
        objects, key=lambda o: (str(meta(o).get("namespace") or ""), str(meta(o).get("name")))
    )


class SnapshotSource:
    """Terminating objects of a saved snapshot, explained through a StaticView."""

    def __init__(self, loaded: Loaded, now: datetime, undated: bool = False) -> None:
        self.loaded = loaded
        self.view = StaticView(
            loaded.objects, now, loaded.discovery, loaded.unreadable, loaded.content, undated
        )

    @classmethod
    def open(
        cls, path: str, use_now: bool = False, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> SnapshotSource:
        return cls.of(load(path, max_bytes), use_now)

    @classmethod
    def of(cls, loaded: Loaded, use_now: bool = False) -> SnapshotSource:
        """Ages from the capture time, or from now with use_now (--now)."""
        now = datetime.now(timezone.utc)
        if loaded.captured_at is not None and not use_now:
            now = loaded.captured_at
            return cls(loaded, now, undated=loaded.estimated)
        return cls(loaded, now)

    def _of_kind(self, kind: str) -> list[JSON]:
        return [o for o in self.loaded.objects if o.get("kind") == kind]

    def find_pods(
        self,
        scope: Scope,
        node_down: Callable[[str], bool] | None = None,
        found_some: Callable[[list[JSON]], None] | None = None,
    ) -> Found:
        # in memory already: nothing to hand over before the whole answer
        pods = [p for p in self._of_kind("Pod") if _in_scope(p, scope.namespace, scope.selector)]
        return self._by_names(pods, scope.names, "pods")

    def find_namespaces(self, names: tuple[str, ...]) -> Found:
        return self._by_names(self._of_kind("Namespace"), names, "namespaces")

    def _by_names(self, objects: list[JSON], names: tuple[str, ...], plural: str) -> Found:
        warnings = list(self.loaded.warnings)
        if not names:
            return Found(_sorted(o for o in objects if is_terminating(o)), [], warnings)
        by_name = {str(meta(o).get("name")): o for o in objects}
        found = [by_name[n] for n in names if n in by_name and is_terminating(by_name[n])]
        warnings += [
            f'{plural} "{n}" exists but is not terminating'
            for n in names
            if n in by_name and not is_terminating(by_name[n])
        ]
        return Found(found, [n for n in names if n not in by_name], warnings)

    def find_all(self, scope: Scope) -> tuple[list[tuple[Resource, JSON]], list[str]]:
        resources = {(r.api_version, r.kind): r for r in self.view.discovery().resources}
        found = []
        for obj in _sorted(self.loaded.objects):
            if not is_terminating(obj) or not _in_scope(obj, scope.namespace, scope.selector):
                continue
            key = (str(obj.get("apiVersion")), str(obj.get("kind")))
            resource = resources.get(key) or _discovery_of([obj]).resources[0]
            found.append((resource, obj))
        found.sort(key=lambda pair: pair[0].kind)
        return found, list(self.loaded.warnings)

    def map(self, function: Callable[[T], R], inputs: Sequence[T]) -> list[R]:
        return [function(item) for item in inputs]

    def node_evidence(
        self, subjects: Mapping[str, Subject]
    ) -> tuple[Mapping[str, NodeEvidence], list[str]]:
        """What `dump --node-evidence` recorded of each node's kubelet."""
        from kubectl_terminating.nodeanswers import NodeEvidence, NodeEvidenceRefused

        recorded = self.loaded.node_evidence
        if recorded is None:
            why = "the snapshot holds none (dump it with --node-evidence)"
            raise NodeEvidenceRefused(why, f"node evidence not read: {why}")
        return {n: NodeEvidence.from_json(recorded[n]) for n in subjects if n in recorded}, []


def dump_size_note(size: int) -> str:
    return f"{size / 1024:.1f} KiB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MiB"


__all__ = [
    "Capture",
    "RecordingView",
    "SnapshotSource",
    "bundle",
    "dump_size_note",
    "header",
    "load",
    "os",
    "write_bundle",
]
