"""Read-only, proven, and no credentials in any output.

The API server's audit log (every request, level Metadata) shows what the plugin asked for:
the read commands run as a user whose ClusterRole allows only get/list/watch on everything,
and the log must hold nothing but get and list (discovery included) from that user. A write
would show up even if RBAC refused it: the audit log records refused requests too. The one
`create` allowed is a SubjectAccessReview (a question that stores nothing: may a running
owner update what it must release?), asked once and refused to this user.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.api import (
    create_configmap,
    create_namespace,
    delete,
    micro_time,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.cli import run_cli
from tests.harness.controlplane import ControlPlane
from tests.harness.scenarios import (
    Stuck,
    namespace_with_stuck_pod,
    pod_on_dead_node,
    pod_with_finalizer,
)
from tests.harness.users import User, Users

pytestmark = pytest.mark.e2e

READ_ONLY = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]
WRITES = {"create", "update", "patch", "delete", "deletecollection"}
REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


@pytest.fixture(scope="module")
def users(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    with Users(control_plane, tmp_path_factory.mktemp("users"), "ro-users") as made:
        yield made


@pytest.fixture(scope="module")
def stuck(control_plane: ControlPlane) -> Iterator[tuple[Stuck, Stuck]]:
    """A pod on a dead node, a pod held by a finalizer, a ConfigMap held by a running owner,
    a namespace held by a pod. The ConfigMap is released at the end (the owner "finishes")."""
    ns = unique_ns("ro-pods")
    create_namespace(control_plane, ns)
    dead = pod_on_dead_node(control_plane, ns)
    pod_with_finalizer(control_plane, ns)
    running_owner(control_plane, ns)
    held = namespace_with_stuck_pod(control_plane, unique_ns("ro-ns"))
    yield dead, held
    remove_finalizers(control_plane, f"/api/v1/namespaces/{ns}/configmaps/challenge")


def running_owner(cp: ControlPlane, ns: str) -> None:
    """A ConfigMap held by cert-manager's finalizer while its Lease is fresh (for 3 minutes),
    held by a pod (whose ServiceAccount the review asks about)."""
    create_configmap(cp, ns, "challenge", finalizers=["acme.cert-manager.io/finalizer"])
    delete(cp, f"/api/v1/namespaces/{ns}/configmaps/challenge")
    leader = "cert-manager-7cbdfd77b7-nbhrb"  # no scheduler or kubelet runs it here
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": leader},
        "spec": {"containers": [{"name": "c", "image": "c"}]},
    }
    cp.api("POST", f"/api/v1/namespaces/{ns}/pods", pod)
    holder = f"{leader}-external-cert-manager-controller"
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "cert-manager-controller"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 60, "renewTime": micro_time()},
    }
    cp.api("POST", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", lease)


def read_commands(dead: Stuck, held: Stuck) -> list[tuple[str, ...]]:
    return [
        ("pods", "-A"),
        ("pods", "-n", dead.namespace, dead.name, "--explain"),
        ("ns",),
        ("ns", held.namespace, "--explain"),
        ("all", "-A"),
        ("pods", "-A", "-o", "json"),
        ("ns", "-o", "json"),
        ("all", "-A", "-o", "json"),
    ]


def audited(cp: ControlPlane, offset: int, user: User) -> list[dict[str, Any]]:
    """The user's audit events since offset, once a marker request made last is written."""
    marker = f"audit-marker-{secrets.token_hex(4)}"
    cp.api_raw("GET", f"/api/v1/namespaces/default/configmaps/{marker}", token=user.token)

    def with_marker() -> list[dict[str, Any]] | None:
        events = cp.audit_events(offset, user=user.username)
        return events if any(marker in e["requestURI"] for e in events) else None

    events = wait_for(with_marker, timeout=10, message="the marker request in the audit log")
    return [e for e in events if marker not in e["requestURI"]]


