"""What each MCP tool answers: the CLI's own `-o json` run (commands.run, fix's dry run,
preflight, typelist), its document bounded for a model's context. No second diagnosis lives
here, and no MCP import: server.py wires these to the SDK.

A call that the CLI would end with an error line (exit 1 or 2) raises ToolFailed with that
very line (`Error from server (NotFound): pods "x" not found`), which the server returns as an
error result and keeps serving.
"""

from __future__ import annotations

import io
import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kubectl_terminating.errors import ExitStatus, UsageError
from kubectl_terminating.model import JSON
from kubectl_terminating.options import KINDS, Options

# The most items a list answers with, and the most characters of items: beyond either the
# rest are cut and `truncated` says how many and how to narrow the question.
MAX_ITEMS = 50
MAX_CHARS = 200_000
APPLY_NOTE = (
    "This plan is a dry run: nothing was written, and no tool of this server writes. "
    "Applying it is a human's decision: they review the plan, then run `{command}` "
    "themselves, which refuses if anything the plan covers has changed."
)

# preflight's verdicts clear, blocked and undecided: each is a report, not a failure
PREFLIGHT_ANSWERS = (ExitStatus.OK, ExitStatus.STUCK, ExitStatus.UNDECIDED)


class ToolFailed(Exception):
    """The call's one error line, as the CLI prints it."""


@dataclass(frozen=True)
class Limits:
    max_items: int = MAX_ITEMS
    max_chars: int = MAX_CHARS


@dataclass(frozen=True)
class Tools:
    """The tools over one connection: base holds the kubeconfig flags the server started
    with (--kubeconfig, --context, -n as the default namespace, ...); each call adds its
    kind, names and scope, as the same flags on the command line would."""

    base: Options
    limits: Limits = field(default_factory=Limits)

    def _options(
        self,
        kind: str,
        names: tuple[str, ...] = (),
        namespace: str | None = None,
        all_namespaces: bool = False,
        selector: str | None = None,
    ) -> Options:
        if kind not in KINDS:
            raise ToolFailed(f'error: unknown kind "{kind}": want one of {", ".join(KINDS)}')
        options = replace(
            self.base,
            kind=kind,
            names=names,
            namespace=namespace or self.base.namespace,
            all_namespaces=all_namespaces,
            selector=selector or None,
            output="json",
        )
        try:
            options.validate()
        except UsageError as error:
            raise ToolFailed(f"error: {error.message}") from None
        return options

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
    ) -> JSON:
        options = self._options(kind, (), namespace, all_namespaces, label_selector)
        return bounded(_run_json(options), self.limits)

    def explain(self, kind: str, name: str, namespace: str | None = None) -> JSON:
        if not name:
            raise ToolFailed("error: name is required")
        options = self._options(kind, (name,), namespace)
        return bounded(_run_json(options), self.limits)

    def summary(
        self, kind: str, namespace: str | None = None, all_namespaces: bool = False
    ) -> JSON:
        """The list's cause groups and counts, without its items."""
        document = _run_json(self._options(kind, (), namespace, all_namespaces))
        items = document.pop("items", [])
        document["kind"] = "Summary"
        document["total"] = len(items)  # terminating objects found, each in one group
        return document

    def fix_plan(self, kind: str, name: str | None = None, namespace: str | None = None) -> JSON:
        """fix's dry run: the FixPlan document and its digest; the command a human runs to
        apply it is stated, never run."""
        from kubectl_terminating.fix.command import run_fix
        from kubectl_terminating.fix.flags import FixOptions

        names = (name,) if name else ()
        options = self._options(kind, names, namespace)
        command = self.command_line(options)
        out, err = io.StringIO(), io.StringIO()
        code = run_fix(options, FixOptions(output="json", command=command), out, err, io.StringIO())
        document = _document(code, out, err)
        apply = f"{command} --apply --confirm {document.get('digest', 'DIGEST')}"
        writes = sum(len(section.get("actions", [])) for section in document.get("objects", []))
        document["apply"] = {
            "by": "a human",
            "command": apply if writes else None,
            "note": APPLY_NOTE.format(command=apply) if writes else "Nothing to write.",
        }
        return bounded(document, self.limits, "objects", "the digest covers them all")

    def preflight(
        self,
        target: Sequence[str],  # (`list` here is the method above)
        namespace: str | None = None,
        cascade: str = "background",
        fail_on: str = "likely",
    ) -> JSON:
        """preflight's -o json report for target's words (`ns NAME...`, TYPE/NAME...,
        `helm RELEASE`); clear, blocked and undecided are all answers, its verdict says which."""
        from kubectl_terminating.preflight.command import PreflightFlags, run_preflight

        if not target or any(word.startswith("-") for word in target):
            # no -f and no flags among the words: a file is not the agent's to name
            raise ToolFailed(
                "error: target names what would be deleted: "
                '["ns", NAME...], ["TYPE/NAME", ...] or ["helm", RELEASE]'
            )
        options = replace(
            self.base,
            kind="all",
            names=(),
            namespace=namespace or self.base.namespace,
            all_namespaces=False,
            selector=None,
        )
        flags = PreflightFlags(tuple(target), (), cascade, None, fail_on, "json", False)
        out, err = io.StringIO(), io.StringIO()
        code = run_preflight(options, flags, out, err)
        document = _document(code, out, err, PREFLIGHT_ANSWERS)
        return bounded(document, self.limits, "predictions", "the verdict covers them all")

    def command_line(self, options: Options) -> str:
        """`kubectl terminating fix KIND [NAME] -n NS`, with the connection the server uses."""
        words = ["kubectl", "terminating"]
        for flag, value in (
            ("--kubeconfig", self.base.kubeconfig),
            ("--context", self.base.context),
            ("--cluster", self.base.cluster),
            ("--user", self.base.user),
        ):
            if value:
                words += [flag, value]
        words += ["fix", options.kind, *options.names]
        if options.namespace and options.kind != "namespaces":
            words += ["-n", options.namespace]
        return " ".join(shlex.quote(word) for word in words)


