"""Which right each kubelet endpoint of `--node-evidence` needs, and which way to the kubelet
a run takes: from inside a pod the kubelet itself with the narrow rights, else the API server's
node proxy with `get nodes/proxy` (docs/node-evidence.md). Pure: the caller asks the API
server (SelfSubjectAccessReview) and reads.

What the kubelet checks, from kubernetes v1.36.3 pkg/kubelet/server/auth.go
(nodeAuthorizerAttributesGetter.GetRequestAttributes) and server.go (InstallAuthFilter): a
GET of `/logs/...` is authorized as `get nodes/log` and `/stats/...` as `get nodes/stats`,
whatever the feature gates; `/pods` as `get nodes/pods` or else `get nodes/proxy` (either
allows) when KubeletFineGrainedAuthz is on (beta and on by default since v1.33, GA and locked
on in v1.36), only `get nodes/proxy` when it is off. The kubelet names what it asked for in
its 403: `Forbidden (user=..., verb=get, resource=nodes, subresource(s)=[pods proxy])`.
Through the API server's node proxy every path needs `get nodes/proxy` (the API server's
own check), which is exec-equivalent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kubectl_terminating.model import JSON
from kubectl_terminating.nodeanswers import PERMISSION, NodeEvidenceRefused
from kubectl_terminating.resources import as_dict, list_of, text

LOG, STATS, PODS, PROXY = "log", "stats", "pods", "proxy"  # subresources of nodes
# the endpoint of each narrow right, as the evidence names it
ENDPOINTS = {LOG: "logs/", STATS: "stats/summary", PODS: "pods"}
EXEC_EQUIVALENT = (
    "it is exec-equivalent: it lets a user run commands in containers; grant it only where "
    "that is acceptable"
)
KUBELET_FORBIDDEN = re.compile(r"subresource\(s\)=\[([a-z ]*)\]")


def right(subresource: str) -> str:
    """`get nodes/log`: what a SelfSubjectAccessReview and RBAC call it."""
    return f"get nodes/{subresource}"


def right_of(path: str) -> str:
    """The subresource the kubelet checks for a node evidence path (`logs/kubelet.log`)."""
    if path.startswith("logs/"):
        return LOG
    if path.startswith("stats/"):
        return STATS
    return PODS if path == "pods" else PROXY


@dataclass(frozen=True)
class Way:
    """How a run reads the kubelets: directly (from a pod, with the narrow rights) or through
    the API server's node proxy; which of the narrow endpoints it reads (through the proxy:
    all); the run's warnings about what it leaves out."""

    direct: bool
    reads: frozenset[str]
    warnings: tuple[str, ...] = ()

    def reads_path(self, path: str) -> bool:
        return not self.direct or right_of(path) in self.reads


def choose(in_pod: bool, allowed: Callable[[str], bool]) -> Way:
    """The narrowest way that works. `allowed(subresource)`: may this user `get
    nodes/<subresource>` (asked only when it matters, in the order it is needed). Raises
    NodeEvidenceRefused when no way is allowed: nothing is then sent to any kubelet."""
    if in_pod and allowed(LOG):
        reads = {LOG} | {r for r in (STATS, PODS) if allowed(r)}
        left_out = tuple(
            f"node evidence read without the kubelet's {ENDPOINTS[r]}: {right(r)} is not "
            "allowed for this user"
            for r in (STATS, PODS)
            if r not in reads
        )
        return Way(True, frozenset(reads), left_out)
    if allowed(PROXY):
        return Way(False, frozenset(ENDPOINTS))
    if in_pod:
        why = f"neither {right(LOG)} nor {PERMISSION} is allowed"
        raise NodeEvidenceRefused(
            why,
            f"node evidence not read: {why} for this user (in a pod the kubelet is read "
            f"directly with {right(LOG)}, {right(STATS)} and {right(PODS)}; {PERMISSION}, "
            f"the API server's node proxy, is exec-equivalent: grant it only where that is "
            "acceptable)",
        )
    why = f"{PERMISSION} is not allowed"
    raise NodeEvidenceRefused(
        why, f"node evidence not read: {why} for this user ({EXEC_EQUIVALENT})"
    )


def kubelet_endpoint(node: JSON) -> tuple[str, int] | str:
    """(address, port) where the node's kubelet serves (its InternalIP and
    status.daemonEndpoints.kubeletEndpoint.Port), or why it cannot be reached directly."""
    status = as_dict(node.get("status"))
    endpoint = as_dict(as_dict(status.get("daemonEndpoints")).get("kubeletEndpoint"))
    port = endpoint.get("Port")
    addresses = [
        text(as_dict(a).get("address"))
        for a in list_of(status.get("addresses"))
        if as_dict(a).get("type") == "InternalIP"
    ]
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        return "the node reports no kubelet port (status.daemonEndpoints.kubeletEndpoint.Port)"
    if not addresses or not addresses[0]:
        return "the node reports no InternalIP (status.addresses)"
    return addresses[0], port


def kubelet_refusal(path: str, status: int, body: bytes) -> str:
    """What a kubelet's 401 or 403 to a direct read means, in one line."""
    if status == 401:
        return (
            "the kubelet did not accept this service account's token (its "
            "authentication.webhook.enabled is false?)"
        )
    found = KUBELET_FORBIDDEN.search(body.decode("utf-8", "replace"))
    asked = found.group(1).split() if found else []
    wanted = right_of(path)
    if asked == [PROXY] and wanted != PROXY:
        return (
            f"the kubelet asks for {PERMISSION} here, not {right(wanted)} "
            "(fine-grained kubelet authorization is off: before v1.33, or the "
            "KubeletFineGrainedAuthz gate off)"
        )
    said = " or ".join(right(a) for a in asked) or right(wanted)
    return f"the kubelet refused {said} for this user"
