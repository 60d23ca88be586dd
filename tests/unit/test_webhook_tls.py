"""Webhook and conversion-webhook TLS (issue 32, class 7): a backend whose Service and endpoints
look healthy, but whose `caBundle` certificate has expired (or is not yet valid), fails every
call with `x509`; so does one whose failure a namespace condition or an event quotes.

The certificates in tests/fixtures/tls were made with openssl under libfaketime (expired:
2024-03-01 to 2025-03-01; future: from 2027-06-01; valid: 2025 to 2124). The messages are the
API server's, as pasted in openebs/openebs#2951 (a namespace stuck on its PVCs) and
hashicorp/consul-k8s#857.
"""

from __future__ import annotations

import base64
import copy
import ssl
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kubectl_terminating.explain.namespace_content import conversion_blocker
from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.explain.tls import ca_bundle, x509_error
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import JSON, Finding
from kubectl_terminating.render.explain import explain_text
from kubectl_terminating.render.style import Style
from kubectl_terminating.resources import PVCS
from kubectl_terminating.staticview import StaticView
from tests.unit.builders import FIXTURES, WIDGETS, explain_namespace_among
from tests.unit.builders import PODS_NOW as NOW
from tests.unit.golden import assert_golden

TLS = FIXTURES / "tls"
HOOK = "admission-webhook.openebs.io"
# openebs/openebs#2951, as the namespace controller words a failed delete
OPENEBS_FAILURE = (
    "Failed to delete all resource types, 1 remaining: Internal error occurred: failed calling "
    f'webhook "{HOOK}": Post https://admission-server-svc.openebs.svc:443/validate?timeout=30s: '
    "x509: certificate has expired or is not yet valid"
)
# hashicorp/consul-k8s#857 (a controller's reconcile error, recorded as a Warning event)
CONSUL_FAILURE = (
    'Internal error occurred: failed calling webhook "mutate-serviceintentions.consul.hashicorp'
    '.com": failed to call webhook: Post "https://consul-controller-webhook.default.svc:443/'
    'mutate-v1alpha1-serviceintentions?timeout=10s": x509: certificate has expired or is not '
    "yet valid: current time 2021-12-01T06:46:58Z is after 2021-12-01T02:05:16Z"
)


def bundle(name: str) -> str:
    return base64.b64encode((TLS / f"{name}.pem").read_bytes()).decode()


def client_config(ca: str | None) -> JSON:
    """The backend, Service openebs/admission-server-svc, with caBundle `ca` (or none)."""
    client: JSON = {"service": {"namespace": "openebs", "name": "admission-server-svc"}}
    if ca is not None:
        client["caBundle"] = ca
    return client


def webhook(ca: str | None) -> JSON:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "openebs-validation-webhook-cfg"},
        "webhooks": [
            {
                "name": HOOK,
                "clientConfig": client_config(ca),
                "failurePolicy": "Fail",
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "resources": ["persistentvolumeclaims"],
                    }
                ],
            }
        ],
    }


HEALTHY_BACKEND: list[JSON] = [
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "admission-server-svc", "namespace": "openebs"},
        "spec": {"selector": {"app": "admission-webhook"}},
    },
    {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "admission-server-svc-x7k2p",
            "namespace": "openebs",
            "labels": {"kubernetes.io/service-name": "admission-server-svc"},
        },
        "endpoints": [{"addresses": ["10.244.1.17"], "conditions": {"ready": True}}],
    },
]
CLAIM: JSON = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {
        "name": "pvtest",
        "namespace": "default",
        "uid": "uid-pvtest",
        "deletionTimestamp": "2026-01-01T11:00:00Z",
        "finalizers": ["kubernetes.io/pvc-protection"],
    },
    "spec": {"storageClassName": "openebs-hostpath"},
}


def namespace(*messages: str) -> JSON:
    conditions = [
        {"type": "NamespaceDeletionContentFailure", "status": "True", "message": m}
        for m in messages
    ]
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "default"},
        "status": {"phase": "Active", "conditions": conditions},
    }