def types() -> JSON:
    from kubectl_terminating.typelist import document

    return document()


def _run_json(options: Options) -> JSON:
    from kubectl_terminating.commands import run

    out, err = io.StringIO(), io.StringIO()
    return _document(run(options, out, err), out, err)


def _document(
    code: int,
    out: io.StringIO,
    err: io.StringIO,
    answers: tuple[int, ...] = (ExitStatus.OK, ExitStatus.STUCK),
) -> JSON:
    """The -o json document a run printed (answers: the exit codes that are answers); the
    run's error line when it failed."""
    if code not in answers or not out.getvalue():
        raise ToolFailed(_error_line(err.getvalue()) or f"error: exit status {code}")
    document: JSON = json.loads(out.getvalue())
    return document


def _error_line(stderr: str) -> str:
    """The run's error (warnings come first on stderr and are in the document anyway)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith("Warning: ")]
    return "\n".join(errors or lines)


def bounded(
    document: JSON,
    limits: Limits,
    key: str = "items",
    whole: str = "the summary counts them all",
) -> JSON:
    """document with at most limits.max_items entries under key, and no more characters of
    them than limits.max_chars; what was cut is said in `truncated` (whole: what of the
    document still stands for every entry)."""
    entries = document.get(key)
    if not isinstance(entries, list):
        return document
    kept: list[JSON] = []
    size = 0
    for entry in entries[: limits.max_items]:
        size += len(json.dumps(entry))
        if kept and size > limits.max_chars:
            break
        kept.append(entry)
    if len(kept) == len(entries):
        return document
    return {
        **document,
        key: kept,
        "truncated": {
            "shown": len(kept),
            "total": len(entries),
            "note": f"Only the first {len(kept)} of {len(entries)} {key} are shown ({whole}). "
            "Narrow the question: a namespace, a label selector, or one object by name.",
        },
    }
