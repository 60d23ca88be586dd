"""Preflight in the order the deletion really runs (issue 38 item 3): the rewrites controllers
and the kubelet make as a result of the deletion are one documented list; claims and volumes
outlive the pods that use them (protection finalizers), so a chain pod -> claim -> volume ->
driver is followed through them; and the three cases once not judged: a CSI driver's node
plugin deleted under pods with its volumes, a namespace's own spec.finalizers, and dependents
of a cluster-scoped object in other namespaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubectl_terminating.preflight.afterview import (
    POD_TEARDOWN,
    PROTECTED,
    REWRITES,
    AfterView,
    node_plugin_of,
)
from kubectl_terminating.preflight.doomed import Doomed, add_namespace
from kubectl_terminating.resources import (
    CSI_NODES,
    ENDPOINT_SLICES,
    LEASES,
    NAMESPACES,
    NODES,
    PODS,
    PVCS,
    SERVICES,
    Resource,
)
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import Discovery
from tests.unit.test_preflight import (
    GROUP,
    NOW,
    WIDGETS,
    at,
    namespace,
    node,
    obj,
    operator,
    predicted,
    run,
    widget,
)

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
DRIVER = "disk.csi.preflight.test"
CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False)


def view(*objects: JSON) -> StaticView:
    kinds = [PODS, SERVICES, ENDPOINT_SLICES, LEASES, PVCS, WIDGETS]
    return StaticView(objects, NOW, Discovery(resources=[*kinds, NAMESPACES, NODES, CLUSTER_ROLES]))


# -- the one list of rewrites ----------------------------------------------------------------


def test_the_rewrites_are_one_documented_list() -> None:
    kinds = [r.resource.kind for r in REWRITES]
    assert kinds == ["Lease", "EndpointSlice", "APIService", "CSINode"]
    for rewrite in REWRITES:
        assert rewrite.change and rewrite.component and rewrite.why, rewrite
    # docs/preflight.md's table is that list: each kind with who changes it
    docs = (ROOT / "docs" / "preflight.md").read_text()
    for rewrite in REWRITES:
        assert f"| `{rewrite.resource.kind}` | {rewrite.change} | {rewrite.component} |" in docs
    for row in PROTECTED:
        assert f"| `{row.resource.kind}` | `{row.finalizer}` | {row.component} |" in docs


# -- CSI node plugins ---------------------------------------------------------------------------


def plugin_pod(ns: str, name: str = "csi-node-x1", node_name: str = "n1") -> JSON:
    """A CSI node plugin as its DaemonSet runs it: the registrar mounts the plugin registry and
    names the driver's socket."""
    registrar = {
        "name": "node-driver-registrar",
        "args": [f"--kubelet-registration-path=/var/lib/kubelet/plugins/{DRIVER}/csi.sock"],
    }
    volumes = [
        {"name": "registration-dir", "hostPath": {"path": "/var/lib/kubelet/plugins_registry/"}},
        {"name": "plugin-dir", "hostPath": {"path": f"/var/lib/kubelet/plugins/{DRIVER}"}},
    ]
    spec = {"nodeName": node_name, "containers": [registrar], "volumes": volumes}
    return obj("Pod", "v1", name, ns, spec=spec, status={"phase": "Running"})


def consumer(ns: str, name: str = "app-0") -> list[JSON]:
    """A pod with a claim bound to a volume of DRIVER (the claim has pvc-protection, as the
    admission plugin adds it)."""
    claim = obj(
        "PersistentVolumeClaim",
        "v1",
        f"data-{name}",
        ns,
        metadata={"finalizers": ["kubernetes.io/pvc-protection"]},
        spec={"volumeName": f"pv-{name}"},
    )
    volume = obj(
        "PersistentVolume",
        "v1",
        f"pv-{name}",
        metadata={"finalizers": ["kubernetes.io/pv-protection"]},
        spec={"csi": {"driver": DRIVER, "volumeHandle": f"h-{name}"}},
    )
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}]
    spec = {"nodeName": "n1", "containers": [{"name": "app"}], "volumes": volumes}
    pod = obj("Pod", "v1", name, ns, spec=spec, status={"phase": "Running"})
    return [pod, claim, volume]


def storage(registered: bool = True) -> list[JSON]:
    drivers = [{"name": DRIVER, "nodeID": "n1"}] if registered else []
    return [
        *node("n1"),
        obj("CSINode", "storage.k8s.io/v1", "n1", spec={"drivers": drivers}),
        obj("CSIDriver", "storage.k8s.io/v1", DRIVER, spec={"attachRequired": False}),
    ]


