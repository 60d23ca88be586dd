"""Find the objects that are terminating, with the cheapest lists that are still correct.

Pods: a full list moves every pod's spec, status and managedFields (tens of MB at 5,000
pods). Instead:
  1. a server-side Table list without objects (about 1/30 of the bytes) names the candidates:
     the printer shows STATUS `Terminating` (or `Unknown` for NodeLost) for every non-terminal
     pod with a deletionTimestamp. It is one request served from the API server's watch cache
     (`resourceVersion=0`; paging a list makes the server read each page from etcd), streamed:
     only the rows that mention those statuses are decoded, so memory does not grow with the
     number of pods. The cache may trail etcd by its delivery delay (milliseconds), which
     step 3 does not: it reads each candidate consistently;
  2. terminal pods (Succeeded/Failed) print their phase even while terminating, so they are
     listed apart, metadata only, with a field selector on status.phase;
  3. only the candidates are then read in full and verified, by name and node (the server
     indexes pods by spec.nodeName, so a lookup does not scan every pod). A node where most
     pods are candidates (a dead node in an outage: every pod on it is terminating) is listed
     whole instead, one request for all its pods; the scan of step 1 counts each node's pods
     as it passes (one regular expression over the rows' bytes), so a node that holds
     thousands of healthy pods (a virtual-kubelet node) is never listed for a few stuck ones.
     Requests and bytes grow with the stuck pods and the nodes they are on, never with the
     healthy pods, wherever those are.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from kubectl_terminating.client import ACCEPT_METADATA, ACCEPT_TABLE, Client
from kubectl_terminating.errors import ApiError, Forbidden, NotFound
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import NAMESPACES, PODS, Resource, typed
from kubectl_terminating.source import Found, Scope
from kubectl_terminating.view import ClusterView, Discovery, ReadFailed

TERMINATING_STATUSES = frozenset({"Terminating", "Unknown"})
TERMINAL_PHASES = "status.phase!=Pending,status.phase!=Running,status.phase!=Unknown"
# Past this many candidates of unknown node (a Table without a NODE column) one full list is
# cheaper than one request per name.
MAX_NAME_LOOKUPS = 200
# A node with at least this many candidates, and more candidates than other pods, is listed
# whole: one request, which reads at most twice the candidates' bytes (a dead node, where every
# pod is terminating); otherwise one lookup a candidate, whatever the node's state, so a live
# node with thousands of healthy pods costs only its stuck ones.
NODE_LIST_MIN = 4
UNBOUND = ""  # the node of a pod no node was assigned (the Table shows <none>)


def _terminating(obj: JSON) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _kept(pod: JSON) -> JSON:
    """A terminating pod as it is kept for the explainers: without its managedFields, which
    no explainer reads and which weigh about half of a pod (20,000 stuck pods in an outage
    would otherwise hold a gigabyte)."""
    metadata = pod.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        pod = dict(pod, metadata={k: v for k, v in metadata.items() if k != "managedFields"})
    return typed(pod, PODS)


# `,"managedFields":[...]` in the compact JSON the API server writes: up to the first `]`
# outside a string, the array's own (its entries hold strings and objects, never an array).
# A quote inside a string is always escaped, so the key cannot match inside a value.
_MANAGED_FIELDS = re.compile(rb',"managedFields":\[[^"\]]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\]]*)*\]')


_MANAGED_FIELDS_KEY = b',"managedFields":['


def drop_managed_fields(body: bytes) -> bytes:
    """A list or object without its managedFields, before it is decoded: they are about half
    of a pod's bytes and most of its decoding time (their many small objects), and no
    explainer reads them. Client.get decodes the whole body if the cut leaves no JSON.

    The cut is the regular expression's (_MANAGED_FIELDS), found faster: each array ends at
    its first `]` when an even number of unescaped quotes comes before it (it is outside
    every string); only when that is not plain (a `]` inside a string, an escaped backslash)
    does the expression walk the array. The metadata of 100 pods: 0.9 ms instead of 3.3."""
    parts: list[bytes] = []
    kept = 0  # where the text still to keep starts
    start = body.find(_MANAGED_FIELDS_KEY)
    while start >= 0:
        end = _array_end(body, start)
        if end > 0:
            parts.append(body[kept:start])
            kept = end
        start = body.find(_MANAGED_FIELDS_KEY, max(end, start + 1))
    if not parts:
        return body
    parts.append(body[kept:])
    return b"".join(parts)


def _array_end(body: bytes, start: int) -> int:
    """Just past the `]` that ends the managedFields array whose key is at `start`, or -1
    when the expression does not match there (then it is left in place)."""
    inside = start + len(_MANAGED_FIELDS_KEY)
    close = body.find(b"]", inside)
    if close >= 0:
        escaped = body.count(b'\\"', inside, close)
        # each backslash escapes a quote (none is escaped itself): the rest of the quotes
        # open and close strings
        plain = body.count(b"\\", inside, close) == escaped
        if plain and (body.count(b'"', inside, close) - escaped) % 2 == 0:
            return close + 1
    found = _MANAGED_FIELDS.match(body, start)
    return found.end() if found else -1


def _key(obj: JSON) -> tuple[str, str]:
    m = obj.get("metadata") or {}
    return str(m.get("namespace") or ""), str(m.get("name") or "")


def _by_name(
    client: Client, resource: Resource, namespace: str | None, names: Iterable[str]
) -> Found:
    def fetch(name: str) -> JSON | str:
        try:
            return client.get(resource.path(namespace, name))
        except NotFound:
            return name

    found = Found([], [], [])
    for answer in client.map(fetch, list(dict.fromkeys(names))):
        if isinstance(answer, str):
            found.missing.append(answer)
        elif _terminating(answer):
            found.objects.append(answer)
        else:
            name = (answer.get("metadata") or {}).get("name")
            found.warnings.append(f'{resource.plural} "{name}" exists but is not terminating')
    return found


def _column(table: JSON, name: str) -> int | None:
    for index, column in enumerate(table.get("columnDefinitions") or []):
        if str(column.get("name", "")).lower() == name:
            return index
    return None


ROW_START = b'{"cells":['
TABLE_NEEDLES = tuple(f'"{status}"'.encode() for status in sorted(TERMINATING_STATUSES))
_ROWS_KEY = b'"rows":'
_ROWS_FORMS = (b"null", b"[]", b"[" + ROW_START)  # what compact JSON has after "rows":


def scan_table(
    chunks: Iterable[bytes],
    needles: tuple[bytes, ...] = (),
    tally: Callable[[bytes], object] | None = None,
) -> Generator[JSON, None, None]:
    """A Table answer read as it streams in: first the Table without its rows, then each row
    whose bytes hold one of `needles` (every row when there are none). `tally` is given the
    bytes of every row, in whole rows, before they are filtered (not for an answer of another
    shape, decoded whole).

    Memory is a chunk and a row, not the whole answer, and rows without a needle are never
    decoded. This leans on the compact JSON the API server writes, where the rows follow
    the column definitions and each starts with the bytes `{"cells":[` (inside a JSON
    string a quote is always escaped, so no cell can hold them). An answer of any other
    shape, or not a Table, is decoded whole: the document first, then (a Table) every row.
    """
    stream = iter(chunks)
    buffer = bytearray()
    start = searched = -1
    for chunk in stream:
        buffer += chunk
        if start < 0:
            start = buffer.find(_ROWS_KEY, max(0, searched - len(_ROWS_KEY)))
            searched = len(buffer)
        if start >= 0:
            after = bytes(buffer[start + len(_ROWS_KEY) :][: len(_ROWS_FORMS[2])])
            if any(after.startswith(form) for form in _ROWS_FORMS):
                break
            if not any(form.startswith(after) for form in _ROWS_FORMS):
                start = -1  # rows in another shape
                break
    head = None
    if start > 0:
        try:
            head = json.loads(bytes(buffer[:start]) + _ROWS_KEY + b"[]}")
        except ValueError:
            head = None
    if not isinstance(head, dict) or head.get("kind") != "Table":
        for chunk in stream:
            buffer += chunk
        document = json.loads(bytes(buffer))
        rows = document.pop("rows", None) if document.get("kind") == "Table" else None
        yield document
        yield from (row for row in rows or [] if isinstance(row, dict))
        return
    rest = buffer[start + len(_ROWS_KEY) :]
    del buffer
    head.pop("rows")
    yield head
    if rest.startswith(b"null"):
        return
    del rest[:1]  # the opening [
    yield from _whole_rows(rest, needles, tally)
    for chunk in stream:
        rest += chunk
        yield from _whole_rows(rest, needles, tally)
    if tally is not None and rest.startswith(ROW_START):
        tally(bytes(rest))
    if rest.startswith(ROW_START) and (not needles or any(n in rest for n in needles)):
        row, _ = json.JSONDecoder().raw_decode(rest.decode())  # the last row, then `]}`
        yield row


def _whole_rows(
    rest: bytearray, needles: tuple[bytes, ...], tally: Callable[[bytes], object] | None
) -> Iterator[JSON]:
    """The rows before the last row start in `rest` (all whole), removed from it."""
    last = rest.rfind(ROW_START)
    if last > 0:
        segment = bytes(rest[:last])
        del rest[:last]
        if tally is not None:
            tally(segment)
        yield from _rows_in(segment, needles)


def _rows_in(segment: bytes, needles: tuple[bytes, ...]) -> Iterator[JSON]:
    """Rows `{"cells":[...],...},{"cells":[...],...},` whose bytes hold a needle, decoded."""
    if needles:
        starts = sorted(
            {
                segment.rfind(ROW_START, 0, found + 1)
                for needle in needles
                for found in _occurrences(segment, needle)
            }
        )
    else:
        starts = list(_occurrences(segment, ROW_START))
    for begin in starts:
        end = segment.find(ROW_START, begin + 1)
        yield json.loads(segment[begin : end if end > 0 else len(segment)].rstrip(b", \t\r\n"))


def _occurrences(data: bytes, needle: bytes) -> Iterator[int]:
    at = data.find(needle)
    while at >= 0:
        yield at
        at = data.find(needle, at + 1)


# A JSON string (compact, as the API server writes it: a quote inside is always escaped), and
# any cell of a Table row (a string or a number). No possessive quantifiers: Python 3.10.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_CELL = rb"(?:" + _STRING + rb'|[^,\]"]*)'


class NodeTally:
    """How many pods the Table shows on each node, counted from the bytes of its rows: the
    NODE cell of every row, found by one regular expression (about 60 ms at 50,000 pods),
    without decoding the rows."""

    def __init__(self) -> None:
        self.cells: Counter[bytes] = Counter()
        self.pattern: re.Pattern[bytes] | None = None

    def at(self, column: int | None) -> None:
        """Count the `column`-th cell of each row (nothing when the Table has no such column)."""
        if column is not None:
            skip = (_CELL + b",") * column
            self.pattern = re.compile(re.escape(ROW_START) + skip + b"(" + _STRING + b")")

    def __call__(self, rows: bytes) -> None:
        if self.pattern is not None:
            self.cells.update(self.pattern.findall(rows))

    def pods(self) -> dict[str, int]:
        """Pods per node (UNBOUND: those without a node); empty when nothing was counted."""
        counts: dict[str, int] = defaultdict(int)
        for cell, count in self.cells.items():
            node = str(json.loads(cell))
            counts[UNBOUND if node in ("", "<none>") else node] += count
        return counts


def _candidate_pods(
    client: Client, scope: Scope
) -> tuple[set[tuple[str, str | None]], dict[str, int]]:
    """(name, node) of each pod the server's Table shows as terminating (node None when the
    Table has no Node column, UNBOUND when the pod has no node), and how many pods the Table
    shows on each node (all of them, terminating or not)."""
    params: dict[str, Any] = {
        "labelSelector": scope.selector,
        "includeObject": "None",
        "resourceVersion": "0",
    }
    tally = NodeTally()

    def table(needles: tuple[bytes, ...]) -> Generator[JSON, None, None]:
        stream = client.stream(PODS.path(scope.namespace), params, ACCEPT_TABLE)
        return scan_table(stream, needles, tally)

    answer = table(TABLE_NEEDLES)
    try:
        head = next(answer)
    except ApiError as error:
        if error.status != 429:
            raise
        # 429: the watch cache is (re)initializing and only serves consistent reads (etcd)
        del params["resourceVersion"]
        answer = table(TABLE_NEEDLES)
        head = next(answer)
    if head.get("kind") != "Table":  # a server without Table support: verify every pod
        items = head.get("items") or []
        return {(str(i.get("metadata", {}).get("name")), None) for i in items}, {}
    status, node = _column(head, "status"), _column(head, "node")
    tally.at(node)
    if status is None:  # no STATUS to narrow by: every pod is a candidate
        answer.close()
        answer = table(())
        next(answer)
    found: set[tuple[str, str | None]] = set()
    for row in answer:
        cells: list[Any] = row.get("cells") or []
        if status is None or (status < len(cells) and cells[status] in TERMINATING_STATUSES):
            on = str(cells[node]) if node is not None and node < len(cells) else None
            found.add((str(cells[0]), UNBOUND if on in ("", "<none>") else on))
    return found, tally.pods()


def _terminal_pods(client: Client, scope: Scope) -> list[tuple[str, str]]:
    params = {"labelSelector": scope.selector, "fieldSelector": TERMINAL_PHASES}
    return [
        _key(item)
        for item in client.items(PODS.path(scope.namespace), params, ACCEPT_METADATA)
        if _terminating(item)
    ]


def _whole(client: Client, namespace: str, name: str) -> list[JSON]:
    try:
        return [client.get(PODS.path(namespace, name), prune=drop_managed_fields)]
    except NotFound:  # gone since it was listed
        return []


def _node_wide(candidates: int, pods: int) -> bool:
    """Whether a node's `candidates`, of the `pods` the Table shows on it (0: not counted),
    are read in one list of the node's pods rather than one by one: when they are at least
    NODE_LIST_MIN and most of its pods, so that list costs one request and at most twice
    their bytes. A node with thousands of healthy pods is never listed for a few stuck ones."""
    return candidates >= NODE_LIST_MIN and 2 * candidates > max(pods, candidates)


def _pod_lookups(
    client: Client,
    scope: Scope,
    candidates: set[tuple[str, str | None]],
    pods_on: dict[str, int],
    node_down: Callable[[str], bool] | None = None,
) -> list[Callable[[], Iterable[JSON]]]:
    """The reads that return every candidate: a whole node's pods where most of the pods
    `pods_on` counts there are candidates (see _node_wide), else each candidate by name on
    its node. With `node_down`, the pods of a node it says is down are listed metadata only
    (see find_pods)."""
    path = PODS.path(scope.namespace)

    def listed(selector: str) -> Callable[[], Iterable[JSON]]:
        params = {"fieldSelector": selector, "labelSelector": scope.selector}
        return lambda: client.items(path, params, prune=drop_managed_fields)

    def on(node: str) -> Callable[[], Iterable[JSON]]:
        params = {"fieldSelector": f"spec.nodeName={node}", "labelSelector": scope.selector}

        def read() -> Iterable[JSON]:
            if node_down is None or not node_down(node):
                return client.items(path, params, prune=drop_managed_fields)
            pods = []
            for item in client.items(path, params, ACCEPT_METADATA, prune=drop_managed_fields):
                if not _terminating(item):
                    continue
                m = item.get("metadata") or {}
                if m.get("finalizers") or m.get("deletionGracePeriodSeconds") == 0:
                    # held by more than its node (a finalizer; the kubelet did confirm):
                    # other explainers look at it, so it is read whole
                    pods.extend(_whole(client, *_key(item)))
                else:  # the field selector vouches for spec.nodeName, which metadata lacks
                    pods.append(dict(item, spec={"nodeName": node}))
            return pods

        return read

    by_node: dict[str | None, list[str]] = defaultdict(list)
    for name, node in candidates:
        by_node[node].append(name)
    lookups: list[Callable[[], Iterable[JSON]]] = []
    for node, names in sorted(by_node.items(), key=lambda item: str(item[0])):
        on_node = "" if node is None else f",spec.nodeName={node}"
        if node is not None and _node_wide(len(names), pods_on.get(node, 0)):
            lookups.append(on(node))
        else:
            lookups.extend(listed(f"metadata.name={name}{on_node}") for name in sorted(names))
    return lookups


def _call(read: Callable[[], None]) -> None:
    read()


def find_pods(
    client: Client,
    scope: Scope,
    node_down: Callable[[str], bool] | None = None,
    found_some: Callable[[list[JSON]], None] | None = None,
) -> Found:
    """The terminating pods in scope. With `node_down` (the table, --summary, -o name: what
    needs no pod's spec or status beyond its node), the pods of a node it shows down (gone,
    or NotReady without a live kubelet) are read metadata only: every pod there is held by
    its node, which its metadata and node name explain alone (the node, containers, volumes
    and hooks explainers ask nothing more of a pod on a dead node), at about half the bytes
    (20,000 pods on 200 dead nodes: 135 MB instead of 240 MB). With `found_some`, each
    read's terminating pods are given to it as that read ends, in its reading thread (the
    explaining of a dead node's pods then overlaps the reads of the next nodes); the same
    objects are in the answer, unless a pod was read twice (then one of the two)."""
    if scope.names:
        return _by_name(client, PODS, scope.namespace, scope.names)
    # the Table scan and the terminal pods' list at once: neither needs the other
    scanned: list[tuple[set[tuple[str, str | None]], dict[str, int]]] = []
    terminal: list[list[tuple[str, str]]] = []
    both: list[Callable[[], None]] = [
        lambda: scanned.append(_candidate_pods(client, scope)),
        lambda: terminal.append(_terminal_pods(client, scope)),
    ]
    client.map(_call, both)
    (candidates, pods_on), exact = scanned[0], terminal[0]
    pods: dict[tuple[str, str], JSON] = {}
    if sum(node is None for _, node in candidates) > MAX_NAME_LOOKUPS:
        every = {"labelSelector": scope.selector}
        for pod in client.items(PODS.path(scope.namespace), every, prune=drop_managed_fields):
            if _terminating(pod):
                pods[_key(pod)] = _kept(pod)
        return Found(list(pods.values()), [], [])

    # A terminal pod prints its phase, never Terminating, so it is not among the candidates
    # (only a phase change between the two lists makes it both: then `pods` dedupes it).
    # Candidates carry no namespace, so no name may be skipped here: a pod of the same name
    # in another namespace could be the terminal one.
    lookups: list[Callable[[], Iterable[JSON]]] = [
        *_pod_lookups(client, scope, candidates, pods_on, node_down),
        *(lambda k=k: _whole(client, *k) for k in exact),
    ]

    def kept(lookup: Callable[[], Iterable[JSON]]) -> list[JSON]:
        # each page trimmed as it comes, in its reading thread: every stuck pod's managedFields
        # held until all are read would be half a gigabyte at 20,000 pods
        batch = [_kept(pod) for pod in lookup() if _terminating(pod)]
        if found_some is not None and batch:
            found_some(batch)
        return batch

    for batch in client.map(kept, lookups):
        for pod in batch:
            pods[_key(pod)] = pod
    return Found(sorted(pods.values(), key=_key), [], [])


def find_namespaces(client: Client, names: tuple[str, ...]) -> Found:
    if names:
        return _by_name(client, NAMESPACES, None, names)
    items = [
        typed(ns, NAMESPACES)
        for ns in client.items(NAMESPACES.path())
        if _terminating(ns) or (ns.get("status") or {}).get("phase") == "Terminating"
    ]
    return Found(sorted(items, key=_key), [], [])


def listable_types(view: ClusterView, namespace: str | None) -> tuple[list[Resource], Discovery]:
    """The types `all` looks at (cluster-scoped ones only across all namespaces), and the
    discovery they come from; without it there is nothing to look at: the run's error."""
    try:
        discovery = view.discovery()
    except ReadFailed as failed:
        raise ApiError(str(failed)) from None
    return [r for r in discovery.resources if r.namespaced or namespace is None], discovery


