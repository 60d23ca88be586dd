"""The only module that talks HTTP to the API server.

Raw JSON reads (no model deserialisation), `limit`/`continue` pagination, metadata-only and
Table lists, discovery, bounded concurrency, retries for idempotent reads and typed errors.
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import IO, Any, NamedTuple, ParamSpec, TypeVar
from urllib.parse import unquote, urlencode, urlsplit

import urllib3
from urllib3._collections import HTTPHeaderDict

from kubectl_terminating import __version__
from kubectl_terminating.errors import (
    ApiError,
    ConfigError,
    DeadlineExceeded,
    Forbidden,
    Gone,
    NotFound,
    NotServed,
    Unauthorized,
    Unreachable,
)
from kubectl_terminating.kubeconfig import Connection, Impersonation, run_exec_plugin
from kubectl_terminating.model import JSON
from kubectl_terminating.proxy import proxy_for, without_credentials
from kubectl_terminating.resources import Resource, metadata_only

ACCEPT_JSON = "application/json"
ACCEPT_METADATA = (
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)
ACCEPT_OBJECT_METADATA = (
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)
ACCEPT_TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1,application/json"
ACCEPT_DISCOVERY = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


def accept_for(resource: Resource) -> str:
    """How an object of the type is read by name: whole, but a Secret's metadata only."""
    return ACCEPT_OBJECT_METADATA if metadata_only(resource) else ACCEPT_JSON


CONTENT_JSON = "application/json"
CONTENT_JSON_PATCH = "application/json-patch+json"
PAGE_SIZE = 500
MAX_ATTEMPTS = 4
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF = 0.2  # first pause between attempts; doubles each time, up to MAX_BACKOFF
MAX_BACKOFF = 2.0
MAX_RETRY_AFTER = 5.0
CONNECT_TIMEOUT = 30.0
CHUNK_SIZE = 256 * 1024
# A check read (discovery, listing one type, a related object the explainers ask for) gets at
# most this long, or the request timeout if lower: one slow aggregated API then costs a
# warning ("could not list X: no answer within 10s"), not a run stalled for the API server's
# own 60 s proxy timeout. The main lists (pods, namespaces) only have the request timeout.
CHECK_DEADLINE = 10.0
# API Priority and Fairness gives each user a handful of concurrent seats; more than this
# only queues on the server.
DEFAULT_WORKERS = 8
# Past this difference between this machine's clock and the API server's, say so once: ages
# are counted on the server's clock (Lease renewals and deletion times are written by it).
# Beyond this a Date header is no clock at all (1970, 9999): this machine's clock is kept.
CLOCK_SKEW_BELIEVED = 86_400.0
CLOCK_SKEW_WARNING = 60.0
# the servers whose clock difference was said in this process (`serve` connects every run)
_SKEW_SAID: set[str] = set()
_SKEW_LOCK = threading.Lock()

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


@dataclass
class Stats:
    """Request counters for `-v` and the benchmarks."""

    requests: int = 0
    bytes: int = 0
    retries: int = 0
    seconds: float = 0.0
    # the paths of reads that failed (forbidden, a server error, no answer in time): the
    # exporter's read failures per resource; a 404 or an expired list is an answer, not one
    failed: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, size: int, seconds: float) -> None:
        with self.lock:
            self.requests += 1
            self.bytes += size
            self.seconds += seconds

    def fail(self, path: str) -> None:
        with self.lock:
            self.failed.append(path)


def parse_duration(value: str) -> float:
    """kubectl's --request-timeout: `0` (none), a bare number of seconds, or 1s/2m/3h."""
    text = value.strip()
    if not text:
        return 0.0
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for suffix in ("ms", "s", "m", "h"):
        if text.endswith(suffix):
            number = text[: -len(suffix)]
            break
    else:
        number, suffix = text, "s"
    try:
        seconds = float(number) * units[suffix]
    except ValueError:
        raise ValueError(
            f"invalid timeout value {value!r}: use a whole number with a unit (1s, 2m, 3h)"
        ) from None
    if seconds < 0:
        raise ValueError(f"invalid timeout value {value!r}: must not be negative")
    return seconds