def test_a_node_plugin_is_told_by_the_registrar_and_its_driver() -> None:
    assert node_plugin_of(plugin_pod("csi"), DRIVER)
    assert not node_plugin_of(plugin_pod("csi"), "other.csi.test")
    [pod, _, _] = consumer("shop")
    assert not node_plugin_of(pod, DRIVER)  # no plugin registry mounted


def test_the_plugin_deleted_with_the_pods_using_its_volumes_is_csi_driver_missing() -> None:
    v = view(namespace("shop"), plugin_pod("shop"), *consumer("shop"), *storage())
    report = run(v, namespaces=("shop",))
    assert predicted(report) == [("csi-driver-missing", "likely", "app-0")]
    [found] = report["predictions"]
    said = [e["message"] for e in found["evidence"]]
    assert any("PVC data-app-0 -> PV pv-app-0 -> CSI driver" in m for m in said)
    assert any("the kubelet unregisters the driver" in m for m in said), said
    assert report["verdict"] == "blocked"


def test_the_claim_outlives_the_pods_so_the_chain_is_followed_through_it() -> None:
    v = view(namespace("shop"), plugin_pod("shop"), *consumer("shop"), *storage())
    doomed = Doomed()
    add_namespace(doomed, v, "shop")
    after, during = AfterView(v, doomed), AfterView(v, doomed, POD_TEARDOWN)
    assert after.get(PVCS, "shop", "data-app-0") is None  # gone once all is done
    assert during.get(PVCS, "shop", "data-app-0") is not None  # there while pods go
    assert during.get(PODS, "shop", "app-0") is None
    drivers = (during.get(CSI_NODES, None, "n1") or {})["spec"]["drivers"]
    assert drivers == []  # the kubelet unregistered the doomed plugin's driver


def test_thinner_evidence_makes_the_csi_prediction_weaker() -> None:
    # the node's CSINode does not show the driver registered now: only the convention says
    # that pod is its plugin
    unregistered = view(
        namespace("shop"), plugin_pod("shop"), *consumer("shop"), *storage(registered=False)
    )
    assert predicted(run(unregistered, namespaces=("shop",))) == [
        ("csi-driver-missing", "possible", "app-0")
    ]
    # the pods using the driver stay: stuck only once deleted, while the plugin is gone
    stays = view(
        namespace("csi"), namespace("shop"), plugin_pod("csi"), *consumer("shop"), *storage()
    )
    report = run(stays, namespaces=("csi",))
    assert predicted(report) == [("csi-driver-missing", "possible", "app-0")]
    assert "once it is deleted" in report["predictions"][0]["summary"]


def test_a_plugin_that_stays_or_a_second_one_on_the_node_keeps_it_clear() -> None:
    elsewhere = view(namespace("csi"), namespace("shop"), plugin_pod("csi"), *consumer("shop"),
                     *storage())  # fmt: skip
    assert run(elsewhere, namespaces=("shop",))["verdict"] == "clear"
    second = view(namespace("shop"), namespace("csi"), plugin_pod("shop"),
                  plugin_pod("csi", "csi-node-x2"), *consumer("shop"), *storage())  # fmt: skip
    assert run(second, namespaces=("shop",))["predictions"] == []


def test_a_plugin_that_names_its_driver_only_in_its_plugin_dir_is_found() -> None:
    """The registrar's socket path comes from an env var read from a ConfigMap: the driver is
    named only by the plugin-dir hostPath. Still its node plugin: deleted with the pods using
    its volumes, csi-driver-missing (never clear)."""
    plugin = plugin_pod("shop")
    [registrar] = plugin["spec"]["containers"]
    registrar["args"] = ["--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)"]
    source = {"configMapKeyRef": {"name": "csi-node", "key": "socket"}}
    registrar["env"] = [{"name": "DRIVER_REG_SOCK_PATH", "valueFrom": source}]
    report = run(view(namespace("shop"), plugin, *consumer("shop"), *storage()),
                 namespaces=("shop",))  # fmt: skip
    assert predicted(report) == [("csi-driver-missing", "likely", "app-0")]
    assert node_plugin_of(plugin, DRIVER)


# -- a namespace's own spec.finalizers -------------------------------------------------------


def guarded(name: str) -> JSON:
    ns = namespace(name)
    ns["spec"] = {"finalizers": ["kubernetes", f"{GROUP}/guard"]}
    return ns


