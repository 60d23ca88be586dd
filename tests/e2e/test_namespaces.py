"""Stuck namespaces on the real control plane: kube-controller-manager's namespace controller
writes the real conditions, the plugin names the blockers (`-o json` is the contract checked).

Cluster-wide breakage is kept in check: the webhooks are namespace-scoped, the unavailable
APIService lives only inside its test, and the broken conversion webhook gets a control plane
of its own (on 1.36 it stalls every namespace's deletion, see test_broken_conversion_webhook).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.harness import scenarios
from tests.harness.api import (
    JSON,
    MERGE,
    delete,
    get,
    get_or_none,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.cli import run_cli, run_json
from tests.harness.controlplane import ApiError, ControlPlane, build_binaries
from tests.harness.users import Users, rule

pytestmark = pytest.mark.e2e

Item = dict[str, Any]
CONTROLLER_TIMEOUT = 60.0  # the controller writes conditions within seconds; be generous


# -- waiting for the namespace controller ------------------------------------------------------


def _conditions(cp: ControlPlane, ns: str) -> dict[str, JSON]:
    status = get(cp, f"/api/v1/namespaces/{ns}").get("status") or {}
    return {c["type"]: c for c in status.get("conditions") or []}


def wait_condition(cp: ControlPlane, ns: str, type_: str, status: str = "True") -> JSON:
    """The namespace condition type_ once the controller has set it to status."""

    def written() -> JSON | None:
        found = _conditions(cp, ns).get(type_)
        return found if found and found["status"] == status else None

    return wait_for(written, CONTROLLER_TIMEOUT, message=f"{type_}={status} on namespace {ns}")


def wait_spec_finalizers(cp: ControlPlane, ns: str, expected: list[str]) -> None:
    """Until spec.finalizers is expected (the controller removes `kubernetes` when done)."""

    def done() -> bool:
        spec = get(cp, f"/api/v1/namespaces/{ns}").get("spec") or {}
        return list(spec.get("finalizers") or []) == expected

    wait_for(done, CONTROLLER_TIMEOUT, message=f"spec.finalizers of {ns} to be {expected}")


# -- reading the plugin's answer ---------------------------------------------------------------


def of_type(item: Item, type_: str) -> list[Item]:
    return [b for b in item["blockers"] if b["type"] == type_]


def one(item: Item, type_: str) -> Item:
    found = of_type(item, type_)
    assert len(found) == 1, [(b["type"], b["summary"]) for b in item["blockers"]]
    return found[0]


def types(item: Item) -> list[str]:
    return [b["type"] for b in item["blockers"]]


def messages(blocker: Item) -> str:
    return "\n".join(e["message"] for e in blocker["evidence"])


def refs(blocker: Item) -> list[JSON]:
    return [e["object"] for e in blocker["evidence"] if "object" in e]


def remaining(item: Item, resource: str) -> Item:
    found: list[Item] = [r for r in item["remaining"] if r["resource"] == resource]
    assert len(found) == 1, item["remaining"]
    return found[0]


def explain_json(cp: ControlPlane, *names: str) -> dict[str, Item]:
    data = run_json("ns", *names, kubeconfig=cp.kubeconfig_path)
    assert data["apiVersion"] == "terminating.kubectl.io/v1" and data["kind"] == "List"
    return {i["name"]: i for i in data["items"]}


def from_file(cp: ControlPlane, tmp_path: Path, ns: str) -> Item:
    """`ns NAME --from-file` on what `kubectl get ns NAME -o json` printed: the namespace alone."""
    saved = tmp_path / f"{ns}.json"
    saved.write_text(cp.kubectl("get", "ns", ns, "-o", "json").stdout)
    data = run_json("ns", ns, "--from-file", str(saved), kubeconfig=cp.kubeconfig_path)
    items: list[Item] = data["items"]
    assert len(items) == 1, items
    return items[0]


# -- the stuck namespaces most tests share ---------------------------------------------------


@dataclass(frozen=True)
class Built:
    orphan: scenarios.Stuck  # custom resource, finalizer, no operator
    finalizer_hook: scenarios.Stuck  # webhook rejects the UPDATE that removes the finalizer
    delete_hook: scenarios.Stuck  # webhook rejects the namespace controller's DELETE
    own_finalizer: scenarios.Stuck  # metadata.finalizers on the namespace
    spec_finalizer: scenarios.Stuck  # spec.finalizers beyond `kubernetes`
    pods: scenarios.Stuck  # a pod whose node is gone

    @property
    def names(self) -> list[str]:
        return [s.namespace for s in vars(self).values()]


def group_of(stuck: scenarios.Stuck) -> str:
    """The API group of the namespace's custom resource type (one per namespace)."""
    return f"{stuck.namespace}.example.com"


WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def _release(cp: ControlPlane, built: Built) -> None:
    """Let every namespace go, so the rest of the session does not see them (best effort)."""

    def quietly(method: str, path: str, body: Any = None, content_type: str = MERGE) -> None:
        with contextlib.suppress(ApiError):
            cp.api(method, path, body, content_type)

    no_finalizers = {"metadata": {"finalizers": None}}
    quietly("DELETE", f"{WEBHOOKS}/{built.finalizer_hook.namespace}-finalizer-guard")
    quietly("DELETE", f"{WEBHOOKS}/{built.delete_hook.namespace}-guard")
    for stuck, plural in (
        (built.orphan, "widgets"),
        (built.finalizer_hook, "locks"),
        (built.delete_hook, "gadgets"),
    ):
        path = f"/apis/{group_of(stuck)}/v1/namespaces/{stuck.namespace}/{plural}/{stuck.name}"
        quietly("PATCH", path, no_finalizers)
    quietly("PATCH", f"/api/v1/namespaces/{built.own_finalizer.namespace}", no_finalizers)
    pod = f"/api/v1/namespaces/{built.pods.namespace}/pods/{built.pods.name}"
    quietly("DELETE", pod, {"gracePeriodSeconds": 0}, "application/json")
    spec_ns = built.spec_finalizer.namespace
    ns = get_or_none(cp, f"/api/v1/namespaces/{spec_ns}")
    if ns is not None:
        ns["spec"]["finalizers"] = []
        quietly("PUT", f"/api/v1/namespaces/{spec_ns}/finalize", ns, "application/json")


@pytest.fixture(scope="module")
def built(control_plane: ControlPlane) -> Iterator[Built]:
    cp = control_plane
    orphan, hook, guarded = unique_ns("ns-orphan"), unique_ns("ns-hook"), unique_ns("ns-del")
    made = Built(
        orphan=scenarios.namespace_with_orphaned_custom_resource(
            cp, orphan, f"{orphan}.example.com"
        ),
        finalizer_hook=scenarios.namespace_with_webhook_blocking_finalizer_removal(
            cp, hook, f"{hook}.example.com"
        ),
        delete_hook=scenarios.namespace_with_blocking_webhook(
            cp, guarded, f"{guarded}.example.com"
        ),
        own_finalizer=scenarios.namespace_with_metadata_finalizer(cp, unique_ns("ns-own")),
        spec_finalizer=scenarios.namespace_with_spec_finalizer(cp, unique_ns("ns-spec")),
        pods=scenarios.namespace_with_stuck_pod(cp, unique_ns("ns-pods"), grace_period=1),
    )
    try:
        # What the namespace controller writes once it has been through each of them.
        wait_condition(cp, made.orphan.namespace, "NamespaceFinalizersRemaining")
        wait_condition(cp, made.finalizer_hook.namespace, "NamespaceFinalizersRemaining")
        wait_condition(cp, made.delete_hook.namespace, "NamespaceDeletionContentFailure")
        wait_spec_finalizers(cp, made.own_finalizer.namespace, [])
        wait_spec_finalizers(cp, made.spec_finalizer.namespace, ["example.com/custom"])
        # the pods' namespace: ContentRemaining is False on 1.33+ (pods first, the rest waits:
        # test_versions.py), True before; the failure to delete them is written on both
        wait_condition(cp, made.pods.namespace, "NamespaceDeletionContentFailure")
        yield made
    finally:
        _release(cp, made)


