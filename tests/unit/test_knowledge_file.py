"""Knowledge files: the bundled catalogue's `finalizers` part and the user's own
(`--knowledge-file`, KUBECTL_TERMINATING_KNOWLEDGE) share one schema, checked at load; a user's
entry names the owner, its workload's state is read, and `fix` removes its finalizer only when
the workload is gone and the entry says removal is then safe (docs/knowledge.md)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_terminating import catalogue
from kubectl_terminating.catalogue import CatalogueError
from kubectl_terminating.cli import main
from kubectl_terminating.explain import knowledge
from kubectl_terminating.explain.finalizers import finalizer_blockers
from kubectl_terminating.explain.knowledge import lookup, read_file, use_files, user_files
from kubectl_terminating.explain.knowledge_schema import read_entries
from kubectl_terminating.fix.plan import ABSENT, Proposal, Refusal, plan
from kubectl_terminating.model import Finding
from kubectl_terminating.resources import Resource
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import PODS_NOW

BUCKETS = Resource("acme.example.com", "v1", "buckets", "Bucket")
ACME = """\
finalizers:
- name: acme.example.com/cleanup   # exact, or a prefix ending in *
  owner: ACME operator
  workload: {kind: Deployment, namespace: acme-system, name: acme-operator}
  guards: deletes the ACME bucket behind the object
