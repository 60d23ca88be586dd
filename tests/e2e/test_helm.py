"""The Helm chart deploy/chart with a real helm (hack/build-go-tool.sh, cached): linted,
rendered with its values, the plain manifests of deploy/ checked to be its rendering, and
installed on a real control plane of its own whose kube-controller-manager runs the Job
controller, so the pre-delete hook's Job really fails. Pods never run here (no scheduler, no
kubelet): the tests assert objects and RBAC, not readiness.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.harness.api import unique_ns
from tests.harness.controlplane import DEFAULT_CONTROLLERS, ControlPlane, build_binaries, go_tool
from tests.harness.users import rights_granted

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "chart"
RELEASE = "kt"
FULLNAME = f"{RELEASE}-kubectl-terminating"
HOOK = f"{FULLNAME}-preflight"
READS = {"get", "list", "watch"}
ALL_OPTIONS = (
    "preflightHook.enabled=true,serviceMonitor.enabled=true,prometheusRule.enabled=true,"
    "nodeEvidence=true"
)
# The Prometheus Operator's CRDs, from its Go module (example/prometheus-operator-crd/), so the
# API server validates the chart's ServiceMonitor and PrometheusRule against their schemas.
OPERATOR_MODULE = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
OPERATOR_CRDS = ("servicemonitors", "prometheusrules")


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The helm command, its cache, config and data kept out of the user's home."""
    binary = go_tool("helm")
    home = tmp_path_factory.mktemp("helm-home")
    saved = {
        k: os.environ.get(k) for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")
    }
    for key in saved:
        os.environ[key] = str(home / key.lower())
    try:
        yield [str(binary)]
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(command: list[str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, check=False, timeout=300
    )
    if check:
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done


def template(helm: list[str], *args: str, namespace: str = "monitoring") -> list[JSON]:
    out = run(helm, "template", RELEASE, str(CHART), "--namespace", namespace, *args).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def one(documents: list[JSON], kind: str) -> JSON:
    (found,) = [d for d in documents if d["kind"] == kind]
    return found


def named(documents: list[JSON], kind: str, name: str) -> JSON:
    (found,) = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def kinds(documents: list[JSON]) -> list[str]:
    return sorted(d["kind"] for d in documents)


def container(deployment_or_job: JSON) -> JSON:
    (only,) = deployment_or_job["spec"]["template"]["spec"]["containers"]
    return dict(only)


def serve_args(port: int, interval: str) -> list[str]:
    return [
        "serve",
        f"--metrics-bind-address=:{port}",
        f"--interval={interval}",
        "--request-timeout=30s",
    ]


def test_helm_lint_passes_with_every_option(helm: list[str]) -> None:
    for args in ([], ["--set", ALL_OPTIONS]):
        done = run(helm, "lint", "--strict", str(CHART), *args)
        assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


def test_deploy_manifests_are_the_chart_rendered(helm: list[str], tmp_path: Path) -> None:
    """deploy/*.yaml are `make deploy-manifests` output: one source, the chart."""
    env = dict(os.environ, HELM=helm[0])
    subprocess.run(
        ["bash", str(ROOT / "hack" / "render-deploy.sh"), str(tmp_path)], env=env, check=True
    )
    for name in ("kubectl-terminating.yaml", "prometheus-rule.yaml"):
        rendered = (tmp_path / name).read_text()
        assert rendered == (ROOT / "deploy" / name).read_text(), (
            f"deploy/{name} differs from the chart's rendering: edit deploy/chart, then run "
            "`make deploy-manifests`"
        )


def test_default_values_give_the_exporter_alone(helm: list[str]) -> None:
    documents = template(helm)
    assert kinds(documents) == [
        "ClusterRole",
        "ClusterRole",  # the findings viewer's, bound by whoever installs it
        "ClusterRoleBinding",
        "Deployment",
        "Service",
        "ServiceAccount",
    ]
    exporter = container(one(documents, "Deployment"))
    assert exporter["args"] == serve_args(9101, "1m")
    assert exporter["image"] == "kubectl-terminating:v0.1.0"
    assert exporter["securityContext"]["readOnlyRootFilesystem"] is True
    binding = one(documents, "ClusterRoleBinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": FULLNAME, "namespace": "monitoring"}
    ]
    assert binding["roleRef"]["name"] == f"{FULLNAME}-reader"
    viewer = named(documents, "ClusterRole", f"{FULLNAME}-findings-viewer")
    (only,) = viewer["rules"]  # the service proxy of this release's Service, nothing else
    assert (only["apiGroups"], only["resources"], only["verbs"]) == (
        [""],
        ["services/proxy"],
        ["get"],
    )
    assert f"{FULLNAME}:9101" in only["resourceNames"]


