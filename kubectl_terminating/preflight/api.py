"""The entry point: `preflight(view, target)` returns the report as a dict (the `-o json`
document), for the command and for any other caller (an MCP server, a test). Pure over the
view: what the deletion takes with it, judged on the cluster without it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kubectl_terminating.causes import LIKELY
from kubectl_terminating.errors import ConfigError, NotFound
from kubectl_terminating.model import JSON, ObjectRef
from kubectl_terminating.preflight.afterview import AfterView
from kubectl_terminating.preflight.doomed import Doomed, add_namespace, expand
from kubectl_terminating.preflight.judges import NAMESPACE_DELETER, Situation, judge
from kubectl_terminating.preflight.order import helm_sorted, object_name, safe_order
from kubectl_terminating.preflight.report import Report, sort_predictions
from kubectl_terminating.resources import NAMESPACES, Resource, as_dict, list_of, meta, text
from kubectl_terminating.view import ClusterView, Discovery, ReadFailed

# kubectl's short names for the types people delete most
ALIASES = {
    "po": "pods",
    "ns": "namespaces",
    "svc": "services",
    "deploy": "deployments",
    "rs": "replicasets",
    "sts": "statefulsets",
    "ds": "daemonsets",
    "cm": "configmaps",
    "sa": "serviceaccounts",
    "pvc": "persistentvolumeclaims",
    "pv": "persistentvolumes",
    "crd": "customresourcedefinitions",
    "crds": "customresourcedefinitions",
    "ep": "endpoints",
}


@dataclass(frozen=True)
class Target:
    """What is to be deleted, and how."""

    namespaces: tuple[str, ...] = ()  # preflight ns NAME...
    objects: tuple[str, ...] = ()  # preflight TYPE/NAME...
    manifest: tuple[JSON, ...] = ()  # preflight -f / helm: the manifest's documents
    namespace: str = "default"  # of TYPE/NAME and of namespaced documents without one
    cascade: str = "background"  # background | foreground | orphan
    deleter: str = "kubectl"  # kubectl | helm: whose order a manifest is deleted in
    fail_on: str = LIKELY
    release: str | None = None  # preflight helm RELEASE
    ordered_namespace_deletion: bool = True  # the server is 1.33+ (KEP-5080)
    describe: JSON = field(default_factory=dict)


def resolve_type(name: str, discovery: Discovery) -> Resource:
    """TYPE as kubectl takes it: plural, singular, kind, short name, `plural.group`."""
    lowered = name.lower()
    plural, _, group = lowered.partition(".")
    plural = ALIASES.get(plural, plural)
    found = [
        r
        for r in discovery.resources
        if plural in (r.plural, r.kind.lower(), r.plural.rstrip("s"))
        and (not group or r.group == group or r.group.startswith(group + "."))
    ]
    if not found:
        raise ConfigError(f'the server doesn\'t have a resource type "{name}"')
    return sorted(found, key=lambda r: (r.group != "", r.group != "apps", r.group))[0]


def _document_resource(doc: JSON, discovery: Discovery) -> Resource | None:
    api_version, kind = text(doc.get("apiVersion")), text(doc.get("kind"))
    group = api_version.rpartition("/")[0]
    matches = [r for r in discovery.resources if r.kind == kind and r.group == group]
    exact = [r for r in matches if r.api_version == api_version]
    found = exact or matches
    return found[0] if found else None


def documents(docs: tuple[JSON, ...]) -> list[JSON]:
    """Kubernetes objects of the manifest (a `List` unpacked; anything else skipped)."""
    out: list[JSON] = []
    for doc in docs:
        if text(doc.get("kind")).endswith("List") and isinstance(doc.get("items"), list):
            out += documents(tuple(as_dict(i) for i in list_of(doc.get("items"))))
        elif text(doc.get("kind")) and text(meta(doc).get("name")):
            out.append(doc)
    return out


_TYPE_NAME = re.compile(r"^([^/\s]+)/([^/\s]+)$")


def named_objects(view: ClusterView, target: Target, doomed: Doomed) -> list[ObjectRef]:
    """The objects the target names, live, into doomed; their refs in the manifest's order."""
    discovery = view.discovery()
    wanted: list[tuple[Resource, str | None, str]] = []
    for item in target.objects:
        match = _TYPE_NAME.match(item)
        if match is None:
            raise ConfigError(f"{item!r}: expected TYPE/NAME (e.g. deployment/web)")
        typed = resolve_type(match.group(1), discovery)
        wanted.append((typed, target.namespace if typed.namespaced else None, match[2]))
    for doc in documents(target.manifest):
        resource = _document_resource(doc, discovery)
        name = text(meta(doc).get("name"))
        if resource is None:
            doomed.unchecked.append(
                f"{text(doc.get('kind'))} {name}: type not served ({text(doc.get('apiVersion'))})"
            )
            continue
        where = text(meta(doc).get("namespace")) or target.namespace
        wanted.append((resource, where if resource.namespaced else None, name))
    refs = []
    for index, (kind, namespace, name) in enumerate(wanted):
        from_manifest = index >= len(target.objects)
        refs.append(ObjectRef(kind.kind, name, namespace, kind.api_version))
        live = view.get(kind, namespace, name)
        if live is None and not from_manifest:  # as kubectl delete says it
            raise NotFound(f'{kind.qualified} "{name}" not found', 404, "NotFound")
        if live is None:
            continue  # not there: nothing to delete
        if kind.group == "" and kind.kind == "Namespace":
            add_namespace(doomed, view, name)
        else:
            doomed.add(kind, live, "named")
    return refs


