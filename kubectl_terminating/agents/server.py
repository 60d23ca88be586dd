"""`kubectl terminating mcp`: the diagnosis as Model Context Protocol tools over stdio
(protocol.py speaks the protocol; the official SDK is the test client: docs/choices.md).

Every tool is read-only and says so (readOnlyHint); each answers with the CLI's own `-o json`
document (tools.py). A failed call is an error result carrying kubectl's line, and the server
keeps serving: the next call connects again, so a cluster that comes back is read again.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from kubectl_terminating import __version__
from kubectl_terminating.agents.protocol import (
    INVALID_PARAMS,
    JSON,
    RpcError,
    Server,
    check_arguments,
    serve,
)
from kubectl_terminating.agents.tools import ToolFailed, Tools, types
from kubectl_terminating.connection import error_line
from kubectl_terminating.errors import TerminatingError

INSTRUCTIONS = """\
Diagnoses Kubernetes objects stuck in Terminating: for each one, its blockers (stable `type`,
a one-line `summary`, the `evidence` that proves it, and `remedy` steps ordered safest first,
destructive ones marked `destructive: true` with the condition under which they are safe).
Start with terminating_summary or terminating_list, then terminating_explain on one object.
Before deleting something, call terminating_preflight to learn whether it would get stuck.
Every tool only reads. Never remove a finalizer, force-delete a pod or call /finalize on your
own: the remedies say when that is safe, and terminating_fix_plan gives the plan a human can
review and apply with `kubectl terminating fix ... --apply --confirm DIGEST`.
"""

LIST = """\
List every object stuck in Terminating (or still inside its grace period) with its blockers.
Returns the `kubectl terminating KIND -o json` document: `items` (each with kind, namespace,
name, deletionTimestamp, overdueSeconds (negative: still inside the grace period), finalizers,
blockers [{type, summary, confidence, confidenceBasis, evidence, remedy}], warnings),
`summary` (one group per cause) and `warnings` (checks that could not be made). Each blocker's
`confidence` is certain (the component doing the step said so), likely (it follows from other
objects' state) or possible (only a hint points there); `confidenceBasis` names the witness.
Say how sure a blocker is when you report it. At most 50 items; `truncated` says what was cut."""

EXPLAIN = """\
Explain why one pod or namespace is stuck in Terminating: every blocker with its evidence and
its remedies, safest first (the `--explain` findings as the -o json document, one item; a
namespace also carries its conditions, its remaining content per resource type and its pods).
Each blocker has a `confidence` (certain, likely or possible) and its `confidenceBasis`: only a
certain blocker is proven; `fix` acts on nothing less.
An object that does not exist is an error result with kubectl's NotFound message."""

SUMMARY = """\
Count the stuck objects per cause, without listing them: one group per main blocker type and
shared subject (a node, a CSI driver, a finalizer, an APIService, a webhook), with `count`, a
`cause` label and an `example` object. Start here on a large cluster or during an outage."""

TYPES = """\
The blocker types this diagnosis reports, in rank order (the first of an object's blockers in
this order is its main blocker): what each means, while what it can hold an object, whether it
happens on the node, and whether `fix` proposes a write for it or refuses (and why).
Needs no cluster."""

FIX_PLAN = """\
Plan how to unstick objects WITHOUT changing anything: `kubectl terminating fix`'s dry run. For
each stuck object, the writes the evidence proves safe (each with its proofs and the exact API
request) and the blockers it refuses to touch, with why, plus the plan's `digest`. Nothing is
ever applied by this tool: `apply.command` is the command a human runs after reviewing the plan
(`kubectl terminating fix ... --apply --confirm DIGEST`). Show it to the user; do not run it."""

PREFLIGHT = """\
BEFORE a deletion (kubectl delete, helm uninstall), predict whether it will get stuck in
Terminating, and why. It computes what the deletion takes with it (a namespace's content,
garbage-collector dependents, a CRD's objects, a release's objects), then judges finalizer
owners, webhook and APIService backends and nodes on the cluster as it will be without them.
Returns `kubectl terminating preflight -o json`: `verdict` (clear, blocked, or undecided: some
check could not be made, listed in `unchecked`), `doomed` (counts per kind), and `predictions`,
each with a `type` from terminating_types (the blocker it will show once stuck), a
`confidence` (certain, likely, possible), the `object`, `evidence`, `prevent` steps and
`remedy`. A `blocked` verdict means: do the `prevent` steps first (e.g. delete the custom
resources before the operator that removes their finalizers), then delete. This tool never
deletes anything; at most 50 predictions, `truncated` says what was cut."""


def _string(description: str, *, enum: tuple[str, ...] = (), default: str | None = None) -> JSON:
    spec: JSON = {"type": "string", "description": description}
    if enum:
        spec["enum"] = list(enum)
    if default is not None:
        spec["default"] = default
    return spec


def _nullable(description: str) -> JSON:
    return {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
        "description": description,
    }


KIND = _string(
    "pods, namespaces, or all (every terminating object of any kind, metadata only)",
    enum=("pods", "namespaces", "all"),
)
NAMESPACE = _nullable(
    "Namespace to look in (default: the kubeconfig context's namespace). Ignored for namespaces."
)
ALL_NAMESPACES: JSON = {
    "type": "boolean",
    "default": False,
    "description": "Look in every namespace (pods and all).",
}
TARGET: JSON = {
    "type": "array",
    "items": {"type": "string"},
    "minItems": 1,
    "description": 'What would be deleted, as kubectl words: ["ns", "shop"] (one or more '
    'namespaces), ["deployment/operator", "crd/widgets.example.com"] (TYPE/NAME objects, in '
    'namespace), or ["helm", "my-release"] (a Helm release, judged in Helm\'s uninstall order).',
}


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    properties: JSON
    required: tuple[str, ...]
    call: Callable[[Tools, JSON], JSON]  # the checked arguments → the answer's document

    def listing(self) -> JSON:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.schema,
            # every tool only reads the cluster, and asking twice changes nothing
            "annotations": {
                "title": self.title,
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }

    @property
    def schema(self) -> JSON:
        return {"type": "object", "properties": self.properties, "required": list(self.required)}


TOOLS = (
    Tool(
        "terminating_list",
        "List stuck objects",
        LIST,
        {
            "kind": KIND,
            "namespace": NAMESPACE,
            "all_namespaces": ALL_NAMESPACES,
            "label_selector": _nullable("Label selector, e.g. app=web (as kubectl -l)."),
        },
        ("kind",),
        lambda t, a: t.list(a["kind"], a["namespace"], a["all_namespaces"], a["label_selector"]),
    ),
    Tool(
        "terminating_explain",
        "Explain one stuck object",
        EXPLAIN,
        {
            "kind": KIND,
            "name": _string("The object's name (a pod's name, or a namespace's name)."),
            "namespace": NAMESPACE,
        },
        ("kind", "name"),
        lambda t, a: t.explain(a["kind"], a["name"], a["namespace"]),
    ),
    Tool(
        "terminating_summary",
        "Stuck objects by cause",
        SUMMARY,
        {"kind": KIND, "namespace": NAMESPACE, "all_namespaces": ALL_NAMESPACES},
        ("kind",),
        lambda t, a: t.summary(a["kind"], a["namespace"], a["all_namespaces"]),
    ),
    Tool("terminating_types", "Blocker types", TYPES, {}, (), lambda t, a: types()),
    Tool(
        "terminating_fix_plan",
        "Dry-run fix plan",
        FIX_PLAN,
        {
            "kind": KIND,
            "name": _nullable("One object's name (default: every stuck one in scope)."),
            "namespace": NAMESPACE,
        },
        ("kind",),
        lambda t, a: t.fix_plan(a["kind"], a["name"], a["namespace"]),
    ),
    Tool(
        "terminating_preflight",
        "Preflight a deletion",
        PREFLIGHT,
        {
            "target": TARGET,
            "namespace": _nullable(
                "Namespace of TYPE/NAME objects and of a Helm release (default: the "
                "kubeconfig context's namespace)."
            ),
            "cascade": _string(
                "As kubectl delete --cascade: whether dependents go too.",
                enum=("background", "foreground", "orphan"),
                default="background",
            ),
            "fail_on": _string(
                "The weakest confidence that makes the verdict blocked.",
                enum=("certain", "likely", "possible"),
                default="likely",
            ),
        },
        ("target",),
        lambda t, a: t.preflight(a["target"], a["namespace"], a["cascade"], a["fail_on"]),
    ),
)

TYPES_URI = "terminating://types"
PROMPT = "diagnose-stuck-namespace"


def _text(text: str, error: bool = False) -> JSON:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def call_tool(tools: Tools, params: JSON) -> JSON:
    """tools/call: the answer's document as text and as structured content; a failed call (a
    bad argument, kubectl's error line) is an error result the model reads, never an RPC
    error."""
    tool = next((t for t in TOOLS if t.name == params.get("name")), None)
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {params.get('name')}")
    try:
        document = tool.call(tools, check_arguments(tool.schema, params.get("arguments")))
    except ValueError as error:
        return _text(f"error: {tool.name}: {error}", error=True)
    except ToolFailed as error:
        return _text(str(error), error=True)
    except TerminatingError as error:
        return _text(error_line(error), error=True)
    text = json.dumps(document, ensure_ascii=True, separators=(",", ":"))
    return {**_text(text), "structuredContent": document}


def _read_resource(params: JSON) -> JSON:
    if params.get("uri") != TYPES_URI:
        raise RpcError(-32002, "Resource not found", {"uri": params.get("uri")})
    text = json.dumps(types(), ensure_ascii=True)
    return {"contents": [{"uri": TYPES_URI, "mimeType": "application/json", "text": text}]}


def _prompt(params: JSON) -> JSON:
    namespace = (params.get("arguments") or {}).get("namespace")
    if params.get("name") != PROMPT:
        raise RpcError(INVALID_PARAMS, f"Unknown prompt: {params.get('name')}")
    if not isinstance(namespace, str) or not namespace:
        raise RpcError(INVALID_PARAMS, "Missing required argument: namespace")
    text = (
        f"Namespace {namespace!r} is stuck in Terminating. Call terminating_explain with "
        f'kind "namespaces" and name {namespace!r}. Report its main blocker with the '
        "evidence, then the remedies in the order given (safest first). Do not propose "
        "removing finalizers or force deletion unless a remedy says it is safe and why; "
        "for anything that writes, call terminating_fix_plan and show the user the plan "
        "and its apply command to run themselves."
    )
    return {
        "description": "Find out why a namespace is stuck in Terminating, safely.",
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }


def build(tools: Tools) -> Server:
    """The server with its tools, a resource and a prompt."""
    resource = {
        "uri": TYPES_URI,
        "name": "blocker-types",
        "description": TYPES,
        "mimeType": "application/json",
    }
    prompt = {
        "name": PROMPT,
        "description": "Find out why a namespace is stuck in Terminating, safely.",
        "arguments": [{"name": "namespace", "required": True}],
    }
    return Server(
        name="kubectl-terminating",
        version=__version__,
        instructions=INSTRUCTIONS,
        capabilities={"tools": {}, "resources": {}, "prompts": {}},
        methods={
            "tools/list": lambda p: {"tools": [t.listing() for t in TOOLS]},
            "tools/call": lambda p: call_tool(tools, p),
            "resources/list": lambda p: {"resources": [resource]},
            "resources/templates/list": lambda p: {"resourceTemplates": []},
            "resources/read": _read_resource,
            "prompts/list": lambda p: {"prompts": [prompt]},
            "prompts/get": _prompt,
        },
    )


def serve_stdio(tools: Tools, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Serves until the client closes stdin. The transport is UTF-8 whatever the locale."""
    lines = stdin or io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    serve(build(tools), lines, stdout or sys.stdout)
    return 0
