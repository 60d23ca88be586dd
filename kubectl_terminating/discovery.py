"""Which resource types the server serves: aggregated discovery, per-group as a fallback."""

from __future__ import annotations

from typing import Any

from kubectl_terminating.client import ACCEPT_DISCOVERY, Client
from kubectl_terminating.errors import ApiError, Unreachable
from kubectl_terminating.model import JSON
from kubectl_terminating.resources import Resource
from kubectl_terminating.view import Discovery


def discover(client: Client) -> Discovery:
    """Every listable resource type, one version per group/resource (the preferred one).

    A group whose discovery fails (an unavailable aggregated API) is reported in
    `failed_groups` and the rest is still returned.
    """
    result = Discovery()
    # Check reads: a slow aggregated API answers (or not) within the client's check deadline
    # and is reported in failed_groups, instead of stalling the run.
    deadline = client.check_deadline
    core = client.get("/api", accept=ACCEPT_DISCOVERY, deadline=deadline)
    groups = client.get("/apis", accept=ACCEPT_DISCOVERY, deadline=deadline)
    if _is_aggregated(core) and _is_aggregated(groups):
        for document in (core, groups):
            _read_aggregated(document, result)
    else:
        _read_legacy(client, core, groups, result)
    seen: set[tuple[str, str]] = set()
    unique = []
    for resource in result.resources:
        key = (resource.group, resource.plural)
        if key not in seen:
            seen.add(key)
            unique.append(resource)
    result.resources = unique
    return result


def _is_aggregated(document: JSON) -> bool:
    return document.get("kind") == "APIGroupDiscoveryList"


def _read_aggregated(document: JSON, result: Discovery) -> None:
    for group in document.get("items") or []:
        name = str((group.get("metadata") or {}).get("name") or "")
        for version in group.get("versions") or []:  # preferred version first
            gv = f"{name}/{version.get('version')}" if name else str(version.get("version"))
            if version.get("freshness") == "Stale":
                result.failed_groups[gv] = "discovery is stale (the API is not answering)"
            for entry in version.get("resources") or []:
                resource = _aggregated_resource(name, str(version.get("version")), entry)
                if resource is not None:
                    result.resources.append(resource)


def _aggregated_resource(group: str, version: str, entry: JSON) -> Resource | None:
    verbs = entry.get("verbs") or []
    if "list" not in verbs:
        return None
    kind = (entry.get("responseKind") or {}).get("kind") or ""
    return Resource(
        group=group,
        version=version,
        plural=str(entry.get("resource")),
        kind=str(kind),
        namespaced=entry.get("scope") == "Namespaced",
    )


def _read_legacy(client: Client, core: JSON, groups: JSON, result: Discovery) -> None:
    versions: list[tuple[str, str]] = [("", v) for v in core.get("versions") or ["v1"]]
    deadline = client.check_deadline
    for group in groups.get("groups") or []:
        preferred = (group.get("preferredVersion") or {}).get("version")
        if preferred:
            versions.append((str(group.get("name")), str(preferred)))

    def fetch(gv: tuple[str, str]) -> tuple[tuple[str, str], Any]:
        group, version = gv
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            return gv, client.get(path, deadline=deadline)
        except (ApiError, Unreachable) as exc:
            return gv, exc

    for (group, version), answer in client.map(fetch, versions):
        gv = f"{group}/{version}" if group else version
        if isinstance(answer, Exception):
            result.failed_groups[gv] = str(answer)
            continue
        for entry in answer.get("resources") or []:
            if "/" in str(entry.get("name")) or "list" not in (entry.get("verbs") or []):
                continue
            result.resources.append(
                Resource(
                    group=group,
                    version=version,
                    plural=str(entry.get("name")),
                    kind=str(entry.get("kind")),
                    namespaced=bool(entry.get("namespaced")),
                )
            )
