"""Extensions of the API, with plain JSON dicts: admission webhooks, aggregated APIServices,
CustomResourceDefinitions and their objects.

They affect every test sharing the control plane: scope webhooks with `namespace=` and
delete APIServices when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Concatenate, ParamSpec

from tests.harness.api import JSON, get, wait_for
from tests.harness.controlplane import ControlPlane

P = ParamSpec("P")


def webhook_rule(
    operations: Sequence[str],
    resources: Sequence[str],
    api_groups: Sequence[str] = ("",),
    api_versions: Sequence[str] = ("*",),
    scope: str = "*",
) -> JSON:
    return {
        "operations": list(operations),
        "apiGroups": list(api_groups),
        "apiVersions": list(api_versions),
        "resources": list(resources),
        "scope": scope,
    }


def create_validating_webhook(
    cp: ControlPlane,
    name: str,
    service_ns: str,
    service_name: str,
    rules: Sequence[JSON],
    failure_policy: str = "Fail",
    namespace: str | None = None,
    path: str = "/validate",
    timeout_seconds: int = 5,
) -> JSON:
    """A ValidatingWebhookConfiguration with one webhook backed by a Service.

    `namespace` limits it to that namespace: without it, a Fail webhook with no backend
    breaks every test sharing the cluster.
    """
    webhook: JSON = {
        "name": f"{name}.webhooks.test.example.com",
        "clientConfig": {
            "service": {"namespace": service_ns, "name": service_name, "path": path, "port": 443}
        },
        "rules": list(rules),
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": timeout_seconds,
    }
    if namespace:
        webhook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [webhook],
    }
    return cp.api(
        "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", body
    )


def create_apiservice(
    cp: ControlPlane,
    group: str,
    version: str,
    service_ns: str,
    service_name: str,
    port: int = 443,
) -> JSON:
    """An aggregated APIService. Unavailable ones block namespace deletion cluster-wide:
    delete it when the test ends."""
    body = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}"},
        "spec": {
            "group": group,
            "version": version,
            "service": {"namespace": service_ns, "name": service_name, "port": port},
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
        },
    }
    return cp.api("POST", "/apis/apiregistration.k8s.io/v1/apiservices", body)


def apiservice_condition(cp: ControlPlane, name: str, type_: str = "Available") -> JSON | None:
    svc = get(cp, f"/apis/apiregistration.k8s.io/v1/apiservices/{name}")
    conds: list[JSON] = svc.get("status", {}).get("conditions") or []
    return next((c for c in conds if c.get("type") == type_), None)


def crd_body(
    group: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    conversion_webhook_service: tuple[str, str] | None = None,
    versions: Sequence[str] = ("v1",),
    schema: JSON | None = None,
    status_subresource: bool = False,
) -> JSON:
    """A CustomResourceDefinition, by default with an open schema.

    versions[0] is the storage version; all are served. conversion_webhook_service is
    (namespace, name) of the Service that would convert between them.
    """
    schema = schema or {
        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    }
    served: list[JSON] = [
        {"name": v, "served": True, "storage": i == 0, "schema": schema}
        for i, v in enumerate(versions)
    ]
    if status_subresource:
        for version in served:
            version["subresources"] = {"status": {}}
    spec: JSON = {
        "group": group,
        "names": {
            "kind": kind,
            "plural": plural,
            "singular": kind.lower(),
            "listKind": f"{kind}List",
        },
        "scope": "Namespaced" if namespaced else "Cluster",
        "versions": served,
    }
    if conversion_webhook_service:
        svc_ns, svc_name = conversion_webhook_service
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {"namespace": svc_ns, "name": svc_name, "path": "/convert"}
                },
            },
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": spec,
    }


def _established_once_created(
    build: Callable[P, JSON],
) -> Callable[Concatenate[ControlPlane, P], JSON]:
    def create(cp: ControlPlane, /, *args: P.args, **kwargs: P.kwargs) -> JSON:
        body = build(*args, **kwargs)
        name = body["metadata"]["name"]
        cp.api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
        return wait_for(lambda: _established(cp, name), message=f"CRD {name} Established")

    return create


# A CRD (create_crd(cp, then crd_body's arguments)), once Established.
create_crd = _established_once_created(crd_body)


def established(crd: JSON) -> bool:
    """Whether the CRD's types are served (its Established condition is True)."""
    conds = (crd.get("status") or {}).get("conditions") or []  # null until the first update
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)


def _established(cp: ControlPlane, name: str) -> JSON | None:
    crd = get(cp, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    return crd if established(crd) else None


def create_custom_object(
    cp: ControlPlane,
    group: str,
    version: str,
    plural: str,
    kind: str,
    name: str,
    ns: str | None = None,
    finalizers: Sequence[str] | None = None,
    spec: JSON | None = None,
) -> JSON:
    body = custom_object_body(group, version, kind, name, finalizers, spec)
    base = f"/apis/{group}/{version}" + (f"/namespaces/{ns}" if ns else "")
    return cp.api("POST", f"{base}/{plural}", body)


def custom_object_body(
    group: str,
    version: str,
    kind: str,
    name: str,
    finalizers: Sequence[str] | None = None,
    spec: JSON | None = None,
) -> JSON:
    meta: JSON = {"name": name}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": meta, "spec": spec or {}}
