"""Preflight's judges over a static view: what the deletion takes with it, the cluster as it
will be without it, and each prediction's type and confidence (e2e: tests/e2e/test_preflight.py
builds the same for real and deletes)."""

from __future__ import annotations

import base64
import gzip
import io
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.errors import ConfigError, NotFound
from kubectl_terminating.model import ObjectRef
from kubectl_terminating.options import Options
from kubectl_terminating.preflight.api import Target, build_report, preflight, resolve_type
from kubectl_terminating.preflight.command import PreflightFlags, run_preflight
from kubectl_terminating.preflight.order import helm_sorted
from kubectl_terminating.preflight.render import text
from kubectl_terminating.preflight.sources import decode_release, read_manifests
from kubectl_terminating.resources import (
    APISERVICES,
    CRDS,
    ENDPOINT_SLICES,
    LEASES,
    NAMESPACES,
    NODES,
    PODS,
    SERVICES,
    VALIDATING_WEBHOOKS,
    Resource,
)
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import Discovery
from tests.unit.golden import assert_golden

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
GROUP = "widgets.preflight.test"
FINALIZER = f"{GROUP}/cleanup"
WIDGETS = Resource(GROUP, "v1", "widgets", "Widget")
JSON = dict[str, Any]


def at(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def obj(kind: str, api_version: str, name: str, namespace: str | None = None, **rest: Any) -> JSON:
    meta: JSON = {"name": name, "uid": f"uid-{kind}-{namespace}-{name}"}
    if namespace:
        meta["namespace"] = namespace
    meta.update(rest.pop("metadata", {}))
    return {"kind": kind, "apiVersion": api_version, "metadata": meta, **rest}


def namespace(name: str) -> JSON:
    return obj("Namespace", "v1", name, metadata={"labels": {"kubernetes.io/metadata.name": name}})


def widget(ns: str, name: str = "w1") -> JSON:
    return obj("Widget", f"{GROUP}/v1", name, ns, metadata={"finalizers": [FINALIZER]})


def operator(ns: str, renewed_ago: float = 2) -> list[JSON]:
    """The operator's pod on a healthy node and its Lease (controller-runtime's holder)."""
    return [
        obj("Pod", "v1", "op-0", ns, spec={"nodeName": "n1"}, status={"phase": "Running"}),
        obj(
            "Lease",
            "coordination.k8s.io/v1",
            f"abc.{GROUP}",
            ns,
            spec={
                "holderIdentity": "op-0_1234",
                "leaseDurationSeconds": 15,
                "renewTime": at(renewed_ago),
            },
        ),
    ]


def ready_condition(status: str) -> JSON:
    """As the kubelet writes it, or the node lifecycle controller once the kubelet is silent."""
    if status == "True":
        return {"type": "Ready", "status": "True", "reason": "KubeletReady"}
    return {
        "type": "Ready",
        "status": status,
        "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status.",
        "lastTransitionTime": at(3600)[:19] + "Z",
    }


def node(name: str, ready: str = "True") -> list[JSON]:
    return [
        obj(
            "Node",
            "v1",
            name,
            status={"conditions": [ready_condition(ready)]},
        ),
        obj(
            "Lease",
            "coordination.k8s.io/v1",
            name,
            "kube-node-lease",
            spec={"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": at(1)},
        ),
    ]


def backend(ns: str, name: str = "svc") -> list[JSON]:
    """A Service with one ready endpoint, pod b-0."""
    return [
        obj("Service", "v1", name, ns, spec={"ports": [{"port": 443}]}),
        obj(
            "EndpointSlice",
            "discovery.k8s.io/v1",
            f"{name}-x",
            ns,
            metadata={"labels": {"kubernetes.io/service-name": name}},
            endpoints=[
                {
                    "addresses": ["10.0.0.9"],
                    "conditions": {"ready": True},
                    "targetRef": {"kind": "Pod", "name": "b-0", "namespace": ns},
                }
            ],
        ),
        obj("Pod", "v1", "b-0", ns, spec={"nodeName": "n1"}, status={"phase": "Running"}),
    ]


def webhooks(name: str, client_config: JSON, rule: JSON, policy: str = "Fail") -> JSON:
    """A ValidatingWebhookConfiguration with one webhook."""
    hook: JSON = {"name": f"{name}.preflight.test", "failurePolicy": policy, "rules": [rule]}
    hook["clientConfig"] = client_config
    return obj("ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1", name,
               webhooks=[hook])  # fmt: skip


def view(*objects: JSON) -> StaticView:
    kinds = (PODS, SERVICES, ENDPOINT_SLICES, LEASES, WIDGETS)
    resources = [*kinds, NAMESPACES, NODES, APISERVICES, VALIDATING_WEBHOOKS]
    return StaticView(objects, NOW, Discovery(resources=resources))


def run(v: StaticView, **target: Any) -> JSON:
    return preflight(v, Target(**target))


def predicted(report: JSON) -> list[tuple[str, str, str]]:
    return [(p["type"], p["confidence"], p["object"]["name"]) for p in report["predictions"]]


def test_an_operator_deleted_with_its_cr_blocks_for_certain_on_ordered_deletion() -> None:
    v = view(namespace("shop"), widget("shop"), *operator("shop"), *node("n1"))
    report = run(v, namespaces=("shop",))
    assert predicted(report) == [("finalizer", "certain", "w1")]
    assert (report["verdict"], report["exitCode"]) == ("blocked", 3)
    assert report["doomed"] == {"Lease": 1, "Namespace": 1, "Pod": 1, "Widget": 1}
    prevent = report["predictions"][0]["prevent"][0]
    assert prevent["command"] == f"kubectl delete widgets.{GROUP} w1 -n shop --wait"
    # before 1.33 the pods are not deleted first: a race
    older = run(v, namespaces=("shop",), ordered_namespace_deletion=False)
    assert predicted(older) == [("finalizer", "likely", "w1")]


def test_an_operator_outside_the_namespace_keeps_it_clear() -> None:
    v = view(namespace("shop"), namespace("ops"), widget("shop"), *operator("ops"), *node("n1"))
    report = run(v, namespaces=("shop",))
    assert (report["verdict"], report["predictions"], report["exitCode"]) == ("clear", [], 0)


def test_a_dead_owner_is_likely_and_an_unknown_one_only_possible() -> None:
    dead = view(namespace("shop"), widget("shop"), *operator("ops", renewed_ago=3600))
    assert predicted(run(dead, namespaces=("shop",))) == [("finalizer", "likely", "w1")]
    unknown = view(namespace("shop"), widget("shop"))
    report = run(unknown, namespaces=("shop",))
    assert predicted(report) == [("finalizer", "possible", "w1")]
    # never `clear` while something might hold it: undecided unless --fail-on possible
    assert (report["verdict"], report["exitCode"]) == ("undecided", 4)
    strict = run(unknown, namespaces=("shop",), fail_on="possible")
    assert (strict["verdict"], strict["exitCode"]) == ("blocked", 3)


def test_an_apiservice_whose_service_is_deleted_blocks_the_namespace() -> None:
    apiservice = obj(
        "APIService",
        "apiregistration.k8s.io/v1",
        "v1.metrics.test",
        spec={"group": "metrics.test", "service": {"namespace": "mon", "name": "svc"}},
        status={"conditions": [{"type": "Available", "status": "True"}]},
    )
    v = view(namespace("mon"), apiservice, *backend("mon"), *node("n1"))
    assert predicted(run(v, namespaces=("mon",))) == [("apiservice-unavailable", "certain", "mon")]
    elsewhere = view(namespace("mon"), namespace("other"), apiservice, *backend("mon"))
    assert run(elsewhere, namespaces=("other",))["predictions"] == []


def test_a_fail_webhook_on_update_with_a_doomed_backend_keeps_the_finalizer() -> None:
    hook = webhooks(
        "guard",
        {"service": {"namespace": "shop", "name": "svc"}},
        {
            "apiGroups": [GROUP],
            "apiVersions": ["*"],
            "operations": ["UPDATE"],
            "resources": ["widgets"],
        },
    )
    ops = [*operator("ops"), *node("n1")]  # the owner stays: only the webhook's backend goes
    v = view(namespace("shop"), namespace("ops"), hook, widget("shop"), *backend("shop"), *ops)
    assert predicted(run(v, namespaces=("shop",))) == [("webhook", "certain", "w1")]


def test_a_pod_on_a_node_that_never_answers() -> None:
    running = obj(
        "Pod", "v1", "web-0", "shop", spec={"nodeName": "n2"}, status={"phase": "Running"}
    )
    done = obj("Pod", "v1", "job-0", "shop", spec={"nodeName": "n2"}, status={"phase": "Succeeded"})
    v = view(namespace("shop"), running, done, *node("n2", ready="Unknown"))
    report = run(v, namespaces=("shop",))
    assert predicted(report) == [("node-not-ready", "likely", "web-0")]
    assert "out-of-service" in report["predictions"][0]["prevent"][0]["command"]


def test_foreground_waits_for_a_dependent_on_a_dead_node() -> None:
    owner = obj("ConfigMap", "v1", "parent", "shop")
    child = obj(
        "Pod",
        "v1",
        "child-0",
        "shop",
        metadata={"ownerReferences": [{"uid": "uid-ConfigMap-shop-parent", "kind": "ConfigMap"}]},
        spec={"nodeName": "n2"},
        status={"phase": "Running"},
    )
    configmaps = Resource("", "v1", "configmaps", "ConfigMap")
    v = StaticView(
        [namespace("shop"), owner, child, *node("n2", ready="False")],
        NOW,
        Discovery(resources=[PODS, configmaps, NODES, LEASES, NAMESPACES]),
    )
    foreground = run(v, objects=("cm/parent",), namespace="shop", cascade="foreground")
    assert ("owner-dependents", "likely", "parent") in predicted(foreground)
    orphan = run(v, objects=("cm/parent",), namespace="shop", cascade="orphan")
    assert orphan["doomed"] == {"ConfigMap": 1} and orphan["predictions"] == []


def test_helm_uninstall_order_webhooks_first_custom_resources_last() -> None:
    refs = [
        ObjectRef("Widget", "w1", "shop"),
        ObjectRef("CustomResourceDefinition", "widgets.x"),
        ObjectRef("Deployment", "op", "shop"),
        ObjectRef("Gadget", "g1", "shop"),
        ObjectRef("ValidatingWebhookConfiguration", "guard"),
    ]
    assert [r.kind for r in helm_sorted(refs)] == [
        "ValidatingWebhookConfiguration",
        "Deployment",
        "CustomResourceDefinition",
        "Gadget",
        "Widget",
    ]


def test_the_safe_order_deletes_held_custom_resources_first_and_waits() -> None:
    v = view(namespace("shop"), widget("shop"), *operator("shop"), *node("n1"))
    deployment = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "op-0"}}
    cr = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w1"}}
    report = build_report(v, Target(manifest=(deployment, cr), namespace="shop", deleter="helm"))
    assert [(s["delete"], s["wait"]) for s in report.order] == [
        (["Widget/shop/w1"], True),
        (["Pod/shop/op-0"], False),
    ]
    assert [(p.type, p.confidence) for p in report.predictions] == [("finalizer", "likely")]
    shown = text(report, explain=False)
    assert "Verdict:   blocked" in shown and "1. delete, then wait until gone" in shown


