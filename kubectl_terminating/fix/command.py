"""One `kubectl terminating fix` run: explain, plan, observe, show; with --apply, confirm and
carry out. Exit codes: 0 done or nothing to do, 1 error, 3 refused or changed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import IO

from kubectl_terminating.connection import connected, guarded
from kubectl_terminating.errors import ApiError, ExitStatus, NotFound
from kubectl_terminating.fix.apply import DONE, EXIT_REFUSED, FORBIDDEN, apply_plan
from kubectl_terminating.fix.audit import Actor, AuditLog
from kubectl_terminating.fix.digest import digest
from kubectl_terminating.fix.flags import FixOptions
from kubectl_terminating.fix.observe import Planned, observe, planned
from kubectl_terminating.fix.plan import TAINT_OUT_OF_SERVICE as TAINT
from kubectl_terminating.fix.plan import Proposal, Resolver, known_resource, plan
from kubectl_terminating.fix.render import fix_printer
from kubectl_terminating.model import JSON
from kubectl_terminating.options import Options, complete
from kubectl_terminating.render.style import Style, safe, use_color
from kubectl_terminating.resources import Resource
from kubectl_terminating.run import collect, print_problems
from kubectl_terminating.view import ClusterView, ReadFailed

TYPE_THE_NAME = "Type the name {name!r} to {what} (anything else stops): "


class LiveReader:
    """Fresh reads for the proofs: straight to the API server, no memo."""

    def __init__(self, client: object) -> None:
        from kubectl_terminating.client import Client

        assert isinstance(client, Client)
        self.client = client

    def get(self, path: str) -> JSON | None:
        try:
            return self.client.get(path, deadline=self.client.check_deadline)
        except NotFound:
            return None

    def list(self, path: str) -> list[JSON]:
        return list(self.client.items(path, deadline=self.client.check_deadline))

    def now(self) -> datetime:
        """The API server's clock: its Leases' renewTimes are its own."""
        return self.client.server_now()


def resolver(view: ClusterView) -> Resolver:
    """Well-known types at once; any other through the discovery the explainers made."""

    def resolve(api_version: str, kind: str) -> Resource | None:
        known = known_resource(api_version, kind)
        if known is not None:
            return known
        try:
            resources = view.discovery().resources
        except ReadFailed:
            return None
        return next((r for r in resources if r.api_version == api_version and r.kind == kind), None)

    return resolve


def whoami(reader: LiveReader) -> Actor:
    """Who the API server says we are (SelfSubjectReview); the kubeconfig's view otherwise."""
    conn = reader.client.connection
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        _, answer = reader.client.create(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews", review
        )
        user = str(answer.get("status", {}).get("userInfo", {}).get("username") or "")
    except ApiError:
        user = ""
    return Actor(user or f"unknown (context {conn.context})", conn.context, conn.server)


def prompt(stdin: IO[str], err: IO[str]) -> Callable[[Planned], bool]:
    def confirm(action: Planned) -> bool:
        target = action.proposal.target
        what = safe(action.proposal.describe())
        err.write(TYPE_THE_NAME.format(name=safe(target.name), what=what))
        err.flush()
        answer = stdin.readline().strip()
        return answer == target.name

    return confirm


def run_fix(
    options: Options,
    fix: FixOptions,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
    out, err, into = stdout or sys.stdout, stderr or sys.stderr, stdin or sys.stdin
    return guarded(lambda: _run(options, fix, out, err, into), err)


def _run(options: Options, fix: FixOptions, out: IO[str], err: IO[str], into: IO[str]) -> int:
    from kubectl_terminating.live import LiveSource

    with connected(options, err) as client:
        request = complete(replace(options, explain=True), client.connection.namespace)
        source = LiveSource(client)
        result = collect(request, source, err)
        warnings = print_problems(result, err)
        if result.missing:
            return ExitStatus.ERROR
        reader = LiveReader(client)
        sections = observe(plan(result.findings, fix.node_down, resolver(source.view)), reader)
        actions = planned(sections)
        tainted = {
            step.target.name
            for s in sections
            for step in s.section.steps
            if isinstance(step, Proposal) and step.action == TAINT
        }
        for node in dict.fromkeys(fix.node_down):
            if node not in tainted:
                print(
                    f"Warning: --node-down {safe(node)}: no stuck pod here is held by it", file=err
                )
        code = digest(actions)
        show = fix_printer(fix.output, Style(color=use_color("auto", out)), fix.command, warnings)
        out.write(show.plan(sections, code))
        if not fix.apply or not actions:
            out.write(show.dry_run(sections, code, len(actions)))
            return ExitStatus.OK
        refusal = _confirmation_refused(fix, code, into)
        if refusal:
            out.write(show.refused(sections, code))
            print(f"error: nothing was written: {refusal}", file=err)
            return EXIT_REFUSED
        confirm = (lambda _action: True) if fix.confirm else prompt(into, err)
        audit = AuditLog(err, fix.audit_file)
        results, exit_code = apply_plan(
            actions, reader, client.write, audit, whoami(reader), code, confirm
        )
        out.write(show.applied(sections, code, results))
        for failed in results:
            if failed.result == FORBIDDEN:
                print(f"Error from server (Forbidden): {safe(failed.message)}", file=err)
            elif failed.result != DONE:
                print(f"error: {failed.result}: {safe(failed.message)}", file=err)
        if fix.wait and exit_code == 0:
            from kubectl_terminating.watch import wait_gone

            done = {r.action.proposal.key for r in results if r.result == DONE}
            unstuck = {
                (o.section.subject.kind, o.section.subject.namespace, o.section.subject.name)
                for o in sections
                if any(isinstance(s, Proposal) and s.key in done for s in o.section.steps)
            }
            waited = [f for f in result.findings if (f.kind, f.namespace, f.name) in unstuck]
            return wait_gone(client, request, waited, fix.timeout, out, err)
        return exit_code


def _confirmation_refused(fix: FixOptions, code: str, into: IO[str]) -> str:
    """Why --apply may not go ahead ("" when it may)."""
    if fix.confirm is not None:
        if fix.confirm != code:
            return (
                f"the plan changed since digest {fix.confirm} was shown (it is now {code}); "
                "run the dry run again and check it"
            )
        return ""
    if not bool(getattr(into, "isatty", lambda: False)()):
        return "--apply without --confirm DIGEST and no terminal to confirm on"
    return ""