@pytest.fixture(scope="module")
def explained(control_plane: ControlPlane, built: Built) -> dict[str, Item]:
    """`ns NAME... -o json` for every namespace of the module, once."""
    found = explain_json(control_plane, *built.names)
    assert sorted(found) == sorted(built.names)
    return found


def test_several_namespaces_share_their_content_lists(
    control_plane: ControlPlane, built: Built, explained: dict[str, Item]
) -> None:
    """Explained together, the namespaces get the answer each gets alone, while a type with
    few objects is listed once across the cluster instead of once per namespace."""
    for name in built.names:
        alone = explain_json(control_plane, name)[name]
        together = explained[name]
        assert types(alone) == types(together), name
        assert [(r["resource"], r["count"]) for r in alone["remaining"]] == [
            (r["resource"], r["count"]) for r in together["remaining"]
        ], name

    listable = control_plane.kubectl("api-resources", "--namespaced", "--verbs=list", "-o", "name")
    namespaced_types = len(listable.stdout.split())
    result = run_cli(
        "ns", *built.names, "-o", "json", "-v", "6", kubeconfig=control_plane.kubeconfig_path
    )
    assert result.returncode == 0, result.stderr
    gets = [line for line in result.stderr.splitlines() if line.startswith("GET ")]
    in_one = [g for g in gets if any(f"/namespaces/{n}/" in g for n in built.names)]
    # once per type and namespace would be at least namespaced_types * 6 requests
    assert len(in_one) < namespaced_types, (len(in_one), namespaced_types)


# -- custom resource without its operator ------------------------------------------------------


