"""Files from someone else (--from-file): bounded memory, one clear line, never a traceback.

A support engineer reads a customer's bundle or a JSON pasted in a ticket: the tool must
survive gzip bombs, nesting deeper than Python recurses, bytes that are not UTF-8, objects
whose identity has the wrong types, duplicate keys and folders with broken files. The two
cases of the issue first, then each kind of damage, then a fuzz test over file shapes.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from kubectl_terminating.bounded import DEFAULT_MAX_BYTES, MB, TooLarge, parse_size, read_capped
from kubectl_terminating.cli import cli
from kubectl_terminating.commands import run
from kubectl_terminating.errors import ConfigError
from kubectl_terminating.options import Options
from kubectl_terminating.snapshot import (
    SNAPSHOT_API_VERSION,
    SNAPSHOT_KIND,
    SNAPSHOT_LIST_KIND,
    load,
)
from tests.profiles import examples
from tests.unit.builders import FIXTURES, run_captured
from tests.unit.test_properties import STRATEGIES, anything, mutated_world, timestamp

LIST_HEAD = b'{"kind":"List","apiVersion":"v1","items":['


def gzip_bomb(expanded_mb: int, head: bytes = LIST_HEAD, tail: bytes = b"]}") -> bytes:
    """head, expanded_mb MB of spaces, tail, gzipped (one deflate stream) in about 1 KB per
    MB: each MB is compressed once, after a full flush, and its bytes repeated."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    spaces = b" " * MB
    first = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(spaces) + deflate.flush(zlib.Z_FULL_FLUSH)
    last = deflate.compress(tail) + deflate.flush()
    crc = zlib.crc32(head)
    for _ in range(expanded_mb):
        crc = zlib.crc32(spaces, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + expanded_mb * MB + len(tail)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = crc.to_bytes(4, "little") + (size % 2**32).to_bytes(4, "little")
    return header + first + block * expanded_mb + last + trailer


def peak_memory(action: Callable[[], Any]) -> tuple[Any, int]:
    """action's result and the most memory Python held while it ran (tracemalloc)."""
    tracemalloc.start()
    try:
        return action(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def pod(name: str, **fields: Any) -> dict[str, Any]:
    metadata = {"name": name, "namespace": "shop", "deletionTimestamp": "2026-03-01T11:00:00Z"}
    return {"kind": "Pod", "apiVersion": "v1", "metadata": metadata, **fields}


def one_error_line(err: str) -> bool:
    return err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err


# -- the two cases of the issue ------------------------------------------------------------------


@pytest.mark.slow
def test_a_600_kb_gzip_bomb_is_refused_while_decompressing(tmp_path: Path) -> None:
    """600 KB that expand to 600 MB of whitespace inside a List: refused at the 500 MB cap,
    never holding more than the cap (it took 1.2 GB and said "no Kubernetes objects")."""
    path = tmp_path / "bundle.json.gz"
    path.write_bytes(gzip_bomb(600))
    assert path.stat().st_size < 700_000
    assert len(gzip.decompress(gzip_bomb(3))) == 3 * MB + len(LIST_HEAD) + 2  # a valid gzip
    (code, out, err), peak = peak_memory(lambda: run_captured("namespaces", from_file=str(path)))
    assert (code, out) == (1, "")
    assert err == f"error: {path} expands beyond 500 MB; --max-file-size to allow more\n"
    assert peak < DEFAULT_MAX_BYTES * 1.2


def test_100000_nested_brackets_are_one_line(tmp_path: Path) -> None:
    """200 KB of `[` ended in a RecursionError traceback."""
    for content in ("[" * 100_000, '{"kind": "List", "items": [' + "[" * 100_000 + "]" * 100_000):
        path = tmp_path / "deep.json"
        path.write_text(content)
        code, out, err = run_captured(from_file=str(path))
        assert (code, out) == (1, "")
        assert err == f"error: cannot read {path}: the JSON is nested too deeply\n"
    result = CliRunner().invoke(cli, ["pods", "--from-file", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # not an error


# -- the cap ---------------------------------------------------------------------------------------


def test_the_cap_holds_for_plain_files_and_is_raised_by_the_flag(tmp_path: Path) -> None:
    pods = [pod(f"web-{i}", spec={"nodeName": "x" * 1000}) for i in range(1500)]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": pods}))
    assert 1 * MB < path.stat().st_size < 2 * MB
    code, _, err = run_captured(from_file=str(path), max_file_size="1")
    assert (
        code == 1 and err == f"error: {path} expands beyond 1 MB; --max-file-size to allow more\n"
    )
    code, out, err = run_captured(from_file=str(path), max_file_size="2M", output="name")
    assert code == 0 and out.count("\n") == 1500, err


def test_the_cap_holds_for_a_folder_as_a_whole(tmp_path: Path) -> None:
    for index in range(3):
        pods = [pod(f"web-{index}-{i}", spec={"nodeName": "x" * 1000}) for i in range(400)]
        (tmp_path / f"pods-{index}.json").write_text(json.dumps({"kind": "PodList", "items": pods}))
    code, _, err = run_captured(from_file=str(tmp_path), max_file_size="1")
    assert code == 1
    assert err == f"error: {tmp_path} expands beyond 1 MB; --max-file-size to allow more\n"
    code, out, _ = run_captured(from_file=str(tmp_path), max_file_size="2", output="name")
    assert code == 0 and out.count("\n") == 1200


@pytest.mark.parametrize(
    ("text", "size"),
    [("500", 500 * MB), ("800M", 800 * MB), ("1Gi", 2**30), ("1.5G", 1500 * MB), ("64Ki", 65536)],
)
def test_max_file_size_takes_quantities_or_mb(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "argv", [["--max-file-size", "1G"], ["--from-file", "x", "--max-file-size", "1GB"]]
)
def test_max_file_size_usage_errors(argv: list[str]) -> None:
    result = CliRunner().invoke(cli, ["pods", *argv])
    assert result.exit_code == 2
    assert "--max-file-size" in result.output


def test_the_reader_is_for_any_stream() -> None:
    """The node proxy's answers are read the same way, with their own hint."""
    packed = gzip.compress(b"a" * 3000) + gzip.compress(b"b" * 3000) + b"\x00" * 8
    assert read_capped(io.BytesIO(packed), 6000, "answer") == b"a" * 3000 + b"b" * 3000
    with pytest.raises(TooLarge, match="^answer expands beyond 0.005 MB; only the tail is read$"):
        read_capped(io.BytesIO(packed), 5000, "answer", hint="only the tail is read")
    for broken in (packed[:-20], packed[:-8] + b"xx", b"\x1f\x8b" + b"\x00" * 30):
        with pytest.raises(ConfigError, match="gzip data is truncated or corrupt"):
            read_capped(io.BytesIO(broken), 10**6, "answer")


# -- malformed input: one line, or what could be read and a warning naming the rest ----------------


def test_wrong_types_in_an_objects_identity_skip_it_by_name(tmp_path: Path) -> None:
    items = [
        pod("good-0"),
        {"kind": "Pod", "metadata": "web-1"},
        pod("odd-2", status=["Running"], spec="none"),
        42,
        {"kind": "Pod", "metadata": {"name": 7, "deletionTimestamp": "2026-03-01T11:00:00Z"}},
        {"kind": "Pod", "metadata": {"name": "odd-5", "deletionTimestamp": 1772362800}},
    ]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": items}))
    code, out, err = run_captured(from_file=str(path), output="json")
    assert code == 0, err
    assert sorted(i["name"] for i in json.loads(out)["items"]) == ["good-0", "odd-2", "odd-5"]
    assert (
        f"Warning: skipped 3 entries that are not a Kubernetes object: {path} items[1] "
        f"(metadata is a string, not an object), {path} items[3] (a number, not an object), "
        f"{path} items[4] (metadata.name is a number, not a string)\n"
    ) in err
    assert "internal error" not in err


def test_a_file_with_no_object_says_why(tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text(json.dumps({"kind": "Pod", "metadata": ["web-0"]}))
    code, _, err = run_captured(from_file=str(path))
    assert code == 1 and one_error_line(err)
    why = "metadata is a list, not an object"
    assert err == f"error: cannot read {path}: no Kubernetes objects in it ({why})\n"


def test_invalid_utf8_is_read_with_a_warning(tmp_path: Path) -> None:
    raw = json.dumps({"kind": "List", "items": [pod("web-0")]}).encode()
    path = tmp_path / "pods.json"
    path.write_bytes(raw.replace(b"web-0", b"web-\xff\xfe0"))
    code, out, err = run_captured(from_file=str(path), output="name")
    assert code == 0 and out == "pod/web-\\ufffd\\ufffd0\n"  # as the table escapes it
    offset = raw.index(b"web-0") + 4
    assert (
        f"Warning: {path}: invalid UTF-8 from byte {offset} on: such bytes are read as U+FFFD\n"
        in err
    )


def test_utf16_as_windows_powershell_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "pods.json"
    path.write_bytes(json.dumps({"kind": "List", "items": [pod("web-0")]}).encode("utf-16"))
    code, out, err = run_captured(from_file=str(path), output="name")
    assert (code, out) == (0, "pod/web-0\n"), err


def test_duplicate_keys_last_wins_with_a_warning(tmp_path: Path) -> None:
    """As Go's encoding/json and the API server (fieldValidation=Warn): the last value."""
    path = tmp_path / "pods.json"
    path.write_text(
        '{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "web-0"}, '
        '"metadata": {"name": "web-0", "namespace": "shop", "deletionTimestamp": '
        '"2026-03-01T11:00:00Z", "name": "web-1"}}]}'
    )
    code, out, err = run_captured(from_file=str(path), output="name")
    assert (code, out) == (0, "pod/web-1\n"), err
    assert (
        f'Warning: {path}: duplicate keys "name", "metadata" in an object: the last value is '
        "used, as the API server does\n"
    ) in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"kind": "List", "items": [NaN]}', "NaN is not a JSON value"),
        (b"[" + b"1" * 5000 + b"]", "a number of more than 4300 digits"),
        (gzip.compress(b"[]")[:-3], "the gzip data is truncated or corrupt"),
        (gzip.compress(b"[]") + b"junk", "the gzip data is truncated or corrupt"),
    ],
    ids=["nan", "long-number", "truncated-gzip", "gzip-and-junk"],
)
def test_more_bad_files_are_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(content)
    code, out, err = run_captured(from_file=str(path))
    assert (code, out) == (1, "") and one_error_line(err) and message in err


def test_a_malformed_snapshot_list_is_read_or_one_line(tmp_path: Path) -> None:
    """A `dump --contexts` file with entries of the wrong type: what can be read is (warnings
    that are not a list are none), else one line; never a traceback."""
    snapshot = json.loads((FIXTURES / "node-evidence" / "full-disk.json").read_text())
    path = tmp_path / "contexts.json"
    head = {"apiVersion": SNAPSHOT_API_VERSION, "kind": SNAPSHOT_LIST_KIND}
    path.write_text(json.dumps({**head, "items": [snapshot], "warnings": 5}))
    code, out, err = run_captured(from_file=str(path))
    assert (code, err) == (0, "") and "app-5" in out
    path.write_text(json.dumps({**head, "items": [{**snapshot, "header": "x"}]}))
    code, out, err = run_captured(from_file=str(path))
    assert (code, out) == (1, "") and one_error_line(err) and "malformed snapshot" in err


def test_a_cluster_info_dump_with_broken_files_gives_the_rest(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "pods.json").write_text(
        json.dumps({"kind": "PodList", "items": [pod("web-0")]})
    )
    (tmp_path / "shop" / "events.json").write_text('{"kind": "EventList", "items": [')
    (tmp_path / "deep.json").write_text("[" * 100_000)
    (tmp_path / "nodes.json").write_bytes(gzip.compress(b'{"kind": "NodeList"}')[:-4])
    code, out, err = run_captured(from_file=str(tmp_path), output="name")
    assert (code, out) == (0, "pod/web-0\n"), err
    deep, nodes = tmp_path / "deep.json", tmp_path / "nodes.json"
    assert f"Warning: cannot read {deep}: the JSON is nested too deeply (skipped)\n" in err
    assert f"Warning: cannot read {nodes}: the gzip data is truncated or corrupt (skipped)\n" in err
    assert (
        f"Warning: cannot read {tmp_path / 'shop' / 'events.json'}: not valid JSON at line 1" in err
    )
    if os.geteuid() != 0:  # root reads any file: an unreadable one only exists for others
        (tmp_path / "shop" / "pods.json").chmod(0)
        code, _, err = run_captured(from_file=str(tmp_path))
        assert code == 1 and "Permission denied (skipped)" in err


# -- fuzz: file shapes ---------------------------------------------------------------------------

CAPS = {"256Ki": 256 * 1024, "1": MB}
identity = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(["Pod", "Namespace", "Event", "Node"]) | anything,
        "apiVersion": st.just("v1") | anything,
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": st.just("web-0") | anything,
                "namespace": st.just("shop") | anything,
                "deletionTimestamp": timestamp | anything,
            },
        )
        | anything,
    },
)
entry = st.one_of(*STRATEGIES.values(), identity, anything)


