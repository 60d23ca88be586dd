"""Shell completion through kubectl: `kubectl_complete-terminating __complete ARGS...`.

kubectl 1.26+ runs this helper for plugins and expects cobra's protocol: one candidate per
line, then `:<directive>` (4 = do not fall back to file names).
"""

from __future__ import annotations

from typing import IO

import click

from kubectl_terminating.options import OUTPUTS

NO_FILE_COMPLETION = 4
VALUE_CHOICES = {"-o": OUTPUTS, "--output": OUTPUTS, "--color": ("auto", "always", "never")}


def candidates(group: click.Group, words: list[str]) -> list[str]:
    """What may come next after words (the last word is the one being typed)."""
    *before, current = words or [""]
    if before and before[-1] in VALUE_CHOICES:
        return [c for c in VALUE_CHOICES[before[-1]] if c.startswith(current)]
    if before and before[-1] in _takes_value(group):
        return []  # a value: --context NAME, -n NS, ...
    command_name = _command_name(group, before)
    if command_name is None and not current.startswith("-"):
        return sorted(n for n in group.commands if n.startswith(current))
    command = group.get_command(click.Context(group), command_name) if command_name else None
    flags: list[str] = ["--help", "--version", *_options(group)]
    if command is not None:
        flags = _options(command)
    return sorted(f for f in flags if f.startswith(current)) if current.startswith("-") else []


def _options(command: click.Command) -> list[str]:
    return [opt for p in command.params for opt in getattr(p, "opts", []) if opt.startswith("-")]


def _takes_value(group: click.Group) -> set[str]:
    """Options of the group (the global ones) followed by a value."""
    return {
        opt
        for p in group.params
        if isinstance(p, click.Option) and not p.is_flag and not p.count
        for opt in p.opts
    }


def _command_name(group: click.Group, words: list[str]) -> str | None:
    """The command among the words, global options and their values before it skipped."""
    takes_value = _takes_value(group)
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in takes_value
        else:
            return word
    return None


def complete(group: click.Group, argv: list[str], out: IO[str]) -> int:
    words = argv[1:] if argv and argv[0] in ("__complete", "__completeNoDesc") else argv
    for candidate in candidates(group, words):
        out.write(candidate + "\n")
    out.write(f":{NO_FILE_COMPLETION}\n")
    return 0
