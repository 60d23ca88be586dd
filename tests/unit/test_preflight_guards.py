"""What users rely on from preflight, each guarded against the breakage a careless hand could
make (issue 40): PodGC's out-of-service taint, the owner chain followed to its end, the safe
order (custom resources first, waited for), and an `undecided` text report that says what was
not checked. Judged through the entry points (preflight() and the command over a file), never
through the judges' internals. The live-server guards (an unknown server version, the Helm
revision judged) are in tests/e2e/test_preflight_guards.py."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from kubectl_terminating.options import Options
from kubectl_terminating.preflight.command import PreflightFlags, run_preflight
from kubectl_terminating.resources import LEASES, NAMESPACES, NODES, PODS, Resource
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import Discovery
from tests.unit.test_preflight import (
    GROUP,
    NOW,
    WIDGETS,
    converting_crd,
    namespace,
    node,
    obj,
    operator,
    plain_widget,
    predicted,
    run,
    view,
    widget,
)

JSON = dict[str, Any]
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet")
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown",
                  "effect": "NoExecute"}  # fmt: skip


def running_pod(name: str, node_name: str, owner: JSON | None = None) -> JSON:
    metadata = {"ownerReferences": [owner]} if owner else {}
    return obj("Pod", "v1", name, "shop", metadata=metadata, spec={"nodeName": node_name},
               status={"phase": "Running"})  # fmt: skip


# -- 1. a node already marked out of service: PodGC force-deletes its pods -------------------


def test_a_pod_on_a_node_marked_out_of_service_is_not_predicted_stuck() -> None:
    dead, lease = node("n2", ready="Unknown")
    tainted = {**dead, "spec": {"taints": [OUT_OF_SERVICE]}}
    pod = running_pod("web-0", "n2")
    report = run(view(namespace("shop"), pod, tainted, lease), namespaces=("shop",))
    assert (report["verdict"], report["predictions"]) == ("clear", []), report
    # the same node without the taint: no kubelet will confirm, nothing collects the pod
    untainted = run(view(namespace("shop"), pod, dead, lease), namespaces=("shop",))
    assert predicted(untainted) == [("node-not-ready", "likely", "web-0")]
    # another NoExecute taint (the node controller's own) is not the out-of-service one
    other = {
        **dead,
        "spec": {"taints": [{**OUT_OF_SERVICE, "key": "node.kubernetes.io/unreachable"}]},
    }
    assert predicted(run(view(namespace("shop"), pod, other, lease), namespaces=("shop",))) == [
        ("node-not-ready", "likely", "web-0")
    ]


# -- 2. the owner chain to its end: Deployment -> ReplicaSet -> Pod --------------------------


def owner_of(kind: str, name: str) -> JSON:
    return {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"uid-{kind}-shop-{name}"}


def test_a_deployment_takes_the_pods_of_its_replica_set_with_it() -> None:
    deployment = obj("Deployment", "apps/v1", "web", "shop")
    replica_set = obj("ReplicaSet", "apps/v1", "web-7d9f", "shop",
                      metadata={"ownerReferences": [owner_of("Deployment", "web")]})  # fmt: skip
    pod = running_pod("web-7d9f-x2x9q", "n2", owner_of("ReplicaSet", "web-7d9f"))
    v = StaticView(
        [namespace("shop"), deployment, replica_set, pod, *node("n2", ready="Unknown")],
        NOW,
        Discovery(resources=[PODS, DEPLOYMENTS, REPLICASETS, NODES, LEASES, NAMESPACES]),
    )
    report = run(v, objects=("deployment/web",), namespace="shop")
    assert report["doomed"] == {"Deployment": 1, "ReplicaSet": 1, "Pod": 1}
    assert predicted(report) == [("node-not-ready", "likely", "web-7d9f-x2x9q")]
    assert (report["verdict"], report["exitCode"]) == ("blocked", 3)
    # orphaned, the ReplicaSet and its pod stay: nothing to wait for
    orphan = run(v, objects=("deployment/web",), namespace="shop", cascade="orphan")
    assert (orphan["doomed"], orphan["verdict"]) == ({"Deployment": 1}, "clear")


# -- 5. the safe order: custom resources first, waited for, then their operator ---------------


def test_the_safe_order_puts_every_custom_resource_before_its_operator_and_waits(
    tmp_path: Path,
) -> None:
    """The held Widget (its finalizer) and one without a finalizer, which no prediction names:
    both go first, waited for, while the operator (its pod, its Deployment) still runs."""
    deployment = obj("Deployment", "apps/v1", "op", "shop")
    w2 = plain_widget("shop") | _named("w2")
    objects = [namespace("shop"), widget("shop"), w2, deployment, *operator("shop"), *node("n1")]
    v = StaticView(
        objects,
        NOW,
        Discovery(resources=[PODS, DEPLOYMENTS, LEASES, WIDGETS, NODES, NAMESPACES]),
    )
    manifest = tuple(
        {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}
        for api_version, kind, name in (
            ("apps/v1", "Deployment", "op"),  # the file's order: the operator first
            ("v1", "Pod", "op-0"),
            (f"{GROUP}/v1", "Widget", "w1"),
            (f"{GROUP}/v1", "Widget", "w2"),
        )
    )
    report = run(v, manifest=manifest, namespace="shop")
    assert predicted(report) == [("finalizer", "likely", "w1")]
    assert [(s["step"], s["delete"], s["wait"]) for s in report["order"]] == [
        (1, ["Widget/shop/w1", "Widget/shop/w2"], True),
        (2, ["Deployment/shop/op", "Pod/shop/op-0"], False),
    ]
    shown = cli_text(tmp_path, objects, manifest=manifest)
    assert "  1. delete, then wait until gone: Widget/shop/w1, Widget/shop/w2\n" in shown, shown
    assert "  2. then delete: Deployment/shop/op, Pod/shop/op-0\n" in shown, shown


def _named(name: str) -> JSON:
    return {"metadata": {"name": name, "namespace": "shop", "uid": f"uid-Widget-shop-{name}"}}


# -- 6. an undecided text report says what was not checked -----------------------------------


def test_an_undecided_text_report_lists_what_was_not_checked(tmp_path: Path) -> None:
    crd = converting_crd({"url": "https://convert.invalid/"})
    objects = [namespace("shop"), plain_widget("shop"), crd]
    shown = cli_text(tmp_path, objects, words=("ns", "shop"))
    assert "Verdict:   undecided" in shown, shown
    not_checked = shown.split("\nNot checked (", 1)
    assert len(not_checked) == 2, shown
    listed = not_checked[1].splitlines()[1:]
    assert any("called by URL" in line and line.startswith("  - ") for line in listed), shown


# -- running the command over a file (a snapshot: what `kubectl get -o json` printed) ---------


def as_list(items: list[JSON] | tuple[JSON, ...]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})


def cli_text(
    tmp_path: Path,
    objects: list[JSON],
    words: tuple[str, ...] = (),
    manifest: tuple[JSON, ...] = (),
) -> str:
    """`preflight WORDS [-f MANIFEST] --from-file SNAPSHOT -n shop` as text: its stdout."""
    snapshot, manifest_file = tmp_path / "snapshot.json", tmp_path / "manifest.json"
    snapshot.write_text(as_list(objects))
    manifest_file.write_text(as_list(manifest))
    files = (str(manifest_file),) if manifest else ()
    flags = PreflightFlags(words, files, "background", None, "likely", None, False,
                           from_file=str(snapshot))  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    run_preflight(Options(kind="all", namespace="shop"), flags, out, err)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return out.getvalue()