def json_text(value: Any, draw: st.DrawFn, indent: int | None = None) -> str:
    """value as JSON; its NaN and Infinity floats (not JSON: refused) mostly made null."""
    text = json.dumps(value, indent=indent)
    if not sometimes(draw):
        for word in ("-Infinity", "Infinity", "NaN"):
            text = text.replace(word, "null")
    return text


@st.composite
def documents(draw: st.DrawFn) -> str:
    """The JSON text of a file: a List, several documents, a dump bundle, nested deep."""
    # a realistic cluster (the explainer tests' fixtures) with fields of any type, or odd
    # objects drawn from nothing
    items = draw(mutated_world().map(lambda w: w.objects) | st.lists(entry, max_size=6))
    shape = draw(st.sampled_from(["list", "typed-list", "documents", "bundle", "nested"]))
    if shape == "documents":
        indent = draw(st.sampled_from([None, 2]))
        return "\n".join(json_text(i, draw, indent) for i in items)
    if shape == "bundle":
        bundle: dict[str, Any] = {
            "apiVersion": SNAPSHOT_API_VERSION,
            "kind": SNAPSHOT_KIND,
            "header": draw(st.fixed_dictionaries({"capturedAt": timestamp}) | anything),
            "objects": items,
            "namespaceContent": draw(
                st.just({})
                | st.just(
                    {
                        "shop": [
                            {
                                "resource": {"version": "v1", "plural": "pods", "kind": "Pod"},
                                "items": items,
                            }
                        ]
                    }
                )
                | anything
            ),
            "discovery": draw(st.just({"resources": []}) | anything),
            "unreadable": draw(st.just({}) | anything),
        }
        return json_text(bundle, draw)
    kind = "PodList" if shape == "typed-list" else "List"
    text = json_text({"kind": kind, "apiVersion": "v1", "items": items}, draw)
    if shape == "nested":  # the items inside arrays of any depth, Python's limit or beyond
        depth = draw(st.sampled_from([1, 50, 900, 3000, 50_000]))
        text = text.replace('"items": [', '"items": [' + "[" * depth, 1)
        text = text[: text.rindex("]")] + "]" * depth + text[text.rindex("]") :]
    return text


