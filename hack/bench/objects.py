"""The realistic objects the benchmark fills the cluster with, as pure functions of an index.

Pods weigh what production pods weigh (about 11 kB of JSON with managedFields): labels and
annotations of a Helm release, an owning ReplicaSet, an app container and a proxy sidecar
with env, ports, probes and resources, and the status a kubelet writes. Nodes and Leases are
the e2e helpers' (tests/harness/kubelet.py) with a production node's labels, images and ids.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from hack.bench.settings import APPS_PER_NAMESPACE, GROUP_SIZE, PODS_PER_NAMESPACE
from tests.harness.api import namespace_body, now, rfc3339
from tests.harness.api_extensions import crd_body, custom_object_body
from tests.harness.kubelet import lease_body, node_conditions

JSON = dict[str, Any]
APPS = ("api", "web", "worker", "cache", "gateway", "auth", "search", "billing", "notify", "cron")
TEAMS = ("payments", "platform", "growth", "data", "identity")
CRD_FIELDS = 12  # typed string fields in each benchmark CRD's schema


def ts(seconds_ago: float = 0) -> str:
    return rfc3339(now(-seconds_ago))


def digest(*parts: object, length: int = 10) -> str:
    text = "/".join(str(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


# -- nodes --------------------------------------------------------------------------------------


def node_name(index: int, dead: bool = False) -> str:
    return f"{'dead' if dead else 'node'}-{index:05d}"


def node(index: int, dead: bool = False) -> JSON:
    """A node as a cloud provider's kubelet registers it."""
    name = node_name(index, dead)
    zone = f"zone-{'abc'[index % 3]}"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "m6i.2xlarge",
        "topology.kubernetes.io/region": "bench-1",
        "topology.kubernetes.io/zone": zone,
        "node-role.kubernetes.io/worker": "",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": f"10.{index // 256 % 256}.{index % 256}.0/24",
            "providerID": f"bench://{zone}/{name}",
        },
    }


def node_status(index: int, dead: bool = False) -> JSON:
    """What its kubelet posts; `dead`: the kubelet stopped posting 10m ago."""
    name = node_name(index, dead)
    capacity = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    heartbeat = ts(600 if dead else 0)
    conditions = node_conditions(
        "Unknown" if dead else "True", heartbeat, ts(3600), ts(600 if dead else 3600)
    )
    images = [
        {
            "names": [
                f"registry.example.com/{app}@sha256:{digest(app, length=64)}",
                f"registry.example.com/{app}:1.{i}.0",
            ],
            "sizeBytes": 50_000_000 + i,
        }
        for i, app in enumerate(APPS)
    ]
    return {
        "conditions": conditions,
        "addresses": [
            {"type": "InternalIP", "address": f"192.168.{index // 250}.{index % 250 + 1}"},
            {"type": "Hostname", "address": name},
        ],
        "capacity": capacity,
        "allocatable": capacity,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "kubeletVersion": "v1.36.3",
            "containerRuntimeVersion": "containerd://2.1.0",
            "kernelVersion": "6.1.0-bench",
            "osImage": "Bench Linux",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "machineID": digest(name, length=32),
            "systemUUID": digest("uuid", name, length=32),
            "bootID": digest("boot", name, length=32),
            "kubeProxyVersion": "",
        },
        "images": images,
    }


VIRTUAL_NODE = "virtual-kubelet"


def virtual_node() -> tuple[JSON, JSON]:
    """A virtual-kubelet node (AWS Fargate, Azure virtual nodes, Admiralty, Liqo) and its
    status: one Node object that holds thousands of pods, tainted so that only the pods that
    tolerate it land there."""
    body, status = node(0), node_status(0)
    body["metadata"]["name"] = VIRTUAL_NODE
    body["metadata"]["labels"].update(
        {"kubernetes.io/hostname": VIRTUAL_NODE, "type": "virtual-kubelet"}
    )
    body["spec"] = {
        "providerID": f"bench://virtual/{VIRTUAL_NODE}",
        "taints": [
            {"key": "virtual-kubelet.io/provider", "value": "bench", "effect": "NoSchedule"}
        ],
    }
    status["capacity"] = status["allocatable"] = {"cpu": "10k", "memory": "40Ti", "pods": "100k"}
    status["addresses"] = [{"type": "Hostname", "address": VIRTUAL_NODE}]
    status["images"] = []
    return body, status


