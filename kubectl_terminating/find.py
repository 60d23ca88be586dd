"""Find the objects that are terminating, with the cheapest lists that are still correct.

Pods: a full list moves every pod's spec, status and managedFields (tens of MB at 5,000
pods). Instead:
  1. a server-side Table list without objects (about 1/30 of the bytes) names the candidates:
     the printer shows STATUS `Terminating` (or `Unknown` for NodeLost) for every non-terminal
     pod with a deletionTimestamp;
  2. terminal pods (Succeeded/Failed) print their phase even while terminating, so they are
     listed apart, metadata only, with a field selector on status.phase;
  3. only the candidates are then read in full and verified.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kubectl_terminating.client import ACCEPT_METADATA, ACCEPT_TABLE, Client
from kubectl_terminating.errors import ApiError, Forbidden, NotFound
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import NAMESPACES, PODS, Resource, typed
from kubectl_terminating.view import ClusterView, ReadFailed

TERMINATING_STATUSES = frozenset({"Terminating", "Unknown"})
TERMINAL_PHASES = "status.phase!=Pending,status.phase!=Running,status.phase!=Unknown"
# Past this many candidate names one full list is cheaper than one request per name.
MAX_NAME_LOOKUPS = 200


@dataclass(frozen=True)
class Scope:
    namespace: str | None  # None: all namespaces
    names: tuple[str, ...] = ()
    selector: str | None = None


@dataclass
class Found:
    objects: list[JSON]
    missing: list[str]  # names asked for that do not exist
    warnings: list[str]


def _terminating(obj: JSON) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


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


def _status_column(table: JSON) -> int | None:
    for index, column in enumerate(table.get("columnDefinitions") or []):
        if str(column.get("name", "")).lower() == "status":
            return index
    return None


def _candidate_pod_names(client: Client, scope: Scope) -> set[str]:
    names: set[str] = set()
    params = {"labelSelector": scope.selector, "includeObject": "None"}
    column: int | None = None
    for page in client.pages(PODS.path(scope.namespace), params, ACCEPT_TABLE):
        if page.get("kind") != "Table":  # a server without Table support: verify every pod
            return {str(i.get("metadata", {}).get("name")) for i in page.get("items") or []}
        column = _status_column(page) if column is None else column
        for row in page.get("rows") or []:
            cells = row.get("cells") or []
            if column is None or (column < len(cells) and cells[column] in TERMINATING_STATUSES):
                names.add(str(cells[0]))
    return names


def _terminal_pods(client: Client, scope: Scope) -> list[tuple[str, str]]:
    params = {"labelSelector": scope.selector, "fieldSelector": TERMINAL_PHASES}
    return [
        _key(item)
        for item in client.items(PODS.path(scope.namespace), params, ACCEPT_METADATA)
        if _terminating(item)
    ]


def find_pods(client: Client, scope: Scope) -> Found:
    if scope.names:
        return _by_name(client, PODS, scope.namespace, scope.names)
    candidates = _candidate_pod_names(client, scope)
    exact = _terminal_pods(client, scope)
    pods: dict[tuple[str, str], JSON] = {}
    if len(candidates) > MAX_NAME_LOOKUPS:
        for pod in client.items(PODS.path(scope.namespace), {"labelSelector": scope.selector}):
            if _terminating(pod):
                pods[_key(pod)] = typed(pod, PODS)
        return Found(list(pods.values()), [], [])

    def same_name(name: str) -> list[JSON]:
        params = {"fieldSelector": f"metadata.name={name}", "labelSelector": scope.selector}
        return list(client.items(PODS.path(scope.namespace), params))

    def exact_pod(key: tuple[str, str]) -> list[JSON]:
        try:
            return [client.get(PODS.path(key[0], key[1]))]
        except NotFound:  # gone since it was listed
            return []

    lookups: list[Callable[[], list[JSON]]] = [
        *(lambda n=n: same_name(n) for n in sorted(candidates)),
        *(lambda k=k: exact_pod(k) for k in exact if k[1] not in candidates),
    ]
    for batch in client.map(lambda lookup: lookup(), lookups):
        for pod in batch:
            if _terminating(pod):
                pods[_key(pod)] = typed(pod, PODS)
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


def find_all(
    client: Client, view: ClusterView, scope: Scope
) -> tuple[list[tuple[Resource, JSON]], list[str]]:
    """Every object of any listable type with a deletionTimestamp (metadata only)."""
    try:
        discovery = view.discovery()
    except ReadFailed as failed:  # without the list of types there is nothing to look at
        raise ApiError(str(failed)) from None
    warnings = [
        f"could not discover {gv}: {why}" for gv, why in sorted(discovery.failed_groups.items())
    ]
    types = [r for r in discovery.resources if r.namespaced or scope.namespace is None]

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