def _item_by_item(pages: Callable[P, Iterator[JSON]]) -> Callable[P, Iterator[JSON]]:
    """A list read item by item: `pages` with the same arguments, each page's items in turn."""

    def items(*args: P.args, **kwargs: P.kwargs) -> Iterator[JSON]:
        for page in pages(*args, **kwargs):
            for item in page.get("items") or []:
                if isinstance(item, dict):
                    yield item

    return items


class Client:
    def __init__(
        self,
        connection: Connection,
        request_timeout: float = 0.0,
        workers: int = DEFAULT_WORKERS,
        verbosity: int = 0,
        log: IO[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall: Callable[[], float] = time.time,
    ) -> None:
        """clock and sleep: the deadlines' time and the backoff's wait; wall: this machine's
        time of day, which server_now corrects by the server's Date (tests give their own)."""
        self.connection = connection
        self.clock, self.sleep, self.wall = clock, sleep, wall
        self._skew: float | None = None  # the server's clock minus this machine's, seconds
        self.request_timeout = request_timeout
        self.workers = max(1, workers)
        self.verbosity = verbosity
        self.log = log or sys.stderr
        self.stats = Stats()
        self._pool: urllib3.PoolManager | None = None
        self._headers: HTTPHeaderDict = HTTPHeaderDict()
        self._secrets: tuple[str, ...] = ()  # redacted from error messages
        self._setup_lock = threading.Lock()
        self._alive = False  # a first answer came: later connection errors are worth a retry

    # -- connection set-up ----------------------------------------------------------------------
    def _ensure_pool(self) -> urllib3.PoolManager:
        with self._setup_lock:
            if self._pool is None:
                self._pool, self._headers = self._build_pool()
            return self._pool

    def _build_pool(self) -> tuple[urllib3.PoolManager, HTTPHeaderDict]:
        conn = self.connection
        cert, key = conn.client_cert_data, conn.client_key_data
        token = conn.token
        if conn.token_file:
            # as client-go: a readable token file wins even over a token (--token included):
            # it is read again at each request there, the token only a fallback
            token = _read_token_file(conn.token_file, token)
        # as client-go: a token, certificate or basic auth given elsewhere wins over the plugin
        if conn.exec_config is not None and not token and not cert and conn.username is None:
            status = run_exec_plugin(conn)
            token = status.get("token") or None
            if status.get("clientCertificateData"):
                cert = str(status["clientCertificateData"]).encode()
                key = str(status.get("clientKeyData", "")).encode()
        headers = HTTPHeaderDict({"User-Agent": f"kubectl-terminating/{__version__}"})
        if not conn.disable_compression:
            # As kubectl: the API server gzips answers over 128 KiB, a tenth of the bytes
            # (a Table of 50,000 pods is 8 MB) for a little CPU; urllib3 decompresses.
            headers["Accept-Encoding"] = "gzip"
        else:  # no Accept-Encoding at all, as kubectl (http.client would add `identity`)
            headers["Accept-Encoding"] = urllib3.util.SKIP_HEADER
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif conn.username is not None:
            headers.update(
                urllib3.make_headers(basic_auth=f"{conn.username}:{conn.password or ''}")
            )
        if conn.impersonate is not None:
            impersonation_headers(headers, conn.impersonate)
        credentials = headers.get("Authorization", "").partition(" ")[2]  # token or base64
        self._secrets = tuple(
            secret for secret in (credentials, token, conn.password) if secret and len(secret) > 3
        )
        context = self._ssl_context(cert, key)
        timeout = urllib3.Timeout(
            connect=min(self.request_timeout, CONNECT_TIMEOUT)
            if self.request_timeout
            else CONNECT_TIMEOUT,
            read=self.request_timeout or None,
        )
        options: dict[str, Any] = {
            "num_pools": 4,
            "maxsize": self.workers,
            "block": True,
            "timeout": timeout,
            "retries": False,
        }
        if urlsplit(conn.server).scheme == "https":
            options["ssl_context"] = context
            if conn.tls_server_name:
                options["server_hostname"] = conn.tls_server_name
            if conn.insecure:
                options["cert_reqs"] = ssl.CERT_NONE
                options["assert_hostname"] = False
            if conn.insecure:  # kubectl is silent about it: so are we (no urllib3 warning)
                urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self._log_identity()
        return self._pool_manager(options), headers

    def _pool_manager(self, options: dict[str, Any]) -> urllib3.PoolManager:
        conn = self.connection
        proxy = proxy_for(conn.server, conn.proxy_url, os.environ)
        if proxy is None:
            return urllib3.PoolManager(**options)
        shown = without_credentials(proxy.url)
        if self.verbosity >= 6:
            self.log.write(f"proxy {shown} (from {proxy.source})\n")
        parts = urlsplit(proxy.url)
        scheme = parts.scheme.lower()
        if parts.password:
            self._secrets += (parts.password,)
        # kubectl: socks5:// from proxy-url or the environment, socks5h:// from the environment
        if scheme == "socks5" or (scheme == "socks5h" and proxy.source != "proxy-url"):
            from kubectl_terminating.socks import SocksProxyManager

            return SocksProxyManager(proxy.url, **options)
        if scheme not in ("http", "https"):
            raise ConfigError(
                f'proxy {shown}: unsupported scheme "{scheme}", must be http, https, or socks5'
            )
        if parts.username is not None:
            auth = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            options["proxy_headers"] = urllib3.make_headers(proxy_basic_auth=auth)
        try:
            return urllib3.ProxyManager(proxy.url, **options)
        except ValueError as exc:
            raise ConfigError(f"proxy {shown}: {exc}") from None

    def _log_identity(self) -> None:
        impersonate = self.connection.impersonate
        if self.verbosity >= 6 and impersonate is not None:
            self.log.write(f"impersonating {impersonate.describe()}\n")

    def _ssl_context(self, cert: bytes | None, key: bytes | None) -> ssl.SSLContext:
        conn = self.connection
        if conn.insecure:  # nothing is verified: no roots to load
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif conn.ca_data:
            # As client-go (transport.go, rootCertPool: "When caData is not empty, it will be
            # the ONLY information used in the CertPool"): the cluster's CA alone is trusted,
            # and the system's roots are not loaded (about 0.1 s of every run).
            try:
                context = ssl.create_default_context(cadata=conn.ca_data.decode("ascii", "replace"))
            except ssl.SSLError:
                raise ConfigError(
                    f'context "{conn.context}": certificate-authority is not valid PEM'
                ) from None
        else:  # no CA given: the system's roots, as client-go's nil RootCAs
            context = ssl.create_default_context()
        if cert and key:
            _load_client_cert(context, cert, key, conn.context)
        return context

    # -- requests -------------------------------------------------------------------------------
    def server_now(self) -> datetime:
        """The API server's time: this machine's corrected by the Date header of the server's
        first answer (this machine's alone before any answer). Deletion times and Lease
        renewals are the server's, so ages counted on a local clock that is off are wrong."""
        return datetime.fromtimestamp(self.wall() + (self._skew or 0.0), timezone.utc)

    def _note_server_clock(self, headers: Mapping[str, str]) -> None:
        """The skew from the first answer with a Date; a warning once when it is large."""
        if self._skew is not None:
            return
        try:
            said = parsedate_to_datetime(headers.get("Date") or "")
        except (TypeError, ValueError, IndexError):
            return
        if said.tzinfo is None:
            return
        # Date has whole seconds: the server's time was somewhere in the second after it
        skew = said.timestamp() + 0.5 - self.wall()
        if abs(skew) > CLOCK_SKEW_BELIEVED:  # a broken proxy's Date, not a clock: ignored
            return
        with self._setup_lock:
            if self._skew is not None:
                return
            self._skew = skew
        if abs(skew) <= CLOCK_SKEW_WARNING:
            return
        with _SKEW_LOCK:
            known = self.connection.server in _SKEW_SAID
            _SKEW_SAID.add(self.connection.server)
        if not known:
            way = "ahead of" if skew < 0 else "behind"
            self.log.write(
                f"Warning: this machine's clock is {_skew_text(abs(skew))} {way} the API "
                "server's: ages are counted on the server's clock\n"
            )

    @property
    def check_deadline(self) -> float:
        """The deadline of a check read: CHECK_DEADLINE, or the request timeout if lower."""
        if self.request_timeout:
            return min(CHECK_DEADLINE, self.request_timeout)
        return CHECK_DEADLINE

    def get(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        accept: str = ACCEPT_JSON,
        deadline: float | None = None,
        prune: Callable[[bytes], bytes] | None = None,
    ) -> JSON:
        """GET path and decode the JSON body; retries idempotent reads on passing faults.
        `prune` may cut what the caller will not keep from the body before it is decoded
        (decoding is most of a large read's cost); if what is left is not JSON, the whole
        body is decoded instead.

        The request timeout, or `deadline` when given (check reads: see `check_deadline`),
        bounds the whole read: connecting, every retry and its backoff, and the body. A read
        that runs out of time is not retried: that would multiply the time the user allowed.
        A missed `deadline` raises DeadlineExceeded (a warning for the caller), a missed
        request timeout Unreachable (the run's one error line).
        """
        limit = deadline if deadline is not None else self.request_timeout
        pool, url, headers, give_up_at = self._prepare(path, params, accept, limit)
        answer, _ = self._attempts(
            path, url, give_up_at, deadline, lambda: self._send(pool, url, headers, give_up_at)
        )
        try:
            decoded = _decode(answer.body, prune)
        except ValueError:
            raise ApiError(f"the server sent a response that is not JSON for {path}") from None
        if not isinstance(decoded, dict):
            raise ApiError(f"the server sent an unexpected response for {path}")
        return decoded

    def _attempts(
        self,
        path: str,
        url: str,
        give_up_at: float | None,
        deadline: float | None,
        send: Callable[[], _Answer],
    ) -> tuple[_Answer, float]:
        """The retry policy of every read, around `send` (one attempt): up to MAX_ATTEMPTS, with
        capped backoff, on passing faults (see `_transient`) and RETRY_STATUSES (honouring
        Retry-After); never past give_up_at and never after a timeout. Each answer read whole
        is logged; a status >= 400 left raises its typed error. Returns the last answer and
        when its attempt started. A timeout raises DeadlineExceeded when `deadline` is given
        (a check read), else Unreachable."""
        attempt = 0
        while True:
            attempt += 1
            started = self.clock()
            try:
                answer = send()
            except (urllib3.exceptions.HTTPError, _OutOfTime) as exc:
                if _timed_out(exc):
                    if deadline is not None:
                        self.stats.fail(path)
                        raise DeadlineExceeded(
                            f"no answer within {deadline:g}s", 0, "Timeout"
                        ) from None
                    raise self._unreachable(exc) from None
                if _transient(exc, self._alive) and self._retry(attempt, give_up_at, None):
                    continue
                raise self._unreachable(exc) from None
            if answer.unread is not None:  # its body is the caller's to read and log
                return answer, started
            self._log_request(url, answer.status, len(answer.body), started, answer.headers)
            if answer.status in RETRY_STATUSES and self._retry(
                attempt, give_up_at, answer.headers.get("Retry-After")
            ):
                continue
            if answer.status >= 400:
                error = self._api_error(answer.status, answer.body, path)
                if not isinstance(error, NotFound | Gone):
                    self.stats.fail(path)
                raise error
            return answer, started

    def _prepare(
        self, path: str, params: dict[str, Any] | None, accept: str, limit: float
    ) -> tuple[urllib3.PoolManager, str, HTTPHeaderDict, float | None]:
        """The pool, URL, headers and the time to give up at (None: no limit) of one read."""
        url = self.connection.server + path
        if params:
            url += "?" + urlencode({k: v for k, v in params.items() if v not in (None, "")})
        give_up_at = self.clock() + limit if limit else None
        pool = self._ensure_pool()
        headers = HTTPHeaderDict(self._headers)
        headers["Accept"] = accept
        return pool, url, headers, give_up_at

    def _send(
        self,
        pool: urllib3.PoolManager,
        url: str,
        headers: HTTPHeaderDict,
        give_up_at: float | None,
    ) -> _Answer:
        """One attempt: status, headers and body (decompressed). The body is read in chunks
        so that a server trickling bytes cannot hold the read past give_up_at (urllib3's read
        timeout bounds each socket read, not the whole response)."""
        timeout: urllib3.Timeout | None = None  # the pool's default
        if give_up_at is not None:
            left = give_up_at - self.clock()
            if left <= 0:
                raise _OutOfTime
            timeout = urllib3.Timeout(connect=min(left, CONNECT_TIMEOUT), read=left)
        response = pool.request("GET", url, headers=headers, preload_content=False, timeout=timeout)
        try:
            body = b"".join(self._chunks(response, give_up_at))
        except BaseException:
            response.close()  # a half-read connection must not be reused
            raise
        finally:
            response.release_conn()  # back to the pool (closed or not): its size is bounded
        return _Answer(response.status, response.headers, body)

    def _chunks(
        self, response: urllib3.BaseHTTPResponse, give_up_at: float | None
    ) -> Iterator[bytes]:
        """The body as it arrives; _OutOfTime once past give_up_at (None: no limit)."""
        # read1: what one socket read brings (read(n) waits for all n bytes); urllib3 < 2.2
        # lacks it, and there only each read is bounded, by the read timeout.
        read = getattr(response, "read1", None) or response.read
        while chunk := read(CHUNK_SIZE):
            if give_up_at is not None and self.clock() > give_up_at:
                raise _OutOfTime
            yield chunk

    def _retry(self, attempt: int, give_up_at: float | None, retry_after: str | None) -> bool:
        """Sleep before the next attempt and say True, or say False when out of attempts or
        when the backoff would end past the deadline."""
        if attempt >= MAX_ATTEMPTS:
            return False
        delay = min(BACKOFF * 2 ** (attempt - 1), MAX_BACKOFF)
        if retry_after and retry_after.strip().isdigit():  # seconds; HTTP dates are rare here
            delay = min(float(retry_after), MAX_RETRY_AFTER)
        if give_up_at is not None and self.clock() + delay >= give_up_at:
            return False
        with self.stats.lock:
            self.stats.retries += 1
        self.sleep(delay)
        return True

    def _unreachable(self, exc: Exception) -> Unreachable:
        conn = self.connection
        reason = _describe_connection_error(exc)
        return Unreachable(
            f'unable to connect to the server {conn.server} (context "{conn.context}"): {reason}'
        )

    def _api_error(self, status: int, body: bytes, path: str) -> ApiError:
        message, reason = _status_message(body)
        # A proxy or a broken server may echo the request (Authorization header included)
        # into its error body: never pass our credentials on to the user's terminal or logs.
        for secret in self._secrets:
            message = message.replace(secret, "<redacted>")
        context = self.connection.context
        if status == 401:
            return Unauthorized(
                f"You must be logged in to the server (Unauthorized): the credentials of "
                f'context "{context}" were rejected (expired or wrong token/certificate?)',
                status,
                "Unauthorized",
            )
        if status == 403:
            return Forbidden(message or f"forbidden: {path}", status, "Forbidden")
        if status == 404:
            if not _names_an_object(body):
                return NotServed(message or f"not served: {path}", status, "NotFound")
            return NotFound(message or f"not found: {path}", status, "NotFound")
        if status == 410:
            return Gone(message or "the list expired", status, "Expired")
        return ApiError(
            f"the server answered {status} {reason or ''} for {path}: {message}".replace("  ", " "),
            status,
            reason,
        )

    def stream(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        accept: str = ACCEPT_JSON,
        limit: float | None = None,
        hangup: Hangup | None = None,
    ) -> Iterator[bytes]:
        """GET path and yield the body as it arrives, chunk by chunk: memory stays one chunk
        however large the answer (a whole list in one request). Faults and statuses before
        the body starts are retried and raised as in get(); the request timeout (or `limit`,
        0: none) bounds the whole read. A fault once the body has started raises Unreachable
        (no retry: the caller has already consumed part of it); so does a hang-up."""
        limit = self.request_timeout if limit is None else limit
        pool, url, headers, give_up_at = self._prepare(path, params, accept, limit)

        def send() -> _Answer:
            response = pool.request("GET", url, headers=headers, preload_content=False)
            if response.status == 200:
                return _Answer(200, response.headers, unread=response)
            body = response.data or b""
            response.release_conn()
            return _Answer(response.status, response.headers, body)

        answer, started = self._attempts(path, url, give_up_at, None, send)
        response = answer.unread
        if response is None:  # answered, not 200 and not an error: nothing to stream
            raise self._api_error(answer.status, answer.body, path)
        size = 0
        if hangup is not None:
            hangup.opened(response)
        try:
            for chunk in self._chunks(response, give_up_at):
                size += len(chunk)
                yield chunk
        except (urllib3.exceptions.HTTPError, _OutOfTime) as exc:
            response.close()
            raise self._unreachable(exc) from None
        except BaseException:  # the consumer stopped early: the rest stays unread
            response.close()
            raise
        finally:
            if hangup is not None:
                hangup.opened(None)
                if hangup.hung_up:
                    response.close()  # shut mid-body: not a connection for the pool
            response.release_conn()
        self._log_request(url, 200, size, started, response.headers)

    def _log_request(
        self,
        url: str,
        status: int,
        size: int,
        started: float,
        headers: Mapping[str, str],
        method: str = "GET",
    ) -> None:
        elapsed = self.clock() - started
        self.stats.add(size, elapsed)
        self._alive = True
        self._note_server_clock(headers)
        if self.verbosity >= 6:  # one write per line: threads must not interleave them
            encoding = headers.get("Content-Encoding")
            sent = f" ({encoding})" if encoding else ""
            self.log.write(f"{method} {url} {status} in {elapsed * 1000:.0f} ms{sent}\n")

    def watch(
        self,
        path: str,
        params: dict[str, Any],
        accept: str = ACCEPT_JSON,
        hangup: Hangup | None = None,
    ) -> Iterator[JSON]:
        """A watch request (params: resourceVersion, timeoutSeconds, ...): each event as the
        server sends it, one JSON document a line, until the server ends the request (or
        `hangup` does). Not bounded by the request timeout: a watch is meant to stay open."""
        pending = b""
        stream = self.stream(path, {**params, "watch": "true"}, accept, limit=0, hangup=hangup)
        for chunk in stream:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip():
                    try:
                        event = json.loads(line)
                    except ValueError:
                        raise ApiError(
                            f"the server sent a watch event that is not JSON for {path}"
                        ) from None
                    if isinstance(event, dict):
                        yield event

    # -- writes: `fix --apply`; serve --record-events (Events, its Lease) ----------------------
    def delete(self, path: str, options: JSON) -> tuple[int, JSON]:
        """DELETE with DeleteOptions (preconditions, grace period)."""
        return self.write("DELETE", path, options, CONTENT_JSON)

    def patch(
        self, path: str, patch: Any, content_type: str = CONTENT_JSON_PATCH
    ) -> tuple[int, JSON]:
        return self.write("PATCH", path, patch, content_type)

    def put(self, path: str, body: JSON) -> tuple[int, JSON]:
        """PUT a whole object (a namespace's /finalize); its resourceVersion is the precondition."""
        return self.write("PUT", path, body, CONTENT_JSON)

    def create(self, path: str, body: JSON) -> tuple[int, JSON]:
        return self.write("POST", path, body, CONTENT_JSON)

    def write(self, method: str, path: str, body: Any, content_type: str) -> tuple[int, JSON]:
        """One attempt, never retried: a write that may have reached the server is not sent
        twice. Returns the status and the decoded answer; raises the typed errors of get()."""
        pool, url, headers, _ = self._prepare(path, None, ACCEPT_JSON, self.request_timeout)
        headers["Content-Type"] = content_type
        started = self.clock()
        try:
            response = pool.request(method, url, headers=headers, body=json.dumps(body).encode())
        except urllib3.exceptions.HTTPError as exc:
            raise self._unreachable(exc) from None
        data = response.data or b""
        self._log_request(url, response.status, len(data), started, response.headers, method)
        if response.status >= 400:
            raise self._api_error(response.status, data, path)
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {}
        return response.status, decoded if isinstance(decoded, dict) else {}

    # -- lists ----------------------------------------------------------------------------------
    def pages(
        self,
        path: str,
        params: dict[str, Any] | None = None,
        accept: str = ACCEPT_JSON,
        limit: int = PAGE_SIZE,
        deadline: float | None = None,
        prune: Callable[[bytes], bytes] | None = None,
    ) -> Iterator[JSON]:
        """Each page of a list, following `continue`: memory is bounded by the page size.
        A deadline applies to each page (each is one request); prune as in get()."""
        query = dict(params or {})
        query["limit"] = limit
        while True:
            page = self.get(path, query, accept, deadline, prune)
            yield page
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            query["continue"] = token

    items = _item_by_item(pages)  # the same arguments; each item of every page

    def map(self, function: Callable[[T], R], inputs: Iterable[T]) -> list[R]:
        """function over inputs with bounded concurrency, results in input order; the first
        failure in input order is raised once every input is done (as a pool's map that is
        then shut down). Each worker takes the next input when it is done with one: no
        future per input, whose bookkeeping cost a sixth of explaining 2,000 pods."""
        work = list(inputs)
        if len(work) <= 1 or self.workers == 1:
            return [function(x) for x in work]
        self._ensure_pool()  # build once, not once per thread
        results: list[Any] = [None] * len(work)
        failures: dict[int, BaseException] = {}
        taken = iter(range(len(work)))
        lock = threading.Lock()
        stopped = threading.Event()  # an interrupted caller: the workers take no more

        def worker() -> None:
            while not stopped.is_set():
                with lock:
                    index = next(taken, None)
                if index is None:
                    return
                try:
                    results[index] = function(work[index])
                except BaseException as error:  # the caller's to raise, in input order
                    failures[index] = error

        threads = [
            threading.Thread(target=worker, daemon=True)
            for _ in range(min(self.workers, len(work)))
        ]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            stopped.set()
        if failures:
            raise failures[min(failures)]
        return results


def _skew_text(seconds: float) -> str:
    """`20m`, `1h5m`: a clock difference rounded to the minute (it is known to about 1s)."""
    minutes = round(seconds / 60)
    hours, rest = divmod(minutes, 60)
    return f"{hours}h{rest}m" if hours and rest else f"{hours}h" if hours else f"{minutes}m"


def _decode(body: bytes, prune: Callable[[bytes], bytes] | None) -> Any:
    if prune is not None:
        try:
            return json.loads(prune(body))
        except ValueError:
            pass  # cut wrong (an answer of another shape): decode it whole
    return json.loads(body)


def _read_token_file(path: str, fallback: str | None) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError as exc:
        if fallback:
            return fallback
        raise ConfigError(f"unable to read token file {path}: {exc.strerror}") from None


def impersonation_headers(headers: HTTPHeaderDict, who: Impersonation) -> None:
    """client-go's impersonating round tripper: one Impersonate-Group header per group, one
    Impersonate-Extra-<key> header per value, the key %-escaped as client-go escapes it."""
    headers["Impersonate-User"] = who.user
    if who.uid:
        headers["Impersonate-Uid"] = who.uid
    for group in who.groups:
        headers.add("Impersonate-Group", group)
    for key, values in who.extra:
        for value in values:
            headers.add("Impersonate-Extra-" + _header_key_escape(key), value)


_HEADER_TOKEN = frozenset(
    "!#$&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def _header_key_escape(key: str) -> str:
    return "".join(chr(b) if chr(b) in _HEADER_TOKEN else f"%{b:02X}" for b in key.encode("utf-8"))


def _load_client_cert(context: ssl.SSLContext, cert: bytes, key: bytes, name: str) -> None:
    # ssl only loads certificates from files: write them 0600, load, remove at once.
    fd, path = tempfile.mkstemp(prefix="kubectl-terminating-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(cert.rstrip(b"\n") + b"\n" + key)
        context.load_cert_chain(path)
    except ssl.SSLError:
        raise ConfigError(f'context "{name}": client certificate or key is not valid PEM') from None
    finally:
        os.unlink(path)


class Hangup:
    """Ends a stream from another thread: its blocking read returns at once, so a watch
    being stopped ends now, not at the server's next event (a bookmark, a minute or more
    away) with its request still open. A stream opened after the hang-up ends at once too.
    Needs urllib3 >= 2.3 (HTTPResponse.shutdown); before it, the stream ends as it did."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: urllib3.BaseHTTPResponse | None = None
        self.hung_up = False

    @property
    def reading(self) -> bool:
        """A stream is open."""
        return self._open is not None

    def now(self) -> None:
        with self._lock:
            self.hung_up = True
            if self._open is not None:
                _shut(self._open)

    def opened(self, response: urllib3.BaseHTTPResponse | None) -> None:
        """The stream's response while it is read; None once read (its connection may serve
        another request after, which a hang-up must not end)."""
        with self._lock:
            self._open = response
            if response is not None and self.hung_up:
                _shut(response)


def _shut(response: urllib3.BaseHTTPResponse) -> None:
    shutdown = getattr(response, "shutdown", None)  # urllib3 >= 2.3
    # no socket to shut (closed, released, or none it can reach): it ends as it did before
    with contextlib.suppress(OSError, ValueError, RuntimeError, NotImplementedError):
        if shutdown is not None:
            shutdown()


class _Answer(NamedTuple):
    """One attempt's answer: its status, headers and whole body; or, for stream(), the 200
    response whose body is still to be read (`unread`)."""

    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    unread: urllib3.BaseHTTPResponse | None = None


class _OutOfTime(Exception):
    """The deadline of a read passed between two chunks of its body, or before an attempt."""


def _timed_out(exc: Exception) -> bool:
    errors = urllib3.exceptions
    # NewConnectionError (refused, no such host) subclasses ConnectTimeoutError: not a timeout
    return isinstance(exc, _OutOfTime | errors.ReadTimeoutError) or (
        isinstance(exc, errors.ConnectTimeoutError)
        and not isinstance(exc, errors.NewConnectionError)
    )


def _transient(exc: Exception, alive: bool) -> bool:
    """A fault worth another attempt of an idempotent read.

    A connection reset or dropped by the server (a restart, a load balancer, a stale
    keep-alive connection) is retried always: the server was there. A refused connection or
    an unknown host only once the server has answered in this run (it is restarting);
    before that the address is simply wrong and the user hears so at once. Likewise a TLS
    handshake that fails once the server has answered over TLS in this run (the CA and
    credentials are known good) is retried; a failed certificate verification never is. A
    decode_error alert is retried even on the run's first connection: the server failed to
    parse a handshake it normally takes, which no CA or credential causes (seen from a busy
    kube-apiserver on a loaded 2-core machine, on a new process's first request). Timeouts
    are never retried.
    """
    errors = urllib3.exceptions
    reason = getattr(exc, "reason", None)
    if isinstance(exc, errors.SSLError) or isinstance(reason, errors.SSLError):
        said = str(reason or exc)
        if "CERTIFICATE_VERIFY_FAILED" in said:
            return False
        return alive or "TLSV1_ALERT_DECODE_ERROR" in said
    if isinstance(exc, errors.ProtocolError):
        return True
    return alive and isinstance(exc, errors.NewConnectionError | errors.MaxRetryError)


def _describe_connection_error(exc: Exception) -> str:
    reason: Any = getattr(exc, "reason", None) or exc
    errors = urllib3.exceptions

    def either(kind: type[Exception]) -> bool:
        return isinstance(exc, kind) or isinstance(reason, kind)

    if either(errors.SSLError):
        detail = str(reason)
        if "CERTIFICATE_VERIFY_FAILED" in detail:
            detail = detail.split("certificate verify failed:")[-1].strip(" )'\"")
            return f"TLS certificate verification failed ({detail})"
        return f"TLS handshake failed ({detail[:200]})"
    text = str(reason)
    # NewConnectionError subclasses ConnectTimeoutError: read its errno text before timeouts
    if either(errors.NewConnectionError):
        return _short_socket_error(text)
    if either(errors.ConnectTimeoutError):
        return "connection timed out"
    if isinstance(exc, _OutOfTime) or either(errors.ReadTimeoutError):
        return "the server did not answer within the request timeout"
    return _short_socket_error(text)


def _short_socket_error(text: str) -> str:
    for marker, short in (
        ("Connection refused", "connection refused"),
        ("Name or service not known", "no such host"),
        ("nodename nor servname", "no such host"),
        ("Temporary failure in name resolution", "no such host"),
        ("No route to host", "no route to host"),
        ("Network is unreachable", "network is unreachable"),
        ("Connection reset", "connection reset by peer"),
        ("Remote end closed connection", "the server closed the connection"),
        ("timed out", "connection timed out"),
    ):
        if marker in text:
            return short
    return text.split(": ", 1)[-1][:200]


def _names_an_object(body: bytes) -> bool:
    """A 404 Status naming the object (details.name): the object is absent, while the type is
    served. A type not served answers `404 page not found` or a Status without a name."""
    try:
        status = json.loads(body)
    except ValueError:
        return False
    details = status.get("details") if isinstance(status, dict) else None
    return isinstance(details, dict) and bool(details.get("name"))


def _status_message(body: bytes) -> tuple[str, str]:
    try:
        status = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:300], ""
    if not isinstance(status, dict):
        return "", ""
    return str(status.get("message") or ""), str(status.get("reason") or "")
