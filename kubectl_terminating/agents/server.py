"""`kubectl terminating mcp`: the diagnosis as Model Context Protocol tools over stdio, with
the official `mcp` SDK, imported by this command alone (an optional extra: see docs/choices.md).

Every tool is read-only and says so (readOnlyHint); each answers with the CLI's own `-o json`
document (tools.py). A failed call is an error result carrying kubectl's line, and the server
keeps serving: the next call connects again, so a cluster that comes back is read again.
"""

import json
from collections.abc import Callable
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from kubectl_terminating import __version__
from kubectl_terminating.agents.tools import ToolFailed, Tools, types
from kubectl_terminating.connection import error_line
from kubectl_terminating.errors import TerminatingError
from kubectl_terminating.model import JSON

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

Kind = Annotated[
    Literal["pods", "namespaces", "all"],
    Field(
        description="pods, namespaces, or all (every terminating object of any kind, metadata only)"
    ),
]
Namespace = Annotated[
    str | None,
    Field(
        description="Namespace to look in (default: the kubeconfig context's namespace). "
        "Ignored for namespaces."
    ),
]
AllNamespaces = Annotated[bool, Field(description="Look in every namespace (pods and all).")]
Selector = Annotated[str | None, Field(description="Label selector, e.g. app=web (as kubectl -l).")]
Name = Annotated[str, Field(description="The object's name (a pod's name, or a namespace's name).")]

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


def _result(document: JSON) -> CallToolResult:
    text = json.dumps(document, ensure_ascii=True, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=document
    )


def build(tools: Tools) -> MCPServer:
    """The MCP server with its tools, a resource and a prompt."""
    server = MCPServer(
        "kubectl-terminating",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )

    def read_only(title: str) -> ToolAnnotations:
        return ToolAnnotations(
            title=title,
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        )

    def answer(call: Callable[..., JSON], *args: object) -> CallToolResult:
        try:
            return _result(call(*args))
        except (ToolFailed, TerminatingError) as error:
            # kubectl's own line, as the model would read it in a terminal
            line = error_line(error) if isinstance(error, TerminatingError) else str(error)
            return CallToolResult(content=[TextContent(type="text", text=line)], is_error=True)

    @server.tool(description=LIST, annotations=read_only("List stuck objects"))
    def terminating_list(
        kind: Kind,
        namespace: Namespace = None,
        all_namespaces: AllNamespaces = False,
        label_selector: Selector = None,
    ) -> CallToolResult:
        return answer(tools.list, kind, namespace, all_namespaces, label_selector)

    @server.tool(description=EXPLAIN, annotations=read_only("Explain one stuck object"))
    def terminating_explain(kind: Kind, name: Name, namespace: Namespace = None) -> CallToolResult:
        return answer(tools.explain, kind, name, namespace)

    @server.tool(description=SUMMARY, annotations=read_only("Stuck objects by cause"))
    def terminating_summary(
        kind: Kind, namespace: Namespace = None, all_namespaces: AllNamespaces = False
    ) -> CallToolResult:
        return answer(tools.summary, kind, namespace, all_namespaces)

    @server.tool(description=TYPES, annotations=read_only("Blocker types"))
    def terminating_types() -> CallToolResult:
        return answer(types)

    @server.tool(description=FIX_PLAN, annotations=read_only("Dry-run fix plan"))
    def terminating_fix_plan(
        kind: Kind,
        name: Annotated[
            str | None, Field(description="One object's name (default: every stuck one in scope).")
        ] = None,
        namespace: Namespace = None,
    ) -> CallToolResult:
        return answer(tools.fix_plan, kind, name, namespace)

    @server.tool(description=PREFLIGHT, annotations=read_only("Preflight a deletion"))
    def terminating_preflight(
        target: Annotated[
            list[str],
            Field(
                description='What would be deleted, as kubectl words: ["ns", "shop"] (one or '
                'more namespaces), ["deployment/operator", "crd/widgets.example.com"] '
                '(TYPE/NAME objects, in namespace), or ["helm", "my-release"] (a Helm '
                "release, judged in Helm's uninstall order).",
                min_length=1,
            ),
        ],
        namespace: Annotated[
            str | None,
            Field(
                description="Namespace of TYPE/NAME objects and of a Helm release (default: "
                "the kubeconfig context's namespace)."
            ),
        ] = None,
        cascade: Annotated[
            Literal["background", "foreground", "orphan"],
            Field(description="As kubectl delete --cascade: whether dependents go too."),
        ] = "background",
        fail_on: Annotated[
            Literal["certain", "likely", "possible"],
            Field(description="The weakest confidence that makes the verdict blocked."),
        ] = "likely",
    ) -> CallToolResult:
        return answer(tools.preflight, target, namespace, cascade, fail_on)

    @server.resource(
        "terminating://types",
        name="blocker-types",
        description=TYPES,
        mime_type="application/json",
    )
    def types_resource() -> str:
        return json.dumps(types(), ensure_ascii=True)

    @server.prompt(
        name="diagnose-stuck-namespace",
        description="Find out why a namespace is stuck in Terminating, safely.",
    )
    def diagnose(namespace: str) -> str:
        return (
            f"Namespace {namespace!r} is stuck in Terminating. Call terminating_explain with "
            f'kind "namespaces" and name {namespace!r}. Report its main blocker with the '
            "evidence, then the remedies in the order given (safest first). Do not propose "
            "removing finalizers or force deletion unless a remedy says it is safe and why; "
            "for anything that writes, call terminating_fix_plan and show the user the plan "
            "and its apply command to run themselves."
        )

    return server


def serve_stdio(tools: Tools) -> int:
    build(tools).run("stdio")
    return 0
