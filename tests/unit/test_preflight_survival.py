"""A clear verdict needs proof that each finalizer's owner runs after the deletion: the pod
holding its Lease (explain/leader.py: any namespace, every identity the owners write) found
and not deleted, or its workload's pods outside what is deleted. Over a static view; the same
cases for real: tests/e2e/test_preflight.py."""

from __future__ import annotations

from typing import Any

from kubectl_terminating.explain.knowledge import lookup
from kubectl_terminating.explain.leader import (
    BY_NAME,
    BY_NODE,
    Workload,
    hostnames,
    lease_holder,
    workload,
)
from kubectl_terminating.preflight.api import Target, build_report
from kubectl_terminating.preflight.render import text
from kubectl_terminating.resources import LEASES, NAMESPACES, NODES, PODS, Resource
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import Discovery
from tests.unit.test_preflight import (
    NOW,
    at,
    namespace,
    node,
    obj,
    predicted,
    run,
)

JSON = dict[str, Any]
CHALLENGES = Resource("acme.cert-manager.io", "v1", "challenges", "Challenge")
CM_FINALIZER = "finalizer.acme.cert-manager.io"
CM_POD = "cert-manager-5d7f97b46d-xq8zt"  # a Deployment's pod, as the ReplicaSet names it
CM_HOLDER = f"{CM_POD}-external-cert-manager-controller"  # cert-manager's cmd/controller/app
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")


def view(*objects: JSON) -> StaticView:
    resources = [PODS, LEASES, CHALLENGES, DEPLOYMENTS, NAMESPACES, NODES]
    return StaticView(objects, NOW, Discovery(resources=resources))


def lease(ns: str, name: str, holder: str, renewed_ago: float = 2) -> JSON:
    spec = {"holderIdentity": holder, "leaseDurationSeconds": 60, "renewTime": at(renewed_ago)}
    return obj("Lease", "coordination.k8s.io/v1", name, ns, spec=spec)


def pod(ns: str, name: str, node_name: str = "n1", **spec: Any) -> JSON:
    labels = spec.pop("labels", {})
    return obj(
        "Pod",
        "v1",
        name,
        ns,
        metadata={"labels": labels},
        spec={"nodeName": node_name, **spec},
        status={"phase": "Running"},
    )


def challenge(ns: str, name: str = "c1") -> JSON:
    return obj("Challenge", "acme.cert-manager.io/v1", name, ns,
               metadata={"finalizers": [CM_FINALIZER]})  # fmt: skip


def cert_manager(ns: str) -> list[JSON]:
    """cert-manager's controller pod in ns, its Lease in kube-system (its default
    --leader-election-namespace), held as cert-manager writes it."""
    labels = {"app.kubernetes.io/name": "cert-manager", "app": "cert-manager"}
    return [
        namespace("kube-system"),
        pod(ns, CM_POD, labels=labels, serviceAccountName="cert-manager"),
        lease("kube-system", "cert-manager-controller", CM_HOLDER),
    ]


# -- who holds the Lease -----------------------------------------------------------------------


def test_the_identities_owners_write_name_their_pods() -> None:
    assert CM_POD in hostnames(CM_HOLDER)  # cert-manager's suffix
    assert "op-0" in hostnames("op-0_5e1c7a52-0b1e-4f0e-9a55-0d6f1f0e2d11")  # controller-runtime
    assert hostnames("rancher-7d9f8c6b5-kx2vq") == ("rancher-7d9f8c6b5-kx2vq",)  # wrangler: bare
    v = view(*cert_manager("cm"), *node("n1"))
    holder = lease_holder(lease("kube-system", "cert-manager-controller", CM_HOLDER), v)
    assert holder is not None and holder.found_by == BY_NAME
    assert [p["metadata"]["namespace"] for p in holder.pods] == ["cm"]  # another namespace


def test_a_host_network_holder_names_its_node_and_the_pod_is_found_on_it() -> None:
    host = pod("ops", "agent-x7k2p", node_name="worker-1", hostNetwork=True)
    other = pod("ops", "web-0", node_name="worker-1")  # not hostNetwork: not the holder
    v = view(namespace("ops"), host, other, *node("worker-1"))
    holder = lease_holder(lease("kube-system", "agent", "worker-1_6b1f"), v)
    assert holder is not None and holder.found_by == BY_NODE and holder.node == "worker-1"
    assert [p["metadata"]["name"] for p in holder.pods] == ["agent-x7k2p"]


