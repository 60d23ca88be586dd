"""One node holding thousands of pods (a virtual-kubelet node: Fargate, ACI virtual nodes,
Admiralty, Liqo) with a few stuck among them, on a real control plane: the reads grow with the
stuck pods, never with the healthy pods on their node, whether the node is live or dead.
"""

from __future__ import annotations

import json

import pytest
import urllib3

from tests.e2e.test_outage import STATS, healthy_pods, stuck_on
from tests.harness.api import condition, create_namespace, get, now, unique_ns
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import create_node, renew_lease, set_node_conditions, stale_lease

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FEW, MANY = 100, 5000  # healthy pods on the node before and after


def _reads(cp: ControlPlane, ns: str, live: str | None, *flags: str) -> tuple[int, int, int]:
    """(pods found, requests, bytes) of `pods -n ns -v 1` with `flags`; the Lease of the
    `live` node is renewed first, as its kubelet does every 10 s."""
    if live:
        renew_lease(cp, live)
    result = run_cli("pods", "-n", ns, "-v", "1", *flags, kubeconfig=cp.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    match = STATS.search(result.stderr)
    assert match, result.stderr
    if flags == ("-o", "json"):
        found = len(json.loads(result.stdout)["items"])
    else:  # the table: header, rows, then (past 20 rows) the causes
        found = len(result.stdout.partition("\n\n")[0].splitlines()) - 1
    return found, int(match[1]), int(match[2])


def _table_row_bytes(cp: ControlPlane, ns: str) -> float:
    """The mean size of a row of the namespace's pod Table (the scan the tool always makes),
    in the bytes the API server sends."""
    http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=str(cp.ca_file))
    headers = {
        "Authorization": f"Bearer {cp.admin_token}",
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io",
    }
    path = f"/api/v1/namespaces/{ns}/pods?includeObject=None"
    answer = http.request("GET", cp.server + path, headers=headers)
    assert answer.status == 200, answer.data[:200]
    return len(answer.data) / len(json.loads(answer.data)["rows"])


def test_a_node_with_thousands_of_pods_costs_only_its_stuck_ones(
    control_plane: ControlPlane,
) -> None:
    """5 pods stuck on a live node among 100 healthy ones, then 4,900 more healthy pods on it:
    the same requests, and each healthy pod adds no more than its row of the Table scan (a
    list of the node's pods would read each one whole, about 10 times that). The same once
    the node is dead: few of its pods are being deleted, so it is not listed whole either."""
    cp = control_plane
    ns = unique_ns("bignode")
    create_namespace(cp, ns)
    node = f"{ns}-virtual"
    create_node(cp, node, labels={"type": "virtual-kubelet"})
    stuck_on(cp, ns, [node], 5)
    healthy_pods(cp, ns, node, 0, FEW)
    before = {flags: _reads(cp, ns, node, *flags) for flags in [(), ("-o", "json")]}
    healthy_pods(cp, ns, node, FEW, MANY)
    row = _table_row_bytes(cp, ns)
    full_pod = len(json.dumps(get(cp, f"/api/v1/namespaces/{ns}/pods/ok-0")))
    for flags, (found, requests, read) in before.items():
        found_after, requests_after, read_after = _reads(cp, ns, node, *flags)
        assert found == found_after == 5 and requests_after == requests, (flags, requests_after)
        per_healthy_pod = (read_after - read) / (MANY - FEW)
        assert per_healthy_pod < 1.2 * row < full_pod / 3, (flags, per_healthy_pod, row, full_pod)

    # the kubelet stops: its node is dead, yet 5 of its 5,005 pods do not pay for a node list
    stopped = condition(
        "Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", now(-600)
    )
    set_node_conditions(cp, node, [stopped])
    stale_lease(cp, node, 600)
    for flags, (_, requests, read) in before.items():
        found_dead, requests_dead, read_dead = _reads(cp, ns, None, *flags)
        assert found_dead == 5 and requests_dead <= requests, (flags, requests_dead, requests)
        per_healthy_pod = (read_dead - read) / (MANY - FEW)
        assert per_healthy_pod < 1.2 * row, (flags, per_healthy_pod, row)