def node_lease(created: JSON, dead: bool = False) -> JSON:
    """The Lease of the node `created` (as the server answered), renewed 10m ago if dead."""
    return lease_body(created, now(-600 if dead else 0))


# -- namespaces, apps and their ReplicaSets ------------------------------------------------------


def app_namespace(index: int) -> JSON:
    labels = {
        "team": TEAMS[index % len(TEAMS)],
        "environment": "production",
        "pod-security.kubernetes.io/enforce": "baseline",
    }
    return namespace_body(f"app-{index:04d}", labels=labels)


def app_of(ns_index: int, app_index: int) -> tuple[str, str, str]:
    """The app's name, pod template hash and ReplicaSet name."""
    app = APPS[(ns_index + app_index) % len(APPS)]
    template_hash = digest(ns_index, app_index)
    return app, template_hash, f"{app}-{template_hash}"


def labels(ns_index: int, app_index: int) -> dict[str, str]:
    app, template_hash, _ = app_of(ns_index, app_index)
    return {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": f"{app}-prod",
        "app.kubernetes.io/version": f"1.{app_index}.{ns_index % 7}",
        "app.kubernetes.io/component": "server",
        "app.kubernetes.io/part-of": TEAMS[ns_index % len(TEAMS)],
        "app.kubernetes.io/managed-by": "Helm",
        "helm.sh/chart": f"{app}-4.2.{app_index}",
        "pod-template-hash": template_hash,
    }


def pod_spec(ns_index: int, app_index: int) -> JSON:
    app, _, _ = app_of(ns_index, app_index)
    env: list[JSON] = [
        {"name": f"{app.upper()}_{key}", "value": value}
        for key, value in (
            ("LOG_LEVEL", "info"),
            ("LOG_FORMAT", "json"),
            ("PORT", "8080"),
            ("METRICS_PORT", "9090"),
            ("DB_HOST", f"postgres.{TEAMS[ns_index % 5]}.svc"),
            ("CACHE_URL", "redis://redis-master:6379/0"),
            ("FEATURE_FLAGS", "a,b,c,d"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector.observability:4317"),
        )
    ]
    env += [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {
            "name": "POD_NAMESPACE",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        },
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    ]
    probe = {
        "httpGet": {"path": "/healthz", "port": "http"},
        "periodSeconds": 10,
        "timeoutSeconds": 2,
        "failureThreshold": 3,
    }
    return {
        "containers": [
            {
                "name": app,
                "image": f"registry.example.com/{app}:1.{app_index}.0",
                "imagePullPolicy": "IfNotPresent",
                "args": ["--config=/etc/app/config.yaml", "--listen=:8080"],
                "ports": [
                    {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                    {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                ],
                "env": env,
                "resources": {
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                    "limits": {"cpu": "1", "memory": "512Mi"},
                },
                "livenessProbe": probe,
                "readinessProbe": dict(probe, httpGet={"path": "/ready", "port": "http"}),
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "runAsNonRoot": True,
                    "runAsUser": 10001,
                    "capabilities": {"drop": ["ALL"]},
                },
            },
            {
                "name": "proxy",
                "image": "registry.example.com/envoy:v1.31.2",
                "args": ["-c", "/etc/envoy/envoy.yaml", "--log-level", "warn"],
                "ports": [
                    {"name": "proxy", "containerPort": 15001, "protocol": "TCP"},
                    {"name": "admin", "containerPort": 15000, "protocol": "TCP"},
                ],
                "resources": {
                    "requests": {"cpu": "50m", "memory": "64Mi"},
                    "limits": {"cpu": "500m", "memory": "256Mi"},
                },
                "volumeMounts": [{"name": "envoy", "mountPath": "/etc/envoy", "readOnly": True}],
            },
        ],
        "volumes": [
            {"name": "config", "configMap": {"name": f"{app}-config"}},
            {"name": "envoy", "configMap": {"name": "envoy-config"}},
        ],
        "terminationGracePeriodSeconds": 30,
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app}},
                        },
                    }
                ]
            }
        },
    }


