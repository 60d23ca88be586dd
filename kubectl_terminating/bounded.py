"""Reading what someone else wrote (snapshots, node proxy answers) with bounded memory.

Input from elsewhere is hostile until read: a 600 KB gzip file can expand to 600 MB, a 200 KB
file of `[` can exhaust Python's recursion. Everything here ends in data or in one
`ConfigError` line, never in a traceback or in memory growing with what the input claims.

API (stdlib only, cheap to import):

- `MB`, `DEFAULT_MAX_BYTES`: the default cap on an expanded snapshot (500 MB: the measured
  `dump` bundle of a 50,000-pod cluster in a mass outage of 20,000 stuck pods is 274 MB;
  `hack/snapshot_size.py` writes one).
- `parse_size(text) -> int`: `--max-file-size` values: a Kubernetes quantity (`800M`, `1Gi`,
  `1.5G`) or a bare number of MB (`800`); ValueError otherwise.
- `megabytes(n) -> str`: n bytes as the MB figure the error lines print.
- `read_capped(stream, limit, name, hint) -> bytearray`: all of a binary stream (a file, an
  HTTP response with `.read(n)`), gunzipped on the fly when it starts with gzip's magic bytes
  (several members, as `gzip -c a b`, are read in turn). The size is checked while reading
  and decompressing, one chunk at a time: past `limit` expanded bytes it raises `TooLarge`
  (`NAME expands beyond N MB; HINT`) holding at most `limit` + one chunk. A truncated or
  corrupt gzip stream is `ConfigError("cannot read NAME: ...")`.
- `read_file(path, limit, hint) -> bytearray`: `read_capped` on a file; OSError becomes
  `cannot read PATH: <reason>`.
- `json_documents(data, name) -> Decoded`: every JSON document in data (kubectl prints
  several back to back). The encoding is found as `json.loads` finds it (UTF-8 with or
  without BOM, UTF-16/32 as PowerShell's `>` writes); invalid bytes are replaced by U+FFFD
  with a warning naming the first offset. Duplicate keys: the last value wins, as in Go's
  encoding/json and the API server (which, with its default `fieldValidation=Warn`, also
  keeps the last and warns): so a warning names them. Nesting deeper than Python's
  recursion allows, invalid JSON (NaN and Infinity included, as in Go), integers too long
  for Python and running out of memory are one ConfigError line each.
  `data` is emptied once decoded to text, so that its memory is free for the objects.
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kubectl_terminating.errors import ConfigError

MB = 1000 * 1000
DEFAULT_MAX_BYTES = 500 * MB
FLAG_HINT = "--max-file-size to allow more"
CHUNK = 1 << 20  # read and decompressed per step: the most the cap can be overshot by
GZIP_MAGIC = b"\x1f\x8b"
SHOWN = 3  # duplicate keys named in the warning

_WHITESPACE = re.compile(r"\s*")  # between documents, as str.isspace
_QUANTITY = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kMGT]i?|Ki)?\s*")
_UNITS = {
    None: MB,
    "k": 1000,
    "M": MB,
    "G": 1000 * MB,
    "T": 1000 * 1000 * MB,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
}


class Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class TooLarge(ConfigError):
    """The input expands beyond the cap."""

    def __init__(self, name: str, limit: int, hint: str = FLAG_HINT) -> None:
        super().__init__(f"{name} expands beyond {megabytes(limit)} MB; {hint}")
        self.name, self.limit, self.hint = name, limit, hint


def parse_size(text: str) -> int:
    """Bytes of a `--max-file-size` value: a quantity (`800M`, `1Gi`) or a number of MB."""
    match = _QUANTITY.fullmatch(text)
    if match is None or match.group(2) not in _UNITS:
        raise ValueError(f'invalid size "{text}": use a number of MB or a quantity like 1Gi')
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    if size <= 0:
        raise ValueError(f'invalid size "{text}": it must be more than 0')
    return size


def megabytes(size: int) -> str:
    """`500`, `1073.742`, `0.005`."""
    return f"{size / MB:.3f}".rstrip("0").rstrip(".")


def _corrupt(name: str) -> ConfigError:
    return ConfigError(f"cannot read {name}: the gzip data is truncated or corrupt")


def _inflate(member: Any, data: bytes) -> Iterator[bytes]:
    """What data expands to, CHUNK bytes at a time (zlib keeps the rest of the input)."""
    piece = member.decompress(data, CHUNK)
    while piece:
        yield piece
        if member.eof:
            return
        piece = member.decompress(member.unconsumed_tail, CHUNK)


def _gunzip(stream: Readable, data: bytes, name: str) -> Iterator[bytes]:
    """The expanded bytes of a gzip stream whose first bytes are data, CHUNK at a time."""
    member = zlib.decompressobj(wbits=31)
    while True:
        if not data:
            data = stream.read(CHUNK)
            if not data:
                break
        if member.eof:
            # another member (`cat a.gz b.gz`) or the zero padding some tools add
            data = data.lstrip(b"\x00")
            if not data:
                continue
            member = zlib.decompressobj(wbits=31)
        try:
            yield from _inflate(member, data)
        except zlib.error:
            raise _corrupt(name) from None
        data = member.unused_data if member.eof else b""
    if not member.eof:
        raise _corrupt(name)


def _chunks(stream: Readable, data: bytes) -> Iterator[bytes]:
    while data:
        yield data
        data = stream.read(CHUNK)


def read_capped(stream: Readable, limit: int, name: str, hint: str = FLAG_HINT) -> bytearray:
    """All of stream, gunzipped if it is gzip, or TooLarge past limit bytes (see the module's
    docstring)."""
    out = bytearray()
    first = stream.read(CHUNK)
    pieces = _gunzip(stream, first, name) if first[:2] == GZIP_MAGIC else _chunks(stream, first)
    for piece in pieces:
        if len(out) + len(piece) > limit:
            raise TooLarge(name, limit, hint)
        out += piece
    return out


def read_file(path: str | Path, limit: int, hint: str = FLAG_HINT) -> bytearray:
    """All of the file at path (gunzipped), or ConfigError: cannot read / TooLarge."""
    try:
        with open(path, "rb") as stream:
            return read_capped(stream, limit, str(path), hint)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


@dataclass
class Decoded:
    documents: list[Any]
    warnings: list[str] = field(default_factory=list)


def _text(data: bytearray, name: str, warnings: list[str]) -> str:
    encoding = json.detect_encoding(bytes(data[:4]))
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        warnings.append(
            f"{name}: invalid {exc.encoding.upper()} from byte {exc.start} on: "
            "such bytes are read as U+FFFD"
        )
        return data.decode(encoding, "replace")


def json_documents(data: bytearray, name: str) -> Decoded:
    """Every JSON document in data, or ConfigError (see the module's docstring)."""
    warnings: list[str] = []
    try:
        text = _text(data, name, warnings)
        data.clear()
        duplicates: dict[str, None] = {}

        def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(pairs)
            if len(obj) != len(pairs):
                seen: set[str] = set()
                for key, _ in pairs:
                    if key in seen:
                        duplicates[key] = None
                    seen.add(key)
            return obj

        def constant(word: str) -> Any:
            raise ConfigError(f"cannot read {name}: {word} is not a JSON value")

        decoder = json.JSONDecoder(object_pairs_hook=pairs_hook, parse_constant=constant)
        documents = list(_documents(decoder, text, name))
    except RecursionError:
        raise ConfigError(f"cannot read {name}: the JSON is nested too deeply") from None
    except MemoryError:
        raise ConfigError(f"cannot read {name}: not enough memory to decode it") from None
    if duplicates:
        keys = ", ".join(f'"{k}"' for k in list(duplicates)[:SHOWN])
        more = f" and {len(duplicates) - SHOWN} more" if len(duplicates) > SHOWN else ""
        warnings.append(
            f"{name}: duplicate keys {keys}{more} in an object: the last value is used, as "
            "the API server does"
        )
    return Decoded(documents, warnings)


def _documents(decoder: json.JSONDecoder, text: str, name: str) -> Iterator[Any]:
    index, end = 0, len(text)
    while True:
        space = _WHITESPACE.match(text, index)
        index = space.end() if space else index
        if index >= end:
            return
        try:
            document, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"cannot read {name}: not valid JSON at line {exc.lineno} column {exc.colno}"
                + (" (truncated?)" if exc.pos >= end - 1 else "")
            ) from None
        except ValueError:  # the only other one: an integer too long for int()
            raise ConfigError(
                f"cannot read {name}: a number of more than {sys.get_int_max_str_digits()} digits"
            ) from None
        yield document


__all__ = [
    "DEFAULT_MAX_BYTES",
    "MB",
    "Decoded",
    "TooLarge",
    "json_documents",
    "megabytes",
    "parse_size",
    "read_capped",
    "read_file",
]
