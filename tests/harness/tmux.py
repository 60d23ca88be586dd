"""A terminal program driven through tmux: keys in with `send-keys`, the screen out with
`capture-pane`, on a private server socket so no user's tmux is touched."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

WIDTH, HEIGHT = 220, 50


class Tmux:
    """One detached session running `command` in a WIDTH x HEIGHT pane."""

    def __init__(self, binary: str, directory: Path) -> None:
        self.binary = binary
        self.socket = directory / "tmux.sock"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )

    def start(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        # `env -i`: the program sees exactly `env`, not the tmux server's environment, and
        # the TERM tmux gives its panes (expanded by the pane's shell)
        assignments = [f"{k}={v}" for k, v in env.items()]
        line = 'env -i TERM="$TERM" ' + shlex.join([*assignments, *command])
        self._run("new-session", "-d", "-s", "t", "-x", str(WIDTH), "-y", str(HEIGHT), line)
        # a program that exits leaves its last screen to read, not a closed pane
        self._run("set-option", "-t", "t", "remain-on-exit", "on")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self._run("send-keys", "-t", "t", *(["-l"] if literal else []), *keys)

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "t").stdout

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 90.0) -> str:
        """The screen once `predicate` holds on it; fails with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:.0f}s; the screen:\n{screen}")
            time.sleep(0.5)

    def stop(self) -> None:
        subprocess.run(
            [self.binary, "-S", str(self.socket), "kill-server"],
            capture_output=True,
            check=False,
            timeout=30,
        )