def test_a_type_is_resolved_as_kubectl_does() -> None:
    discovery = Discovery(resources=[PODS, WIDGETS, SERVICES])
    assert resolve_type("po", discovery) == PODS
    assert resolve_type("widget", discovery) == WIDGETS
    assert resolve_type(f"widgets.{GROUP}", discovery) == WIDGETS
    with pytest.raises(ConfigError, match='resource type "gizmo"'):
        resolve_type("gizmo", discovery)


def test_only_the_release_manifest_is_decoded() -> None:
    release = {"name": "r", "manifest": "kind: ConfigMap\n", "config": {"password": "s3cret"}}
    stored = base64.b64encode(gzip.compress(json.dumps(release).encode()))
    assert decode_release(base64.b64encode(stored).decode()) == "kind: ConfigMap\n"
    with pytest.raises(ConfigError, match="could not be decoded"):
        decode_release("not base64 at all!")


def test_a_url_webhook_cannot_be_checked_so_the_verdict_is_undecided() -> None:
    hook = webhooks(
        "outside",
        {"url": "https://hooks.invalid/validate"},
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["DELETE"],
            "resources": ["configmaps"],
        },
    )
    configmaps = Resource("", "v1", "configmaps", "ConfigMap")
    v = StaticView(
        [namespace("shop"), hook, obj("ConfigMap", "v1", "settings", "shop")],
        NOW,
        Discovery(resources=[configmaps, NAMESPACES, VALIDATING_WEBHOOKS]),
    )
    report = run(v, namespaces=("shop",))
    assert (report["verdict"], report["exitCode"], report["predictions"]) == ("undecided", 4, [])
    assert "outside.preflight.test (url)" in report["unchecked"][0]