def explained(*objects: JSON) -> Finding:
    view = StaticView([CLAIM, *HEALTHY_BACKEND, *objects], NOW)
    return explain_object(CLAIM, PVCS, view)


def webhook_summaries(finding: Finding) -> list[str]:
    return [b.summary for b in finding.blockers if b.type == "webhook"]


# -- reading caBundle ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["expired", "future", "valid"])
def test_the_bundle_reads_as_openssl_reads_it(name: str) -> None:
    """Cross-checked with the standard library's own decoder (OpenSSL's), tests only."""
    [certificate] = ca_bundle(bundle(name)) or []
    decoded = ssl._ssl._test_decode_cert(str(TLS / f"{name}.pem"))  # type: ignore[attr-defined]
    stamp = "%b %d %H:%M:%S %Y %Z"

    def at(value: str) -> datetime:
        return datetime.strptime(" ".join(value.split()), stamp).replace(tzinfo=timezone.utc)

    assert certificate.not_before == at(decoded["notBefore"])
    assert certificate.not_after == at(decoded["notAfter"])
    assert certificate.subject == dict(x[0] for x in decoded["subject"])["commonName"]


@pytest.mark.parametrize("value", [None, "", "LS0tLS1CRUdJTi...", "bm90IGEgY2VydA==", 7])
def test_what_is_not_a_bundle_says_nothing(value: object) -> None:
    assert ca_bundle(value) is None


def test_a_truncated_certificate_says_nothing() -> None:
    pem = (TLS / "expired.pem").read_text().splitlines()
    cut = "\n".join([*pem[:3], pem[-1]]).encode()
    assert ca_bundle(base64.b64encode(cut).decode()) is None


# -- the webhook's blocker ---------------------------------------------------------------------


def test_an_expired_ca_bundle_holds_the_object_with_a_tls_headline() -> None:
    finding = explained(webhook(bundle("expired")))
    assert webhook_summaries(finding) == [
        f"webhook {HOOK}: TLS certificate admission-server-svc.openebs.svc in caBundle "
        "expired 306d ago"
    ]
    assert finding.blockers[0].type == "webhook"
    text = explain_text([finding], Style(color=False), json_extras)
    assert "openssl x509 -noout -subject -dates" in text
    assert_golden("webhook-tls/expired-ca-bundle.txt", text)


def test_a_certificate_not_yet_valid_is_said_so() -> None:
    [summary] = webhook_summaries(explained(webhook(bundle("future"))))
    assert summary.endswith("in caBundle not valid for 515d")


@pytest.mark.parametrize("ca", [None, "valid"])
def test_a_valid_or_absent_bundle_and_a_healthy_backend_hold_nothing(ca: str | None) -> None:
    assert webhook_summaries(explained(webhook(bundle(ca) if ca else None))) == []


def test_x509_in_a_namespace_condition_names_the_webhook() -> None:
    finding = explained(webhook(None), namespace(OPENEBS_FAILURE))
    assert webhook_summaries(finding) == [
        f"webhook {HOOK}: TLS: certificate expired or not yet valid (x509)"
    ]
    assert_golden(
        "webhook-tls/x509-in-condition.txt",
        explain_text([finding], Style(color=False), json_extras),
    )


def test_x509_naming_another_webhook_says_nothing_of_this_one() -> None:
    other = OPENEBS_FAILURE.replace(HOOK, "validate.other.example.com")
    assert webhook_summaries(explained(webhook(None), namespace(other))) == []


