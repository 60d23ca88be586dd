"""`kubectl terminating dump`: record what the diagnosis reads, for `--from-file` elsewhere."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from kubectl_terminating.connection import connected, guarded
from kubectl_terminating.errors import ExitStatus
from kubectl_terminating.options import Options, Request, complete

if TYPE_CHECKING:
    from kubectl_terminating.client import Client


def run_dump(options: Options, path: str, err: IO[str] | None = None) -> int:
    stderr = err or sys.stderr
    return guarded(lambda: _run(options, path, stderr), stderr)


def _run(options: Options, path: str, err: IO[str]) -> int:
    with connected(options, err) as client:
        return _dump(complete(options, client.connection.namespace), client, path, err)


def _dump(request: Request, client: Client, path: str, err: IO[str]) -> int:
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.render.style import safe
    from kubectl_terminating.run import collect, print_problems
    from kubectl_terminating.snapshot import (
        Capture,
        RecordingView,
        bundle,
        dump_size_note,
        header,
        write_bundle,
    )
    from kubectl_terminating.source import Scope

    capture = Capture()
    source = LiveSource(client)
    source.view = RecordingView(source.live, capture)
    # The explainers' reads are what make the snapshot complete: `all` runs them all, each
    # object isolated as in any run (one that cannot be explained is still saved, with a
    # warning), and the terminating objects themselves are kept as they are found.
    result = collect(request, source, err, on_found=lambda pair: capture.add(pair[1], pair[0]))
    version = str(client.get("/version").get("gitVersion", "unknown"))
    scope = Scope(request.namespace, (), request.options.selector)
    data = bundle(capture, header(source.live.now, version, client.connection.context, scope))
    size = write_bundle(path, data)
    print_problems(result, err)
    print(
        f"saved {len(capture.objects)} objects for {len(result.findings)} terminating objects "
        f"to {safe(path)} ({dump_size_note(size)}); Secret and ConfigMap data not included",
        file=err,
    )
    return ExitStatus.OK
