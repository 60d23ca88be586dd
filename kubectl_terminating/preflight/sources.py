"""Where a manifest comes from: files, a folder, stdin, or a Helm release's Secret, of which
only `manifest` is decoded (never printed, never saved)."""

from __future__ import annotations

import base64
import gzip
import json
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kubectl_terminating.errors import ConfigError, Forbidden, TerminatingError
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import as_dict, meta, text

MAX_MANIFEST_BYTES = 64 * 1024 * 1024
RELEASE_SECRET_TYPE = "helm.sh/release.v1"


def _load_all(content: str, where: str) -> Iterator[JSON]:
    import yaml

    try:
        for doc in yaml.safe_load_all(content):
            if isinstance(doc, dict):
                yield doc
    except yaml.YAMLError as error:
        line = getattr(getattr(error, "problem_mark", None), "line", None)
        at = f" (line {line + 1})" if isinstance(line, int) else ""
        raise ConfigError(f"{where}: not a YAML or JSON manifest{at}") from None
    except RecursionError:  # nested deeper than the parser recurses
        raise ConfigError(f"{where}: a manifest nested too deeply to read") from None


def _paths(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    return [path]


def read_manifests(paths: tuple[str, ...], stdin: IO[str] | None = None) -> tuple[JSON, ...]:
    docs: list[JSON] = []
    for given in paths:
        if given == "-":
            try:
                content = (stdin or sys.stdin).read(MAX_MANIFEST_BYTES)
            except UnicodeDecodeError:
                raise ConfigError("stdin: not a YAML or JSON manifest (not UTF-8 text)") from None
            docs += _load_all(content, "stdin")
            continue
        path = Path(given)
        if not path.exists():
            raise ConfigError(f'the path "{given}" does not exist')
        for file in _paths(path):
            try:
                content = file.read_text(errors="replace")[:MAX_MANIFEST_BYTES]
            except OSError as error:
                raise ConfigError(f"{file}: {error.strerror}") from None
            docs += _load_all(content, str(file))
    return tuple(docs)


def decode_release(encoded: str) -> str:
    """The release's manifest from a release Secret's `data.release`: base64 (the Secret's
    encoding) of base64 of gzip of the release's JSON. Only `manifest` is kept."""
    try:
        inner = base64.b64decode(base64.b64decode(encoded))
        if inner[:2] == b"\x1f\x8b":
            inner = gzip.decompress(inner)
        manifest = json.loads(inner).get("manifest")
    except (ValueError, OSError, AttributeError, EOFError, zlib.error, RecursionError):
        raise ConfigError("the release Secret could not be decoded") from None
    return manifest if isinstance(manifest, str) else ""


def _revision(label: str) -> int:
    """The release Secret's `version` label as a number (a malformed one sorts first)."""
    return int(label) if label.isdigit() else 0


def helm_release_manifest(client: object, release: str, namespace: str) -> tuple[JSON, ...]:
    """The documents of the release's newest revision, read from its Secret (Helm's default
    storage). A forbidden read is one line pointing at `helm get manifest | ... -f -`."""
    from kubectl_terminating.client import Client

    assert isinstance(client, Client)
    path = f"/api/v1/namespaces/{namespace}/secrets"
    selector = f"owner=helm,name={release}"
    try:
        found = client.get(path, {"labelSelector": selector})
    except Forbidden:
        raise ConfigError(
            f"cannot read the release Secrets of {release} in {namespace} (forbidden); run: "
            f"helm get manifest {release} -n {namespace} | kubectl terminating preflight -f -"
        ) from None
    except TerminatingError:
        raise
    secrets = [
        as_dict(s)
        for s in found.get("items") or []
        if text(as_dict(s).get("type")) == RELEASE_SECRET_TYPE
    ]
    if not secrets:
        raise ConfigError(f'release "{release}" not found in namespace {namespace}')
    newest = max(
        secrets, key=lambda s: _revision(text(as_dict(meta(s).get("labels")).get("version")))
    )
    manifest = decode_release(text(as_dict(newest.get("data")).get("release")))
    return tuple(_load_all(manifest, f"release {release}"))