def test_an_owner_known_by_its_webhook_goes_with_the_pods_behind_its_service() -> None:
    """No Lease: the operator shows it runs by serving a webhook of its group; deleting its
    Deployment takes the pods behind that Service (which stays) with it."""
    deployment = obj("Deployment", "apps/v1", "operator", "ops")
    hook = webhooks(
        "widgets",
        {"service": {"namespace": "ops", "name": "svc"}},
        {"apiGroups": [GROUP], "operations": ["CREATE"], "resources": ["*"]},
        policy="Ignore",
    )
    service, slice_, pod = backend("ops")
    owned = {"ownerReferences": [{"uid": "uid-Deployment-ops-operator", "kind": "Deployment"}]}
    pod["metadata"].update(owned)
    deployments = Resource("apps", "v1", "deployments", "Deployment")
    v = StaticView(
        [namespace("ops"), deployment, hook, service, slice_, pod, widget("ops"), *node("n1")],
        NOW,
        Discovery(resources=[PODS, SERVICES, ENDPOINT_SLICES, LEASES, WIDGETS, deployments]),
    )
    both = run(v, objects=("deployment/operator", "widget/w1"), namespace="ops")
    assert predicted(both) == [("finalizer", "likely", "w1")]
    assert any("b-0" in e["message"] for e in both["predictions"][0]["evidence"])
    # the backend that stays is the group's, not shown to be the owner's (cert-manager's webhook
    # is not its controller): no clear without a holder or workload that stays
    alone = run(v, objects=("widget/w1",), namespace="ops")
    assert (alone["verdict"], predicted(alone)) == ("undecided", [("finalizer", "possible", "w1")])
    assert "seems to run after the deletion" in alone["predictions"][0]["summary"]


