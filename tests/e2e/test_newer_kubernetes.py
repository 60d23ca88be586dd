"""What newer Kubernetes adds to stuck deletions (issue 44), each on the real server of the
matrix version that has it, skipped with the reason on the others (make test-matrix runs this
file on v1.30.14 and v1.37.2 too; tests/conftest.py MATRIX):

- an object corrupt in storage (KEP-3926; unsafe delete beta and on by default in 1.37);
- a ValidatingAdmissionPolicy denying the namespace controller's deletes (v1 from 1.30), and
  the words a MutatingAdmissionPolicy denial carries (GA in 1.36);
- the ResourceClaim the scheduler makes for extended resources, named only in the pod's
  status.extendedResourceClaimStatus (DRAExtendedResource: beta on 1.36, GA 1.37);
- vac-protection on a VolumeAttributesClass a claim names (storage.k8s.io/v1 from 1.34);
- on a second control plane with alpha/beta gates of 1.37 turned on: a DRA driver whose devices
  skip NodeUnprepareResources (DRAOptionalNodeOperations) and podgroup-protection
  (GenericWorkload, scheduling.k8s.io/v1beta1).

The harness plays the components that are not running (scheduler, kubelet, the protection
controllers) by writing what they write, as everywhere in the suite.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3

from kubectl_terminating.explain.admission_policy import MUTATING, VALIDATING, denials
from tests.harness import api, scenarios
from tests.harness.cli import run_json
from tests.harness.controlplane import ApiError, ControlPlane, build_binaries
from tests.harness.kubelet import create_node, pod_body, set_pod_status

CORRUPT_DELETE = (1, 37)  # AllowUnsafeMalformedObjectDeletion beta, on by default
MAP_GA = (1, 36)
EXTENDED_CLAIMS = (1, 36)  # DRAExtendedResource beta, on by default
VAC_GA = (1, 34)
GATED = (1, 37)
DRA = "/apis/resource.k8s.io/v1"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def _needs(cp: ControlPlane, version: tuple[int, int], what: str) -> None:
    if cp.version < version:
        pytest.skip(f"{what}: Kubernetes {version[0]}.{version[1]}+ (this is {cp.version})")


def _blockers(cp: ControlPlane, *args: str) -> list[dict[str, Any]]:
    (item,) = run_json(*args, kubeconfig=cp.kubeconfig_path)["items"]
    blockers: list[dict[str, Any]] = item["blockers"]
    return blockers


# -- corrupt objects -------------------------------------------------------------------------


def _corrupt_in_etcd(cp: ControlPlane, key: str) -> None:
    """Overwrite the stored bytes of key with something no decoder reads, through etcd's own
    JSON gateway (what a lost encryption key or a bit flip leaves behind)."""
    body = {
        "key": base64.b64encode(key.encode()).decode(),
        "value": base64.b64encode(b"\x00not a kubernetes object").decode(),
    }
    answer = urllib3.request(
        "POST", f"http://127.0.0.1:{cp.etcd_port}/v3/kv/put", body=json.dumps(body).encode()
    )
    assert answer.status == 200, answer.data


def test_a_corrupt_object_holds_its_namespace_until_the_unsafe_delete(
    control_plane: ControlPlane,
) -> None:
    cp = control_plane
    _needs(cp, CORRUPT_DELETE, "unsafe deletion of corrupt objects")
    ns = api.unique_ns("corrupt")
    api.create_namespace(cp, ns)
    api.create_configmap(cp, ns, "broken")
    _corrupt_in_etcd(cp, f"/registry/configmaps/{ns}/broken")
    api.wait_for(
        lambda: cp.kubectl("get", "configmaps", "-n", ns, check=False).returncode != 0,
        timeout=90,
        message="the corrupt object to fail the list",
    )
    api.delete(cp, f"/api/v1/namespaces/{ns}")
    failed = api.wait_namespace_condition(cp, ns, "NamespaceDeletionContentFailure")
    assert "corrupt object" in failed["message"], failed

    blockers = _blockers(cp, "ns", ns)
    main = blockers[0]
    assert main["type"] == "corrupt-object", blockers
    assert main["summary"] == "configmaps unreadable in storage (corrupt): broken"
    *safe, last = main["remedy"]
    assert safe and not any(r["destructive"] for r in safe)
    assert last["destructive"]
    # the printed unsafe delete is the one the API server takes (admin has every verb)
    kubectl = f"{cp.binaries_dir / 'kubectl'} --kubeconfig={cp.kubeconfig_path} "
    done = subprocess.run(
        last["command"].replace("kubectl ", kubectl, 1),
        shell=True,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    api.wait_for(
        lambda: api.get_or_none(cp, f"/api/v1/namespaces/{ns}") is None,
        timeout=90,
        message="the namespace to go once the corrupt object is gone",
    )


# -- admission policies ----------------------------------------------------------------------


def _deny_deletes(cp: ControlPlane, ns: str) -> tuple[str, str]:
    """A ValidatingAdmissionPolicy denying DELETE of configmaps in ns, and its binding."""
    policy, binding = f"{ns}-keep", f"{ns}-keep-binding"
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["DELETE"],
            "resources": ["configmaps"],
        }
    ]
    cp.api(
        "POST",
        f"{ADMISSION}/validatingadmissionpolicies",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": policy},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": rules},
                "validations": [{"expression": "false", "message": "settings are kept"}],
            },
        },
    )
    selector = {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    cp.api(
        "POST",
        f"{ADMISSION}/validatingadmissionpolicybindings",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": binding},
            "spec": {
                "policyName": policy,
                "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": selector},
            },
        },
    )
    return policy, binding


def test_a_validating_policy_denying_the_controllers_deletes(control_plane: ControlPlane) -> None:
    cp = control_plane
    ns = api.unique_ns("vap")
    api.create_namespace(cp, ns)
    api.create_configmap(cp, ns, "settings")
    policy, binding = _deny_deletes(cp, ns)
    try:

        def denied() -> bool:  # the API server enforces a new policy once its informers sync
            try:
                api.delete(cp, f"/api/v1/namespaces/{ns}/configmaps/settings")
            except ApiError as error:
                return error.status in (403, 422)
            api.create_configmap(cp, ns, "settings")
            return False

        api.wait_for(denied, timeout=90, message="the policy to be enforced")
        api.delete(cp, f"/api/v1/namespaces/{ns}")
        failed = api.wait_namespace_condition(cp, ns, "NamespaceDeletionContentFailure")
        # the API server's own words, as the parser reads them
        assert [(d.kind, d.policy, d.binding) for d in denials(failed["message"])] == [
            (VALIDATING, policy, binding)
        ]
        blockers = _blockers(cp, "ns", ns)
        main = blockers[0]
        assert main["type"] == "admission-policy", blockers
        assert main["summary"].startswith(f"ValidatingAdmissionPolicy {policy} denies")
        assert main["remedy"][0]["command"] == (
            f"kubectl get validatingadmissionpolicy {policy} -o yaml"
        )
        assert main["remedy"][-1]["destructive"]
        assert main["remedy"][-1]["command"] == (
            f"kubectl delete validatingadmissionpolicybinding {binding}"
        )
    finally:
        cp.kubectl("delete", "validatingadmissionpolicybinding", binding, "--ignore-not-found")
        cp.kubectl("delete", "validatingadmissionpolicy", policy, "--ignore-not-found")


def test_a_mutating_policy_denial_names_policy_and_binding(control_plane: ControlPlane) -> None:
    """A MutatingAdmissionPolicy cannot deny a DELETE (delete runs validating admission only),
    but can deny the UPDATE that removes a finalizer: its denial, as the API server words it,
    names the policy and its binding."""
    cp = control_plane
    _needs(cp, MAP_GA, "MutatingAdmissionPolicy v1")
    ns = api.unique_ns("map")
    api.create_namespace(cp, ns)
    api.create_configmap(cp, ns, "held", finalizers=["example.com/hold"])
    policy, binding = f"{ns}-stamp", f"{ns}-stamp-binding"
    rules = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["UPDATE"],
            "resources": ["configmaps"],
        }
    ]
    mutation = {
        "patchType": "ApplyConfiguration",
        # fails to evaluate on a configmap without the label: failurePolicy Fail denies
        "applyConfiguration": {
            "expression": 'Object{metadata: Object.metadata{labels: {"owner": '
            'object.metadata.labels["owner"]}}}'
        },
    }
    cp.api(
        "POST",
        f"{ADMISSION}/mutatingadmissionpolicies",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": policy},
            "spec": {
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "matchConstraints": {"resourceRules": rules},
                "mutations": [mutation],
            },
        },
    )
    selector = {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    cp.api(
        "POST",
        f"{ADMISSION}/mutatingadmissionpolicybindings",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": binding},
            "spec": {"policyName": policy, "matchResources": {"namespaceSelector": selector}},
        },
    )
    path = f"/api/v1/namespaces/{ns}/configmaps/held"
    try:

        def denial() -> str | None:
            hold = {"metadata": {"finalizers": ["example.com/hold"]}}
            try:
                api.remove_finalizers(cp, path)
                # not enforced yet: hold it again, as its controller would have (an UPDATE
                # too, which the policy may deny by now)
                cp.api("PATCH", path, hold, api.MERGE)
            except ApiError as error:
                return str(error.json().get("message") or "")
            return None

        message = api.wait_for(denial, timeout=90, message="the policy to be enforced")
        assert [(d.kind, d.policy, d.binding) for d in denials(message)] == [
            (MUTATING, policy, binding)
        ], message
    finally:
        cp.kubectl("delete", "mutatingadmissionpolicybinding", binding, "--ignore-not-found")
        cp.kubectl("delete", "mutatingadmissionpolicy", policy, "--ignore-not-found")
        api.wait_for(lambda: _released(cp, path), timeout=90, message="the finalizer released")


def _released(cp: ControlPlane, path: str) -> bool:
    try:
        api.remove_finalizers(cp, path)
    except ApiError:
        return False
    return True


# -- DRA -------------------------------------------------------------------------------------


def _allocated_claim(
    cp: ControlPlane, ns: str, name: str, pod: dict[str, Any], node: str, driver: str, **result: Any
) -> None:
    """A claim allocated on node's pool and reserved for pod (the scheduler's writes)."""
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": driver}}]}},
    }
    cp.api("POST", f"{DRA}/namespaces/{ns}/resourceclaims", body)
    m = pod["metadata"]
    device = {"request": "r0", "driver": driver, "pool": node, "device": "gpu-0", **result}
    status = {
        "allocation": {"devices": {"results": [device]}},
        "reservedFor": [{"resource": "pods", "name": m["name"], "uid": m["uid"]}],
    }
    cp.api(
        "PATCH",
        f"{DRA}/namespaces/{ns}/resourceclaims/{name}/status",
        {"status": status},
        api.MERGE,
    )


def _stuck_dra_pod(cp: ControlPlane, ns: str, node: str, body: dict[str, Any]) -> dict[str, Any]:
    create_node(cp, node)
    return cp.api("POST", f"/api/v1/namespaces/{ns}/pods", body)


def test_the_claim_made_for_extended_resources_holds_the_pod(control_plane: ControlPlane) -> None:
    cp = control_plane
    _needs(cp, EXTENDED_CLAIMS, "DRA extended resources (status.extendedResourceClaimStatus)")
    ns = api.unique_ns("dra-ext")
    node, driver = f"{ns}-gpu", f"{ns}.gpu.example.com"
    api.create_namespace(cp, ns)
    body = pod_body("train-0", node=node, grace_period=1)
    body["spec"]["containers"][0]["resources"] = {
        "requests": {"example.com/gpu": "1"},
        "limits": {"example.com/gpu": "1"},
    }
    pod = _stuck_dra_pod(cp, ns, node, body)
    claim = "train-0-extended-resources-x7k2p"  # the scheduler's generated name
    _allocated_claim(cp, ns, claim, pod, node, driver)
    mapping = {"containerName": "app", "resourceName": "example.com/gpu", "requestName": "r0"}
    extended = {"resourceClaimName": claim, "requestMappings": [mapping]}
    cp.api(
        "PATCH",
        f"/api/v1/namespaces/{ns}/pods/train-0/status",
        {"status": {"extendedResourceClaimStatus": extended}},
        api.MERGE,
    )
    assert api.get(cp, scenarios.pod_path(ns, "train-0"))["status"]["extendedResourceClaimStatus"]
    set_pod_status(cp, ns, "train-0", "Running", {"app": "terminated:0:Completed"})
    scenarios.wait_past_deadline(api.delete(cp, scenarios.pod_path(ns, "train-0")))

    blockers = _blockers(cp, "pods", "-n", ns)
    assert [b["type"] for b in blockers] == ["resource-claim"], blockers
    assert blockers[0]["summary"] == (
        f"DRA driver {driver} not registered on {node}: claim {claim} cannot be unprepared"
    )


# -- vac-protection --------------------------------------------------------------------------


def test_a_volume_attributes_class_a_claim_names(control_plane: ControlPlane) -> None:
    cp = control_plane
    _needs(cp, VAC_GA, "VolumeAttributesClass v1")
    ns = api.unique_ns("vac")
    api.create_namespace(cp, ns)
    vac = f"{ns}-gold"
    # what the vac-protection controller adds to every class (not running here)
    cp.api(
        "POST",
        "/apis/storage.k8s.io/v1/volumeattributesclasses",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttributesClass",
            "metadata": {"name": vac, "finalizers": ["kubernetes.io/vac-protection"]},
            "driverName": "ebs.csi.example.com",
            "parameters": {"iops": "3000"},
        },
    )
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeAttributesClassName": vac,
        },
    }
    cp.api("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim)
    path = f"/apis/storage.k8s.io/v1/volumeattributesclasses/{vac}"
    api.delete(cp, path)
    items = run_json("all", "-A", kubeconfig=cp.kubeconfig_path)["items"]
    blockers = [b for item in items if item["name"] == vac for b in item["blockers"]]
    try:
        assert [b["type"] for b in blockers] == ["protection-in-use"], blockers
        assert blockers[0]["summary"] == f"vac-protection: class in use by claim {ns}/data"
    finally:
        api.remove_finalizers(cp, path)


# -- alpha and beta gates of 1.37 ------------------------------------------------------------


@pytest.fixture(scope="module")
def gated(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """A second control plane of the same version with DRAOptionalNodeOperations (alpha) and
    GenericWorkload (beta, with scheduling.k8s.io/v1beta1) on: off by default in 1.37."""
    _needs(control_plane, GATED, "DRAOptionalNodeOperations and GenericWorkload")
    gates = "DRAOptionalNodeOperations=true,NodeDeclaredFeatures=true,GenericWorkload=true"
    cp = ControlPlane(
        tmp_path_factory.mktemp("gated"),
        build_binaries(),
        extra_apiserver_args=[
            f"--feature-gates={gates}",
            "--runtime-config=scheduling.k8s.io/v1beta1=true",
        ],
        extra_controller_manager_args=[f"--feature-gates={gates}"],
    )
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


def test_a_driver_that_skips_unprepare_does_not_hold_the_pod(gated: ControlPlane) -> None:
    cp = gated
    ns = api.unique_ns("dra-skip")
    node, driver = f"{ns}-gpu", f"{ns}.gpu.example.com"
    api.create_namespace(cp, ns)
    body = pod_body("train-0", node=node, grace_period=1)
    body["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu"}]
    body["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    pod = _stuck_dra_pod(cp, ns, node, body)
    skips = ["NodePrepareResources", "NodeUnprepareResources"]
    _allocated_claim(cp, ns, "gpu", pod, node, driver, skipNodeOperations=skips)
    stored = api.get(cp, f"{DRA}/namespaces/{ns}/resourceclaims/gpu")
    assert stored["status"]["allocation"]["devices"]["results"][0]["skipNodeOperations"] == skips
    set_pod_status(cp, ns, "train-0", "Running", {"app": "terminated:0:Completed"})
    scenarios.wait_past_deadline(api.delete(cp, scenarios.pod_path(ns, "train-0")))

    blockers = _blockers(cp, "pods", "-n", ns)
    assert "resource-claim" not in [b["type"] for b in blockers], blockers


def test_a_podgroup_an_unfinished_pod_names(gated: ControlPlane) -> None:
    cp = gated
    ns = api.unique_ns("podgroup")
    api.create_namespace(cp, ns)
    groups = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "finalizers": ["scheduling.k8s.io/podgroup-protection"]},
        "spec": {"schedulingPolicy": {"basic": {}}},
    }
    cp.api("POST", groups, group)
    create_node(cp, f"{ns}-node")
    body = pod_body("worker-0", node=f"{ns}-node")
    body["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    cp.api("POST", f"/api/v1/namespaces/{ns}/pods", body)
    api.delete(cp, f"{groups}/train")
    try:
        items = run_json("all", "-n", ns, kubeconfig=cp.kubeconfig_path)["items"]
        (found,) = [i for i in items if i["kind"] == "PodGroup"]
        assert [b["type"] for b in found["blockers"]] == ["protection-in-use"], found
        assert (
            found["blockers"][0]["summary"] == "podgroup-protection: group in use by pod worker-0"
        )
    finally:
        api.remove_finalizers(cp, f"{groups}/train")
