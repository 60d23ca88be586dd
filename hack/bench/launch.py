"""The benchmark's launcher: a bare interpreter (`python -I -S launch.py`) that runs each
command it reads on stdin and answers with its wall time, ru_maxrss and exit code.

Commands are started from here, not from the benchmark: a child's ru_maxrss starts from the
high-water mark of the memory it was forked from (Linux records the old mm's peak at exec),
so forking from the benchmark (which holds the fill's data) would inflate every number.
Standard library only: it runs isolated, before the benchmark has grown.

One job a line: {"argv", "env", "cwd", "out", "err"} -> [seconds, maxrss_kb, exit_code].
"""

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from types import FrameType

PR_SET_PDEATHSIG = 1


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # die with the benchmark
    running: list[subprocess.Popen[bytes]] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        for child in running:
            if child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for line in sys.stdin:
        job = json.loads(line)
        with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
            started = time.monotonic()
            child = subprocess.Popen(
                job["argv"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=job["env"],
                cwd=job["cwd"],
                start_new_session=True,
            )
            running[:] = [child]
            _, status, usage = os.wait4(child.pid, 0)
            elapsed = time.monotonic() - started
            child.returncode = os.waitstatus_to_exitcode(status)
        print(json.dumps([elapsed, usage.ru_maxrss, child.returncode]), flush=True)


if __name__ == "__main__":
    main()
