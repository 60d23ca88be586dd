"""`--node-evidence`: the kubelet's own word, read GET-only and bounded, from the kubelet itself
(in a pod, with the narrow rights) or through the API server's node proxy (docs/node-evidence.md).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol
from urllib.parse import quote

from kubectl_terminating.bounded import json_documents
from kubectl_terminating.client import ACCEPT_JSON, Client
from kubectl_terminating.errors import ApiError, ConfigError, Unauthorized
from kubectl_terminating.nodeaccess import (
    ENDPOINTS,
    Way,
    choose,
    kubelet_endpoint,
    right,
    right_of,
)
from kubectl_terminating.nodeanswers import (
    NodeEvidence,
    NodeEvidenceRefused,
    Subject,
    free_space,
    kubelet_pods,
    log_pattern,
    matching,
)
from kubectl_terminating.nodehttp import (
    NODE_DEADLINE,
    Direct,
    OutOfTime,
    Reply,
    ThroughProxy,
    kubelet_pool,
)

LOG_BYTES = 256 * 1024  # the tail of a log file, and the most of a log query's answer read
JSON_BYTES = 4 * 1024 * 1024  # stats/summary and pods of a node with 110 pods: well under
MAX_LINES = 50  # lines kept per node (the newest)
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
# the only subpaths of a kubelet ever requested
PATHS = frozenset({"logs/", f"logs/{LOG_FILE}", f"logs/{RUNTIME}.log", "stats/summary", "pods"})
THROUGH_PROXY = Way(False, frozenset(ENDPOINTS))


class Kubelet(Protocol):
    """One node's kubelet, reached one way (nodehttp.py); `via` names the way ('' for the
    node proxy)."""

    node: str
    via: str

    def get(
        self,
        sub: str,
        params: dict[str, str] | None,
        accept: str,
        limit: int,
        give_up_at: float,
        extra: dict[str, str] | None = None,
    ) -> Reply: ...


class NodeProxy:
    """Bounded GETs to the nodes' kubelets, the narrowest way the user's rights allow
    (nodeaccess.py; docs/node-evidence.md)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def allowed(self, subresource: str) -> bool:
        """May the user `get nodes/<subresource>`? (a SelfSubjectAccessReview: nothing is
        sent to a kubelet before the way's answers are yes)"""
        attributes = {"verb": "get", "resource": "nodes", "subresource": subresource}
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        try:
            _, answer = self.client.create(SSAR_PATH, review)
        except Unauthorized:
            raise
        except ApiError as error:
            why = f"could not check the permission {right(subresource)}: {_why(error)}"
            raise NodeEvidenceRefused(why, f"node evidence not read: {why}") from None
        return (answer.get("status") or {}).get("allowed") is True

    def way(self) -> Way:
        """From a pod the kubelet itself with the narrow rights, else the node proxy."""
        return choose(self.client.connection.in_pod, self.allowed)

    def read_nodes(
        self, subjects: Mapping[str, Subject]
    ) -> tuple[dict[str, NodeEvidence], list[str]]:
        """Each node's evidence, NODES_AT_ONCE nodes at a time, and the run's warnings (each
        said once)."""
        names = sorted(subjects)
        if not names:
            return {}, []
        way = self.way()
        pool = kubelet_pool(self.client) if way.direct else None

        def one(node: str) -> tuple[NodeEvidence, list[str]]:
            if pool is None:
                return self.read_node(node, subjects[node])
            try:
                found = kubelet_endpoint(self.client.get(f"/api/v1/nodes/{quote(node, safe='')}"))
            except ApiError as error:
                found = f"its Node could not be read: {_why(error)}"
            if isinstance(found, str):
                why = f"the kubelet cannot be reached directly: {found}"
                said = f"node evidence of {node}: could not read {why}"
                return NodeEvidence(node, problems=(why,)), [said]
            kubelet = Direct(self.client, pool, node, *found)
            return self.read_node(node, subjects[node], kubelet, way)

        try:
            with ThreadPoolExecutor(max_workers=min(NODES_AT_ONCE, len(names))) as threads:
                read = list(threads.map(one, names))
        finally:
            if pool is not None:
                pool.clear()  # serve reads again next run: no connection to a kubelet kept
        warnings = dict.fromkeys([*way.warnings, *(w for evidence, said in read for w in said)])
        return {n: evidence for n, (evidence, _) in zip(names, read, strict=True)}, list(warnings)

    def read_node(
        self,
        node: str,
        subject: Subject,
        kubelet: Kubelet | None = None,
        way: Way = THROUGH_PROXY,
    ) -> tuple[NodeEvidence, list[str]]:
        """One node's evidence: through the node proxy unless `kubelet` says otherwise; only
        the endpoints `way` reads."""
        kubelet = kubelet or ThroughProxy(self.client, node)
        give_up_at = time.monotonic() + NODE_DEADLINE
        warnings: list[str] = []
        problems: list[str] = []
        source, lines = self._log_lines(kubelet, "kubelet", subject, give_up_at, warnings, problems)
        runtime_source, runtime_lines = "", list[str]()
        free, pods = {}, None
        # the kubelet's log could not be read at all (not reachable, out of time): nothing
        # more is asked of this node
        if not problems:
            if subject.runtime:
                runtime_source, runtime_lines = self._log_lines(
                    kubelet, RUNTIME, subject, give_up_at, [], problems
                )
            if way.reads_path("stats/summary"):
                try:
                    free = free_space(self._json(kubelet, "stats/summary", give_up_at))
                except (ApiError, OutOfTime, ValueError) as error:
                    problems.append(f"stats/summary: {_why(error)}")
            if way.reads_path("pods"):
                try:
                    pods = kubelet_pods(self._json(kubelet, "pods", give_up_at))
                except (ApiError, OutOfTime, ValueError) as error:
                    problems.append(f"pods: {_why(error)}")
        if problems:  # one warning per node
            warnings.append(f"node evidence of {node}: could not read {'; '.join(problems)}")
        evidence = NodeEvidence(
            node,
            _with_way(source, kubelet.via),
            tuple(lines),
            _with_way(runtime_source, kubelet.via),
            tuple(runtime_lines),
            free,
            pods,
            tuple(problems),
        )
        return evidence, warnings

    # -- the log ----------------------------------------------------------------------------

    def _log_lines(
        self,
        kubelet: Kubelet,
        unit: str,
        subject: Subject,
        give_up_at: float,
        warnings: list[str],
        problems: list[str],
    ) -> tuple[str, list[str]]:
        params = {"query": unit, "pattern": log_pattern(subject.keys)}
        if subject.since:
            params["sinceTime"] = subject.since
        reply = self._log_get(kubelet, "logs/", params, give_up_at, problems)
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
        reply = self._log_get(kubelet, f"logs/{unit}.log", None, give_up_at, problems, tail)
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
        kubelet: Kubelet,
        sub: str,
        params: dict[str, str] | None,
        give_up_at: float,
        problems: list[str],
        extra: dict[str, str] | None = None,
    ) -> Reply | int:
        """The reply; or the status of a 404 or 405 (the caller says what it means); or 0
        once the problem is noted."""
        try:
            return self._get(kubelet, sub, params, LOG_BYTES, give_up_at, extra)
        except ApiError as error:
            if error.status in (404, 405):
                return error.status
            problems.append(f"{sub}: {_why(error)}")
        except OutOfTime as error:
            problems.append(f"{sub}: {_why(error)}")
        return 0

    # -- bounded GETs -----------------------------------------------------------------------

    def _json(self, kubelet: Kubelet, sub: str, give_up_at: float) -> object:
        reply = self._get(kubelet, sub, None, JSON_BYTES, give_up_at)
        if reply.truncated:
            raise ValueError(f"answer larger than {JSON_BYTES} bytes")
        # bounded like a file: a malformed or deeply nested answer is a problem, not a crash
        try:
            documents = json_documents(
                bytearray(reply.body), f"{sub} of node {kubelet.node}"
            ).documents
        except ConfigError as error:
            raise ValueError(str(error)) from None
        if len(documents) != 1:
            raise ValueError(f"{len(documents)} JSON documents, not one")
        return documents[0]

    def _get(
        self,
        kubelet: Kubelet,
        sub: str,
        params: dict[str, str] | None,
        limit: int,
        give_up_at: float,
        extra: dict[str, str] | None = None,
    ) -> Reply:
        """GET one of PATHS of the kubelet, reading at most `limit` bytes of the body."""
        if sub not in PATHS:
            raise ValueError(f"not a node evidence path: {sub}")
        # the kubelet's /logs/ answers 406 to `Accept: application/json`
        accept = ACCEPT_JSON if sub in ("pods", "stats/summary") else "text/plain, */*"
        return kubelet.get(sub, params, accept, limit, give_up_at, extra)


def _with_way(source: str, via: str) -> str:
    """The source as the evidence names it: the path, and for a kubelet read directly where
    and with which right."""
    return f"{source} from {via} with {right(right_of(source))}" if source and via else source


def _lines(body: bytes, partial_first: bool) -> list[str]:
    lines = body.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if partial_first and lines else lines


def _why(error: Exception) -> str:
    return str(getattr(error, "message", "") or error)
