"""A file is parsed as it is read (bounded.read_json): memory grows with the objects, not the
bytes. Whitespace that only takes room is never held, whatever chunk it falls in; what the
documents hold (strings of spaces included) comes out as json.loads reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_terminating.bounded import CHUNK, MB, RUN, json_documents, read_file, read_json
from tests.unit.test_hostile_files import LIST_HEAD, gzip_bomb, peak_memory

SPACE = " " * RUN
LINES = "\n" * (RUN + 1)
POD = {"kind": "Pod", "metadata": {"name": 'web-"0"\\', "annotations": {"a": "x" + SPACE}}}


def documents(path: Path, content: str) -> list[object]:
    path.write_text(content)
    decoded = read_json(path, 100 * MB)
    assert decoded.size == len(content.encode())
    return decoded.documents


@pytest.mark.parametrize(
    "content",
    [
        SPACE + json.dumps(POD) + LINES,  # before and after
        '{"kind":' + SPACE + '"Pod",' + LINES + '"metadata": {"name": "a"}}',  # between tokens
        json.dumps(POD) + SPACE + "\t" + SPACE + json.dumps(POD),  # between documents
        '["' + SPACE + '", "\\"' + SPACE + '\\\\", ' + SPACE + '"' + SPACE + '"]',  # in strings
    ],
    ids=["around", "between-tokens", "between-documents", "in-strings"],
)
def test_long_whitespace_is_dropped_outside_strings_only(tmp_path: Path, content: str) -> None:
    decoder = json.JSONDecoder()
    expected, index = [], 0
    while index < len(content.rstrip()):
        index += len(content[index:]) - len(content[index:].lstrip())
        document, index = decoder.raw_decode(content, index)
        expected.append(document)
    assert documents(tmp_path / "f.json", content) == expected


def test_runs_and_strings_across_chunks_read_as_json_loads_reads_them(tmp_path: Path) -> None:
    """A run that starts in one chunk and ends in the next is one run; a string whose escaped
    quote or backslash falls on a chunk's edge keeps the count of quotes right."""
    for shift in range(-3, 4):
        head = '{"pad": "' + "x" * (CHUNK - 20 + shift) + '\\\\\\"'
        content = head + SPACE + '", "after":' + SPACE * 3 + '"' + SPACE + '"}'
        assert documents(tmp_path / "f.json", content) == [json.loads(content)], shift
    content = "[1," + " " * (CHUNK - 3) + SPACE + "2]"
    assert documents(tmp_path / "f.json", content) == [[1, 2]]


def test_invalid_bytes_are_named_by_their_offset_in_any_chunk(tmp_path: Path) -> None:
    raw = b'["' + "\u00e9".encode() * (CHUNK // 2 + 7) + b'", "web-\xff0"]'
    path = tmp_path / "f.json"
    path.write_bytes(raw)
    decoded = read_json(path, 100 * MB)
    assert decoded.documents == json_documents(bytearray(raw), str(path)).documents
    offset = raw.index(b"\xff")
    assert decoded.warnings == [
        f"{path}: invalid UTF-8 from byte {offset} on: such bytes are read as U+FFFD"
    ]


def test_utf16_and_a_bom_decode_across_chunks(tmp_path: Path) -> None:
    document = {"kind": "List", "items": [{"name": "w\u00e9b-" + "x" * CHUNK}]}
    for encoding in ("utf-16", "utf-8-sig", "utf-32-be"):
        path = tmp_path / f"{encoding}.json"
        path.write_bytes(json.dumps(document, ensure_ascii=False).encode(encoding))
        assert read_json(path, 100 * MB).documents == [document], encoding


def test_spaces_inside_a_document_cost_no_memory(tmp_path: Path) -> None:
    """40 MB of whitespace around one small object: today's decoder held all of it twice."""
    path = tmp_path / "padded.json"
    with path.open("w") as out:
        out.write('{"kind": "List",')
        for _ in range(40):
            out.write(" " * (MB // 2) + "\n" * (MB // 2))
        out.write('"items": []}')
    decoded, peak = peak_memory(lambda: read_json(path, 100 * MB))
    assert decoded.documents == [{"kind": "List", "items": []}]
    assert peak < 8 * CHUNK, peak  # a few chunks in flight; whole, it held 80 MB


def test_a_real_bundle_needs_no_more_than_the_whole_file_decoder(tmp_path: Path) -> None:
    """hack/snapshot_size.py's bundle, small: the streaming read's peak is no higher than
    reading the file whole and decoding it (the 274 MB bundle: docs/performance.md)."""
    from hack.snapshot_size import dump_bundle

    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(dump_bundle(400, 200), separators=(",", ":"), sort_keys=True))
    # each once before measuring: a module imported on first use is not the read's memory
    # (in a pytest-xdist worker this file may run before anything imported them)
    read_json(path, 100 * MB)
    json_documents(read_file(path, 100 * MB), "x")
    streamed, new = peak_memory(lambda: read_json(path, 100 * MB).documents)
    whole, old = peak_memory(lambda: json_documents(read_file(path, 100 * MB), "x").documents)
    assert streamed == whole
    # the two peaks are within 0.1% of each other (~16 MB here): what else the worker's
    # process holds moves either by a few kB, so "no more" allows 1%; a streaming read that
    # kept the file whole besides its objects would be 2.7 MB (17%) over
    assert new <= old * 1.01, (new, old)


# VmHWM, not ru_maxrss: that one keeps the forking pytest's peak across exec
BOMB_RUN = """
import sys
from kubectl_terminating.cli import main
sys.argv = ["kubectl-terminating", "pods", "--from-file", sys.argv[1]]
try:
    main()
finally:
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(peak // 1024)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("head", "tail"), [(b"", b""), (LIST_HEAD, b"]}")], ids=["bare", "list"])
def test_a_1500_mb_whitespace_bomb_ends_in_one_line_under_100_mb(
    tmp_path: Path, head: bytes, tail: bytes
) -> None:
    """1.5 GB of whitespace (gzipped: 1.5 MB), alone or inside a List: the cap's one line at
    500 MB read, the process's peak RSS under 100 MB (it was 510 MB)."""
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip_bomb(1500, head, tail))
    proc = subprocess.run(
        [sys.executable, "-c", BOMB_RUN, str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr == f"error: {path} expands beyond 500 MB; --max-file-size to allow more\n"
    assert int(proc.stdout) < 100, proc.stdout


def test_a_run_of_backslashes_as_long_as_a_space_run_keeps_its_escape_across_chunks(
    tmp_path: Path,
) -> None:
    """RUN + 1 backslashes ending on a chunk's edge: the last escapes the quote that starts the
    next chunk, so the spaces after it are still inside the string and kept."""
    backslashes = "\\" * (RUN + 1)
    head = '{"a": "' + "p" * (CHUNK - 7 - len(backslashes)) + backslashes
    content = head + '"' + SPACE + 'x"}'
    assert len(head) == CHUNK
    assert documents(tmp_path / "f.json", content) == [json.loads(content)]
