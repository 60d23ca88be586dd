"""`kubectl terminating dump`: record what the diagnosis reads, for `--from-file` elsewhere."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from kubectl_terminating.connection import connected, guarded
from kubectl_terminating.options import Options, Request, complete

if TYPE_CHECKING:
    from kubectl_terminating.client import Client
    from kubectl_terminating.model import JSON, Finding
    from kubectl_terminating.view import ClusterView


def run_dump(options: Options, path: str, err: IO[str] | None = None) -> int:
    stderr = err or sys.stderr
    return guarded(lambda: _run(options, path, stderr), stderr)


def _run(options: Options, path: str, err: IO[str]) -> int:
    with connected(options, err) as client:
        return _dump(complete(options, client.connection.namespace), client, path, err)


def _dump(request: Request, client: Client, path: str, err: IO[str]) -> int:
    from kubectl_terminating.explain.objects import explain_object
    from kubectl_terminating.find import find_all
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
    from kubectl_terminating.source import Scope

    scope = Scope(request.namespace, (), request.options.selector)
    live = LiveView(client)
    capture = Capture()
    recorder = RecordingView(live, capture)
    objects, warnings = find_all(client, recorder, scope)
    live.expect_content([obj for resource, obj in objects if resource == NAMESPACES])
    for resource, obj in objects:
        capture.add(obj, resource)
    # The explainers' reads are what make the snapshot complete: run them all.
    findings = client.map(lambda pair: explain_object(pair[1], pair[0], recorder), objects)
    version = str(client.get("/version").get("gitVersion", "unknown"))
    data = bundle(capture, header(live.now, version, client.connection.context, scope))
    if request.options.node_evidence:
        pairs = [(obj, f) for (_, obj), f in zip(objects, findings, strict=True)]
        data["nodeEvidence"], said = _node_evidence(pairs, recorder, client)
        warnings = [*warnings, *said]
    size = write_bundle(path, data)
    for warning in warnings:
        print(f"Warning: {safe(warning)}", file=err)
    print(
        f"saved {len(capture.objects)} objects for {len(objects)} terminating objects to "
        f"{safe(path)} ({dump_size_note(size)}); Secret and ConfigMap data not included",
        file=err,
    )
    return 0


def _node_evidence(
    pairs: list[tuple[JSON, Finding]], view: ClusterView, client: Client
) -> tuple[JSON, list[str]]:
    """`dump --node-evidence`: each node's evidence (only the lines about its stuck pods)."""
    from kubectl_terminating.explain.node_evidence import NodeEvidenceRefused
    from kubectl_terminating.nodeevidence import subjects_of, wanted
    from kubectl_terminating.nodeproxy import NodeProxy

    pods = wanted([(obj, f) for obj, f in pairs if f.kind == "Pod"], view)
    try:
        evidence, warnings = NodeProxy(client).read_nodes(subjects_of(pods))
    except NodeEvidenceRefused as refused:
        return {}, [str(refused)]
    return {node: e.to_json() for node, e in evidence.items()}, warnings
