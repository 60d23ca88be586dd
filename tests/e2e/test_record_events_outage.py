"""A 2,000-pod outage with `serve --record-events` at its default pace: its event writes, read
from the API server's audit log, fit upstream's example event rate limits (kubernetes/website,
admission-controllers.md, EventRateLimit: per namespace 50/s, burst 100; per user 10/s, burst
50), counted as that plugin's token buckets count them.

Counted, not enforced: the EventRateLimit plugin only looks at core-group Events
(plugin/pkg/admission/eventratelimit/admission.go: `attr.GetKind().GroupKind() !=
api.Kind("Event")`), so writes through events.k8s.io/v1 pass it. Measured on v1.36.3 with a User
limit of 10/s, burst 50: of 80 Events created at once, 51 through /api/v1 and all 80 through
/apis/events.k8s.io/v1. serve's own token bucket is what keeps it within.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_outage import dead_node, stuck_on
from tests.e2e.test_record_events import LEASES, READS, WRITE_EVENTS, ours
from tests.harness.api import create_namespace, unique_ns, wait_for
from tests.harness.cli import start_serve
from tests.harness.controlplane import ControlPlane, free_port
from tests.harness.users import Users

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

JSON = dict[str, Any]
BUCKETS = {"Namespace": (50.0, 100), "User": (10.0, 50)}
NODES, PER_NODE = 4, 500
WATCHED = 45.0  # seconds of writing read from the audit log: the burst and 100 more at 5/s
WAIT = 600.0


def at(event: JSON) -> float:
    return datetime.fromisoformat(
        event["requestReceivedTimestamp"].replace("Z", "+00:00")
    ).timestamp()


def within(times: list[float], qps: float, burst: int) -> bool:
    """Whether a token bucket of qps and burst, full at first, admits every request."""
    tokens, last = float(burst), times[0] if times else 0.0
    for moment in times:
        tokens = min(float(burst), tokens + (moment - last) * qps)
        last = moment
        if tokens < 1.0:
            return False
        tokens -= 1.0
    return True


def test_a_2000_pod_outage_stays_within_the_event_rate_limits(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    ns = unique_ns("outage-events")
    create_namespace(cp, ns)
    nodes = [f"{ns}-zone-{i}" for i in range(NODES)]
    for node in nodes:
        dead_node(cp, node)
    stuck_on(cp, ns, nodes, PER_NODE)
    with Users(cp, tmp_path / "users", "outage-events") as users:
        user = users.user(
            "recorder",
            cluster_rules=[READS, WRITE_EVENTS],
            namespace_rules={users.namespace: [LEASES]},
        )
        offset = cp.audit_offset()
        env = {"POD_NAME": "serve-0", "POD_NAMESPACE": users.namespace}
        log_path = tmp_path / "serve.log"
        with open(log_path, "wb") as log:
            proc = start_serve(user.kubeconfig, free_port(), "10s", log, "--record-events", env=env)
            try:
                first = wait_for(lambda: ours(cp, ns), WAIT, 1.0, message="the first event")
                assert first, log_path.read_text()[-2000:]
                wait_for(
                    lambda: len(event_writes(cp, offset, user.username)) >= 25 + 5 * WATCHED * 0.9
                    or None,
                    WAIT,
                    1.0,
                    message="writes for 45 s",
                )
                with open(f"/proc/{proc.pid}/status") as status:
                    peak = next(line for line in status if line.startswith("VmHWM:"))
            except TimeoutError:
                raise AssertionError(log_path.read_text()[-3000:]) from None
            finally:
                proc.terminate()
                proc.wait(30)
    written = event_writes(cp, offset, user.username)
    assert {e["responseStatus"]["code"] for e in written} <= {200, 201}
    times = sorted(at(e) for e in written)
    for kind, (qps, burst) in BUCKETS.items():
        assert within(times, qps, burst), kind
    # and the pace is the default's, not a trickle: 5/s after the burst of 25
    span = times[-1] - times[0]
    assert len(times) >= 25 + 4 * span, (len(times), span)
    peak_mib = int(peak.split()[1]) / 1024
    assert peak_mib < 256, peak  # the chart's memory request
    print(f"{len(times)} event writes in {span:.0f}s; serve's peak RSS {peak_mib:.0f} MiB")


def event_writes(cp: ControlPlane, offset: int, username: str) -> list[JSON]:
    return [
        e
        for e in cp.audit_events(offset, username)
        if e.get("objectRef", {}).get("resource") == "events" and e["verb"] in ("create", "patch")
    ]