def find_all(
    client: Client, view: ClusterView, scope: Scope
) -> tuple[list[tuple[Resource, JSON]], list[str]]:
    """Every object of any listable type with a deletionTimestamp (metadata only)."""
    types, discovery = listable_types(view, scope.namespace)
    warnings = [
        f"could not discover {gv}: {why}" for gv, why in sorted(discovery.failed_groups.items())
    ]

    def list_type(resource: Resource) -> tuple[Resource, list[JSON], str | None]:
        if resource == PODS:
            found = find_pods(client, Scope(scope.namespace, (), scope.selector))
            return resource, found.objects, None
        params = {"labelSelector": scope.selector}
        namespace = scope.namespace if resource.namespaced else None
        try:
            # a check read: one slow aggregated API costs a warning, not a stalled run
            listed = client.items(
                resource.path(namespace), params, ACCEPT_METADATA, deadline=client.check_deadline
            )
            items = [item for item in listed if _terminating(item)]
        except Forbidden:
            return resource, [], "forbidden"
        except ApiError as error:  # one broken type must not hide the others
            return resource, [], str(error)
        return resource, items, None

    objects: list[tuple[Resource, JSON]] = []
    for resource, items, error in client.map(list_type, types):
        if error:
            warnings.append(f"could not list {resource.qualified}: {error}")
        objects.extend((resource, typed(item, resource)) for item in items)
    objects.sort(key=lambda pair: (pair[0].kind, *_key(pair[1])))
    return objects, warnings
