"""Terminal safety: every string from the cluster passes through `safe` before it is printed.

Below every module that prints (the error lines of connection.py, the renderers).
"""

from __future__ import annotations

import re

# C0/C1 controls, DEL and the bidirectional overrides that can disguise text in a terminal.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(value: object) -> str:
    """value as text with control characters escaped (no terminal escape injection)."""
    return _UNSAFE.sub(_escape, "" if value is None else str(value))
