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
- `read_json(path, limit, hint) -> Decoded`: every JSON document in the file (gunzipped,
  capped as `read_file`), parsed as it is read: the bytes are decoded to text one chunk at a
  time and never held whole, whitespace before the first document is dropped and any run of
  `RUN` or more whitespace characters outside strings is kept as one, so that memory grows
  with what the documents hold, not with the file (a 1.5 GB whitespace bomb ends at the cap
  in a few MB). `Decoded.size` is the expanded bytes read, for a cap shared by several files.
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

import codecs
import itertools
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
_SPACES = re.compile(r"[ \t\n\r]*")  # JSON's whitespace (str.strip with chars is 10x slower)
RUN = 1 << 16  # whitespace this long is no indentation: kept as one character outside strings
# tried only where a run starts (the look-behind): from inside a run each try would rescan it
_LONG_SPACE = re.compile(rf"(?<![ \t\n\r])[ \t\n\r]{{{RUN},}}")
_QUOTES = re.compile(r'\\.|"', re.DOTALL)  # an escape pair, or a quote that opens or closes
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


def _capped(stream: Readable, limit: int, name: str, hint: str) -> Iterator[bytes]:
    """stream's bytes (gunzipped), CHUNK at a time, or TooLarge once past limit in all."""
    first = stream.read(CHUNK)
    pieces = _gunzip(stream, first, name) if first[:2] == GZIP_MAGIC else _chunks(stream, first)
    total = 0
    for piece in pieces:
        total += len(piece)
        if total > limit:
            raise TooLarge(name, limit, hint)
        yield piece


def read_capped(stream: Readable, limit: int, name: str, hint: str = FLAG_HINT) -> bytearray:
    """All of stream, gunzipped if it is gzip, or TooLarge past limit bytes (see the module's
    docstring)."""
    out = bytearray()
    for piece in _capped(stream, limit, name, hint):
        out += piece
    return out


def _opened(path: str | Path) -> Any:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_file(path: str | Path, limit: int, hint: str = FLAG_HINT) -> bytearray:
    """All of the file at path (gunzipped), or ConfigError: cannot read / TooLarge."""
    with _opened(path) as stream:
        try:
            return read_capped(stream, limit, str(path), hint)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


@dataclass
class Decoded:
    documents: list[Any]
    warnings: list[str] = field(default_factory=list)
    size: int = 0  # expanded bytes read (read_json)


def _end(match: re.Match[str] | None) -> int:
    return match.end() if match else 0


def _without_space(text: str) -> str:
    """text without the JSON whitespace it ends with."""
    body = text.rstrip()  # Unicode's whitespace: JSON's and more
    tail = text[len(body) :]
    return body if _SPACES.fullmatch(tail) else body + tail.rstrip(" \t\n\r")