def test_values_reach_the_exporter(helm: list[str]) -> None:
    documents = template(
        helm,
        "--set",
        "interval=30s,namespaceScope=shop,port=9200,resources.limits.memory=1Gi",
        "--set",
        "externalURL=https://k8s.example/terminating",
        "--set",
        "image.repository=registry.example/kt,image.tag=dev",
    )
    exporter = container(one(documents, "Deployment"))
    assert exporter["args"] == [
        *serve_args(9200, "30s"),
        "--external-url=https://k8s.example/terminating",
        "--namespace=shop",
    ]
    assert exporter["resources"]["limits"] == {"memory": "1Gi"}
    assert exporter["image"] == "registry.example/kt:dev"
    assert one(documents, "Service")["spec"]["ports"][0]["port"] == 9200


def node_subresources(documents: list[JSON]) -> list[str]:
    reader = named(documents, "ClusterRole", f"{FULLNAME}-reader")
    return [r for rule in reader["rules"] for r in rule["resources"] if r.startswith("nodes/")]


def test_node_evidence_asks_only_for_what_the_kubelet_checks(helm: list[str]) -> None:
    """serve --node-evidence reads the kubelets from the pod: get on nodes/log, nodes/stats
    and nodes/pods, never the exec-equivalent nodes/proxy; off, no node subresource at all."""
    assert node_subresources(template(helm)) == []
    assert "--node-evidence" not in container(one(template(helm), "Deployment"))["args"]
    documents = template(helm, "--set", "nodeEvidence=true")
    assert node_subresources(documents) == ["nodes/log", "nodes/stats", "nodes/pods"]
    reader = named(documents, "ClusterRole", f"{FULLNAME}-reader")
    (rule,) = [r for r in reader["rules"] if "nodes/log" in r["resources"]]
    assert (rule["apiGroups"], rule["verbs"]) == ([""], ["get"])
    assert container(one(documents, "Deployment"))["args"] == [
        *serve_args(9101, "1m"),
        "--node-evidence",
    ]


def test_a_knowledge_file_is_mounted_from_a_configmap(helm: list[str], tmp_path: Path) -> None:
    content = "finalizers:\n- {name: acme.example.com/cleanup, owner: ACME operator}\n"
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"knowledge": {"content": content}}))
    documents = template(helm, "-f", str(values))
    config = one(documents, "ConfigMap")
    assert config["metadata"]["name"] == f"{FULLNAME}-knowledge"
    assert config["data"] == {"knowledge.yaml": content}
    deployment = one(documents, "Deployment")
    exporter = container(deployment)
    assert exporter["args"][-1] == "--knowledge-file=/etc/kubectl-terminating/knowledge.yaml"
    assert exporter["volumeMounts"] == [
        {"name": "knowledge", "mountPath": "/etc/kubectl-terminating", "readOnly": True}
    ]
    (volume,) = deployment["spec"]["template"]["spec"]["volumes"]
    assert volume["configMap"]["name"] == f"{FULLNAME}-knowledge"
    # or a ConfigMap of the user's own: mounted, none made
    documents = template(helm, "--set", "knowledge.existingConfigMap=acme-knowledge")
    assert "ConfigMap" not in kinds(documents)
    (volume,) = one(documents, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert volume["configMap"]["name"] == "acme-knowledge"


def test_record_events_adds_the_flag_and_only_the_rights_it_needs(helm: list[str]) -> None:
    documents = template(helm, "--set", "recordEvents.enabled=true,recordEvents.qps=2,replicas=2")
    deployment = one(documents, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    exporter = container(deployment)
    assert exporter["args"] == [
        *serve_args(9101, "1m"),
        "--record-events",
        "--events-qps=2",
        "--events-burst=25",
    ]
    fields = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in exporter["env"]}
    assert fields == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}
    writer = named(documents, "ClusterRole", f"{FULLNAME}-events-writer")
    assert writer["rules"] == [
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}
    ]
    lease = named(documents, "Role", f"{FULLNAME}-events-lease")
    assert lease["metadata"]["namespace"] == "monitoring"
    verbs = {v for r in lease["rules"] for v in r["verbs"]}
    assert verbs == {"get", "create", "update"}
    assert {g for r in lease["rules"] for g in r["apiGroups"]} == {"coordination.k8s.io"}
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        binding = named(
            documents, kind, f"{FULLNAME}-events-{'writer' if 'Cluster' in kind else 'lease'}"
        )
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": FULLNAME, "namespace": "monitoring"}
        ]


