"""`make bench-watch`: `pods -A -w` on a big cluster where nothing changes.

A control plane with WATCH_PODS healthy pods and a handful stuck on a dead node; once the
first table is printed and the watches are open, the requests the plugin sends (the API
server's audit log, by user agent) and the CPU it uses (/proc) are counted over WATCH_SECONDS.
Target (the issue's): steady-state CPU near idle and no full relist while nothing changes.
WATCH_COMMAND=serve measures the exporter's watch layer the same way: `serve --interval=1h`
once its first run is done and its watches are open (runs every interval cost what
bench-exporter measures; the watches must add nothing while nothing changes).

    WATCH_PODS=20000 WATCH_SECONDS=60 make bench-watch
    WATCH_COMMAND=serve WATCH_PODS=20000 make bench-watch
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from hack.bench.filler import Filler
from hack.bench.settings import REPO, log
from tests.harness.controlplane import ControlPlane

STUCK = 5
SERVE = ["serve", "-v=1", "--interval=1h", "--metrics-bind-address=127.0.0.1:0"]
USER_AGENT = "kubectl-terminating/"


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    pods, seconds = (
        int(os.environ.get("WATCH_PODS") or 20000),
        int(os.environ.get("WATCH_SECONDS") or 60),
    )
    cp = ControlPlane(REPO / ".bench" / "watch" / "cp")
    try:
        cp.start()
        filler = Filler(cp, 8)
        filler.add_pods(pods)
        filler.add_outage(STUCK)
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
        env.update(KUBECONFIG=str(cp.kubeconfig_path), PYTHONPATH=str(REPO))
        serve = os.environ.get("WATCH_COMMAND") == "serve"
        command = SERVE if serve else ["pods", "-A", "-w"]
        process = subprocess.Popen(
            [sys.executable, "-m", "kubectl_terminating", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if serve else subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert process.stdout is not None
        started = time.monotonic()
        if serve:  # serve's log: the first run, then the watches open
            while "for changes" not in process.stdout.readline():
                pass
        rows = 0
        while rows < STUCK and not serve:  # the table: a header and one row per stuck pod
            if process.stdout.readline().startswith("app-"):
                rows += 1
        first_table = time.monotonic() - started
        time.sleep(5)  # the watches open once the table is out
        mark, cpu = cp.audit_offset(), cpu_seconds(process.pid)
        time.sleep(seconds)
        used = cpu_seconds(process.pid) - cpu
        requests = Counter(
            f"{e['verb']} {e.get('objectRef', {}).get('resource', e.get('requestURI'))}"
            for e in cp.audit_events(mark)
            if e.get("userAgent", "").startswith(USER_AGENT)
        )
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    finally:
        cp.stop()
    lists = sum(n for request, n in requests.items() if request.startswith("list "))
    report = "\n".join(
        [
            f"# bench-watch: {' '.join(command)}, {pods} healthy pods, {STUCK} stuck",
            "",
            f"{'watches open' if serve else 'first table'}: {first_table:.1f}s",
            f"over {seconds}s with nothing changing: {sum(requests.values())} requests "
            f"({dict(requests) or 'none'}), {lists} lists, CPU {used:.2f}s "
            f"({100 * used / seconds:.1f}% of a core)",
        ]
    )
    log(report)
    (REPO / ".bench" / "watch" / "report.md").write_text(report + "\n")
    print(report)
    return 0 if lists == 0 and used < 0.05 * seconds else 1


if __name__ == "__main__":
    sys.exit(main())
