"""Which of serve's replicas writes Events: the holder of one coordination.k8s.io Lease.

Simple leader election, the steps of client-go's LeaderElector.tryAcquireOrRenew
(k8s.io/client-go/tools/leaderelection/leaderelection.go): read the Lease, create it when
there is none; another holder whose lease has not run out makes this replica a follower;
else write ourselves in (renewTime, and acquireTime with leaseTransitions + 1 when taken
over). The write carries the resourceVersion read, so of two replicas racing for it one gets
409 Conflict and stays a follower. client-go measures the lease on the observer's own clock
from when it last saw the record change; here renewTime is compared with the API server's
time (Client.server_now, corrected by the server's Date), which every replica shares.
Durations: client-go's recommended 15s lease (k8s.io/component-base/config/v1alpha1/
defaults.go, RecommendedDefaultLeaderElectionConfiguration: 15s / renew 10s / retry 2s).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from kubectl_terminating.errors import ApiError, NotFound
from kubectl_terminating.model import JSON
from kubectl_terminating.timeutil import parse_time

if TYPE_CHECKING:
    from kubectl_terminating.client import Client

LEASE_NAME = "kubectl-terminating-events"
# the holder renews every RENEW_SECONDS and writes only in the RENEW_SECONDS after a renewal,
# well inside the lease
LEASE_SECONDS = 15
RENEW_SECONDS = 5.0


def identity() -> str:
    """This replica's name: the pod's (POD_NAME, from the downward API), else the host's (a
    pod's hostname is its name). Also the Events' reportingInstance (at most 128 bytes)."""
    return (os.environ.get("POD_NAME") or socket.gethostname() or "serve")[:128]


def micro_time(moment: datetime) -> str:
    """A MicroTime as the API writes it: RFC 3339 with microseconds, UTC."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Lease:
    namespace: str
    holder: str
    name: str = LEASE_NAME

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def hold(self, client: Client) -> bool:
        """Renew the Lease if it is ours, take it if it is free or expired; whether this
        replica holds it now. A conflict (another replica was faster) or any error: False."""
        now = client.server_now()
        try:
            current = client.get(self.path)
        except NotFound:
            return self._create(client, now)
        except ApiError:
            return False
        spec = current.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.holder and not expired(spec, now):
            return False
        stamp = micro_time(now)
        taken = holder != self.holder
        renewed = {
            **spec,
            "holderIdentity": self.holder,
            "leaseDurationSeconds": LEASE_SECONDS,
            "renewTime": stamp,
        }
        if taken:
            renewed["acquireTime"] = stamp
            renewed["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        body = {**current, "spec": renewed}  # metadata.resourceVersion: the precondition
        try:
            client.put(self.path, body)
        except ApiError:  # 409: another replica changed it since our read
            return False
        return True

    def _create(self, client: Client, now: datetime) -> bool:
        stamp = micro_time(now)
        body: JSON = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.holder,
                "leaseDurationSeconds": LEASE_SECONDS,
                "acquireTime": stamp,
                "renewTime": stamp,
                "leaseTransitions": 0,
            },
        }
        try:
            client.create(self.path.rsplit("/", 1)[0], body)
        except ApiError:  # 409 AlreadyExists: another replica created it first
            return False
        return True


def expired(spec: JSON, now: datetime) -> bool:
    """No renewal within leaseDurationSeconds (or none readable: a Lease that says nothing
    holds nothing)."""
    renewed = parse_time(spec.get("renewTime"))
    seconds = spec.get("leaseDurationSeconds")
    if renewed is None or not isinstance(seconds, int) or seconds <= 0:
        return True
    return now > renewed + timedelta(seconds=seconds)