def sometimes(draw: st.DrawFn) -> bool:
    return draw(st.integers(0, 3)) == 0


@st.composite
def damaged(draw: st.DrawFn, text: str) -> bytes:
    """text encoded, with duplicate keys, bad bytes, compression and truncation (each now
    and then, so that most files still reach the explainers)."""
    if sometimes(draw):
        text = text.replace('"metadata": ', '"metadata": "dup", "metadata": ', 1)
    raw = text.encode(draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16"])))
    if sometimes(draw) and raw:
        at = draw(st.integers(0, len(raw)))
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]))
        raw = raw[:at] + bad + raw[at:]
    compression = draw(st.sampled_from(["none", "gzip", "members", "bomb"]))
    if compression == "gzip":
        raw = gzip.compress(raw)
    elif compression == "members":
        half = len(raw) // 2
        padding = b"\x00" * draw(st.integers(0, 3))
        raw = gzip.compress(raw[:half]) + gzip.compress(raw[half:]) + padding
    elif compression == "bomb" and sometimes(draw):  # what costs Python most memory per byte
        unit = draw(st.sampled_from([b"{},", b"[],", b'"ab",', b" ", b"1.5,"]))
        count = draw(st.integers(1, 4 * MB)) // len(unit)
        raw = gzip.compress(b"[" + unit * count + b"{}]", compresslevel=1)
    if sometimes(draw):  # truncated in transfer
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


