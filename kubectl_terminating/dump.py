"""`kubectl terminating dump`: record what the diagnosis reads, for `--from-file` elsewhere."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from kubectl_terminating.errors import TerminatingError
from kubectl_terminating.options import Options
from kubectl_terminating.run import connect, error_line, report_stats

if TYPE_CHECKING:
    from kubectl_terminating.client import Client


def run_dump(options: Options, path: str, err: IO[str] | None = None) -> int:
    err = err or sys.stderr
    try:
        client = connect(options, err)
        try:
            return _dump(options, client, path, err)
        finally:
            report_stats(options, client, err)
    except TerminatingError as error:
        print(error_line(error), file=err)
        return error.exit_code


def _dump(options: Options, client: Client, path: str, err: IO[str]) -> int:
    from kubectl_terminating.explain.objects import explain_object
    from kubectl_terminating.find import Scope, find_all
    from kubectl_terminating.live import LiveView
    from kubectl_terminating.render.style import safe
    from kubectl_terminating.resources import NAMESPACES
    from kubectl_terminating.snapshot import (
        Capture,
        RecordingView,
        bundle,
        dump_size_note,
        header,
        write_bundle,
    )

    namespace = None if options.all_namespaces else client.connection.namespace
    scope = Scope(namespace, (), options.selector)
    live = LiveView(client)
    capture = Capture()
    recorder = RecordingView(live, capture)
    objects, warnings = find_all(client, recorder, scope)
    live.expect_content([obj for resource, obj in objects if resource == NAMESPACES])
    for resource, obj in objects:
        capture.add(obj, resource)
    # The explainers' reads are what make the snapshot complete: run them all.
    client.map(lambda pair: explain_object(pair[1], pair[0], recorder), objects)
    version = str(client.get("/version").get("gitVersion", "unknown"))
    data = bundle(capture, header(live.now, version, client.connection.context, scope))
    size = write_bundle(path, data)
    for warning in warnings:
        print(f"Warning: {safe(warning)}", file=err)
    print(
        f"saved {len(capture.objects)} objects for {len(objects)} terminating objects to "
        f"{safe(path)} ({dump_size_note(size)}); Secret and ConfigMap data not included",
        file=err,
    )
    return 0
