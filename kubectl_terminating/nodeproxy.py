"""`--node-evidence`: the kubelet's own word, read GET-only and bounded through the API server's
node proxy (docs/node-evidence.md).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

import urllib3

from kubectl_terminating.bounded import json_documents
from kubectl_terminating.client import ACCEPT_JSON, CONNECT_TIMEOUT, Client
from kubectl_terminating.errors import ApiError, ConfigError, Unauthorized
from kubectl_terminating.nodeanswers import (
    PERMISSION,
    NodeEvidence,
    NodeEvidenceRefused,
    Subject,
    free_space,
    kubelet_pods,
    log_pattern,
    matching,
)

LOG_BYTES = 256 * 1024  # the tail of a log file, and the most of a log query's answer read
JSON_BYTES = 4 * 1024 * 1024  # stats/summary and pods of a node with 110 pods: well under
MAX_LINES = 50  # lines kept per node (the newest)
NODE_DEADLINE = 15.0  # seconds for all of one node's reads
NODES_AT_ONCE = 4
LOG_FILE = "kubelet.log"
RUNTIME = "containerd"  # the runtime whose log is read for containers it holds
# a log query answered from a file under /var/log instead of journald (kubelet
# pkg/kubelet/kubelet_server_journal.go): options are refused, the file is what to read
RESOLVED_TO_FILES = b"query resolved to log files"
QUERY_OFF = (
    "the kubelet's node log query is off (enableSystemLogQuery: false, or the NodeLogQuery "
    "feature gate off): node evidence read the log files under /var/log instead"
)
LOGS_OFF = (
    "the kubelet serves no logs (enableSystemLogHandler: false): node evidence has no log lines"
)
NO_LOG = (
    "the {unit} log is neither in the kubelet's node log query (journald, "
    "enableSystemLogQuery) nor in /var/log/{unit}.log: node evidence has no lines of it"
)
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
# the only subpaths of the node proxy ever requested
PATHS = frozenset({"logs/", f"logs/{LOG_FILE}", f"logs/{RUNTIME}.log", "stats/summary", "pods"})


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    body: bytes
    truncated: bool  # the cap was reached: the rest was not read


class OutOfTime(Exception):
    pass


class NodeProxy:
    """Bounded GETs to the node proxy of one API server (docs/node-evidence.md)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def check_permission(self) -> None:
        """NodeEvidenceRefused unless the user may `get nodes/proxy` (a SelfSubjectAccessReview:
        nothing is sent to a node proxy before it answers yes)."""
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {"verb": "get", "resource": "nodes", "subresource": "proxy"}
            },
        }
        try:
            _, answer = self.client.create(SSAR_PATH, review)
        except Unauthorized:
            raise
        except ApiError as error:
            why = f"could not check the permission {PERMISSION}: {_why(error)}"
            raise NodeEvidenceRefused(why, f"node evidence not read: {why}") from None
        status = answer.get("status") or {}
        if status.get("allowed") is not True:
            why = f"{PERMISSION} is not allowed"
            raise NodeEvidenceRefused(
                why,
                f"node evidence not read: {why} for this user (it is exec-equivalent: it lets "
                "a user run commands in containers; grant it only where that is acceptable)",
            )

    def read_nodes(
        self, subjects: Mapping[str, Subject]
    ) -> tuple[dict[str, NodeEvidence], list[str]]:
        """Each node's evidence, NODES_AT_ONCE nodes at a time, and the run's warnings (each
        said once)."""
        names = sorted(subjects)
        if not names:
            return {}, []
        self.check_permission()
        with ThreadPoolExecutor(max_workers=min(NODES_AT_ONCE, len(names))) as pool:
            read = list(pool.map(lambda n: self.read_node(n, subjects[n]), names))
        warnings = dict.fromkeys(w for evidence, said in read for w in said)
        return {n: evidence for n, (evidence, _) in zip(names, read, strict=True)}, list(warnings)

    def read_node(self, node: str, subject: Subject) -> tuple[NodeEvidence, list[str]]:
        give_up_at = time.monotonic() + NODE_DEADLINE
        warnings: list[str] = []
        problems: list[str] = []
        source, lines = self._log_lines(node, "kubelet", subject, give_up_at, warnings, problems)
        runtime_source, runtime_lines = "", list[str]()
        free, pods = {}, None
        # the kubelet's log could not be read at all (not reachable through the proxy, out of
        # time): nothing more is asked of this node
        if not problems:
            if subject.runtime:
                runtime_source, runtime_lines = self._log_lines(
                    node, RUNTIME, subject, give_up_at, [], problems
                )
            try:
                free = free_space(self._json(node, "stats/summary", give_up_at))
            except (ApiError, OutOfTime, ValueError) as error:
                problems.append(f"stats/summary: {_why(error)}")
            try:
                pods = kubelet_pods(self._json(node, "pods", give_up_at))
            except (ApiError, OutOfTime, ValueError) as error:
                problems.append(f"pods: {_why(error)}")
        if problems:  # one warning per node
            warnings.append(f"node evidence of {node}: could not read {'; '.join(problems)}")
        evidence = NodeEvidence(
            node,
            source,
            tuple(lines),
            runtime_source,
            tuple(runtime_lines),
            free,
            pods,
            tuple(problems),
        )
        return evidence, warnings

    # -- the log ----------------------------------------------------------------------------

    def _log_lines(
        self,
        node: str,
        unit: str,
        subject: Subject,
        give_up_at: float,
        warnings: list[str],
        problems: list[str],
    ) -> tuple[str, list[str]]:
        params = {"query": unit, "pattern": log_pattern(subject.keys)}
        if subject.since:
            params["sinceTime"] = subject.since
        reply = self._log_get(node, "logs/", params, give_up_at, problems)
        if reply == 405:  # the kubelet's answer when its log handler is off
            warnings.append(LOGS_OFF)
        if isinstance(reply, int) and reply != 404:
            return "", []
        # the HTML listing of /var/log: the query parameters were ignored (query off)
        query_off = isinstance(reply, int) or (
            "html" in reply.content_type or reply.body.lstrip()[:1] == b"<"
        )
        if not isinstance(reply, int) and not query_off and RESOLVED_TO_FILES not in reply.body:
            kept = matching(_lines(reply.body, False), subject.keys)
            return f"logs/?query={unit}", kept[-MAX_LINES:]
        tail = {"Range": f"bytes=-{LOG_BYTES}"}
        reply = self._log_get(node, f"logs/{unit}.log", None, give_up_at, problems, tail)
        if reply == 404:
            warnings.append(NO_LOG.format(unit=unit))
        if isinstance(reply, int):
            return "", []
        if query_off:
            warnings.append(QUERY_OFF)
        # a tail starts inside a line: drop that first, partial one
        partial = reply.status == 206 or reply.truncated
        kept = matching(_lines(reply.body, partial), subject.keys)
        return f"logs/{unit}.log", kept[-MAX_LINES:]

    def _log_get(
        self,
        node: str,
        sub: str,
        params: dict[str, str] | None,
        give_up_at: float,
        problems: list[str],
        extra: dict[str, str] | None = None,
    ) -> Reply | int:
        """The reply; or the status of a 404 or 405 (the caller says what it means); or 0
        once the problem is noted."""
        try:
            return self._get(node, sub, params, LOG_BYTES, give_up_at, extra)
        except ApiError as error:
            if error.status in (404, 405):
                return error.status
            problems.append(f"{sub}: {_why(error)}")
        except OutOfTime as error:
            problems.append(f"{sub}: {_why(error)}")
        return 0

    # -- bounded GETs -----------------------------------------------------------------------

    def _json(self, node: str, sub: str, give_up_at: float) -> object:
        reply = self._get(node, sub, None, JSON_BYTES, give_up_at)
        if reply.truncated:
            raise ValueError(f"answer larger than {JSON_BYTES} bytes")
        # bounded like a file: a malformed or deeply nested answer is a problem, not a crash
        try:
            documents = json_documents(bytearray(reply.body), f"{sub} of node {node}").documents
        except ConfigError as error:
            raise ValueError(str(error)) from None
        if len(documents) != 1:
            raise ValueError(f"{len(documents)} JSON documents, not one")
        return documents[0]

    def _get(
        self,
        node: str,
        sub: str,
        params: dict[str, str] | None,
        limit: int,
        give_up_at: float,
        extra: dict[str, str] | None = None,
    ) -> Reply:
        """GET one of PATHS on node's proxy, reading at most `limit` bytes of the body."""
        if sub not in PATHS:
            raise ValueError(f"not a node evidence path: {sub}")
        path = f"/api/v1/nodes/{quote(node, safe='')}/proxy/{sub}"
        left = give_up_at - time.monotonic()
        if left <= 0:
            raise OutOfTime(f"no answer within {NODE_DEADLINE:g}s")
        client = self.client
        # the kubelet's /logs/ answers 406 to `Accept: application/json`
        accept = ACCEPT_JSON if sub in ("pods", "stats/summary") else "text/plain, */*"
        pool, url, headers, _ = client._prepare(path, params, accept, left)
        headers.update(extra or {})
        started = client.clock()  # what _log_request measures against
        timeout = urllib3.Timeout(connect=min(left, CONNECT_TIMEOUT), read=left)
        try:
            response = pool.request(
                "GET", url, headers=headers, preload_content=False, timeout=timeout, retries=False
            )
        except urllib3.exceptions.HTTPError as error:
            raise ApiError(f"could not reach the API server's node proxy: {error}") from None
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
            raise ApiError(f"the node proxy's answer broke off: {error}") from None
        except BaseException:
            response.close()
            raise
        finally:
            if truncated:
                response.close()  # the rest stays unread: the connection cannot be reused
            response.release_conn()
        body = b"".join(chunks)
        client._log_request(url, response.status, size, started, response.headers)
        if response.status == 401:  # the kubelet refused the API server, not the user
            raise ApiError(f"the kubelet refused the API server's request for {sub}", 401)
        if response.status >= 400:
            raise client._api_error(response.status, body, path)
        return Reply(response.status, response.headers.get("Content-Type", ""), body, truncated)


def _lines(body: bytes, partial_first: bool) -> list[str]:
    lines = body.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if partial_first and lines else lines


def _why(error: Exception) -> str:
    return str(getattr(error, "message", "") or error)