FINALIZED = {
    "kind": "Namespace",
    "apiVersion": "v1",
    "metadata": {
        "name": "shop",
        "deletionTimestamp": "2026-03-01T11:00:00Z",
        "finalizers": [f"example.com/f{i}" for i in range(800)],
    },
    "status": {"phase": "Terminating"},
}


@pytest.fixture(scope="module")
def warmed_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One run of each output first, so that the fuzz test's memory peaks do not count the
    first import of the explainers and renderers."""
    path = tmp_path_factory.mktemp("warm") / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": [pod("web-0")]}))
    for kind, output in (("pods", "json"), ("namespaces", "yaml"), ("all", None)):
        assert run_captured(kind, from_file=str(path), output=output)[0] == 0
    run_captured(from_file=str(path), explain=True)


@settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@example(  # 16 KB that explain to 22 MB of YAML (the run is not bounded by the cap: the read is)
    content=json.dumps({"kind": "List", "items": [FINALIZED]}).encode(),
    kind="namespaces",
    output="yaml",
    cap="256Ki",
)
@given(
    documents().flatmap(damaged),
    st.sampled_from(["pods", "namespaces", "all"]),
    st.sampled_from([None, "json", "yaml", "wide", "explain"]),
    st.sampled_from(sorted(CAPS)),
)
def test_any_file_ends_in_objects_or_one_line(
    warmed_up: None, tmp_path: Path, content: bytes, kind: str, output: str | None, cap: str
) -> None:
    path = tmp_path / "file.json"
    path.write_bytes(content)
    options = Options(
        kind=kind,
        from_file=str(path),
        output=None if output == "explain" else output,
        explain=output == "explain",
        max_file_size=cap,
        color="never",
    )
    out, err = io.StringIO(), io.StringIO()
    code = run(options, out, err)
    errors = err.getvalue()
    # what the examples reached: pytest --hypothesis-show-statistics
    event(f"exit {code}: " + (errors.split(": ")[-1][:30] if code else str(len(out.getvalue()))))
    assert code in (0, 1), errors
    assert "Traceback" not in errors and "internal error" not in errors, errors
    if code == 1:
        assert one_error_line(errors) and out.getvalue() == "", errors
    # The cap bounds the read and what it decodes to (the worst JSON, `{},` repeated, costs
    # Python 24 bytes per byte; real files 8), not the explaining: 400 finalizers in 8 KB
    # explain to more than 32 times the bytes.
    peak = peak_memory(lambda: loaded_or_error(path, CAPS[cap]))[1]
    assert peak < 32 * CAPS[cap] + 4 * MB, (peak, errors)


def loaded_or_error(path: Path, cap: int) -> None:
    with contextlib.suppress(ConfigError):
        load(str(path), cap)