def test_from_file_judges_a_snapshot_and_what_it_lacks_is_unchecked(tmp_path: Path) -> None:
    """`kubectl get -o json` of the namespace's objects: the owner's Lease is there, but
    without Nodes in the file the operator pod's node cannot be judged (undecided otherwise)."""
    items = [namespace("shop"), widget("shop"), *operator("shop")]
    path = tmp_path / "shop.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    out, err = io.StringIO(), io.StringIO()
    flags = PreflightFlags(("ns", "shop"), (), "background", None, "likely", "json", False)
    code = run_preflight(Options(kind="all"), replace(flags, from_file=str(path)), out, err)
    report = json.loads(out.getvalue())
    # a file has no server version: the ordered deletion is not assumed, so `likely`
    assert (code, predicted(report)) == (3, [("finalizer", "likely", "w1")])
    assert any("nodes" in line.lower() for line in report["unchecked"]), report["unchecked"]


def test_what_does_not_exist_is_not_found_as_kubectl_delete_says() -> None:
    v = view(namespace("shop"))
    with pytest.raises(NotFound, match='namespaces "gone" not found'):
        run(v, namespaces=("gone",))
    with pytest.raises(NotFound, match=f'widgets.{GROUP} "w9" not found'):
        run(v, objects=("widget/w9",), namespace="shop")
    # in a manifest, an object already gone is simply nothing to delete
    manifest = ({"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w9"}},)
    assert run(v, manifest=manifest, namespace="shop")["verdict"] == "clear"
    # `ns/NAME` is the namespace with its content
    content = view(namespace("shop"), widget("shop"), *operator("shop"), *node("n1"))
    assert predicted(run(content, objects=("ns/shop",))) == [("finalizer", "certain", "w1")]


