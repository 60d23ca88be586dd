"""`kubectl terminating dump`: record what the diagnosis reads, for `--from-file` elsewhere."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from kubectl_terminating.connection import connected, guarded
from kubectl_terminating.errors import ExitStatus
from kubectl_terminating.model import JSON
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
    data, warnings, found = capture(request, client, err)
    save(path, data, warnings, (len(data["objects"]), found), err)
    return ExitStatus.OK


def save(
    path: str,
    data: JSON,
    warnings: list[str],
    counts: tuple[int, int],
    err: IO[str],
    where: str = "",
) -> None:
    """Write the bundle, then its warnings and what it holds (counts: objects saved,
    terminating objects) on err; where: ` in N contexts` for a fleet dump."""
    from kubectl_terminating.render.style import safe
    from kubectl_terminating.snapshot import dump_size_note, write_bundle

    size = write_bundle(path, data)
    for warning in warnings:
        print(f"Warning: {safe(warning)}", file=err)
    print(
        f"saved {counts[0]} objects for {counts[1]} terminating objects{where} to "
        f"{safe(path)} ({dump_size_note(size)}); Secret and ConfigMap data not included",
        file=err,
    )


def capture(request: Request, client: Client, err: IO[str]) -> tuple[JSON, list[str], int]:
    """The snapshot bundle of what the request covers, its warnings and how many terminating
    objects it holds."""
    from kubectl_terminating.live import LiveSource
    from kubectl_terminating.run import collect, problems
    from kubectl_terminating.snapshot import Capture, RecordingView, bundle, header
    from kubectl_terminating.source import Scope

    recorded = Capture()
    source = LiveSource(client)
    source.view = RecordingView(source.live, recorded)
    # The explainers' reads are what make the snapshot complete: `all` runs them all, each
    # object isolated as in any run (one that cannot be explained is still saved, with a
    # warning), and the terminating objects themselves are kept as they are found.
    result = collect(request, source, err, on_found=lambda pair: recorded.add(pair[1], pair[0]))
    version = str(client.get("/version").get("gitVersion", "unknown"))
    scope = Scope(request.namespace, (), request.options.selector)
    data = bundle(recorded, header(source.live.now, version, client.connection.context, scope))
    if request.options.node_evidence:  # only the lines about the stuck pods (nodeproxy.py)
        data["nodeEvidence"] = {n: e.to_json() for n, e in source.node_evidence_read.items()}
    return data, problems(result), len(result.findings)
