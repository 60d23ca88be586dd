"""`kubectl terminating dump`: record what the diagnosis reads, for `--from-file` elsewhere."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from kubectl_terminating.connection import connected, guarded
from kubectl_terminating.model import JSON
from kubectl_terminating.options import Options, Request, complete

if TYPE_CHECKING:
    from kubectl_terminating.client import Client


def run_dump(options: Options, path: str, err: IO[str] | None = None) -> int:
    stderr = err or sys.stderr
    return guarded(lambda: _run(options, path, stderr), stderr)


def _run(options: Options, path: str, err: IO[str]) -> int:
    if options.fleet:  # several contexts: one file, a snapshot per context
        from kubectl_terminating.fleet import dump_fleet

        return dump_fleet(options, path, err)
    with connected(options, err) as client:
        return _dump(complete(options, client.connection.namespace), client, path, err)


def _dump(request: Request, client: Client, path: str, err: IO[str]) -> int:
    data, warnings, found = capture(request, client)
    save(path, data, warnings, (len(data["objects"]), found), err)
    return 0


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


def capture(request: Request, client: Client) -> tuple[JSON, list[str], int]:
    """The snapshot bundle of what the request covers, the warnings of the search and how
    many terminating objects it holds."""
    from kubectl_terminating.explain.objects import explain_object
    from kubectl_terminating.find import find_all
    from kubectl_terminating.live import LiveView
    from kubectl_terminating.resources import NAMESPACES
    from kubectl_terminating.snapshot import Capture, RecordingView, bundle, header
    from kubectl_terminating.source import Scope

    scope = Scope(request.namespace, (), request.options.selector)
    live = LiveView(client)
    recorded = Capture()
    recorder = RecordingView(live, recorded)
    objects, warnings = find_all(client, recorder, scope)
    live.expect_content([obj for resource, obj in objects if resource == NAMESPACES])
    for resource, obj in objects:
        recorded.add(obj, resource)
    # The explainers' reads are what make the snapshot complete: run them all.
    client.map(lambda pair: explain_object(pair[1], pair[0], recorder), objects)
    version = str(client.get("/version").get("gitVersion", "unknown"))
    data = bundle(recorded, header(live.now, version, client.connection.context, scope))
    return data, warnings, len(objects)
