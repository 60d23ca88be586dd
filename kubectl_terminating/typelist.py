"""`kubectl terminating types`: the blocker types, read from causes.TABLE (their one source)
in rank order, as `kubectl api-resources` lists the resource types. It needs no cluster and
no kubeconfig: nothing here connects, and nothing that connects is imported.
"""

from __future__ import annotations

from kubectl_terminating import causes
from kubectl_terminating.model import API_VERSION, JSON
from kubectl_terminating.render.structured import json_text, yaml_text
from kubectl_terminating.render.table import format_table

PROPOSES, REFUSES, CONTEXT = "proposes", "refuses", "context"


def fix_word(cause: causes.Cause) -> str:
    """What `fix` does with the type: proposes a write (once its checks allow it), has
    nothing to do (a context row says when the object goes), or refuses."""
    if cause.context:
        return CONTEXT
    return PROPOSES if cause.refusal is causes.PROPOSED else REFUSES


def item(rank: int, cause: causes.Cause) -> JSON:
    return {
        "kind": "BlockerType",
        "type": cause.type,
        "rank": rank,
        "label": cause.label,
        "holdsWhile": cause.holds_while,
        "stage": cause.stage,
        "groupBy": list(cause.group),
        "nodeLog": cause.node_log,
        "clusterWide": cause.cluster_wide,
        "context": cause.context,
        "fix": {"proposes": fix_word(cause) == PROPOSES, "refusal": cause.refusal},
    }


def document() -> JSON:
    # causes.TABLE is read on each call, never bound at import: a row added is listed
    items = [item(rank, cause) for rank, cause in enumerate(causes.TABLE)]
    return {"apiVersion": API_VERSION, "kind": "List", "items": items}


def table(wide: bool, no_headers: bool) -> str:
    headers = ["TYPE", "STAGE", "GROUP BY", "FIX", "LABEL"] + (["HOLDS WHILE"] if wide else [])
    rows = [
        [c.type, c.stage or "-", ",".join(c.group) or "-", fix_word(c), c.label]
        + ([c.holds_while] if wide else [])
        for c in causes.TABLE
    ]
    return format_table(headers, rows, no_headers)


def render(output: str | None, no_headers: bool = False) -> str:
    """The types as -o asks (None: the table); kubectl's outputs, as api-resources has them."""
    if output == "json":
        return json_text(document())
    if output == "yaml":
        return yaml_text(document())
    if output == "name":
        return "".join(cause.type + "\n" for cause in causes.TABLE)
    return table(output == "wide", no_headers)