"""


@pytest.fixture(autouse=True)
def no_user_files() -> Iterator[None]:
    yield
    use_files([])


def write(tmp_path: Path, text: str, name: str = "k.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- the schema --------------------------------------------------------------------------------


def test_the_bundled_catalogue_fits_the_schema_and_names_a_checked_ref_or_says_not() -> None:
    assert len(knowledge.builtin_entries()) >= 150
    entries = read_entries(
        catalogue.builtin(), catalogue.BUILTIN, knowledge.BUILTIN_REQUIRED, whole=False
    )
    for entry in entries:
        assert entry.source is not None, entry.names
        ref = entry.source.ref
        # a branch moves: it is no provenance, so such an entry says it is unchecked
        if ref in ("", "main", "master", "develop") or ref.startswith("release-"):
            assert not entry.source.checked, entry.names


def test_every_bundled_entry_was_read_at_a_tag_or_commit() -> None:
    # a branch moves: each fact is recorded with the tag or commit it was read at (issue 44)
    entries = read_entries(
        catalogue.builtin(), catalogue.BUILTIN, knowledge.BUILTIN_REQUIRED, whole=False
    )
    unchecked = [e.names[0] for e in entries if e.source is None or not e.source.checked]
    assert unchecked == []


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("finalizers:\n- name: a\n  ownr: b\n", "finalizers[0].ownr", "unknown key"),
        ("finalizers:\n- name: a\n", "finalizers[0].owner", "missing"),
        ("finalizers:\n- name: a\n  owner: [b]\n", "finalizers[0].owner", "must be a string"),
        (
            "finalizers:\n- {name: a, owner: b}\n"
            "- name: c\n  owner: d\n  strands_infrastructure: yes please\n",
            "finalizers[1].strands_infrastructure",
            "must be true or false",
        ),
        (
            "finalizers:\n- {name: a, owner: b, workload: {kind: Pod, namespace: x, name: y}}\n",
            "finalizers[0].workload.kind",
            "must be one of",
        ),
        (
            "finalizers:\n- {name: a, owner: b, workload: {kind: Deployment, namespace: x}}\n",
            "finalizers[0].workload.name",
            "missing",
        ),
        ("finalizers:\n- {name: a, owner: b, family: nope}\n", "finalizers[0].family", "no family"),
        ("finalizers: {name: a}\n", "finalizers", "must be a list"),
        ("finalizer:\n- {name: a, owner: b}\n", "finalizer", "unknown key"),
    ],
)
def test_a_broken_file_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, text: str, key: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CatalogueError) as error:
        read_file(path)
    line = str(error.value)
    assert line.startswith(f"invalid knowledge file {path}: {key}: ")
    assert problem in line and "\n" not in line


def test_a_bundled_entry_needs_its_source(tmp_path: Path) -> None:
    path = write(tmp_path, "finalizers:\n- {name: a, owner: b, waits_for: c, remedy: d}\n")
    with pytest.raises(CatalogueError, match=r"finalizers\[0\]\.source: missing"):
        read_file(path, user=False)


# -- the user's entries --------------------------------------------------------------------------


def test_users_entries_come_before_the_bundled_ones(tmp_path: Path) -> None:
    mine = write(
        tmp_path,
        ACME + "- name: finalizer.keda.sh\n  owner: our patched KEDA\n"
        "- name: acme.example.com/*\n  owner: ACME family\n",
    )
    assert lookup("finalizer.keda.sh").owner == "KEDA operator"  # type: ignore[union-attr]
    use_files([str(mine)])
    assert lookup("finalizer.keda.sh").owner == "our patched KEDA"  # type: ignore[union-attr]
    assert lookup("acme.example.com/cleanup").owner == "ACME operator"  # type: ignore[union-attr]
    assert lookup("acme.example.com/other").owner == "ACME family"  # type: ignore[union-attr]
    use_files([])
    assert lookup("acme.example.com/cleanup") is None


def test_the_flags_files_then_the_environment_variables() -> None:
    env = {"KUBECTL_TERMINATING_KNOWLEDGE": "/a.yaml:/b.yaml"}
    assert user_files(("/c.yaml",), env) == ["/c.yaml", "/a.yaml", "/b.yaml"]
    assert user_files((), {}) == []


def bucket() -> dict[str, object]:
    return {
        "apiVersion": "acme.example.com/v1",
        "kind": "Bucket",
        "metadata": {
            "name": "b1",
            "namespace": "shop",
            "uid": "u1",
            "deletionTimestamp": "2026-01-01T11:00:00Z",
            "finalizers": ["acme.example.com/cleanup"],
        },
    }


def deployment(replicas: int, ready: int) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "acme-operator", "namespace": "acme-system"},
        "spec": {"replicas": replicas},
        "status": {"readyReplicas": ready},
    }


@pytest.mark.parametrize(
    ("workload", "said", "remedy", "state"),
    [
        (deployment(0, 0), "scaled to 0", "kubectl scale deployment/acme-operator", "not running"),
        (deployment(2, 0), "no ready replica (0/2)", "kubectl describe deployment/", "not running"),
        (None, "does not exist", "reinstall ACME operator", "not running"),
        (deployment(1, 1), "1/1 replicas ready", None, "running"),
    ],
)
def test_the_users_owner_is_named_and_its_workloads_state_read(
    tmp_path: Path, workload: dict[str, object] | None, said: str, remedy: str | None, state: str
) -> None:
    use_files([str(write(tmp_path, ACME))])
    objects = [bucket(), *([workload] if workload else [])]
    [blocker] = finalizer_blockers(bucket(), BUCKETS, StaticView(objects, PODS_NOW))
    assert f"owner: ACME operator, {state}" in blocker.summary
    assert any(said in e.message for e in blocker.evidence)
    first = blocker.remedy[0]
    if remedy:
        assert remedy in f"{first.description} {first.command}"
    assert "deletes the ACME bucket" in blocker.remedy[-1].description


def test_a_selector_workload_is_read_through_its_pods(tmp_path: Path) -> None:
    text = ACME.replace(
        "{kind: Deployment, namespace: acme-system, name: acme-operator}",
        "{namespace: acme-system, selector: app=acme}",
    )
    use_files([str(write(tmp_path, text))])
    [blocker] = finalizer_blockers(bucket(), BUCKETS, StaticView([bucket()], PODS_NOW))
    assert "not running" in blocker.summary
    assert any("no pods app=acme in acme-system" in e.message for e in blocker.evidence)


# -- fix ------------------------------------------------------------------------------------------


def finding(tmp_path: Path, text: str, objects: list[dict[str, object]]) -> Finding:
    use_files([str(write(tmp_path, text))])
    blockers = finalizer_blockers(bucket(), BUCKETS, StaticView([bucket(), *objects], PODS_NOW))
    from kubectl_terminating.explain.common import base_finding

    found = base_finding(
        bucket(), StaticView([bucket()], PODS_NOW), "Bucket", "acme.example.com/v1"
    )
    found.blockers = blockers
    return found


def resolve(api_version: str, kind: str) -> Resource | None:
    return BUCKETS if kind == "Bucket" else None


def test_fix_removes_a_users_finalizer_only_if_the_entry_says_it_is_safe(tmp_path: Path) -> None:
    [section] = plan([finding(tmp_path, ACME, [])], resolve=resolve)
    [refusal] = section.steps
    assert isinstance(refusal, Refusal)
    assert "does not say removal is safe" in refusal.reason
    safe = ACME + "  safe_to_remove_when_owner_gone: true\n"
    [section] = plan([finding(tmp_path, safe, [])], resolve=resolve)
    [proposal] = section.steps
    assert isinstance(proposal, Proposal)
    # proven gone by the workload's absence, read again right before the write
    assert [(c.kind, c.path) for c in proposal.checks] == [
        (ABSENT, "/apis/apps/v1/namespaces/acme-system/deployments/acme-operator")
    ]


# -- the command line ---------------------------------------------------------------------------


def test_a_broken_knowledge_file_stops_the_command_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path, "finalizers:\n- name: a\n  ownr: b\n")
    snapshot = write(tmp_path, "{}", "snapshot.json")
    with pytest.raises(SystemExit) as exited:
        main(["--knowledge-file", str(broken), "all", "--from-file", str(snapshot)])
    assert exited.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert (
        err
        == f"error: invalid knowledge file {broken}: finalizers[0].ownr: "
        + (err.split("finalizers[0].ownr: ", 1)[1])
    )
    assert err.count("\n") == 1 and "Warning" not in err


def test_help_parses_no_yaml() -> None:
    code = (
        "import sys\nfrom kubectl_terminating.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('yaml' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().endswith("False")


# -- issue 44 item 6: corrections, each checked against the owner's source -----------------------


def known(finalizer: str) -> knowledge.FinalizerOwner:
    entry = lookup(finalizer)
    assert entry is not None, finalizer
    return entry


def test_aso_manage_is_the_default_and_deletes_skip_and_detach_keep() -> None:
    # v2/pkg/common/annotations/reconcile_policy.go: AllowsDelete is manage only
    aso = known("serviceoperator.azure.com/finalizer")
    assert "manage, the default" in aso.waits_for
    assert "skip or detach-on-delete" in aso.waits_for
    assert "reconcile-policy=detach-on-delete" in aso.remedy
    assert "skip/manage" not in aso.waits_for


def test_keda_stops_the_scale_loop_and_the_hpa_is_garbage_collected() -> None:
    keda = known("finalizer.keda.sh")
    assert "scale loop to stop" in keda.waits_for and "garbage-collected" in keda.waits_for
    assert "orphaned HPA" not in keda.risk
    assert keda.source.endswith("controllers/keda/scaledobject_finalizer.go")


def test_ack_names_the_helm_charts_deployment() -> None:
    ack = known("finalizers.s3.services.k8s.aws/Bucket")
    assert "ack-<service>-controller-<service>-chart" in ack.runs_as
    assert ack.workload is None  # a placeholder is no workload to read


def test_nothing_removes_kopfs_legacy_marker_since_1_29() -> None:
    legacy = known("KopfFinalizerMarker")
    assert legacy.removed_by_nobody_since == "Kopf 1.29"
    assert legacy.remedy.startswith("remove the finalizer")
    assert not known("kopf.zalando.org/KopfFinalizerMarker").removed_by_nobody_since


def test_openebs_lvm_node_pods_are_labelled_name() -> None:
    assert "pods labelled name=openebs-lvm-node" in known("lvm.openebs.io/finalizer").remedy


def test_vac_protection_is_kube_controller_managers() -> None:
    vac = known("kubernetes.io/vac-protection")
    assert vac.built_in and vac.lease_names == ("kube-controller-manager",)
    assert "PersistentVolume or PersistentVolumeClaim" in vac.waits_for
    assert (
        "/blob/5b5e66005ee72879e79b771ebbaa46c147ed102e/pkg/controller/volume/vacprotection/"
        in (vac.source)
    )


def test_argo_cd_appprojects_and_applicationsets_carry_the_same_string() -> None:
    # controller/appcontroller.go finalizeProjectDeletion; applicationset_controller.go (v3.5.1)
    argo = known("resources-finalizer.argocd.argoproj.io")
    assert "on an AppProject, no Application to use the project" in argo.waits_for
    assert "applicationset controller" in argo.owner
    assert "Deployment argocd/argocd-applicationset-controller" in argo.runs_as
    assert "/blob/v3.5.1/" in argo.source


ECK_0_8_0_9 = [
    "licenses.finalizers.elasticsearch.k8s.elastic.co",
    "secure-settings.finalizers.elasticsearch.k8s.elastic.co",
    "es-auth-secret.finalizers.kibana.k8s.elastic.co",
    "dynamic-watches.finalizers.associations.k8s.elastic.co",
    "dynamic-watches.finalizers.apm.k8s.elastic.co",
    "dynamic-watches.finalizers.k8s.elastic.co/http-certificates",
    "users.finalizers.associations.k8s.elastic.co",
]
# pkg/controller/pxc/controller.go handles them up to v1.17.0; v1.18.0 reads only percona.com/
PXC_BEFORE_1_18 = [
    "delete-pxc-pvc",
    "delete-proxysql-pvc",
    "delete-ssl",
    "delete-pxc-pods-in-order",
    "delete-s3-backup",
]


@pytest.mark.parametrize(
    ("finalizer", "since"),
    [
        *[(f, "ECK 1.0") for f in ECK_0_8_0_9],
        *[(f, "Percona XtraDB Cluster operator 1.18") for f in PXC_BEFORE_1_18],
    ],
)
def test_old_strings_are_removed_by_nobody_since(finalizer: str, since: str) -> None:
    old = known(finalizer)
    assert old.removed_by_nobody_since == since
    assert old.remedy.startswith("remove the finalizer")


@pytest.mark.parametrize(
    "finalizer",
    [
        "finalizer.elasticsearch.k8s.elastic.co/observer",  # the 1.0 strings: every ECK since
        "percona.com/delete-pxc-pvc",
        "delete-psmdb-pvc",  # still read by Server for MongoDB 1.22
    ],
)
def test_their_successors_are_still_removed(finalizer: str) -> None:
    assert not known(finalizer).removed_by_nobody_since


@pytest.mark.parametrize(
    ("finalizer", "owner", "ref"),
    [
        ("objectbucket.io/finalizer", "lib-bucket-provisioner", "/5164e3746489"),
        ("cnpg.io/deleteDatabase", "CloudNativePG instance manager", "/v1.30.0/"),
        ("cnpg.io/deleteRole", "CloudNativePG instance manager", "/v1.30.0/"),
        ("machine.machine.openshift.io", "OpenShift Machine API", "/951196122fe4"),
        ("operator.grafana.com/finalizer", "Grafana Operator", "/v5.24.0/"),
        ("watchoperation.ops.crossplane.io", "Crossplane core", "/v2.3.4/"),
        ("defined.apiextensions.crossplane.io", "Crossplane core", "/v2.3.4/"),
        # item 6's rest, read with the whole table at a tag
        ("fluxcd.controlplane.io/finalizer", "Flux Operator", "/v0.58.1/"),
        ("finalizers.tf.contrib.fluxcd.io", "tofu-controller", "/v0.16.5/"),
        ("tf.dependency.of.my-vpc", "tofu-controller", "/v0.16.5/"),
        ("source.extensions.fluxcd.io/finalizer", "source-watcher", "/v2.2.1/"),
        ("configsync.gke.io/reconciler", "Config Sync reconciler", "/v1.22.0/"),
        ("configsync.gke.io/reconciler-manager", "Config Sync reconciler-manager", "/v1.22.0/"),
        ("inferenceservice.finalizers", "KServe", "/v0.20.0/"),
        ("trainedmodel.finalizer", "KServe", "/v0.20.0/"),
        ("serving.kserve.io/llmisvc-finalizer", "KServe", "/v0.20.0/"),
        ("eventbus-controller", "Argo Events", "/v1.9.11/"),
        ("sensor-controller", "Argo Events", "/v1.9.11/"),
        ("clusterobservability.opentelemetry.io/finalizer", "OpenTelemetry", "/v0.158.0/"),
        ("delete-psmdb-pvc", "Percona", "/v1.22.0/"),
        ("delete-backup", "Percona", "/v1.22.0/"),
    ],
)
def test_issue_44_families_name_their_owner_at_a_tag_or_commit(
    finalizer: str, owner: str, ref: str
) -> None:
    entry = known(finalizer)
    assert owner in entry.owner and ref in entry.source
    assert entry.risk and entry.runs_as


@pytest.mark.parametrize(
    ("finalizer", "owner"),
    [
        ("snapshot.kubevirt.io/vmsnapshot-protection", "snapshot and restore controllers"),
        ("snapshot.kubevirt.io/vmrestore-protection", "snapshot and restore controllers"),
        ("snapshot.kubevirt.io/snapshot-source-protection", "snapshot and restore controllers"),
        ("backup.kubevirt.io/vmbackup-protection", "VirtualMachineBackup controller"),
        ("pool.kubevirt.io/finalizer", "VirtualMachinePool controller"),
        ("pushsecret.externalsecrets.io/finalizer", "PushSecret controller"),
        ("secretstore.externalsecrets.io/finalizer", "SecretStore controller"),
    ],
)
def test_kubevirt_storage_and_external_secrets_push_strings(finalizer: str, owner: str) -> None:
    entry = known(finalizer)
    assert owner in entry.owner
    assert "/v1.9.0/" in entry.source or "/v2.9.0/" in entry.source


def test_owners_failure_signals_are_the_event_reasons_their_controllers_write() -> None:
    # cert-manager pkg/controller/acmechallenges/sync.go; crossplane-runtime managed reconciler
    assert "CleanUpError" in known("acme.cert-manager.io/finalizer").events
    managed = known("finalizer.managedresource.crossplane.io")
    assert "CannotDeleteExternalResource" in managed.events


def test_the_cli_and_the_reader_name_the_same_environment_variable() -> None:
    from kubectl_terminating import catalogue

    assert catalogue.KNOWLEDGE_ENV == knowledge.ENV == "KUBECTL_TERMINATING_KNOWLEDGE"


# -- issue 44: the rest of the table read at a tag; the corrections that reading found -----------


def test_kubernetes_own_finalizers_are_read_at_v1_36_3() -> None:
    for finalizer in ("kubernetes", "kubernetes.io/pvc-protection", "foregroundDeletion"):
        assert "/blob/v1.36.3/pkg/controller/" in known(finalizer).source
    crd = known("customresourcecleanup.apiextensions.k8s.io")
    assert "/blob/v1.36.3/staging/src/k8s.io/apiextensions-apiserver/" in crd.source
    lb = known("service.kubernetes.io/load-balancer-cleanup")
    assert lb.source.endswith("cloud-provider/blob/v0.36.3/controllers/service/controller.go")


def test_the_lattice_gateway_finalizer_waits_for_routes_and_strands_nothing() -> None:
    # pkg/controllers/gateway_controller.go reconcileDelete (v2.1.3): refused while a route's
    # parentRefs name the Gateway, deletes nothing in VPC Lattice; the routes' finalizers do
    gateway = known("gateway.k8s.aws/resources")
    assert "parentRefs" in gateway.waits_for
    assert not gateway.strands_infrastructure
    route = known("httproute.k8s.aws/resources")
    assert "VPC Lattice service" in route.waits_for and route.strands_infrastructure
    assert known("grpcroute.k8s.aws/resources") == known("tlsroute.k8s.aws/resources")


def test_alb_configurations_also_wait_for_gatewayclasses() -> None:
    assert "GatewayClass" in known("gateway.k8s.aws/loadbalancerconfigurations").waits_for


def test_rancher_namespace_auth_is_removed_at_once() -> None:
    # pkg/controllers/managementuser/rbac/namespace_handler.go onRemove (v2.15.0): the RBAC
    # cleanup runs in the background, the finalizer goes at once
    auth = known("controller.cattle.io/namespace-auth")
    assert auth.waits_for.startswith("only Rancher's agent to see the deletion")
    assert "/rancher/rancher/blob/v2.15.0/" in auth.source