class _Compacted:
    """A JSON text as its pieces arrive, without the whitespace that only takes room: none
    before the first document, and a run of RUN or more outside strings as one character.
    Whether a run is inside a string is known by counting quotes, from the last run on, only
    when a run is found: text without such runs is not scanned."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.held = ""  # trailing backslashes and whitespace, joined to the next piece
        self.in_string = False
        self.counted = 0  # parts whose quotes were counted

    def _count(self, text: str, start: int = 0, end: int | None = None) -> None:
        quotes = _QUOTES.findall(text, start, len(text) if end is None else end).count('"')
        self.in_string ^= quotes % 2 == 1

    def add(self, piece: str, final: bool = False) -> None:
        text, self.held = self.held + piece, ""
        if not self.parts:
            text = text[_end(_SPACES.match(text)) :]
        # what the next piece may continue: a whitespace run, an escape's backslashes
        body = text if final else _without_space(text).rstrip("\\")
        if len(text) - len(body) < RUN:
            self.held, text = text[len(body) :], body
        elif not final and (len(text) - len(text.rstrip("\\"))) % 2:
            # a run of backslashes too long to hold: its odd last one escapes what comes next
            self.held, text = text[-1], text[:-1]
        kept: list[str] = []
        kept_to = counted_to = 0
        for run in _LONG_SPACE.finditer(text):
            for part in self.parts[self.counted :]:
                self._count(part)
            self.counted = len(self.parts)
            self._count(text, counted_to, run.start())
            counted_to = run.end()
            if not self.in_string:
                kept += (text[kept_to : run.start()], "\n" if "\n" in run.group() else " ")
                kept_to = run.end()
        if counted_to:  # this piece was counted up to its last run: count the rest now
            self._count(text, counted_to)
            text = "".join([*kept, text[kept_to:]])
        if text:
            self.parts.append(text)
            self.counted = len(self.parts) if counted_to else self.counted

    def text(self) -> str:
        self.add("", final=True)
        text = "".join(self.parts)
        self.parts.clear()
        return text


def _decoded(chunks: Iterator[bytes], name: str, warnings: list[str]) -> Iterator[str]:
    """The text of chunks, decoded one at a time as `_text` decodes it whole."""
    first = next(chunks, b"")
    decoder = codecs.getincrementaldecoder(json.detect_encoding(first[:4]))("strict")
    offset = 0

    def decode(chunk: bytes, final: bool = False) -> str:
        try:
            return decoder.decode(chunk, final)
        except UnicodeDecodeError as exc:
            start = offset - len(decoder.getstate()[0]) + exc.start
            warnings.append(_invalid(name, exc.encoding, start))
            decoder.errors = "replace"  # from here on, as _text does (the state is kept)
            return decoder.decode(chunk, final)

    for chunk in itertools.chain((first,), chunks):
        yield decode(chunk)
        offset += len(chunk)
    yield decode(b"", final=True)


def read_json(path: str | Path, limit: int, hint: str = FLAG_HINT) -> Decoded:
    """Every JSON document in the file at path, parsed as it is read (see the module's
    docstring), or ConfigError: cannot read / TooLarge / what json_documents says."""
    warnings: list[str] = []
    name = str(path)
    compacted = _Compacted()
    size = 0

    def sized(chunks: Iterator[bytes]) -> Iterator[bytes]:
        nonlocal size
        for chunk in chunks:
            size += len(chunk)
            yield chunk

    with _opened(path) as stream:
        try:
            for piece in _decoded(sized(_capped(stream, limit, name, hint)), name, warnings):
                compacted.add(piece)
            text = compacted.text()
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
        except MemoryError:
            raise _no_memory(name) from None
    decoded = _parsed(text, name, warnings)
    decoded.size = size
    return decoded


def _invalid(name: str, encoding: str, start: int) -> str:
    return f"{name}: invalid {encoding.upper()} from byte {start} on: such bytes are read as U+FFFD"


def _no_memory(name: str) -> ConfigError:
    return ConfigError(f"cannot read {name}: not enough memory to decode it")


def _text(data: bytearray, name: str, warnings: list[str]) -> str:
    encoding = json.detect_encoding(bytes(data[:4]))
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        warnings.append(_invalid(name, exc.encoding, exc.start))
        return data.decode(encoding, "replace")


def json_documents(data: bytearray, name: str) -> Decoded:
    """Every JSON document in data, or ConfigError (see the module's docstring)."""
    warnings: list[str] = []
    try:
        text = _text(data, name, warnings)
    except MemoryError:
        raise _no_memory(name) from None
    data.clear()
    return _parsed(text, name, warnings)


def _parsed(text: str, name: str, warnings: list[str]) -> Decoded:
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

    try:
        decoder = json.JSONDecoder(object_pairs_hook=pairs_hook, parse_constant=constant)
        documents = list(_documents(decoder, text, name))
    except RecursionError:
        raise ConfigError(f"cannot read {name}: the JSON is nested too deeply") from None
    except MemoryError:
        raise _no_memory(name) from None
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
    "read_json",
]
