"""Colour, and terminal safety: every string from the cluster passes through `safe`
(terminal.py; the renderers import it from here)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

from kubectl_terminating.terminal import safe

__all__ = ["Style", "safe", "use_color"]


def use_color(mode: str, stream: IO[str], environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if mode == "always":
        return True
    if mode == "never" or env.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)()) and env.get("TERM") != "dumb"


@dataclass(frozen=True)
class Style:
    color: bool = False

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)
