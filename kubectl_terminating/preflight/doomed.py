"""What a deletion takes with it: the named objects, a namespace's content, the garbage
collector's dependents (by ownerReferences, unless the cascade is orphan) and a CRD's objects.

Pure over a ClusterView: the same code runs on a live cluster and over unit fixtures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kubectl_terminating.model import JSON
from kubectl_terminating.resources import CRDS, NAMESPACES, Resource, as_dict, list_of, meta, text
from kubectl_terminating.view import ClusterView, ReadFailed

Key = tuple[str, str, str, str]  # group, kind, namespace, name


def key_of(resource: Resource, obj: JSON) -> Key:
    m = meta(obj)
    namespace = text(m.get("namespace")) if resource.namespaced else ""
    return resource.group, resource.kind, namespace, text(m.get("name"))


@dataclass(frozen=True)
class Doomed1:
    """One object the deletion removes, and why it goes (`named`, `namespace`, `owner`, `crd`)."""

    resource: Resource
    obj: JSON
    why: str


@dataclass
class Doomed:
    namespaces: set[str] = field(default_factory=set)
    items: dict[Key, Doomed1] = field(default_factory=dict)
    uids: set[str] = field(default_factory=set)
    unchecked: list[str] = field(default_factory=list)

    def add(self, resource: Resource, obj: JSON, why: str) -> bool:
        key = key_of(resource, obj)
        if key in self.items:
            return False
        self.items[key] = Doomed1(resource, obj, why)
        uid = text(meta(obj).get("uid"))
        if uid:
            self.uids.add(uid)
        return True

    def contains(self, resource: Resource, namespace: str | None, name: str) -> bool:
        if resource.namespaced and namespace and namespace in self.namespaces:
            return True
        key = (resource.group, resource.kind, namespace or "" if resource.namespaced else "", name)
        return key in self.items

    def has_pod(self, namespace: str, name: str) -> bool:
        return namespace in self.namespaces or ("", "Pod", namespace, name) in self.items

    def counts(self) -> dict[str, int]:
        counted = Counter(d.resource.kind for d in self.items.values())
        return dict(sorted(counted.items()))

    @property
    def objects(self) -> list[Doomed1]:
        return list(self.items.values())


def owner_uids(obj: JSON) -> set[str]:
    return {text(as_dict(r).get("uid")) for r in list_of(meta(obj).get("ownerReferences"))}


def add_namespace(doomed: Doomed, view: ClusterView, name: str) -> None:
    """The namespace and everything in it (one metadata-only list per type); one that does
    not exist has nothing to delete."""
    namespace = view.get(NAMESPACES, None, name)
    if namespace is None:
        return
    doomed.namespaces.add(name)
    doomed.add(NAMESPACES, namespace, "named")
    for listing in view.namespace_content(name):
        if listing.error:
            doomed.unchecked.append(
                f"could not list {listing.resource.qualified} in {name}: {listing.error}"
            )
        for item in listing.items:
            doomed.add(listing.resource, item, "namespace")


def crd_resource(crd: JSON) -> Resource | None:
    """The type a CRD serves, at its storage version (else the first served)."""
    spec = as_dict(crd.get("spec"))
    names = as_dict(spec.get("names"))
    versions = [as_dict(v) for v in list_of(spec.get("versions"))]
    chosen = next((v for v in versions if v.get("storage")), None) or next(
        (v for v in versions if v.get("served")), None
    )
    if not chosen or not text(names.get("plural")):
        return None
    return Resource(
        text(spec.get("group")),
        text(chosen.get("name")),
        text(names.get("plural")),
        text(names.get("kind")),
        text(spec.get("scope")) != "Cluster",
    )


def add_crd_objects(doomed: Doomed, view: ClusterView, crd: JSON) -> None:
    """A CRD being deleted waits for all its objects (customresourcecleanup): they go too."""
    resource = crd_resource(crd)
    if resource is None:
        return
    try:
        instances = view.list(resource)
    except ReadFailed as failed:
        doomed.unchecked.append(str(failed))
        return
    for obj in instances:
        doomed.add(resource, obj, "crd")


def _dependent_namespaces(doomed: Doomed, view: ClusterView) -> list[str]:
    """Where dependents of the doomed objects may live: a namespaced owner's own namespace
    (ownerReferences name an owner in the dependent's namespace or a cluster-scoped one), and
    for a doomed cluster-scoped object every namespace. A Namespace as owner is left out (the
    namespace controller deletes its content; an object elsewhere naming a Namespace as owner
    is rare, and listing every namespace for every `preflight ns` costs the whole cluster)."""
    namespaces = {
        text(meta(d.obj).get("namespace"))
        for d in doomed.objects
        if d.resource.namespaced and text(meta(d.obj).get("namespace")) not in doomed.namespaces
    }
    if any(
        not d.resource.namespaced and d.resource.kind != NAMESPACES.kind for d in doomed.objects
    ):
        try:
            every = view.list(NAMESPACES)
        except ReadFailed as failed:
            doomed.unchecked.append(
                f"dependents of cluster-scoped objects in other namespaces: {failed}"
            )
            every = []
        expect = getattr(view, "expect_content", None)
        if callable(expect):  # a live view lists each type once for all of them
            expect(every)
        namespaces |= {text(meta(n).get("name")) for n in every}
    return sorted(n for n in namespaces - doomed.namespaces if n)


def add_dependents(doomed: Doomed, view: ClusterView) -> None:
    """The garbage collector's dependents of what is doomed, transitively: in the namespaces
    of the doomed namespaced objects, and in every namespace for a doomed cluster-scoped one
    (a namespaced dependent may name a cluster-scoped owner; never one in another namespace)."""
    candidates: list[tuple[Resource, JSON]] = []
    for namespace in _dependent_namespaces(doomed, view):
        for listing in view.namespace_content(namespace):
            if listing.error:
                doomed.unchecked.append(
                    f"could not list {listing.resource.qualified} in {namespace}: "
                    f"{listing.error}"
                )
            candidates += [(listing.resource, item) for item in listing.items]
    grew = True
    while grew:
        grew = False
        for resource, item in candidates:
            if owner_uids(item) & doomed.uids and doomed.add(resource, item, "owner"):
                grew = True


def expand(doomed: Doomed, view: ClusterView, cascade: str) -> Doomed:
    """What the named objects take with them: a CRD's objects, then (unless orphan) the
    garbage collector's dependents."""
    for item in list(doomed.objects):
        if item.resource.group == CRDS.group and item.resource.kind == CRDS.kind:
            add_crd_objects(doomed, view, item.obj)
    if cascade != "orphan":
        add_dependents(doomed, view)
    return doomed