def replicaset(ns_index: int, app_index: int) -> JSON:
    app, template_hash, name = app_of(ns_index, app_index)
    pod_labels = labels(ns_index, app_index)
    selector = {"app.kubernetes.io/name": app, "pod-template-hash": template_hash}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "labels": pod_labels,
            "annotations": {"deployment.kubernetes.io/revision": "3"},
        },
        "spec": {
            "replicas": PODS_PER_NAMESPACE // APPS_PER_NAMESPACE,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": pod_labels},
                "spec": pod_spec(ns_index, app_index),
            },
        },
    }


# -- pods ---------------------------------------------------------------------------------------


def pod_names(index: int) -> tuple[str, str]:
    """The namespace and name of pod `index`."""
    ns_index, slot = divmod(index, PODS_PER_NAMESPACE)
    _, _, rs_name = app_of(ns_index, slot % APPS_PER_NAMESPACE)
    # index * 2654435761 % 16**5 is a bijection: no collisions
    return f"app-{ns_index:04d}", f"{rs_name}-{index * 2654435761 % 16**5:05x}"


def pod(index: int, on_node: str, replicaset_uid: str) -> JSON:
    """Pod `index` of its ReplicaSet, bound to `node`."""
    ns_index, slot = divmod(index, PODS_PER_NAMESPACE)
    app_index = slot % APPS_PER_NAMESPACE
    _, _, rs_name = app_of(ns_index, app_index)
    _, name = pod_names(index)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"{rs_name}-",
            "labels": labels(ns_index, app_index),
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2025-06-01T10:00:00Z",
                "checksum/config": digest("config", ns_index, app_index, length=64),
                "checksum/secret": digest("secret", ns_index, app_index, length=64),
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
                "prometheus.io/path": "/metrics",
                "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs_name,
                    "uid": replicaset_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": dict(pod_spec(ns_index, app_index), nodeName=on_node),
    }


def pod_status(index: int, rng: random.Random) -> JSON:
    """Pod `index` running for a while, as its kubelet reports it."""
    ns_index, slot = divmod(index, PODS_PER_NAMESPACE)
    app_index = slot % APPS_PER_NAMESPACE
    app, _, _ = app_of(ns_index, app_index)
    started = ts(rng.randrange(600, 86400 * 7))
    container_statuses = [
        {
            "name": container,
            "ready": True,
            "started": True,
            "restartCount": rng.randrange(3),
            "image": image,
            "imageID": f"{image.split(':')[0]}@sha256:{digest(image, length=64)}",
            "containerID": f"containerd://{digest('c', index, container, length=64)}",
            "state": {"running": {"startedAt": started}},
        }
        for container, image in (
            (app, f"registry.example.com/{app}:1.{app_index}.0"),
            ("proxy", "registry.example.com/envoy:v1.31.2"),
        )
    ]
    conditions = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
        for t in (
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        )
    ]
    pod_ip = f"10.{100 + index // 65536 % 100}.{index // 256 % 256}.{index % 256}"
    return {
        "phase": "Running",
        "conditions": conditions,
        "hostIP": "192.168.0.1",
        "hostIPs": [{"ip": "192.168.0.1"}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": started,
        "containerStatuses": container_statuses,
    }


# -- CRDs ---------------------------------------------------------------------------------------


def crd_names(index: int) -> tuple[str, str, str]:
    """The group, kind and plural of CRD `index`."""
    group = f"g{index // GROUP_SIZE:03d}.bench.example.com"
    kind = f"Thing{index:04d}"
    return group, kind, f"things{index:04d}"


def crd(index: int) -> JSON:
    """CRD `index`: a typed spec of CRD_FIELDS strings, a status subresource."""
    group, kind, plural = crd_names(index)
    properties = {
        f"field{j}": {"type": "string", "description": f"Field {j} of {kind}."}
        for j in range(CRD_FIELDS)
    }
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": properties,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    }
    return crd_body(group, kind, plural, schema=schema, status_subresource=True)


def custom_object(
    index: int, name: str, finalizers: list[str] | None = None, spec: JSON | None = None
) -> JSON:
    """An object of CRD `index`."""
    group, kind, _ = crd_names(index)
    return custom_object_body(group, "v1", kind, name, finalizers, spec)