def test_read_commands_only_get_and_list(
    control_plane: ControlPlane, users: Users, stuck: tuple[Stuck, Stuck]
) -> None:
    cp = control_plane
    auditor = users.user("auditor", cluster_rules=READ_ONLY)
    offset = cp.audit_offset()
    for args in read_commands(*stuck):
        result = run_cli(*args, kubeconfig=auditor.kubeconfig)
        assert result.returncode == 0, (args, result.stderr)
        assert "forbidden" not in result.stderr, (args, result.stderr)  # get/list was enough

    events = audited(cp, offset, auditor)
    verbs = Counter(e["verb"] for e in events)
    assert len(events) >= 50, verbs  # the commands really ran as this user
    writes = [(e["verb"], e["requestURI"]) for e in events if e["verb"] in WRITES]
    questions = [w for w in writes if w == ("create", REVIEWS)]
    assert writes == questions and len(questions) <= len(read_commands(*stuck)), writes
    assert questions, "the running owner's permissions were asked about"
    assert set(verbs) <= {"get", "list", "create"}, verbs  # not even a watch
    assert {e["requestURI"].split("?")[0] for e in events} >= {"/api", "/apis"}  # discovery
    refused = [e["requestURI"] for e in events if e["responseStatus"]["code"] == 403]
    assert set(refused) == {REVIEWS}  # a read-only user may not ask: said not checked


# -- no credentials in any output ---------------------------------------------------------------

VERBOSE_COMMANDS = [
    ("pods", "-A", "-v", "6"),
    ("pods", "-A", "-o", "json", "-v", "6"),
    ("ns", "--explain", "-v", "6"),
    ("all", "-A", "-o", "yaml", "-v", "6"),
]


def assert_not_shown(secret: str, *outputs: str) -> None:
    for output in outputs:
        assert secret not in output
        assert "Bearer" not in output and "Authorization" not in output


def test_rejected_token_never_shown(control_plane: ControlPlane, tmp_path: Path) -> None:
    canary = f"kt-canary-{secrets.token_hex(16)}"
    config = control_plane.write_kubeconfig(tmp_path / "canary", canary, user_name="canary")
    for args in VERBOSE_COMMANDS:
        result = run_cli(*args, kubeconfig=config)
        assert result.returncode == 1, result.stderr
        assert "Unauthorized" in result.stderr
        assert_not_shown(canary, result.stdout, result.stderr)


def test_valid_token_never_shown(
    control_plane: ControlPlane, users: Users, stuck: tuple[Stuck, Stuck]
) -> None:
    """A working token (a JWT) through every output, at -v 6, and on a refused list."""
    reader = users.user("reader", cluster_rules=READ_ONLY)
    signature = reader.token.rsplit(".", 1)[-1]
    for args in VERBOSE_COMMANDS:
        result = run_cli(*args, kubeconfig=reader.kubeconfig)
        assert result.returncode == 0, result.stderr
        assert result.stderr.count("GET https://") > 1  # -v 6 did log the requests
        assert_not_shown(reader.token, result.stdout, result.stderr)
        assert_not_shown(signature, result.stdout, result.stderr)
    nobody = users.user("nobody")  # no rights: the main list is refused
    refused = run_cli("pods", "-A", "-v", "6", kubeconfig=nobody.kubeconfig)
    assert refused.returncode == 1 and "Forbidden" in refused.stderr
    assert_not_shown(nobody.token, refused.stdout, refused.stderr)


def test_basic_auth_password_never_shown(control_plane: ControlPlane, tmp_path: Path) -> None:
    canary = f"kt-password-{secrets.token_hex(16)}"
    config = control_plane.write_kubeconfig(tmp_path / "basic", "x", user_name="basic")
    text = config.read_text().replace("token: x", f"username: admin\n    password: {canary}")
    config.write_text(text)
    for args in VERBOSE_COMMANDS[:2]:
        result = run_cli(*args, kubeconfig=config)
        assert result.returncode == 1, result.stderr
        assert_not_shown(canary, result.stdout, result.stderr)
