"""Terminal safety and colour: every string from the cluster passes through `safe`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import IO

# C0/C1 controls, DEL and the bidirectional overrides that can disguise text in a terminal.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(value: object) -> str:
    """value as text with control characters escaped (no terminal escape injection)."""
    return _UNSAFE.sub(_escape, "" if value is None else str(value))


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
