"""Building the report from a live cluster (one context, a client of its own) or a snapshot."""

from __future__ import annotations

from dataclasses import replace
from typing import IO

from kubectl_terminating.connection import connected
from kubectl_terminating.errors import ApiError
from kubectl_terminating.model import JSON
from kubectl_terminating.options import Options
from kubectl_terminating.preflight.api import Target, build_report
from kubectl_terminating.preflight.report import Report

FIRST_ORDERED_MINOR = 33  # KEP-5080: ordered namespace deletion on by default


def snapshot_report(options: Options, path: str, target: Target) -> Report:
    """A snapshot (`kubectl get -o json` of what the deletion touches, a dump): what the file
    lacks is a check not made. Its server's version is unknown: no `certain` from ordered
    namespace deletion."""
    from kubectl_terminating.snapshot import SnapshotSource

    source = SnapshotSource.open(path, options.now, options.max_file_bytes)
    target = replace(
        target, namespace=options.namespace or "default", ordered_namespace_deletion=False
    )
    report = build_report(source.view, target)
    report.unchecked = list(dict.fromkeys([*source.loaded.warnings, *report.unchecked]))
    return report


def live_report(
    options: Options, target: Target, manifest: tuple[JSON, ...], err: IO[str]
) -> Report:
    from kubectl_terminating.live import LiveView, version_numbers
    from kubectl_terminating.preflight.sources import helm_release_manifest

    with connected(options, err) as client:
        namespace = options.namespace or client.connection.namespace or "default"
        # an unknown version gives no `certain` from ordered namespace deletion; a server (or a
        # front) refusing /version leaves it unknown, as the live view says it, not the run dead
        try:
            answer = client.get("/version")
        except ApiError:
            answer = {}
        version = version_numbers(answer)
        if target.release:
            manifest = helm_release_manifest(client, target.release, namespace)
        target = replace(
            target,
            manifest=manifest,
            namespace=namespace,
            ordered_namespace_deletion=version is not None and version >= (1, FIRST_ORDERED_MINOR),
        )
        return build_report(LiveView(client), target)