def test_x509_in_an_event_of_the_object_names_the_webhook() -> None:
    hook = webhook(None)
    hook["webhooks"][0]["name"] = "mutate-serviceintentions.consul.hashicorp.com"
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "pvtest.17a", "namespace": "default"},
        "involvedObject": {"kind": "PersistentVolumeClaim", "name": "pvtest", "uid": "uid-pvtest"},
        "type": "Warning",
        "reason": "ReconcileError",
        "message": CONSUL_FAILURE,
    }
    finding = explained(hook, event)
    [summary] = webhook_summaries(finding)
    assert summary.endswith("TLS: certificate expired or not yet valid (x509)")
    said = [e.message for b in finding.blockers for e in b.evidence]
    assert any(m.endswith("is after 2021-12-01T02:05:16Z") for m in said), said


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (CONSUL_FAILURE, "is after 2021-12-01T02:05:16Z"),
        (
            'conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "https://'
            'example-conversion-webhook-server.default.svc:443/crdconvert?timeout=30s": tls: '
            "failed to verify certificate: x509: certificate signed by unknown authority",
            "x509: certificate signed by unknown authority",
        ),
        ("no x509 here", None),
    ],
)
def test_the_x509_failure_is_read_out_of_the_message(message: str, said: str | None) -> None:
    found = x509_error(message)
    assert (found is not None and found.endswith(said)) if said else found is None


# -- conversion webhooks -------------------------------------------------------------------------


def crd(ca: str | None) -> JSON:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": WIDGETS.group,
            "names": {"kind": "Widget", "plural": "widgets"},
            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": client_config(ca)}},
        },
    }


def test_a_conversion_webhook_whose_bundle_expired_is_a_tls_conversion_blocker() -> None:
    view = StaticView([*HEALTHY_BACKEND], NOW)
    blocker = conversion_blocker(crd(bundle("expired")), view)
    assert blocker is not None and blocker.type == "conversion-webhook"
    assert blocker.summary == "TLS: conversion webhook of widgets.example.com: certificate expired"
    assert conversion_blocker(crd(bundle("valid")), view) is None


def test_x509_of_a_conversion_quoted_by_a_condition_is_its_blocker() -> None:
    said = (
        "Failed to delete all resource types, 1 remaining: conversion webhook for example.com/v1, "
        'Kind=Widget failed: Post "https://admission-server-svc.openebs.svc:443/convert": tls: '
        "failed to verify certificate: x509: certificate signed by unknown authority"
    )
    view = StaticView([*HEALTHY_BACKEND], NOW)
    blocker = conversion_blocker(crd(None), view, [said])
    assert blocker is not None
    assert blocker.summary == (
        "TLS: conversion webhook of widgets.example.com: untrusted certificate"
    )
    assert conversion_blocker(crd(None), view, [said.replace("Widget", "Gadget")]) is None


def test_a_down_service_stays_the_headline_over_the_certificate() -> None:
    down = copy.deepcopy(HEALTHY_BACKEND)
    down[1]["endpoints"][0]["conditions"]["ready"] = False
    view = StaticView([CLAIM, *down, webhook(bundle("expired"))], NOW)
    summaries = webhook_summaries(explain_object(CLAIM, PVCS, view))
    assert summaries == [
        f"webhook {HOOK}: service openebs/admission-server-svc has no ready endpoints"
    ]


def test_fixtures_are_where_the_docstring_says() -> None:
    assert sorted(p.name for p in Path(TLS).glob("*.pem")) == [
        "expired.pem",
        "future.pem",
        "valid.pem",
    ]


def test_a_namespace_whose_condition_quotes_x509_is_held_by_the_webhook_over_tls() -> None:
    """openebs/openebs#2951: the namespace stays Terminating on its PVC; the headline is the
    webhook's TLS failure, not a delete that was rejected."""
    ns = namespace(OPENEBS_FAILURE)
    ns["metadata"]["deletionTimestamp"] = "2026-01-01T11:00:00Z"
    ns["spec"] = {"finalizers": ["kubernetes"]}
    ns["status"]["phase"] = "Terminating"
    ns["status"]["conditions"][0]["reason"] = "ContentDeletionFailed"
    finding = explain_namespace_among(ns, [CLAIM, *HEALTHY_BACKEND, webhook(None)])
    main = finding.blockers[0]
    assert main.type == "webhook", [b.summary for b in finding.blockers]
    assert "TLS: certificate expired or not yet valid (x509)" in main.summary
