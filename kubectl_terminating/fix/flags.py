"""The flags of `kubectl terminating fix`, owned here: their click options and the value they
make (FixOptions). Light on purpose: cli.py imports it to declare the command."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import click

FIX_KINDS = ("pods", "pod", "po", "namespaces", "namespace", "ns", "all")

FIX_OPTIONS = [
    click.option(
        "--apply", is_flag=True, help="Carry out the plan (without it: a dry run, nothing written)."
    ),
    click.option(
        "--confirm",
        metavar="DIGEST",
        help="The digest the dry run printed: --apply then runs without asking, and refuses "
        "if anything it covers changed.",
    ),
    click.option(
        "--node-down",
        "node_down",
        multiple=True,
        metavar="NODE",
        help="You know NODE's machine is shut down: allow the out-of-service taint on it.",
    ),
    click.option(
        "--audit-file", metavar="PATH", help="Append the audit record of each write to PATH."
    ),
    click.option("-o", "--output", type=click.Choice(("json",)), help="Output format: json."),
    click.option(
        "--wait",
        is_flag=True,
        help="With --apply: then watch the objects it unstuck until they are gone, a line "
        "each (exit 3 if some are still there after --timeout).",
    ),
    click.option(
        "--timeout",
        default="5m",
        show_default=True,
        metavar="DURATION",
        help="How long --wait waits (e.g. 30s, 5m).",
    ),
]


@dataclass(frozen=True)
class FixOptions:
    apply: bool = False
    confirm: str | None = None
    node_down: tuple[str, ...] = ()
    audit_file: str | None = None
    output: str | None = None  # None (text) or "json"
    command: str = "kubectl terminating fix"  # the dry run's command line, shown for --apply
    wait: bool = False  # then watch the objects it unstuck until they are gone (watch.py)
    timeout: float = 300.0  # seconds --wait waits

    @classmethod
    def from_flags(cls, flags: dict[str, Any], command: str) -> FixOptions:
        """Its own flags, taken out of flags (the rest are the scope and connection flags)."""
        mine = {f.name: flags.pop(f.name) for f in fields(cls) if f.name in flags}
        mine["node_down"] = tuple(mine.get("node_down") or ())
        if "timeout" in mine:
            mine["timeout"] = _duration(mine["timeout"])
        options = cls(**mine, command=command)
        options.check()
        return options

    def check(self) -> None:
        """The flags that only mean something with --apply."""
        from kubectl_terminating.errors import UsageError

        if self.wait and not self.apply:
            raise UsageError("--wait only applies with --apply")
        if self.confirm is not None and not self.apply:
            raise UsageError("--confirm only applies with --apply")


def _duration(value: str) -> float:
    from kubectl_terminating.client import parse_duration
    from kubectl_terminating.errors import UsageError

    try:
        return parse_duration(value)
    except ValueError as error:
        raise UsageError(f"--timeout: {error}") from None
