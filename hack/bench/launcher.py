"""Timing commands through the launcher process (hack/bench/launch.py, see why there)."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

LAUNCH = Path(__file__).with_name("launch.py")


@dataclass
class Sample:
    seconds: float
    rss_mb: float
    exit_code: int
    stdout: str
    stderr: str


class Launcher:
    """Start it first thing, while the benchmark's process is still small."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(LAUNCH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.dir = Path(tempfile.mkdtemp(prefix="kubectl-terminating-bench-"))

    def run(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> Sample:
        assert self.process.stdin is not None and self.process.stdout is not None
        out, err = self.dir / "stdout", self.dir / "stderr"
        job = {"argv": list(argv), "env": env, "cwd": str(cwd), "out": str(out), "err": str(err)}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("the launcher died")
        elapsed, maxrss_kb, exit_code = json.loads(answer)
        return Sample(
            seconds=elapsed,
            rss_mb=maxrss_kb / 1024,
            exit_code=exit_code,
            stdout=out.read_text(errors="replace"),
            stderr=err.read_text(errors="replace"),
        )

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()  # it kills a command still running
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
