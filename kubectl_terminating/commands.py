"""What `pods`, `ns`, `all` and `dump` run: one run (run.py, dump.py), or a layer above it
(several contexts: fleet.py; the first table, then its changes: watch.py). Deciding it here
keeps run.py and dump.py unaware of the layers built on them."""

from __future__ import annotations

import sys
from typing import IO

from kubectl_terminating.connection import guarded
from kubectl_terminating.options import Options


def run(options: Options, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    return guarded(lambda: _run(options, out, err), err)


def _run(options: Options, out: IO[str], err: IO[str]) -> int:
    if options.fleet:
        from kubectl_terminating.fleet import run_fleet

        return run_fleet(options, out, err)
    if options.watching:
        from kubectl_terminating.watch import run_watch

        return run_watch(options, out, err)
    if options.from_file:
        from kubectl_terminating.run import run_snapshot
        from kubectl_terminating.snapshot import SnapshotSource

        source = SnapshotSource.open(options.from_file, options.now, options.max_file_bytes)
        if source.loaded.contexts:  # a `dump --contexts` file
            from kubectl_terminating.fleet import run_snapshots

            return run_snapshots(options, source.loaded, out, err)
        return run_snapshot(options, source, out, err)
    from kubectl_terminating.run import run_live

    return run_live(options, out, err)


def dump(options: Options, path: str, err: IO[str] | None = None) -> int:
    stderr = err or sys.stderr
    if options.fleet:  # several contexts: one file, a snapshot per context
        from kubectl_terminating.fleet import dump_fleet

        return guarded(lambda: dump_fleet(options, path, stderr), stderr)
    from kubectl_terminating.dump import run_dump

    return run_dump(options, path, stderr)