def test_a_spec_finalizer_whose_owner_is_dead_or_goes_with_the_namespace() -> None:
    dead = view(guarded("shop"), *operator("ops", renewed_ago=3600), *node("n1"))
    report = run(dead, namespaces=("shop",))
    assert predicted(report) == [("namespace-finalizer", "likely", "shop")]
    # an owner that runs in the namespace sees its deletion before its pods go: a race
    goes = view(guarded("shop"), *operator("shop"), *node("n1"))
    assert predicted(run(goes, namespaces=("shop",))) == [
        ("namespace-finalizer", "possible", "shop")
    ]
    [found] = report["predictions"]
    assert found["evidence"][0]["message"] == f"spec.finalizers lists {GROUP}/guard"
    assert "/finalize" in found["remedy"][-1]["command"]
    # an owner that runs elsewhere keeps it clear; one that nothing shows is possible
    clear = view(guarded("shop"), namespace("ops"), *operator("ops"), *node("n1"))
    assert run(clear, namespaces=("shop",))["verdict"] == "clear"
    unknown = view(guarded("shop"))
    assert predicted(run(unknown, namespaces=("shop",))) == [
        ("namespace-finalizer", "possible", "shop")
    ]


def test_a_namespace_metadata_finalizer_is_typed_as_explain_types_it() -> None:
    ns = namespace("shop")
    ns["metadata"]["finalizers"] = [f"{GROUP}/meta"]
    report = run(view(ns, *operator("shop"), *node("n1")), namespaces=("shop",))
    assert [t for t, _, name in predicted(report) if name == "shop"] == ["namespace-finalizer"]


# -- dependents of a cluster-scoped object in other namespaces -------------------------------


def owned_widget(ns: str, owner: JSON) -> JSON:
    w = widget(ns)
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": "owner"}
    w["metadata"]["ownerReferences"] = [{**ref, "uid": owner["metadata"]["uid"]}]
    return w


def test_a_dependent_of_a_cluster_scoped_object_in_another_namespace_goes_with_it() -> None:
    owner = obj("ClusterRole", "rbac.authorization.k8s.io/v1", "owner")
    dead = operator("ops", renewed_ago=3600)
    v = view(owner, namespace("apps"), owned_widget("apps", owner), namespace("ops"), *dead)
    report = run(v, objects=("clusterrole/owner",))
    assert report["doomed"] == {"ClusterRole": 1, "Widget": 1}
    assert predicted(report) == [("finalizer", "likely", "w1")]
    # the widget not owned by it stays out of the deletion
    alone = view(owner, namespace("apps"), widget("apps"), namespace("ops"), *dead)
    assert run(alone, objects=("clusterrole/owner",))["verdict"] == "clear"


# -- a Lease in a namespace being deleted --------------------------------------------------------


def test_a_lease_in_a_namespace_being_deleted_loses_its_leader() -> None:
    """The operator's pod stays (home) but its Lease is in shop, deleted with the Widget: a
    namespace being deleted takes no new Lease, so its leader goes; never clear."""
    held = obj("Lease", "coordination.k8s.io/v1", f"abc.{GROUP}", "shop",
               spec={"holderIdentity": "op-0_1234", "leaseDurationSeconds": 15,
                     "renewTime": at(2)})  # fmt: skip
    pod = obj("Pod", "v1", "op-0", "home", spec={"nodeName": "n1"}, status={"phase": "Running"})
    v = view(namespace("shop"), namespace("home"), widget("shop"), pod, held, *node("n1"))
    report = run(v, namespaces=("shop",))
    assert predicted(report) == [("finalizer", "certain", "w1")]
    said = [e["message"] for e in report["predictions"][0]["evidence"]]
    assert f"Lease shop/abc.{GROUP} is deleted with its namespace, so its leader goes" in said


def test_an_owner_going_from_two_namespaces_is_certain_only_if_all_is_in_the_objects() -> None:
    """Ordered deletion makes the owner's going certain only when every cause is in the
    object's own namespace (its pods go first there); a leader in ops, deleted too but on its
    own schedule, races it: likely."""

    def held(ns: str, pod: str) -> list[JSON]:
        spec = {"holderIdentity": f"{pod}_1", "leaseDurationSeconds": 15, "renewTime": at(2)}
        return [
            obj("Pod", "v1", pod, ns, spec={"nodeName": "n1"}, status={"phase": "Running"}),
            obj("Lease", "coordination.k8s.io/v1", f"abc.{GROUP}", ns, spec=spec),
        ]

    both = [namespace("shop"), namespace("ops"), widget("shop"), *held("shop", "op-0"), *node("n1")]
    assert predicted(run(view(*both), namespaces=("shop", "ops"))) == [
        ("finalizer", "certain", "w1")
    ]
    report = run(view(*both, *held("ops", "op-1")), namespaces=("shop", "ops"))
    assert predicted(report) == [("finalizer", "likely", "w1")]
    assert "racing the object" in report["predictions"][0]["summary"]
