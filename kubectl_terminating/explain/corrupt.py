"""Objects the API server cannot read from storage (corrupt): a namespace holding one cannot be
emptied, since the namespace controller cannot list, and so cannot delete, what it cannot read.

Upstream facts (KEP-3926, "unsafe deletion of corrupt objects"; the AllowUnsafeMalformedObject
Deletion gate, alpha in 1.32, beta and on by default in 1.37: k8s.io/kubernetes
pkg/features/kube_features.go at v1.37.2):
- a list that meets an object it cannot decode or decrypt fails with HTTP 500, reason
  `StorageReadError`, message "failed to read one or more <resource> from the storage:
  StorageError: corrupt object, Code: 7, Key: /registry/..." and one cause per object whose
  `field` is its storage key (k8s.io/apiserver pkg/storage/etcd3/corrupt_obj_deleter.go
  aggregatedStorageError.NewAPIStatusError, pkg/storage/errors.go StorageError.Error, and
  k8s.io/apimachinery pkg/apis/meta/v1/types.go StatusReasonStoreReadError, at v0.37.2); a
  GET of one fails with InternalError and the same "StorageError: corrupt object" text;
- the unsafe delete is DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential=true and
  needs the verb `unsafe-delete-ignore-read-errors` on the resource (k8s.io/apiserver
  pkg/endpoints/handlers/delete.go, v0.37.2); it skips finalizers and preconditions. kubectl
  v1.37.2 has no flag for it (k8s.io/kubectl pkg/cmd/delete, v0.37.2): the DeleteOptions go in
  the body of `kubectl delete --raw`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence

from kubectl_terminating.causes import CERTAIN, CORRUPT_OBJECT, LIKELY
from kubectl_terminating.explain.common import text
from kubectl_terminating.explain.namespace_conditions import (
    clip,
    failure_reason,
    namespace_conditions,
    ns_ref,
)
from kubectl_terminating.explain.namespace_facts import NamespaceFacts
from kubectl_terminating.model import JSON, Blocker, Evidence, Remedy
from kubectl_terminating.resources import Resource

STORE_READ_ERROR = "StorageReadError"  # metav1.StatusReasonStoreReadError's value
CORRUPT = "StorageError: corrupt object"
# "Key: /registry/<resource...>/<namespace>/<name>," in each StorageError's text
KEY = re.compile(r"Key: (/[^\s,]+)")
# the aggregated list error's head: "failed to read one or more <resource.group> from the storage"
LISTED = re.compile(r"failed to read one or more (\S+) from the storage")
UNSAFE_VERB = "unsafe-delete-ignore-read-errors"
UNSAFE_OPTIONS = {
    "apiVersion": "v1",
    "kind": "DeleteOptions",
    "ignoreStoreReadErrorWithClusterBreakingPotential": True,
}


def says_corrupt(message: str) -> bool:
    """An error (a list, a GET, a controller's condition) says storage holds a corrupt object."""
    return CORRUPT in message or STORE_READ_ERROR in message


def corrupt_keys(message: str) -> list[str]:
    """The storage keys the error names, in order (one per corrupt object it reports)."""
    return list(dict.fromkeys(KEY.findall(message)))


def _names(keys: Sequence[str], namespace: str) -> list[str]:
    """Object names from keys of the namespace (`/registry/.../<namespace>/<name>`)."""
    names = []
    for key in keys:
        parts = key.rstrip("/").split("/")
        if len(parts) >= 3 and parts[-2] == namespace:
            names.append(parts[-1])
    return list(dict.fromkeys(names))


def unsafe_delete_command(resource: Resource, namespace: str, name: str) -> str:
    body = json.dumps(UNSAFE_OPTIONS, separators=(",", ":"))
    return f"echo {shlex.quote(body)} | kubectl delete --raw {resource.path(namespace, name)} -f -"


def corrupt_remedies(
    resource: Resource | None, namespace: str, names: Sequence[str]
) -> tuple[Remedy, ...]:
    """Recover first; the unsafe delete last, destructive, once per object it names."""
    plural = resource.qualified if resource else "objects named in the error"
    read = (
        f"kubectl get --raw {resource.path(namespace, names[0])}"
        if resource and names
        else (f"kubectl get {resource.qualified} -n {shlex.quote(namespace)}" if resource else None)
    )
    recover = Remedy(
        f"make the stored {plural} readable again: restore the encryption provider or KMS key "
        "they were written with (the API server's EncryptionConfiguration), or the etcd data; "
        "the namespace controller then deletes them by itself",
        read,
    )
    if resource is None:  # from a condition: the live listing names each object's delete
        live = Remedy(
            "name each corrupt object and its delete against the live cluster",
            f"kubectl terminating ns {shlex.quote(namespace)} --explain",
        )
        return (recover, live)
    unsafe = tuple(
        Remedy(
            f"LAST RESORT: unsafe delete of {resource.qualified} {name}: removed from storage "
            "without its finalizers, preconditions or the cleanup they guard",
            unsafe_delete_command(resource, namespace, name),
            destructive=True,
            when="the object cannot be recovered and nothing needs its cleanup; the caller "
            f"needs the `{UNSAFE_VERB}` verb on {resource.qualified}, and the API server "
            "AllowUnsafeMalformedObjectDeletion (on by default from 1.37)",
        )
        for name in names
    )
    return (recover, *unsafe)


def corrupt_blocker(
    resource: Resource | None, error: str, ns: JSON, namespace: str, said: str
) -> Blocker:
    """One type whose objects the API server cannot read; `said` names the witness."""
    names = _names(corrupt_keys(error), namespace)
    listed = LISTED.search(error)
    plural = resource.qualified if resource else (listed.group(1) if listed else "objects")
    shown = f": {', '.join(names[:3])}" + (" ..." if len(names) > 3 else "") if names else ""
    return Blocker(
        CORRUPT_OBJECT,
        clip(f"{plural} unreadable in storage (corrupt){shown}"),
        (
            Evidence(
                f"{said}: {error}",
                ns_ref(ns),
                {
                    "resource": resource.qualified if resource else None,
                    "keys": corrupt_keys(error),
                },
            ),
        ),
        corrupt_remedies(resource, namespace, names),
        # the API server's own storage layer says so (StorageReadError / corrupt object); a
        # StorageReadError without that text may be a passing read failure of the store
        confidence=CERTAIN if CORRUPT in error else LIKELY,
        basis=f"the API server's storage error ({said})",
    )


def corrupt_content_blockers(facts: NamespaceFacts) -> list[Blocker]:
    """Types of the namespace whose list fails on a corrupt object, as listed just now or, for
    what the listing does not show (a paste), as the controller's content failure says."""
    ns, content = facts.ns, facts.content
    name = facts.name
    blockers = [
        corrupt_blocker(c.resource, text(c.error), ns, name, f"listing {c.resource.qualified}")
        for c in (content.unlisted if content is not None else [])
        if says_corrupt(text(c.error))
    ]
    if blockers:
        return blockers
    for condition in namespace_conditions(ns):
        message = text(condition.get("message"))
        if failure_reason(condition) == "ContentDeletionFailed" and CORRUPT in message:
            said = f"the namespace controller's {text(condition.get('type'))} condition"
            blockers.append(corrupt_blocker(None, message, ns, name, said))
    return blockers
