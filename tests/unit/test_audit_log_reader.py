"""The harness's audit-log reader, fed the way a busy API server writes the log (CI once failed
on a mark that fell inside a line)."""

from tests.harness.controlplane import whole_lines_after

LOG = b'{"a":1}\n{"b":2}\n{"c":3}\n'


def read_from(log: bytes, mark: int) -> list[bytes]:
    return whole_lines_after(log[max(mark - 1, 0) :], mark > 0)


def test_a_mark_between_lines_keeps_every_line_after_it() -> None:
    assert read_from(LOG, 0) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    assert read_from(LOG, len(b'{"a":1}\n')) == [b'{"b":2}', b'{"c":3}']


def test_a_mark_inside_a_line_leaves_that_line_before_it() -> None:
    assert read_from(LOG, 3) == [b'{"b":2}', b'{"c":3}']
    assert read_from(LOG, len(b'{"a":1}')) == [b'{"b":2}', b'{"c":3}']


def test_an_unfinished_last_line_waits_for_the_next_read() -> None:
    assert read_from(LOG + b'{"d":', 0) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    assert read_from(b'{"d":', 0) == []


def test_a_mark_at_the_end_reads_nothing() -> None:
    assert read_from(LOG, len(LOG)) == []
