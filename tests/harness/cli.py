"""Run the plugin as a user would: a separate process, its own stdout, stderr and exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]


def run_cli(
    *args: str,
    kubeconfig: Path | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    input: str | None = None,  # stdin (a pipe, never a terminal); None inherits the test's
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
    environ["PYTHONPATH"] = str(ROOT)
    if kubeconfig is not None:
        environ["KUBECONFIG"] = str(kubeconfig)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kubectl_terminating", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
        check=False,
        input=input,
    )


def start_serve(
    kubeconfig: Path | str,
    port: int,
    interval: str,
    log: IO[bytes],
    *extra: str,
    env: dict[str, str] | None = None,
    address: str = "127.0.0.1",
    under: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """`serve -v=1` on address:port (and the extra arguments, and environment), its stdout
    and stderr to log; `under`: the program that runs it and its arguments (gdb)."""
    return subprocess.Popen(
        [
            *under,
            sys.executable,
            "-m",
            "kubectl_terminating",
            "serve",
            "-v=1",
            f"--interval={interval}",
            f"--metrics-bind-address={address}:{port}",
            *extra,
        ],
        env={**os.environ, "KUBECONFIG": str(kubeconfig), "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=log,
        stderr=log,
    )


def run_json(*args: str, kubeconfig: Path | str, **kwargs: Any) -> dict[str, Any]:
    """`-o json` output, decoded; fails the test with stderr when the command failed."""
    result = run_cli(*args, "-o", "json", kubeconfig=kubeconfig, **kwargs)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def assert_one_line_error(result: subprocess.CompletedProcess[str], exit_code: int = 1) -> str:
    """A clear error: the given exit code, one line on stderr, no traceback, nothing on stdout."""
    assert result.returncode == exit_code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    return lines[0]