def test_service_monitor_and_rules_when_asked(helm: list[str]) -> None:
    documents = template(
        helm, "--set", "serviceMonitor.enabled=true,prometheusRule.enabled=true,port=9200"
    )
    monitor = one(documents, "ServiceMonitor")
    service = one(documents, "Service")
    assert monitor["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "interval": "1m"}]
    rules = yaml.safe_load((CHART / "files" / "prometheus-rules.yaml").read_text())
    # the Prometheus templates ({{ $labels.kind }}) pass through Helm untouched
    assert one(documents, "PrometheusRule")["spec"] == rules
    assert "{{ $labels.kind }}" in json.dumps(rules)


def test_preflight_hook_runs_preflight_of_this_release_before_deletion(helm: list[str]) -> None:
    documents = template(helm, "--set", "preflightHook.enabled=true,preflightHook.failOn=certain")
    job = one(documents, "Job")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-delete"
    assert job["spec"]["backoffLimit"] == 0
    preflight = container(job)
    assert preflight["args"] == [
        "preflight",
        "helm",
        RELEASE,
        "--namespace=monitoring",
        "--fail-on=certain",
    ]
    assert preflight["image"] == container(one(documents, "Deployment"))["image"]
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == HOOK
    (role,) = [d for d in documents if d["kind"] == "Role"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]


# --- installed on a real control plane -------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of its own: its controller manager also runs the Job controller."""
    cp = ControlPlane(
        tmp_path_factory.mktemp("helm-cp"),
        build_binaries(),
        controllers=[*DEFAULT_CONTROLLERS, "job"],
    )
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


def operator_crds() -> list[Path]:
    """The CRDs of OPERATOR_CRDS, from the module downloaded by `go mod download` (cached)."""
    done = subprocess.run(
        ["go", "mod", "download", "-json", OPERATOR_MODULE],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        cwd=tempfile.gettempdir(),  # outside any go.mod
    )
    assert done.returncode == 0, done.stdout + done.stderr
    directory = Path(json.loads(done.stdout)["Dir"]) / "example" / "prometheus-operator-crd"
    return [directory / f"monitoring.coreos.com_{name}.yaml" for name in OPERATOR_CRDS]


@pytest.fixture(scope="module")
def installed(cluster: ControlPlane, helm: list[str]) -> Iterator[str]:
    """The chart installed with every option (the hook's Job may run 5s); its namespace."""
    ns = unique_ns("helm")
    kubeconfig = f"--kubeconfig={cluster.kubeconfig_path}"
    for path in operator_crds():
        cluster.kubectl("apply", "--server-side", "-f", str(path))
    for name in OPERATOR_CRDS:
        crd = f"crd/{name}.monitoring.coreos.com"
        cluster.kubectl("wait", "--for=condition=Established", crd, "--timeout=60s")
    run(
        helm,
        "install",
        RELEASE,
        str(CHART),
        "--namespace",
        ns,
        "--create-namespace",
        "--set",
        f"{ALL_OPTIONS},preflightHook.activeDeadlineSeconds=5",
        kubeconfig,
    )
    try:
        yield ns
    finally:
        run(helm, "uninstall", RELEASE, "--namespace", ns, "--no-hooks", kubeconfig, check=False)


def release_status(helm: list[str], cp: ControlPlane, ns: str) -> str:
    out = run(helm, "list", "--namespace", ns, "-o", "json", f"--kubeconfig={cp.kubeconfig_path}")
    (release,) = json.loads(out.stdout)
    return str(release["status"])


def exists(cp: ControlPlane, kind: str, name: str, ns: str) -> bool:
    return cp.kubectl("get", kind, name, "-n", ns, check=False).returncode == 0


OBJECTS = [
    ("serviceaccount", FULLNAME),
    ("clusterrole", f"{FULLNAME}-reader"),
    ("clusterrolebinding", f"{FULLNAME}-reader"),
    ("clusterrole", f"{FULLNAME}-findings-viewer"),
    ("deployment", FULLNAME),
    ("service", FULLNAME),
    ("serviceaccount", HOOK),
    ("clusterrole", HOOK),
    ("clusterrolebinding", HOOK),
    ("role", HOOK),
    ("rolebinding", HOOK),
    ("servicemonitor", FULLNAME),
    ("prometheusrule", FULLNAME),
]


def test_install_creates_the_objects(
    cluster: ControlPlane, helm: list[str], installed: str
) -> None:
    assert release_status(helm, cluster, installed) == "deployed"
    for kind, name in OBJECTS:
        assert exists(cluster, kind, name, installed), (kind, name)
    deployment = json.loads(
        cluster.kubectl("get", "deployment", FULLNAME, "-n", installed, "-o", "json").stdout
    )
    assert deployment["metadata"]["annotations"]["meta.helm.sh/release-name"] == RELEASE
    assert container(deployment)["args"][0] == "serve"
    # a hook exists only while it runs: nothing at install
    assert not exists(cluster, "job", HOOK, installed)


def test_service_accounts_can_only_read(cluster: ControlPlane, installed: str) -> None:
    for account in (FULLNAME, HOOK):
        who = f"--as=system:serviceaccount:{installed}:{account}"
        # in the release's namespace: its Role's rules and every ClusterRole's
        added = rights_granted(cluster, who, "--namespace", installed)
        assert added["*.*"] == {"list", "watch"}, account
        assert all(verbs <= READS for verbs in added.values()), (account, added)
        for verb, resource in [
            ("get", "nodes --subresource=proxy"),  # exec-equivalent through the kubelet
            ("delete", "pods"),
            ("patch", "namespaces"),
            ("update", "secrets"),
        ]:
            answer = cluster.kubectl("auth", "can-i", verb, *resource.split(), who, check=False)
            assert answer.stdout.strip() == "no", (account, verb, resource)
    # the hook reads the release record, in the release's namespace only
    hook = f"--as=system:serviceaccount:{installed}:{HOOK}"
    record = f"secrets/sh.helm.release.v1.{RELEASE}.v1"
    for ns, allowed in [(installed, "yes"), ("default", "no")]:
        answer = cluster.kubectl("auth", "can-i", "get", record, "-n", ns, hook, check=False)
        assert answer.stdout.strip() == allowed, ns
    exporter = f"--as=system:serviceaccount:{installed}:{FULLNAME}"
    answer = cluster.kubectl("auth", "can-i", "get", record, "-n", installed, exporter, check=False)
    assert answer.stdout.strip() == "no"


def test_a_failing_pre_delete_hook_stops_the_uninstall(
    cluster: ControlPlane, helm: list[str], installed: str
) -> None:
    """The hook's Job never gets a pod running here, so its 5s deadline fails it (the Job
    controller's own DeadlineExceeded), as a preflight that exits non-zero would."""
    kubeconfig = f"--kubeconfig={cluster.kubeconfig_path}"
    done = run(
        helm,
        "uninstall",
        RELEASE,
        "--namespace",
        installed,
        "--timeout",
        "120s",
        kubeconfig,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    # helm v4: "Error: resource Job/NS/NAME not ready. status: Failed, ..."
    assert f"Job/{installed}/{HOOK}" in done.stderr, done.stderr
    assert "status: Failed" in done.stderr, done.stderr
    job = json.loads(cluster.kubectl("get", "job", HOOK, "-n", installed, "-o", "json").stdout)
    conditions = {c["type"]: c for c in job["status"].get("conditions", [])}
    assert conditions["Failed"]["status"] == "True", job["status"]
    assert container(job)["args"] == [
        "preflight",
        "helm",
        RELEASE,
        f"--namespace={installed}",
        "--fail-on=likely",
    ]
    # nothing deleted: every object is still there; helm records the attempt (uninstall.go
    # stores the status it set before the hooks ran)
    assert release_status(helm, cluster, installed) == "uninstalling"
    for kind, name in OBJECTS:
        assert exists(cluster, kind, name, installed), (kind, name)
    # the documented way past the gate, once its log is read
    run(helm, "uninstall", RELEASE, "--namespace", installed, "--no-hooks", kubeconfig)
    for kind, name in OBJECTS:
        assert not exists(cluster, kind, name, installed), (kind, name)
