"""Restricted users for end-to-end tests: ServiceAccounts with their own RBAC, cleaned up.

Why not the plain users of the harness (alice, bob, carol, dave)? RBAC only adds: a binding
one test gives bob is a right every other test that uses bob then has too, and the tests
share one control plane. A ServiceAccount per test, in a namespace of its own, has exactly
the rules that test grants. Its token comes from the TokenRequest API, as `kubectl create
token` gets it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness.api import create_namespace, unique_ns
from tests.harness.controlplane import ApiError, ControlPlane

JSON = dict[str, Any]
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def rule(resources: Sequence[str], verbs: Sequence[str] = ("get", "list"), group: str = "") -> JSON:
    return {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}


@dataclass(frozen=True)
class User:
    username: str  # as the audit log shows it
    token: str
    kubeconfig: Path


def can_i_list(cp: ControlPlane, *args: str) -> dict[str, set[str]]:
    """`kubectl auth can-i --list`: each resource (or URL) and its verbs."""
    out = cp.kubectl("auth", "can-i", "--list", "--no-headers", *args).stdout
    rules: dict[str, set[str]] = {}
    for line in out.splitlines():
        resource = line.split()[0]
        verbs = set(re.findall(r"\[([^\]]*)\]\s*$", line)[0].split())
        rules.setdefault(resource, set()).update(verbs)
    return rules


def rights_granted(cp: ControlPlane, as_user: str, *args: str) -> dict[str, set[str]]:
    """What `--as=...` may do (`kubectl auth can-i --list`, in the namespace `args` name)
    beyond any authenticated user (discovery, self reviews): each resource, its added verbs."""
    baseline = can_i_list(cp, "--as=system:serviceaccount:default:default", *args)
    granted = can_i_list(cp, as_user, *args)
    added = {r: verbs - baseline.get(r, set()) for r, verbs in granted.items()}
    return {r: verbs for r, verbs in added.items() if verbs}


def binding_body(kind: str, name: str, role: str, subject: JSON) -> JSON:
    """A RoleBinding (kind "Role") or ClusterRoleBinding (kind "ClusterRole") named `name`,
    of `role` to `subject`."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": f"{kind}Binding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [subject],
    }


class Users:
    """Makes users for one test module; close() deletes everything cluster-wide it made."""

    def __init__(self, cp: ControlPlane, directory: Path, prefix: str) -> None:
        self.cp = cp
        self.directory = directory
        self.namespace = unique_ns(prefix)
        self.cluster_objects: list[str] = []  # paths to DELETE on close
        create_namespace(cp, self.namespace, wait_for_service_account=False)

    def user(
        self,
        name: str,
        cluster_rules: Sequence[JSON] = (),
        namespace_rules: dict[str, Sequence[JSON]] | None = None,
        kubeconfig_namespace: str | None = None,
    ) -> User:
        """A ServiceAccount bound to cluster_rules (ClusterRole) and, per namespace, to
        namespace_rules (Role); its kubeconfig names context "restricted"."""
        cp, ns = self.cp, self.namespace
        cp.api(
            "POST",
            f"/api/v1/namespaces/{ns}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
        )
        subject = {"kind": "ServiceAccount", "name": name, "namespace": ns}
        role_name = f"{ns}-{name}"
        if cluster_rules:
            self._bind(
                f"{RBAC}/clusterroles",
                f"{RBAC}/clusterrolebindings",
                role_name,
                "ClusterRole",
                cluster_rules,
                subject,
            )
        for where, rules in (namespace_rules or {}).items():
            self._bind(
                f"{RBAC}/namespaces/{where}/roles",
                f"{RBAC}/namespaces/{where}/rolebindings",
                role_name,
                "Role",
                rules,
                subject,
            )
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        answer = cp.api("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token", request)
        token = str(answer["status"]["token"])
        path = cp.write_kubeconfig(
            self.directory / f"{name}.kubeconfig",
            token,
            namespace=kubeconfig_namespace,
            context_name="restricted",
            user_name=name,
        )
        return User(f"system:serviceaccount:{ns}:{name}", token, path)

    def _bind(
        self,
        roles: str,
        bindings: str,
        name: str,
        kind: str,
        rules: Sequence[JSON],
        subject: JSON,
    ) -> None:
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "rules": list(rules),
        }
        self.cp.api("POST", roles, role)
        self.cp.api("POST", bindings, binding_body(kind, name, name, subject))
        if kind == "ClusterRole":
            self.cluster_objects += [f"{bindings}/{name}", f"{roles}/{name}"]

    def __enter__(self) -> Users:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for path in [*self.cluster_objects, f"/api/v1/namespaces/{self.namespace}"]:
            with contextlib.suppress(ApiError):  # already gone
                self.cp.api("DELETE", path)
        self.cluster_objects.clear()
