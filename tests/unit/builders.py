"""Shared homes of the unit tests: the clocks the fixtures are written against, where the
fixtures live, objects built from them, and the explainers and the run over a static view.

Two clocks, because the two families of fixtures were captured at two moments and every age
in their goldens is counted from them: the pod fixtures (tests/fixtures/pods: web-0 is 10m
past its deadline) at PODS_NOW, the namespace fixtures (tests/fixtures/namespaces) at
NAMESPACES_NOW.
"""

from __future__ import annotations

import copy
import io
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kubectl_terminating.commands import run
from kubectl_terminating.explain.namespaces import explain_namespace
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.model import JSON, Blocker, Finding
from kubectl_terminating.options import Options
from kubectl_terminating.resources import Resource
from kubectl_terminating.staticview import StaticView

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PODS_NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
NAMESPACES_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
WIDGETS = Resource("example.com", "v1", "widgets", "Widget")  # a custom resource type


# -- the pod fixtures: web-0 and the cluster around it -----------------------------------------


def pod_fixture(name: str) -> JSON:
    """tests/fixtures/pods/<name>.json, a fresh copy each call."""
    data: JSON = json.loads((FIXTURES / "pods" / f"{name}.json").read_text())
    return data


def healthy_cluster(*without: str) -> list[JSON]:
    """worker-1 Ready with a fresh Lease, the ebs driver installed and registered, web-0's
    volume bound and attached, namespace shop; less the fixtures named in without."""
    names = ["node-worker-1", "lease-worker-1", "csinode-worker-1", "csidriver-ebs"]
    names += ["pvc-data-web-0", "pv-data-web-0", "volumeattachment-web-0", "namespace-shop"]
    return [pod_fixture(n) for n in names if n not in without]


def web_0_events() -> list[JSON]:
    items: list[JSON] = pod_fixture("events-web-0")["items"]
    return items


def terminated(pod: JSON, code: int, reason: str, finished: str) -> JSON:
    """A copy of pod whose first container has terminated."""
    out = copy.deepcopy(pod)
    out["status"]["containerStatuses"][0]["state"] = {
        "terminated": {
            "exitCode": code,
            "reason": reason,
            "startedAt": "2026-01-01T09:00:05Z",
            "finishedAt": finished,
        }
    }
    return out


# -- explaining over a static view -------------------------------------------------------------


def explain_pod_among(pod: JSON, objects: list[JSON], **view: Any) -> Finding:
    """explain_pod over a view holding the pod and objects, at PODS_NOW."""
    return explain_pod(pod, StaticView([pod, *objects], PODS_NOW, **view))


def explain_namespace_among(ns: JSON, objects: list[JSON], **view: Any) -> Finding:
    """explain_namespace over a view holding the namespace and objects, at NAMESPACES_NOW."""
    return explain_namespace(ns, StaticView([ns, *objects], NAMESPACES_NOW, **view))


def apiservice(group: str, version: str, service: str, available: str, reason: str) -> JSON:
    """An aggregated APIService backed by `service` ("namespace/name"), its Available
    condition `available` for `reason`."""
    namespace, name = service.split("/")
    return {
        "kind": "APIService",
        "apiVersion": "apiregistration.k8s.io/v1",
        "metadata": {"name": f"{version}.{group}"},
        "spec": {
            "group": group,
            "version": version,
            "service": {"namespace": namespace, "name": name},
        },
        "status": {"conditions": [{"type": "Available", "status": available, "reason": reason}]},
    }


def types(finding: Finding) -> list[str]:
    return [b.type for b in finding.blockers]


def messages(blocker: Blocker) -> str:
    return "\n".join(e.message for e in blocker.evidence)


# -- the whole run over a file -----------------------------------------------------------------


def run_captured(kind: str = "pods", **options: Any) -> tuple[int, str, str]:
    """`kubectl terminating <kind>` as run() runs it, without color: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = run(Options(kind=kind, color="never", **options), out, err)
    return code, out.getvalue(), err.getvalue()