def converting_crd(client_config: JSON) -> JSON:
    """widgets.preflight.test, served at two versions through a conversion webhook."""
    return obj(
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        f"widgets.{GROUP}",
        spec={
            "group": GROUP,
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "storage": True}, {"name": "v2"}],
            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": client_config}},
        },
    )


def converting(service_namespace: str) -> JSON:
    """The Widget CRD, two versions, converted by service svc in service_namespace."""
    return converting_crd({"service": {"namespace": service_namespace, "name": "svc"}})


def test_a_conversion_webhook_deleted_with_the_namespace_holds_its_objects() -> None:
    plain = obj("Widget", f"{GROUP}/v1", "w2", "shop")  # no finalizer: only conversion holds it
    ops = [*operator("ops"), *node("n1")]
    v = view(namespace("shop"), namespace("ops"), converting("shop"), plain, *backend("shop"), *ops)
    assert predicted(run(v, namespaces=("shop",))) == [("conversion-webhook", "likely", "shop")]
    elsewhere = view(
        namespace("shop"), namespace("ops"), converting("ops"), plain, *backend("ops"), *ops
    )
    assert run(elsewhere, namespaces=("shop",))["predictions"] == []


def test_a_crd_waits_for_its_objects_predicted_to_stay() -> None:
    crd = obj(
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        f"widgets.{GROUP}",
        spec={
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "storage": True, "served": True}],
        },
    )
    v = StaticView(
        [namespace("shop"), crd, widget("shop"), *operator("ops", renewed_ago=3600)],
        NOW,
        Discovery(resources=[CRDS, WIDGETS, PODS, LEASES, NAMESPACES]),
    )
    report = run(v, objects=(f"crd/widgets.{GROUP}",))
    assert predicted(report) == [
        ("finalizer", "likely", f"widgets.{GROUP}"),
        ("finalizer", "likely", "w1"),
    ]


def test_the_report_as_text_and_explained() -> None:
    """Goldens: the table, and --explain with evidence, what prevents it and the remedies."""
    hook = webhooks(
        "guard",
        {"service": {"namespace": "shop", "name": "svc"}},
        {"apiGroups": [GROUP], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["*"]},
    )
    running = {"phase": "Running"}
    stuck_pod = obj("Pod", "v1", "web-0", "shop", spec={"nodeName": "n2"}, status=running)
    v = view(
        namespace("shop"),
        widget("shop"),
        hook,
        stuck_pod,
        *operator("shop"),
        *backend("shop"),
        *node("n1"),
        *node("n2", ready="Unknown"),
    )
    report = build_report(v, Target(namespaces=("shop",)))
    assert_golden("preflight/namespace.txt", text(report, explain=False))
    assert_golden("preflight/namespace-explain.txt", text(report, explain=True))


