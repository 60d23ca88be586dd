"""A namespace holding an object the API server cannot read from storage (KEP-3926): the type's
list fails with StorageReadError, the namespace controller cannot delete it, and the only way
out besides recovering the data is an unsafe delete, printed last, destructive, never run by
`fix`.

The error's words are the API server's (k8s.io/apiserver pkg/storage/etcd3/corrupt_obj_
deleter.go and pkg/storage/errors.go at v0.37.2) as this tool's client reports a 500, copied
from a real v1.37.2 server with the bytes of a ConfigMap overwritten in etcd
(tests/e2e/test_newer_kubernetes.py).
"""

from __future__ import annotations

from kubectl_terminating import causes
from kubectl_terminating.explain.corrupt import corrupt_keys, says_corrupt
from kubectl_terminating.fix.plan import Proposal, Refusal, plan
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.resources import Resource
from kubectl_terminating.view import ContentListing, Discovery
from tests.unit.builders import explain_namespace_among, messages, types

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
DELETED = "2026-03-01T10:00:00Z"
LIST_ERROR = (
    "the server answered 500 StorageReadError for /api/v1/namespaces/shop/configmaps: failed to "
    "read one or more configmaps from the storage: StorageError: corrupt object, Code: 7, Key: "
    "/registry/configmaps/shop/broken, ResourceVersion: 0, AdditionalErrorMsg: object not "
    "decodable revision=223: illegal base64 data at input byte 0"
)
CONDITION = {
    "type": "NamespaceDeletionContentFailure",
    "status": "True",
    "reason": "ContentDeletionFailed",
    "message": "Failed to delete all resource types, 1 remaining: failed to read one or more "
    "configmaps from the storage: StorageError: corrupt object, Code: 7, Key: "
    "/registry/configmaps/shop/broken, ResourceVersion: 0, AdditionalErrorMsg: object not "
    "decodable revision=223: illegal base64 data at input byte 0",
}


def namespace(*conditions: JSON) -> JSON:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": "shop", "uid": "u-1", "deletionTimestamp": DELETED},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating", "conditions": list(conditions)},
    }


def explain_listed(error: str, *conditions: JSON) -> Finding:
    """The namespace as listed live: every type covered, configmaps failing with `error`."""
    content = {"shop": [ContentListing(resource=CONFIGMAPS, error=error)]}
    discovery = Discovery(resources=[CONFIGMAPS], complete=True)
    return explain_namespace_among(namespace(*conditions), [], discovery=discovery, content=content)


def test_the_error_names_the_corrupt_objects() -> None:
    assert says_corrupt(LIST_ERROR)
    assert corrupt_keys(LIST_ERROR) == ["/registry/configmaps/shop/broken"]
    assert not says_corrupt("the server answered 500 InternalError for /api/v1/x: etcdserver: ...")


def test_a_corrupt_object_holds_the_namespace_and_its_unsafe_delete_comes_last() -> None:
    finding = explain_listed(LIST_ERROR, CONDITION)
    main = finding.main_blocker
    assert main is not None and main.type == causes.CORRUPT_OBJECT
    assert main.summary == "configmaps unreadable in storage (corrupt): broken"
    assert main.confidence == causes.CERTAIN
    assert "/registry/configmaps/shop/broken" in messages(main)
    *safe, last = main.remedy
    assert not any(r.destructive for r in safe) and safe
    assert last.destructive
    assert last.command == (
        'echo \'{"apiVersion":"v1","kind":"DeleteOptions",'
        '"ignoreStoreReadErrorWithClusterBreakingPotential":true}\' | '
        "kubectl delete --raw /api/v1/namespaces/shop/configmaps/broken -f -"
    )
    assert last.when is not None and "unsafe-delete-ignore-read-errors" in last.when
    # the symptoms rank after it: the content the controller cannot list, its condition
    assert types(finding).index(causes.CORRUPT_OBJECT) < types(finding).index(
        causes.CONTENT_REMAINING
    )


def test_fix_never_runs_the_unsafe_delete() -> None:
    finding = explain_listed(LIST_ERROR, CONDITION)
    steps = [step for section in plan([finding]) for step in section.steps]
    refused = [s for s in steps if isinstance(s, Refusal)]
    assert any(s.blocker.type == causes.CORRUPT_OBJECT for s in refused)
    assert "unsafe delete" in next(
        s.reason for s in refused if s.blocker.type == causes.CORRUPT_OBJECT
    )
    proposed = [s for s in steps if isinstance(s, Proposal)]
    assert not any("ignoreStoreReadError" in str(s) for s in proposed)


def test_a_pasted_namespace_names_it_from_the_controllers_condition() -> None:
    """No listing (a paste): the controller's content failure quotes the storage error; the
    unsafe delete needs the live listing's type, so it is not printed from the paste."""
    discovery = Discovery(resources=[], complete=False)
    finding = explain_namespace_among(namespace(CONDITION), [], discovery=discovery)
    corrupt = [b for b in finding.blockers if b.type == causes.CORRUPT_OBJECT]
    assert [b.summary for b in corrupt] == ["configmaps unreadable in storage (corrupt): broken"]
    assert not any(r.destructive for r in corrupt[0].remedy)
    assert finding.main_blocker is corrupt[0]


def test_another_listing_failure_is_not_corruption() -> None:
    forbidden = "forbidden"
    finding = explain_listed(forbidden)
    assert causes.CORRUPT_OBJECT not in types(finding)
