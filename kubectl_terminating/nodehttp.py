"""Bounded GETs to one node's kubelet for `--node-evidence`: through the API server's node proxy,
or to the kubelet itself at its InternalIP and port, over HTTPS verified with the cluster's CA,
with the pod's service account token (docs/node-evidence.md). Reading what they answer is
nodeproxy.py's.
"""

from __future__ import annotations

import ssl
import time
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import urllib3

from kubectl_terminating.client import CONNECT_TIMEOUT, Client
from kubectl_terminating.errors import ApiError
from kubectl_terminating.nodeaccess import kubelet_refusal

NODE_DEADLINE = 15.0  # seconds for all of one node's reads


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    body: bytes
    truncated: bool  # the cap was reached: the rest was not read


class OutOfTime(Exception):
    pass


def _left(give_up_at: float) -> float:
    left = give_up_at - time.monotonic()
    if left <= 0:
        raise OutOfTime(f"no answer within {NODE_DEADLINE:g}s")
    return left


def _send(
    pool: urllib3.PoolManager,
    url: str,
    headers: dict[str, str],
    limit: int,
    give_up_at: float,
    what: str,
) -> tuple[urllib3.BaseHTTPResponse, bytes, bool]:
    """The response, at most `limit` bytes of its body, and whether the cap was reached."""
    left = _left(give_up_at)
    timeout = urllib3.Timeout(connect=min(left, CONNECT_TIMEOUT), read=left)
    try:
        response = pool.request(
            "GET", url, headers=headers, preload_content=False, timeout=timeout, retries=False
        )
    except urllib3.exceptions.SSLError as error:
        raise ApiError(f"could not verify {what}'s serving certificate: {error}") from None
    except urllib3.exceptions.HTTPError as error:
        raise ApiError(f"could not reach {what}: {error}") from None
    chunks, size, truncated = [], 0, False
    # read1 as the client's reads: urllib3 < 2.2 lacks it, there each read is bounded by the
    # read timeout
    read = getattr(response, "read1", None) or response.read
    try:
        while chunk := read(min(64 * 1024, limit - size)) if size < limit else b"":
            chunks.append(chunk)
            size += len(chunk)
            if time.monotonic() > give_up_at:
                raise OutOfTime(f"no answer within {NODE_DEADLINE:g}s")
        truncated = size >= limit
    except urllib3.exceptions.HTTPError as error:
        response.close()
        raise ApiError(f"{what}'s answer broke off: {error}") from None
    except BaseException:
        response.close()
        raise
    finally:
        if truncated:
            response.close()  # the rest stays unread: the connection cannot be reused
        response.release_conn()
    return response, b"".join(chunks), truncated


class ThroughProxy:
    """One node's kubelet through the API server's node proxy (`get nodes/proxy`)."""

    def __init__(self, client: Client, node: str) -> None:
        self.client, self.node = client, node
        self.via = ""  # the evidence names the path alone, as it always has

    def get(
        self,
        sub: str,
        params: dict[str, str] | None,
        accept: str,
        limit: int,
        give_up_at: float,
        extra: dict[str, str] | None = None,
    ) -> Reply:
        client = self.client
        path = f"/api/v1/nodes/{quote(self.node, safe='')}/proxy/{sub}"
        pool, url, headers, _ = client._prepare(path, params, accept, _left(give_up_at))
        headers.update(extra or {})
        started = client.clock()  # what _log_request measures against
        response, body, truncated = _send(
            pool, url, dict(headers), limit, give_up_at, "the API server's node proxy"
        )
        client._log_request(url, response.status, len(body), started, response.headers)
        if response.status == 401:  # the kubelet refused the API server, not the user
            raise ApiError(f"the kubelet refused the API server's request for {sub}", 401)
        if response.status >= 400:
            raise client._api_error(response.status, body, path)
        return Reply(response.status, response.headers.get("Content-Type", ""), body, truncated)


def kubelet_pool(client: Client) -> urllib3.PoolManager:
    """HTTPS to kubelets, their serving certificates verified with the cluster's CA (the
    pod's ca.crt): a kubelet's self-signed certificate does not verify, and no token is
    sent to it."""
    context = ssl.create_default_context()
    ca = client.connection.ca_data
    if ca:
        context.load_verify_locations(cadata=ca.decode("ascii", "replace"))
    return urllib3.PoolManager(num_pools=8, maxsize=1, ssl_context=context, retries=False)


class Direct:
    """One node's kubelet itself, at address:port, with the client's bearer token."""

    def __init__(
        self, client: Client, pool: urllib3.PoolManager, node: str, address: str, port: int
    ) -> None:
        self.client, self.pool, self.node = client, pool, node
        host = f"[{address}]" if ":" in address else address
        self.base = f"https://{host}:{port}/"
        self.via = f"the kubelet at {host}:{port}"

    def get(
        self,
        sub: str,
        params: dict[str, str] | None,
        accept: str,
        limit: int,
        give_up_at: float,
        extra: dict[str, str] | None = None,
    ) -> Reply:
        client = self.client
        client._ensure_pool()  # the token is read with the client's credentials
        headers = {"Accept": accept, "User-Agent": str(client._headers.get("User-Agent", ""))}
        authorization = client._headers.get("Authorization")
        if authorization:
            headers["Authorization"] = str(authorization)
        headers.update(extra or {})
        url = self.base + sub
        if params:
            url += "?" + urlencode(params)
        started = client.clock()
        response, body, truncated = _send(self.pool, url, headers, limit, give_up_at, self.via)
        if client.verbosity >= 6:
            elapsed = (client.clock() - started) * 1000
            client.log.write(f"GET {url} {response.status} in {elapsed:.0f} ms\n")
        if response.status in (401, 403):
            raise ApiError(kubelet_refusal(sub, response.status, body), response.status)
        if response.status >= 400:
            said = body[:200].decode("utf-8", "replace").strip()
            raise ApiError(f"{self.via} answered {response.status}: {said}", response.status)
        return Reply(response.status, response.headers.get("Content-Type", ""), body, truncated)