def test_a_holder_that_names_no_pod() -> None:
    holder = lease_holder(lease("ops", "x", "somewhere-else_1"), view(namespace("ops")))
    assert holder is not None and holder.pods == () and holder.found_by == ""
    assert "names no pod" in holder.evidence().message
    assert lease_holder(lease("ops", "x", ""), view()) is None  # released


def test_runs_as_names_the_owners_workload() -> None:
    owner = lookup(CM_FINALIZER)
    assert owner is not None
    assert workload(owner.runs_as) == Workload("Deployment", "cert-manager", "cert-manager")
    assert workload("kube-apiserver") is None
    wl = Workload("Deployment", "cert-manager", "cert-manager")
    assert wl.owns_name(CM_POD) and not wl.owns_name("cert-manager-webhook-5d7f97b46d-xq8zt")


# -- cert-manager: the bug of issue 38 ----------------------------------------------------------


def test_cert_manager_deleted_with_its_challenge_is_not_clear() -> None:
    """The Challenge and cert-manager's pod in one namespace, its Lease in kube-system held by
    `<pod>-external-cert-manager-controller`: was clear (the after view looked for the holder
    in kube-system only, and for `<pod>` or `<pod>_<uuid>`), and the deletion then stuck."""
    v = view(namespace("cm"), challenge("cm"), *cert_manager("cm"), *node("n1"))
    report = run(v, namespaces=("cm",))
    assert predicted(report) == [("finalizer", "certain", "c1")]
    evidence = " ".join(e["message"] for e in report["predictions"][0]["evidence"])
    assert f"pod cm/{CM_POD} is deleted with it" in evidence
    # before 1.33 the pods are not deleted first: a race
    older = run(v, namespaces=("cm",), ordered_namespace_deletion=False)
    assert predicted(older) == [("finalizer", "likely", "c1")]


def test_cert_manager_elsewhere_is_clear_and_says_why() -> None:
    v = view(
        namespace("cm"), namespace("shop"), challenge("shop"), *cert_manager("cm"), *node("n1")
    )
    report = run(v, namespaces=("shop",))
    assert (report["verdict"], report["predictions"]) == ("clear", [])
    [owner] = report["survivingOwners"]
    assert (owner["finalizer"], owner["owner"]) == (CM_FINALIZER, "cert-manager")
    assert owner["why"] == f"its leader, pod cm/{CM_POD}, is not deleted"
    explained = text(build_report(v, Target(namespaces=("shop",))), explain=True)
    assert "Finalizer owners that run after the deletion:" in explained
    assert f"{CM_FINALIZER} on Challenge shop/c1: cert-manager, its leader, pod cm/" in explained


def test_a_holder_that_names_no_pod_while_the_owners_workload_is_deleted_is_likely() -> None:
    """A fresh Lease whose holder maps to no pod proves nothing: the owner's workload (the
    knowledge table's runs_as, here by its pods' labels) in the doomed set makes it likely;
    with no such pod nothing shows either way: possible, never clear."""
    labels = {"app.kubernetes.io/name": "cert-manager"}
    stray = lease("kube-system", "cert-manager-controller", "cm-leader-on-a-vm")
    doomed = view(
        namespace("cm"), challenge("cm"), pod("cm", "controller-0", labels=labels), stray,
        *node("n1"),
    )  # fmt: skip
    report = run(doomed, namespaces=("cm",))
    assert predicted(report) == [("finalizer", "likely", "c1")]
    assert "is deleted by this deletion" in report["predictions"][0]["summary"]
    thinned = view(namespace("cm"), challenge("cm"), pod("cm", "web-0"), stray, *node("n1"))
    report = run(thinned, namespaces=("cm",))
    assert predicted(report) == [("finalizer", "possible", "c1")]
    assert report["verdict"] == "undecided"
    assert "names no pod" in report["predictions"][0]["summary"]


def test_the_owners_workload_outside_the_deletion_is_proof() -> None:
    """No Lease at all, but cert-manager's default install (Deployment cert-manager/
    cert-manager) has a pod that stays: clear, and why."""
    v = view(
        namespace("cert-manager"), namespace("shop"), challenge("shop"),
        pod("cert-manager", CM_POD), *node("n1"),
    )  # fmt: skip
    report = run(v, namespaces=("shop",))
    assert (report["verdict"], report["predictions"]) == ("clear", [])
    assert "Deployment cert-manager/cert-manager has pod" in report["survivingOwners"][0]["why"]


