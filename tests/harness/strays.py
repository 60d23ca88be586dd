"""The plugin's processes and watch threads a test file left running. One (a `serve`, a
`--watch`, a watch session run inside the test process) keeps reading the control plane as
whoever it was, and a later file that audits who read what sees requests it never made (issue
40: a run on two workers failed so, on a watch left open by an in-process session)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

from tests.harness.controlplane import _pid_cmdline

PROC = Path("/proc")
MARKS = ("kubectl_terminating", "kubectl-terminating")


def _read(pid: str, name: str) -> bytes:
    try:
        return (PROC / pid / name).read_bytes()
    except OSError:  # gone meanwhile, or not ours to read
        return b""


def _parent(pid: str) -> str:
    for line in _read(pid, "status").splitlines():
        if line.startswith(b"PPid:"):
            return line.split()[1].decode()
    return "0"


def _is_descendant(pid: str, ancestor: str) -> bool:
    seen = 0
    while pid not in ("0", "1") and seen < 64:
        pid, seen = _parent(pid), seen + 1
        if pid == ancestor:
            return True
    return False


def plugin_processes(basetemp: Path) -> dict[int, str]:
    """pid -> command line of each live plugin process this pytest process started: a
    descendant of it, or one whose command line or environment names its temporary directory
    (a process started through tmux or k9s is no child of ours). Another pytest process's,
    which has a basetemp of its own, is not counted."""
    me, mine = str(os.getpid()), str(basetemp)
    found = {}
    for entry in PROC.iterdir():
        pid = entry.name
        if not pid.isdigit() or pid == me:
            continue
        command = " ".join(_pid_cmdline(int(pid)))
        if not any(mark in command for mark in MARKS) or "pytest" in command:
            continue
        if _is_descendant(pid, me) or mine in command or mine.encode() in _read(pid, "environ"):
            found[int(pid)] = command
    return found


def stop_strays(basetemp: Path, before: set[int], grace: float = 5.0) -> dict[int, str]:
    """The plugin processes started since `before` (pids) that are still running after
    `grace` seconds (one being stopped gets that long), killed; pid -> command line."""
    deadline = time.monotonic() + grace
    while True:
        strays = {p: c for p, c in plugin_processes(basetemp).items() if p not in before}
        if not strays or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    for pid in strays:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return strays


def watch_threads() -> list[str]:
    """The names of this process's live watch threads (watch.Watcher names each `watch <type>`)."""
    return [t.name for t in threading.enumerate() if t.name.startswith("watch ")]