# -- a check not made is never `clear`; a failed read is one line, never a traceback ---------


def crd_view(*objects: JSON, unreadable: dict[str, str] | None = None) -> StaticView:
    kinds = [PODS, SERVICES, ENDPOINT_SLICES, LEASES, WIDGETS, NAMESPACES, NODES, CRDS]
    return StaticView(objects, NOW, Discovery(resources=kinds), unreadable=unreadable)


def plain_widget(ns: str) -> JSON:
    return obj("Widget", f"{GROUP}/v1", "w1", ns)


def test_a_conversion_webhook_called_by_url_is_a_check_not_made() -> None:
    crd = converting_crd({"url": "https://convert.invalid/"})
    report = run(crd_view(namespace("shop"), plain_widget("shop"), crd), namespaces=("shop",))
    assert (report["verdict"], report["exitCode"], report["predictions"]) == ("undecided", 4, [])
    assert any("called by URL" in line for line in report["unchecked"])


def test_an_unreadable_conversion_backend_keeps_every_other_prediction() -> None:
    crd = converting("conv")
    running = obj(
        "Pod", "v1", "web-0", "shop", spec={"nodeName": "n2"}, status={"phase": "Running"}
    )
    objects = (namespace("shop"), plain_widget("shop"), crd, running, *node("n2", ready="Unknown"))
    forbidden = {"Service": "forbidden", "EndpointSlice": "forbidden"}
    report = run(crd_view(*objects, unreadable=forbidden), namespaces=("shop",))
    assert predicted(report) == [("node-not-ready", "likely", "web-0")]
    assert (report["verdict"], report["exitCode"]) == ("blocked", 3)
    assert any("forbidden" in line for line in report["unchecked"])


def test_an_apiservice_of_unknown_availability_is_a_check_not_made() -> None:
    apiservice = obj(
        "APIService",
        "apiregistration.k8s.io/v1",
        "v1.metrics.test",
        spec={"group": "metrics.test", "service": {"namespace": "mon", "name": "svc"}},
        status={"conditions": [{"type": "Available", "status": "Unknown"}]},
    )
    report = run(view(namespace("shop"), apiservice), namespaces=("shop",))
    assert (report["verdict"], report["exitCode"]) == ("undecided", 4)
    assert "APIService v1.metrics.test: availability unknown" in report["unchecked"]


def test_a_forbidden_read_of_what_is_deleted_is_one_error_line() -> None:
    v = crd_view(namespace("shop"), unreadable={"Namespace": "forbidden"})
    with pytest.raises(ConfigError, match="could not read namespaces: forbidden"):
        run(v, namespaces=("shop",))


def test_a_malformed_manifest_or_release_is_one_error_line() -> None:
    deep = "a: " + "[" * 5000 + "]" * 5000
    with pytest.raises(ConfigError, match="nested too deeply"):
        read_manifests(("-",), io.StringIO(deep))
    not_utf8 = io.TextIOWrapper(io.BytesIO(b"\xff\xfe kind: x"), encoding="utf-8")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_manifests(("-",), not_utf8)
    truncated = gzip.compress(json.dumps({"manifest": "kind: ConfigMap\n"}).encode())[:20]
    with pytest.raises(ConfigError, match="could not be decoded"):
        decode_release(base64.b64encode(base64.b64encode(truncated)).decode())


def test_a_prediction_is_no_surer_than_the_explainers_blocker_it_rests_on() -> None:
    from kubectl_terminating.model import Blocker
    from kubectl_terminating.preflight.judges import no_surer

    likely = Blocker("webhook", "w", confidence="likely", basis="its Service not read")
    assert no_surer("certain", likely) == "likely"
    assert no_surer("possible", likely) == "possible"
    assert (
        no_surer("certain", Blocker("webhook", "w", confidence="certain", basis="b")) == "certain"
    )
