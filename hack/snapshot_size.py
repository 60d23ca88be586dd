"""How big is a real snapshot of a large cluster? Writes one and prints its size.

    .venv/bin/python -m hack.snapshot_size --pods 50000 --stuck 50000 -o /tmp/bundle.json
    .venv/bin/python -m hack.snapshot_size --pods 50000 --kubectl-get -o /tmp/pods.json

The objects are the benchmark's (hack/bench/objects.py: production-weight pods with a sidecar,
env, probes, Helm labels), completed with what the API server adds (uid, resourceVersion,
defaults, the kube-api-access volume) and managedFields in the server's fieldsV1 shape.
Default: a `dump` bundle (compact JSON, as `dump` writes it) in which `--stuck` pods are
terminating with two events each, with their nodes. `--kubectl-get`: the whole
`kubectl get pods -A -o json` instead (indented, no managedFields: kubectl hides them).
The default of --max-file-size (kubectl_terminating/bounded.py) is chosen from these sizes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from typing import Any

from hack.bench import objects
from hack.bench.settings import PODS_PER_NODE
from kubectl_terminating.snapshot import Capture, bundle
from kubectl_terminating.view import Discovery

JSON = dict[str, Any]
NOW = "2026-03-01T12:00:00Z"


def fields_v1(value: Any) -> Any:
    """The managedFields set of value, in the server's fieldsV1 encoding."""
    if isinstance(value, dict):
        return {f"f:{k}": fields_v1(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(i, dict) for i in value):
        keyed = {}
        for item in value:
            key = {k: item[k] for k in ("name", "type", "containerPort", "ip") if k in item}
            keyed[f"k:{json.dumps(key, separators=(',', ':'))}"] = fields_v1(item)
        return keyed
    return {}


def managed(manager: str, value: JSON, subresource: str = "") -> JSON:
    entry: JSON = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "v1",
        "time": NOW,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(value),
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def server_defaults(pod: JSON, index: int) -> None:
    """What the API server and admission add to a pod created by a ReplicaSet."""
    spec = pod["spec"]
    for container in spec["containers"]:
        container.setdefault("imagePullPolicy", "IfNotPresent")
        container["terminationMessagePath"] = "/dev/termination-log"
        container["terminationMessagePolicy"] = "File"
        container["volumeMounts"].append(
            {
                "name": f"kube-api-access-{index % 100000:05d}",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            }
        )
    spec["volumes"].append(
        {
            "name": f"kube-api-access-{index % 100000:05d}",
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                }
                            ]
                        }
                    },
                ],
            },
        }
    )
    spec.update(
        dnsPolicy="ClusterFirst",
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
        priority=0,
        restartPolicy="Always",
        schedulerName="default-scheduler",
        securityContext={},
        serviceAccount="default",
        serviceAccountName="default",
        tolerations=[
            {
                "key": f"node.kubernetes.io/{taint}",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for taint in ("not-ready", "unreachable")
        ],
    )


def realistic_pod(index: int, rng: random.Random, stuck: bool) -> JSON:
    node = objects.node_name(index // PODS_PER_NODE)
    pod = objects.pod(index, node, objects.digest("rs", index // 20, length=32))
    namespace, _ = objects.pod_names(index)
    server_defaults(pod, index)
    pod["status"] = objects.pod_status(index, rng)
    metadata = pod["metadata"]
    metadata.update(
        namespace=namespace,
        uid=objects.digest("uid", index, length=32),
        resourceVersion=str(1000000 + index),
        creationTimestamp="2026-02-20T09:00:00Z",
    )
    if stuck:
        metadata.update(deletionTimestamp="2026-03-01T11:00:00Z", deletionGracePeriodSeconds=30)
    spec_part = {k: v for k, v in pod.items() if k not in ("status", "kind", "apiVersion")}
    metadata["managedFields"] = [
        managed("kube-controller-manager", spec_part),
        managed("kubelet", {"status": pod["status"]}, "status"),
    ]
    return pod


def event(pod: JSON, reason: str, message: str, index: int) -> JSON:
    m = pod["metadata"]
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "name": f"{m['name']}.{objects.digest('ev', index, reason, length=16)}",
            "namespace": m["namespace"],
            "uid": objects.digest("evuid", index, reason, length=32),
            "resourceVersion": str(2000000 + index),
            "creationTimestamp": "2026-03-01T11:00:05Z",
        },
        "involvedObject": {
            "kind": "Pod",
            "namespace": m["namespace"],
            "name": m["name"],
            "uid": m["uid"],
            "apiVersion": "v1",
            "resourceVersion": m["resourceVersion"],
            "fieldPath": f"spec.containers{{{pod['spec']['containers'][0]['name']}}}",
        },
        "reason": reason,
        "message": message,
        "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
        "firstTimestamp": "2026-03-01T11:00:05Z",
        "lastTimestamp": "2026-03-01T11:58:05Z",
        "count": 42,
        "type": "Warning" if reason != "Killing" else "Normal",
        "eventTime": None,
        "reportingComponent": "kubelet",
        "reportingInstance": pod["spec"]["nodeName"],
    }


def dump_bundle(pods: int, stuck: int) -> JSON:
    rng = random.Random(1)
    capture = Capture(discovery=Discovery())
    stride = max(1, pods // max(stuck, 1))
    for index in range(0, pods, stride)[:stuck]:
        pod = realistic_pod(index, rng, stuck=True)
        capture.add(pod)
        node_index = index // PODS_PER_NODE
        node = dict(objects.node(node_index), status=objects.node_status(node_index, dead=True))
        capture.add(node)
        container = pod["spec"]["containers"][0]["name"]
        capture.add(event(pod, "Killing", f"Stopping container {container}", index))
        capture.add(
            event(
                pod,
                "FailedKillPod",
                'error killing pod: failed to "KillContainer" for "'
                + container
                + '" with KillContainerError: "rpc error: code = DeadlineExceeded desc = '
                'context deadline exceeded"',
                index,
            )
        )
    header = {"capturedAt": NOW, "toolVersion": "size", "serverVersion": "v1.36.3"}
    return bundle(capture, header)


def kubectl_get(pods: int) -> str:
    rng = random.Random(1)
    items = []
    for index in range(pods):
        pod = realistic_pod(index, rng, stuck=False)
        del pod["metadata"]["managedFields"]
        items.append(pod)
    return json.dumps(
        {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
        indent=4,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=50000, help="pods in the cluster")
    parser.add_argument("--stuck", type=int, default=50000, help="of which terminating")
    parser.add_argument("--kubectl-get", action="store_true", help="kubectl get pods -A -o json")
    parser.add_argument("-o", "--output", help="write it here (gzip when it ends in .gz)")
    args = parser.parse_args()
    if args.kubectl_get:
        raw = kubectl_get(args.pods).encode()
    else:
        data = dump_bundle(args.pods, args.stuck)
        raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    packed = gzip.compress(raw, compresslevel=6, mtime=0)
    if args.output:
        with open(args.output, "wb") as out:
            out.write(packed if args.output.endswith(".gz") else raw)
    print(f"{len(raw) / 1e6:.1f} MB expanded, {len(packed) / 1e6:.1f} MB gzip", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