def test_a_host_network_operator_deleted_with_its_cr() -> None:
    """A hostNetwork pod's hostname is its node's name: the Lease (elsewhere) names the node;
    the owner's pod is found on it. Inferred, not named: likely, not certain."""
    finalizer = "widgets.preflight.test/cleanup"
    widgets = Resource("widgets.preflight.test", "v1", "widgets", "Widget")
    widget = obj("Widget", "widgets.preflight.test/v1", "w1", "ops",
                 metadata={"finalizers": [finalizer]})  # fmt: skip
    host = pod("ops", "agent-x7k2p", node_name="worker-1", hostNetwork=True)
    held = lease("kube-system", "abc.widgets.preflight.test", "worker-1_6b1f")
    objects = [namespace("ops"), namespace("kube-system"), widget, held, *node("worker-1")]
    v = StaticView(
        [*objects, host], NOW, Discovery(resources=[PODS, LEASES, widgets, NAMESPACES, NODES])
    )
    assert predicted(run(v, namespaces=("ops",))) == [("finalizer", "likely", "w1")]
    # twin: the operator's pod lives in a namespace that stays
    moved = pod("home", "agent-x7k2p", node_name="worker-1", hostNetwork=True)
    twin = StaticView(
        [*objects, namespace("home"), moved],
        NOW,
        Discovery(resources=[PODS, LEASES, widgets, NAMESPACES, NODES]),
    )
    report = run(twin, namespaces=("ops",))
    assert (report["verdict"], report["predictions"]) == ("clear", [])


def widget_operator(holder: str) -> StaticView:
    """A Widget with an unknown operator's finalizer in ops, the operator's Deployment pod
    there too, and a Lease in kube-system held as the operator writes it."""
    finalizer = "widgets.preflight.test/cleanup"
    widgets = Resource("widgets.preflight.test", "v1", "widgets", "Widget")
    widget = obj("Widget", "widgets.preflight.test/v1", "w1", "ops",
                 metadata={"finalizers": [finalizer]})  # fmt: skip
    objects = [
        namespace("ops"), namespace("kube-system"), widget,
        pod("ops", "widget-operator-7d9f8c6b5-kx2vq"),
        lease("kube-system", "abc.widgets.preflight.test", holder), *node("n1"),
    ]  # fmt: skip
    return StaticView(objects, NOW, Discovery(resources=[PODS, LEASES, widgets, NAMESPACES, NODES]))


def test_a_deployments_pod_holding_as_pod_and_a_suffix_is_found() -> None:
    """`<pod>-<anything>` of a Deployment's pod (its ReplicaSet's hash and five characters)
    names that pod: deleted with the Widget, the deletion is blocked, certain."""
    report = run(widget_operator("widget-operator-7d9f8c6b5-kx2vq-leader"), namespaces=("ops",))
    assert (report["verdict"], predicted(report)) == ("blocked", [("finalizer", "certain", "w1")])


def test_a_terminating_pod_of_the_owners_workload_is_not_staying() -> None:
    """The owner's only pod outside the deletion is itself being deleted: no proof it runs
    after, so never clear (its twin, not deleted, is: test_the_owners_workload_...)."""
    going = pod("cert-manager", CM_POD)
    going["metadata"]["deletionTimestamp"] = at(-30)
    v = view(namespace("cert-manager"), namespace("shop"), challenge("shop"), going, *node("n1"))
    report = run(v, namespaces=("shop",))
    assert (report["verdict"], report["survivingOwners"]) == ("undecided", [])
    assert predicted(report) == [("finalizer", "possible", "c1")]


def test_a_staying_pod_and_a_doomed_pod_of_the_workloads_name_prove_nothing() -> None:
    """cert-manager's Deployment pod name both in cert-manager (stays) and in cm (deleted with
    the Challenge): which one leads cannot be told, so never clear."""
    v = view(
        namespace("cert-manager"), namespace("cm"), challenge("cm"),
        pod("cert-manager", CM_POD), pod("cm", CM_POD), *node("n1"),
    )  # fmt: skip
    report = run(v, namespaces=("cm",))
    assert (report["verdict"], report["survivingOwners"]) == ("undecided", [])
    assert predicted(report) == [("finalizer", "possible", "c1")]