def build_report(view: ClusterView, target: Target) -> Report:
    doomed = Doomed()
    try:
        for name in target.namespaces:
            if view.get(NAMESPACES, None, name) is None:
                raise NotFound(f'namespaces "{name}" not found', 404, "NotFound")
            add_namespace(doomed, view, name)
        refs = named_objects(view, target, doomed)
        expand(doomed, view, target.cascade)
    except ReadFailed as failed:
        # what the deletion takes cannot be seen: nothing can be judged, one line says why
        raise ConfigError(str(failed)) from None
    # the namespace controller deletes a doomed namespace's content (pods first, KEP-5080)
    deleter = NAMESPACE_DELETER if doomed.namespaces else target.deleter
    situation = Situation(
        view,
        AfterView(view, doomed),
        doomed,
        deleter,
        target.cascade,
        target.ordered_namespace_deletion,
        list(doomed.unchecked),
    )
    try:
        predictions = sort_predictions(judge(situation))
    except ReadFailed as failed:
        situation.unchecked.append(str(failed))
        predictions = []
    report = Report(
        target.describe or _describe(target),
        doomed.counts(),
        predictions,
        unchecked=list(dict.fromkeys(situation.unchecked)),
        fail_on=target.fail_on,
        surviving_owners=[survivor.to_json() for survivor in situation.survivors.values()],
    )
    if target.manifest or target.objects:
        held = {str(p.object) for p in predictions}
        present = [r for r in refs if _present(r, doomed)]
        report.order = safe_order(present, held)
        if target.deleter == "helm":
            report.target["helmOrder"] = [object_name(r) for r in helm_sorted(present)]
    return report


def _present(ref: ObjectRef, doomed: Doomed) -> bool:
    key = (ref.api_version or "").rpartition("/")[0], ref.kind, ref.namespace or "", ref.name
    return key in doomed.items or (ref.kind == NAMESPACES.kind and ref.name in doomed.namespaces)


def _describe(target: Target) -> JSON:
    out: JSON = {"cascade": target.cascade, "deleter": target.deleter}
    if target.namespaces:
        out["namespaces"] = list(target.namespaces)
        out["deleter"] = NAMESPACE_DELETER
    if target.objects:
        out["objects"] = list(target.objects)
        out["namespace"] = target.namespace
    if target.release:
        out["release"] = target.release
    elif target.manifest:
        out["manifestObjects"] = len(documents(target.manifest))
    return out


def preflight(view: ClusterView, target: Target) -> JSON:
    """The preflight report as a dict: `-o json`'s PreflightReport (docs/preflight.md, Output)."""
    report = build_report(view, target)
    return {**report.to_json(), "exitCode": int(report.exit_code)}