def test_custom_resource_without_its_operator(built: Built, explained: dict[str, Item]) -> None:
    stuck = built.orphan
    ns, group = stuck.namespace, group_of(stuck)
    item = explained[ns]
    assert item["kind"] == "Namespace" and item["apiVersion"] == "v1"
    assert item["namespace"] is None and item["deletionTimestamp"]
    assert types(item)[0] == "finalizer"  # the cause first, its symptoms after
    finalizer = one(item, "finalizer")
    assert finalizer["summary"] == f"finalizer {group}/cleanup (owner: unknown)"
    widget = {"kind": "Widget", "name": "gadget", "namespace": ns, "apiVersion": f"{group}/v1"}
    assert widget in refs(finalizer)
    assert f"no known owner for {group}/cleanup" in messages(finalizer)
    assert "cannot tell if it runs" in messages(finalizer)
    remove = finalizer["remedy"][-1]
    assert remove["destructive"]
    assert f"kubectl patch widgets.{group} gadget -n {ns} --type=json" in remove["command"]

    # the object is listed with its finalizer, and the controller's own conditions back it up
    widgets = remaining(item, f"widgets.{group}")
    assert widgets["kind"] == "Widget" and widgets["count"] == 1
    (gadget,) = widgets["objects"]
    assert gadget["name"] == "gadget" and gadget["deletionTimestamp"]
    assert gadget["finalizers"] == [f"{group}/cleanup"]
    assert gadget["owners"] == {f"{group}/cleanup": "unknown"}
    content = one(item, "content-remaining")
    assert content["summary"] == f"finalizer {group}/cleanup; left: widgets (1)"
    assert f"widgets.{group}: 1 left, 1 with finalizers ({group}/cleanup)" in messages(content)
    assert "NamespaceFinalizersRemaining: Some content in the namespace has finalizers " in (
        messages(content)
    )
    conditions = {c["type"]: c for c in item["conditions"]}
    assert conditions["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert conditions["NamespaceFinalizersRemaining"]["status"] == "True"


# -- webhooks ----------------------------------------------------------------------------------


def test_webhook_blocks_finalizer_removal(
    control_plane: ControlPlane, built: Built, explained: dict[str, Item]
) -> None:
    stuck = built.finalizer_hook
    ns, group = stuck.namespace, group_of(stuck)
    # what the operator would meet: its UPDATE removing the finalizer is rejected
    with pytest.raises(ApiError) as rejected:
        remove_finalizers(control_plane, f"/apis/{group}/v1/namespaces/{ns}/locks/{stuck.name}")
    assert "failed calling webhook" in str(rejected.value)

    item = explained[ns]
    assert types(item)[0] == "webhook"
    webhook = one(item, "webhook")
    hook_name = f"{ns}-finalizer-guard.webhooks.test.example.com"
    assert webhook["summary"] == f"webhook {hook_name}: service {ns}/guard missing"
    config, service = webhook["evidence"]
    assert config["object"]["kind"] == "ValidatingWebhookConfiguration"
    assert config["object"]["name"] == f"{ns}-finalizer-guard"
    assert config["fields"]["operations"] == ["UPDATE"]
    assert config["fields"]["resource"] == f"locks.{group}"
    guard = {"kind": "Service", "name": "guard", "namespace": ns, "apiVersion": "v1"}
    assert service["object"] == guard
    assert service["fields"] == {"exists": False}
    assert [r["destructive"] for r in webhook["remedy"]] == [False, True]

    # the object itself was deleted (DELETE is not intercepted) and waits on its finalizer
    (held,) = remaining(item, f"locks.{group}")["objects"]
    assert held["name"] == stuck.name and held["deletionTimestamp"]
    assert one(item, "finalizer")["summary"].startswith(f"finalizer {group}/release (owner:")


def test_webhook_blocks_content_deletion(built: Built, explained: dict[str, Item]) -> None:
    stuck = built.delete_hook
    ns, group = stuck.namespace, group_of(stuck)
    item = explained[ns]
    hook_name = f"{ns}-guard.webhooks.test.example.com"
    webhook = one(item, "webhook")
    assert webhook["summary"] == f"webhook {hook_name}: service {ns}/guard missing"
    assert webhook["evidence"][0]["fields"]["operations"] == ["DELETE", "UPDATE"]
    # the controller's own words: its DELETE was rejected by that webhook
    condition = one(item, "namespace-condition")
    assert condition["summary"].startswith(f"content deletion failed: webhook {ns}-guard")
    fields = condition["evidence"][0]["fields"]
    assert fields["type"] == "NamespaceDeletionContentFailure"
    assert f'failed calling webhook "{hook_name}"' in fields["message"]
    # never deleted: listed without a deletionTimestamp
    (locked,) = remaining(item, f"gadgets.{group}")["objects"]
    assert locked["name"] == stuck.name and locked["deletionTimestamp"] is None


# -- the namespace's own finalizers -------------------------------------------------------------


def test_finalizer_in_the_namespace_metadata(built: Built, explained: dict[str, Item]) -> None:
    ns = built.own_finalizer.namespace
    item = explained[ns]
    assert item["finalizers"] == ["example.com/keep"]
    assert item["remaining"] == []
    assert types(item) == ["namespace-finalizer"]
    (blocker,) = item["blockers"]
    assert blocker["summary"] == "finalizer example.com/keep (owner: unknown)"
    fact = blocker["evidence"][0]
    assert fact["object"] == {"kind": "Namespace", "name": ns, "apiVersion": "v1"}
    assert fact["fields"] == {"finalizer": "example.com/keep", "index": 0}
    remove = blocker["remedy"][-1]
    assert remove["destructive"]
    assert remove["command"].startswith(f"kubectl patch namespaces {ns} --type=json")
    # the controller finished the content and wrote nothing alarming
    assert item["conditions"] and all(c["status"] == "False" for c in item["conditions"])


def test_spec_finalizer_left_after_the_content_is_gone(
    built: Built, explained: dict[str, Item]
) -> None:
    ns = built.spec_finalizer.namespace
    item = explained[ns]
    assert item["finalizers"] == []  # metadata.finalizers: none
    assert item["remaining"] == []
    assert types(item) == ["namespace-finalizer"]
    (blocker,) = item["blockers"]
    assert blocker["summary"] == "spec finalizer example.com/custom (owner: unknown)"
    assert blocker["evidence"][0]["fields"] == {"specFinalizer": "example.com/custom"}
    finalize = blocker["remedy"][-1]
    assert finalize["destructive"]
    assert f"kubectl replace --raw /api/v1/namespaces/{ns}/finalize -f -" in finalize["command"]
    assert '["example.com/custom"]' in finalize["command"]


# -- pods left inside --------------------------------------------------------------------------


def test_stuck_pods_inside_are_explained_as_pods(built: Built, explained: dict[str, Item]) -> None:
    stuck = built.pods
    item = explained[stuck.namespace]
    pods = remaining(item, "pods")
    assert pods["count"] == 1
    (pod,) = pods["objects"]
    assert pod["name"] == stuck.name and pod["deletionTimestamp"]
    assert "pods: 1 left" in messages(one(item, "content-remaining"))

    (child,) = item["pods"]
    assert (child["kind"], child["namespace"], child["name"]) == (
        "Pod",
        stuck.namespace,
        stuck.name,
    )
    assert child["node"] == stuck.node
    assert types(child)[0] == "node-missing"
    missing = child["blockers"][0]
    assert missing["summary"] == f"node {stuck.node} no longer exists"
    assert "namespace-terminating" in types(child)


def test_explain_text_nests_the_pods_inside(control_plane: ControlPlane, built: Built) -> None:
    result = run_cli(
        "ns", built.pods.namespace, "--explain", kubeconfig=control_plane.kubeconfig_path
    )
    assert result.returncode == 0, result.stderr
    assert f"  Pod {built.pods.namespace}/{built.pods.name}" in result.stdout
    assert f"[node-missing] node {built.pods.node} no longer exists" in result.stdout


# -- the views ---------------------------------------------------------------------------------


def _table(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    columns = list(re.finditer(r"\S+", lines[0]))
    bounds = list(
        zip([c.start() for c in columns], [*(c.start() for c in columns[1:]), None], strict=True)
    )
    rows = [
        {c.group(): line[a:b].strip() for c, (a, b) in zip(columns, bounds, strict=True)}
        for line in lines[1:]
    ]
    return {r["NAME"]: r for r in rows}


def test_table_shows_the_main_blocker_of_each(control_plane: ControlPlane, built: Built) -> None:
    kubeconfig = control_plane.kubeconfig_path
    table = _table(run_cli("ns", *built.names, kubeconfig=kubeconfig))
    assert list(next(iter(table.values()))) == ["NAME", "TERMINATING", "REMAINING", "BLOCKER"]
    orphan = table[built.orphan.namespace]
    assert orphan["REMAINING"] == "1"
    assert orphan["BLOCKER"].startswith(
        f"finalizer {group_of(built.orphan)}/cleanup (owner: unknown)"
    )
    hook = built.finalizer_hook.namespace
    assert table[hook]["BLOCKER"].startswith(f"webhook {hook}-finalizer-guard.webhooks")
    assert (
        table[built.own_finalizer.namespace]["BLOCKER"]
        == "finalizer example.com/keep (owner: unknown)"
    )
    assert table[built.spec_finalizer.namespace]["REMAINING"] == "0"

    wide = _table(run_cli("ns", *built.names, "-o", "wide", kubeconfig=kubeconfig))
    assert wide[built.own_finalizer.namespace]["FINALIZERS"] == "example.com/keep"
    assert wide[built.orphan.namespace]["FINALIZERS"] == "<none>"


def test_explain_text_shows_conditions_remaining_and_remedies(
    control_plane: ControlPlane, built: Built
) -> None:
    stuck = built.orphan
    group = group_of(stuck)
    result = run_cli("ns", stuck.namespace, "--explain", kubeconfig=control_plane.kubeconfig_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"Namespace {stuck.namespace}\n")
    assert "NamespaceFinalizersRemaining=True SomeFinalizersRemain: " in out
    assert (
        f"    widgets.{group}: 1\n      gadget (finalizers: {group}/cleanup; terminating)\n" in out
    )
    assert f"1. [finalizer] finalizer {group}/cleanup (owner: unknown)" in out
    assert "DESTRUCTIVE: LAST RESORT: remove finalizer" in out


# -- conditions are evidence -------------------------------------------------------------------


def test_a_namespace_file_is_explained_by_its_conditions(
    control_plane: ControlPlane, built: Built, tmp_path: Path
) -> None:
    """`kubectl get ns X -o json` holds the namespace alone: what its current conditions name
    (remaining finalizers and types, a webhook rejecting the controller's deletes) is the
    answer, never "no content"."""
    orphan = built.orphan
    group = group_of(orphan)
    # an APIService another module broke leaves a DiscoveryFailure until the controller's next pass
    wait_condition(control_plane, orphan.namespace, "NamespaceDeletionDiscoveryFailure", "False")
    item = from_file(control_plane, tmp_path, orphan.namespace)
    main = item["blockers"][0]
    assert main["type"] == "finalizer", (types(item), messages(main))
    # a long group leaves no room for "(owner: unknown)": cut before it, never inside it
    assert main["summary"].startswith(f"finalizer {group}/cleanup on 1 object")
    assert "NamespaceFinalizersRemaining: Some content" in messages(main)
    content = one(item, "content-remaining")
    assert content["summary"].startswith("1 object left (per the controller): widgets.")
    assert f"widgets.{group}: the controller's count" in messages(content)
    assert not any("no content" in b["summary"] for b in item["blockers"])

    guarded = built.delete_hook
    item = from_file(control_plane, tmp_path, guarded.namespace)
    main = item["blockers"][0]
    assert main["type"] == "webhook", types(item)
    hook = f"{guarded.namespace}-guard.webhooks.test.example.com"
    assert main["summary"].startswith(f"webhook {hook}")


def test_a_type_it_may_not_list_is_explained_by_the_conditions(
    control_plane: ControlPlane, built: Built, tmp_path: Path
) -> None:
    """RBAC lets the user read everything but the custom resource's group: the type shows as
    not listable, and the finalizer holding its object comes from the controller's condition."""
    orphan = built.orphan
    group = group_of(orphan)
    wait_condition(control_plane, orphan.namespace, "NamespaceDeletionDiscoveryFailure", "False")
    groups = ["", "coordination.k8s.io", "apiregistration.k8s.io", "apiextensions.k8s.io"]
    groups += ["admissionregistration.k8s.io", "discovery.k8s.io", "events.k8s.io"]
    with Users(control_plane, tmp_path, "ns-rbac") as users:
        user = users.user("no-widgets", cluster_rules=[rule(["*"], group=g) for g in groups])
        data = run_json("ns", orphan.namespace, kubeconfig=user.kubeconfig)
    (item,) = data["items"]
    widgets = remaining(item, f"widgets.{group}")
    assert widgets["count"] == 0 and "forbidden" in widgets["error"]
    main = item["blockers"][0]
    assert main["type"] == "finalizer", (types(item), messages(main))
    assert main["summary"].startswith(f"finalizer {group}/cleanup on 1 object")
    assert "NamespaceFinalizersRemaining: Some content" in messages(main)


# -- cluster-wide causes: each in its own test, removed before it ends ---------------------------


def test_unavailable_apiservice(control_plane: ControlPlane, tmp_path: Path) -> None:
    cp = control_plane
    ns = unique_ns("ns-api")
    group = f"{ns}.io"  # short: the one-line summary is clipped at 70 characters
    stuck = scenarios.namespace_with_unavailable_apiservice(cp, ns, group)
    apiservice = f"/apis/apiregistration.k8s.io/v1/apiservices/{stuck.name}"
    try:
        discovery = wait_condition(cp, ns, "NamespaceDeletionDiscoveryFailure")
        assert discovery["reason"] == "DiscoveryFailed"
        item = explain_json(cp, ns)[ns]
        assert types(item)[0] == "apiservice-unavailable"  # the cause, not the symptoms
        mine = [b for b in of_type(item, "apiservice-unavailable") if stuck.name in b["summary"]]
        assert len(mine) == 1, of_type(item, "apiservice-unavailable")
        blocker = mine[0]
        assert blocker["summary"] == f"APIService {stuck.name} unavailable: ServiceNotFound"
        fields = blocker["evidence"][0]["fields"]
        assert fields["reason"] == "ServiceNotFound"
        assert fields["service"] == f"{ns}/api"
        assert (fields["group"], fields["version"]) == (group, "v1alpha1")
        fix, remove = blocker["remedy"]
        assert not fix["destructive"] and remove["destructive"]
        assert remove["command"] == f"kubectl delete apiservice {stuck.name}"

        condition = one(item, "namespace-condition")
        assert condition["summary"] == f"discovery failed for {group}/v1alpha1"
        assert condition["evidence"][0]["fields"]["type"] == "NamespaceDeletionDiscoveryFailure"

        # `kubectl get ns -o json` alone: no APIService in the file, yet the condition's text
        # proves an unavailable aggregated API, and that is the headline
        alone = from_file(cp, tmp_path, ns)
        main = alone["blockers"][0]
        assert main["type"] == "apiservice-unavailable", types(alone)
        assert main["summary"].startswith(f"API {group}/v1alpha1 unavailable")
        assert main["remedy"][-1]["command"] == f"kubectl delete apiservice {stuck.name}"
    finally:
        delete(cp, apiservice)
    # The diagnosis was right: without the APIService the controller finishes by itself.
    wait_for(
        lambda: get_or_none(cp, f"/api/v1/namespaces/{ns}") is None,
        CONTROLLER_TIMEOUT,
        message=f"namespace {ns} to go once its APIService is deleted",
    )


@pytest.fixture(scope="module")
def own_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of its own (about 5 s), for what would stall the shared one."""
    cp = ControlPlane(tmp_path_factory.mktemp("conversion-cp"), build_binaries())
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


def test_broken_conversion_webhook(own_control_plane: ControlPlane) -> None:
    """On 1.36, about 30 s after a conversion webhook starts failing, the watch cache of the
    served version cannot (re)initialize: every list of it answers 429, in EVERY namespace,
    and the namespace controller retries each for minutes. Hence a control plane of its own."""
    cp = own_control_plane
    ns = unique_ns("ns-conv")
    group = f"{ns}.example.com"
    crd = f"gizmos.{group}"
    scenarios.namespace_with_broken_conversion(cp, ns, group)
    failed = wait_condition(cp, ns, "NamespaceDeletionContentFailure")
    assert f"conversion webhook for {group}/v1, Kind=Gizmo failed" in failed["message"]

    data = run_json("ns", ns, kubeconfig=cp.kubeconfig_path)
    (item,) = data["items"]
    assert types(item)[0] == "conversion-webhook"
    conversion = one(item, "conversion-webhook")
    assert conversion["summary"] == f"conversion webhook of {crd} is down"
    uses, backend = conversion["evidence"]
    assert uses["object"] == {
        "kind": "CustomResourceDefinition",
        "name": crd,
        "apiVersion": "apiextensions.k8s.io/v1",
    }
    assert uses["fields"] == {"strategy": "Webhook", "service": f"{ns}/converter"}
    assert backend["message"] == f"service {ns}/converter does not exist"
    assert conversion["remedy"][-1]["destructive"]
    assert '"strategy": "None"' in conversion["remedy"][-1]["command"]

    # the type cannot be listed: shown as such, never as "nothing left"
    gizmos = remaining(item, crd)
    assert gizmos["count"] == 0 and "conversion webhook" in gizmos["error"]
    assert one(item, "content-remaining")["summary"] == f"not listable: gizmos.{group}"
    condition = one(item, "namespace-condition")
    assert condition["summary"].startswith("deletes fail: conversion webhook of ")
    assert f"conversion webhook for {group}/v1, Kind=Gizmo failed" in messages(condition)
    assert any(w.startswith(f"could not list {crd}: ") for w in data["warnings"])
    assert not of_type(item, "namespace-finalizer")  # unknown content is not "no content"


# -- phase first: past the content phase only the namespace's own finalizers hold it ----------


def test_past_the_content_phase_only_its_own_finalizers_hold_it(
    control_plane: ControlPlane,
) -> None:
    """`kubernetes` removed through /finalize while discovery fails and a custom resource is
    still inside: the controller is done with the namespace. The unavailable APIService, the
    stale DiscoveryFailure condition and the content cannot hold it; its own finalizer does, and
    the content is a hazard: it will be left in etcd without a namespace."""
    cp = control_plane
    ns = unique_ns("ns-past")
    group = f"{ns}.example.com"
    stuck = scenarios.namespace_with_content_and_own_finalizer(cp, ns, group)
    api = scenarios.namespace_with_unavailable_apiservice(cp, unique_ns("ns-past-api"), f"{ns}.io")
    widget = f"/apis/{group}/v1/namespaces/{ns}/widgets/{stuck.name}"
    try:
        wait_condition(cp, ns, "NamespaceDeletionDiscoveryFailure")
        scenarios.finalize_by_hand(cp, ns)
        wait_spec_finalizers(cp, ns, [])
        item = explain_json(cp, ns)[ns]
        assert types(item) == ["namespace-finalizer"]
        (blocker,) = item["blockers"]
        assert blocker["summary"] == "finalizer example.com/archive (owner: unknown)"
        assert (
            f"1 object will be left behind without a namespace: widgets.{group}/gadget"
            in (item["warnings"])
        )
        first = blocker["remedy"][0]
        assert first["description"].startswith("FIRST delete the 1 object still inside")
        assert first["command"].startswith(f"kubectl delete widgets.{group} -n {ns} --all")
        assert blocker["remedy"][-1]["destructive"]
        # the conditions stay on the namespace, as history
        failed = [c for c in item["conditions"] if c["type"] == "NamespaceDeletionDiscoveryFailure"]
        assert failed and failed[0]["status"] == "True"
    finally:
        with contextlib.suppress(ApiError):
            delete(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{api.name}")
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, widget)
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, f"/api/v1/namespaces/{ns}")


# -- each blocker only while it can still hold the object ------------------------------------


def test_a_delete_webhook_does_not_hold_content_already_deleted(
    control_plane: ControlPlane,
) -> None:
    """The custom resource is already terminating: only the UPDATE removing its finalizer is
    still needed, so a DELETE-only webhook with a dead backend is not what holds it."""
    cp = control_plane
    ns = unique_ns("ns-delhook")
    group = f"{ns}.example.com"
    stuck = scenarios.namespace_with_terminating_content_and_delete_webhook(cp, ns, group)
    try:
        # the controller's DELETE of the content is rejected, as its condition says
        failed = wait_condition(cp, ns, "NamespaceDeletionContentFailure")
        assert f'failed calling webhook "{ns}-delete-guard' in failed["message"]
        item = explain_json(cp, ns)[ns]
        assert types(item)[0] == "finalizer", types(item)
        # the group's only backend is the dead webhook's: "owner: unknown, not running"
        assert item["blockers"][0]["summary"].startswith(f"finalizer {group}/cleanup (owner: ")
        assert not [b for b in of_type(item, "webhook") if "delete-guard" in b["summary"]]
    finally:
        with contextlib.suppress(ApiError):
            delete(cp, f"{WEBHOOKS}/{ns}-delete-guard")
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, f"/apis/{group}/v1/namespaces/{ns}/parts/{stuck.name}")
