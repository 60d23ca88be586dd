"""Which way `--node-evidence` takes to the kubelets, and the rights each way needs
(nodeaccess.py, pure). The kubelet's checks are taken from kubernetes v1.36.3
pkg/kubelet/server/auth.go; tests/e2e/test_real_node.py proves them on the real kubelet."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_terminating import kubeconfig
from kubectl_terminating.nodeaccess import (
    Way,
    choose,
    kubelet_endpoint,
    kubelet_refusal,
    right_of,
)
from kubectl_terminating.nodeanswers import NodeEvidenceRefused
from kubectl_terminating.nodeproxy import PATHS


class Rights:
    """A user's answers to SelfSubjectAccessReviews, and the order they were asked in."""

    def __init__(self, *granted: str) -> None:
        self.granted = set(granted)
        self.asked: list[str] = []

    def __call__(self, subresource: str) -> bool:
        self.asked.append(subresource)
        return subresource in self.granted


def test_each_path_names_the_right_the_kubelet_checks() -> None:
    assert {path: right_of(path) for path in PATHS} == {
        "logs/": "log",
        "logs/kubelet.log": "log",
        "logs/containerd.log": "log",
        "stats/summary": "stats",
        "pods": "pods",
    }


def test_from_a_laptop_only_the_node_proxy_is_asked_for() -> None:
    rights = Rights("log", "stats", "pods", "proxy")
    assert choose(False, rights) == Way(False, frozenset({"log", "stats", "pods"}))
    assert rights.asked == ["proxy"]


def test_from_a_laptop_without_nodes_proxy_one_line_says_it_is_exec_equivalent() -> None:
    with pytest.raises(NodeEvidenceRefused) as refused:
        choose(False, Rights("log", "stats", "pods"))
    assert refused.value.why == "get nodes/proxy is not allowed"
    assert str(refused.value) == (
        "node evidence not read: get nodes/proxy is not allowed for this user (it is "
        "exec-equivalent: it lets a user run commands in containers; grant it only where that "
        "is acceptable)"
    )


def test_in_a_pod_the_narrow_rights_win_and_nodes_proxy_is_never_asked_for() -> None:
    rights = Rights("log", "stats", "pods", "proxy")
    assert choose(True, rights) == Way(True, frozenset({"log", "stats", "pods"}))
    assert rights.asked == ["log", "stats", "pods"]


def test_in_a_pod_a_missing_narrow_right_leaves_its_endpoint_out_with_a_warning() -> None:
    way = choose(True, Rights("log", "pods", "proxy"))
    assert way.direct and way.reads == {"log", "pods"}
    assert way.warnings == (
        "node evidence read without the kubelet's stats/summary: get nodes/stats is not "
        "allowed for this user",
    )
    assert not way.reads_path("stats/summary") and way.reads_path("logs/kubelet.log")


def test_in_a_pod_without_nodes_log_the_node_proxy_is_the_way_left() -> None:
    rights = Rights("stats", "pods", "proxy")
    assert choose(True, rights) == Way(False, frozenset({"log", "stats", "pods"}))
    assert rights.asked == ["log", "proxy"]


def test_in_a_pod_without_any_right_one_line_names_both_ways() -> None:
    with pytest.raises(NodeEvidenceRefused) as refused:
        choose(True, Rights("stats", "pods"))
    said = str(refused.value)
    assert "\n" not in said
    assert refused.value.why == "neither get nodes/log nor get nodes/proxy is allowed"
    assert "get nodes/stats and get nodes/pods" in said and "exec-equivalent" in said


def node(addresses: list[dict[str, str]], port: object = 10250) -> dict[str, object]:
    return {
        "status": {
            "addresses": addresses,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        }
    }


def test_the_kubelet_is_at_the_internal_ip_and_the_port_the_node_reports() -> None:
    found = node(
        [
            {"type": "Hostname", "address": "worker-1"},
            {"type": "InternalIP", "address": "10.0.3.7"},
            {"type": "ExternalIP", "address": "203.0.113.9"},
        ]
    )
    assert kubelet_endpoint(found) == ("10.0.3.7", 10250)


@pytest.mark.parametrize(
    ("found", "why"),
    [
        (node([{"type": "ExternalIP", "address": "203.0.113.9"}]), "no InternalIP"),
        (node([{"type": "InternalIP", "address": "10.0.3.7"}], port=0), "no kubelet port"),
        (node([{"type": "InternalIP", "address": "10.0.3.7"}], port="10250"), "no kubelet port"),
        ({}, "no kubelet port"),
    ],
)
def test_a_node_that_does_not_say_where_its_kubelet_is_says_why(
    found: dict[str, object], why: str
) -> None:
    said = kubelet_endpoint(found)
    assert isinstance(said, str) and why in said


def test_a_kubelet_asking_for_nodes_proxy_for_its_pods_means_fine_grained_authz_is_off() -> None:
    # server.go's 403 body, as a kubelet before v1.33 (or with the gate off) writes it
    body = b"Forbidden (user=u, verb=get, resource=nodes, subresource(s)=[proxy])\n"
    said = kubelet_refusal("pods", 403, body)
    assert said.startswith("the kubelet asks for get nodes/proxy here, not get nodes/pods")
    assert "KubeletFineGrainedAuthz" in said


def test_a_kubelet_refusal_names_the_rights_it_asked_for() -> None:
    body = b"Forbidden (user=u, verb=get, resource=nodes, subresource(s)=[pods proxy])\n"
    assert kubelet_refusal("pods", 403, body) == (
        "the kubelet refused get nodes/pods or get nodes/proxy for this user"
    )
    body = b"Forbidden (user=u, verb=get, resource=nodes, subresource(s)=[log])\n"
    assert kubelet_refusal("logs/", 403, body) == "the kubelet refused get nodes/log for this user"
    assert "token" in kubelet_refusal("logs/", 401, b"Unauthorized")


def test_only_the_in_cluster_configuration_counts_as_a_pod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a pod (its service account's files, KUBERNETES_SERVICE_HOST/PORT) the kubelets may
    be read directly; a kubeconfig, even inside a pod, keeps the node proxy."""
    (tmp_path / "token").write_text("t")
    monkeypatch.setattr(kubeconfig, "SERVICE_ACCOUNT_DIR", tmp_path)
    environ = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    found = kubeconfig.in_cluster(None, environ)
    assert found is not None and found.in_pod
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://k:6443'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    selection = kubeconfig.Selection(kubeconfig=str(config))
    assert not kubeconfig.resolve(selection, environ).in_pod
