"""Admission webhooks that would reject the writes deletion still needs.

A webhook with `failurePolicy: Fail` whose backend is down rejects every request it intercepts.
When it intercepts the UPDATE that removes a finalizer (or the DELETE of remaining content), the
object can never go. Only what the API shows is checked: the webhook's Service is missing or has
no ready endpoints, the certificate in its `caBundle` has expired or is not yet valid (tls.py),
or a namespace condition or an event of the object quotes an `x509` failure calling it.
`clientConfig.url` webhooks point outside the cluster: only their certificate can be checked;
`unverified_webhooks` lists them for the "nothing found" case.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_terminating import reads
from kubectl_terminating.causes import CERTAIN, LIKELY, WEBHOOK
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.explain.tls import ca_bundle, invalid_at, x509_error
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy, Subject
from kubectl_terminating.resources import Resource
from kubectl_terminating.timeutil import format_time, human_duration
from kubectl_terminating.view import ClusterView, ReadFailed

ALL = "*"
ADMISSION_API = "admissionregistration.k8s.io/v1"
Labels = Mapping[str, str]


@dataclass(frozen=True)
class MatchedWebhook:
    """One webhook (of a configuration) that intercepts some of the operations asked about."""

    config_kind: str
    config_name: str
    name: str
    operations: tuple[str, ...]
    client_config: JSON
    notes: tuple[str, ...] = ()  # assumptions made while matching

    @property
    def config_ref(self) -> ObjectRef:
        return ObjectRef(self.config_kind, self.config_name, api_version=ADMISSION_API)

    def fields(self, resource: Resource) -> dict[str, Any]:
        out: dict[str, Any] = {
            "webhook": self.name,
            "failurePolicy": "Fail",
            "operations": list(self.operations),
            "resource": resource.qualified,
        }
        if self.notes:
            out["assumptions"] = list(self.notes)
        return out


@dataclass(frozen=True)
class BackendProblem:
    what: str  # completes "service ns/name ...": "missing", "has no ready endpoints"
    evidence: Evidence
    remedy: Remedy
    headline: str = ""  # the whole summary after "webhook NAME: " (TLS problems)
    # how sure a call to the backend fails, and the witness (Blocker.confidence)
    confidence: str = LIKELY
    basis: str = ""


# -- rule matching (admission's rules.Matcher) -------------------------------------------------


def _listed(values: Any, wanted: str) -> bool:
    items = list_of(values)
    return ALL in items or wanted in items


def _split(resource: str) -> tuple[str, str]:
    plural, _, sub = resource.partition("/")
    return plural, sub


def resource_matches(rule_resources: Any, plural: str, subresource: str = "") -> bool:
    """As the API server matches: `*` is any resource, `x/*` any subresource of x (and x)."""
    for entry in list_of(rule_resources):
        if not isinstance(entry, str):
            continue
        res, sub = _split(entry)
        if res in (ALL, plural) and sub in (ALL, subresource):
            return True
    return False


def _scope_matches(rule: Mapping[str, Any], resource: Resource) -> bool:
    scope = text(rule.get("scope")) or ALL
    if scope == ALL:
        return True
    # Namespace objects count as cluster-scoped, as in the API server's matcher.
    namespaced = resource.namespaced and resource.kind != "Namespace"
    return (scope == "Namespaced") == namespaced


def rule_operations(
    rule: Mapping[str, Any],
    resource: Resource,
    operations: Collection[str],
    *,
    exact_version: bool = False,
) -> tuple[str, ...]:
    """The operations (of those asked about) that one rule intercepts for resource."""
    if not (
        _listed(rule.get("apiGroups"), resource.group)
        and (not exact_version or _listed(rule.get("apiVersions"), resource.version))
        and resource_matches(rule.get("resources"), resource.plural)
        and _scope_matches(rule, resource)
    ):
        return ()
    return tuple(op for op in operations if _listed(rule.get("operations"), op))


def hook_operations(
    hook: Mapping[str, Any], resource: Resource, operations: Collection[str]
) -> tuple[str, ...]:
    # matchPolicy Equivalent (the v1 default) also intercepts the other served versions of
    # the same group and resource, so the version only has to match under Exact.
    exact = text(hook.get("matchPolicy")) == "Exact"
    found: list[str] = []
    for rule in list_of(hook.get("rules")):
        for op in rule_operations(as_dict(rule), resource, operations, exact_version=exact):
            if op not in found:
                found.append(op)
    return tuple(found)


# -- label selectors ---------------------------------------------------------------------------


def _expression_matches(expression: Mapping[str, Any], labels: Labels) -> bool:
    key = text(expression.get("key"))
    operator = text(expression.get("operator"))
    values = list_of(expression.get("values"))
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return True  # an operator we do not know: cannot rule the webhook out


def selector_matches(selector: Any, labels: Labels) -> bool:
    """metav1.LabelSelector semantics; an absent or empty selector matches everything."""
    selector = as_dict(selector)
    match_labels = as_dict(selector.get("matchLabels"))
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    return all(
        _expression_matches(as_dict(e), labels) for e in list_of(selector.get("matchExpressions"))
    )


def labels_of(obj: Any) -> dict[str, str]:
    raw = as_dict(meta(as_dict(obj)).get("labels"))
    return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}


def _is_empty(selector: Any) -> bool:
    selector = as_dict(selector)
    return not selector.get("matchLabels") and not selector.get("matchExpressions")


def _namespace_labels(namespace: str | None, view: ClusterView) -> tuple[Labels | None, str]:
    """The labels namespaceSelector is matched against, or None and why they are unknown."""
    if not namespace:
        return None, "namespace unknown"
    try:
        obj = reads.namespace(view, namespace)
    except ReadFailed as failed:
        return None, str(failed)
    if obj is None:
        return None, f"namespace {namespace} not found"
    return labels_of(obj), ""


def _selector_notes(
    hook: Mapping[str, Any],
    resource: Resource,
    ns_labels: tuple[Labels | None, str],
    labels: Labels | None,
) -> tuple[str, ...] | None:
    """None when a selector rules the webhook out; otherwise the assumptions made."""
    notes: list[str] = []
    ns_selector = hook.get("namespaceSelector")
    # namespaceSelector only applies to namespaced objects and to Namespace objects themselves.
    if (resource.namespaced or resource.kind == "Namespace") and not _is_empty(ns_selector):
        known, why = ns_labels
        if known is None:
            notes.append(f"namespaceSelector not evaluated ({why}): assumed to match")
        elif not selector_matches(ns_selector, known):
            return None
    obj_selector = hook.get("objectSelector")
    if not _is_empty(obj_selector):
        if labels is None:
            notes.append("objectSelector not evaluated: assumed to match")
        elif not selector_matches(obj_selector, labels):
            return None
    if hook.get("matchConditions"):
        notes.append("matchConditions (CEL) not evaluated: assumed to match")
    return tuple(notes)


def _fails_closed(hook: Mapping[str, Any]) -> bool:
    return (text(hook.get("failurePolicy")) or "Fail") == "Fail"  # Fail is the v1 default


def matching_webhooks(
    resource: Resource,
    operations: Collection[str],
    namespace: str | None,
    view: ClusterView,
    *,
    labels: Labels | None = None,
) -> list[MatchedWebhook]:
    """Webhooks with failurePolicy Fail that intercept any of operations on resource.

    labels are the object's own labels (for objectSelector); None when unknown.
    """
    configs, _ = reads.webhook_configurations_each(view)
    ns_labels = _namespace_labels(namespace, view) if configs else (None, "")
    found: list[MatchedWebhook] = []
    for config in map(as_dict, configs):
        for hook in map(as_dict, list_of(config.get("webhooks"))):
            ops = hook_operations(hook, resource, operations)
            notes = _selector_notes(hook, resource, ns_labels, labels) if ops else None
            if not ops or notes is None or not _fails_closed(hook):
                continue
            found.append(
                MatchedWebhook(
                    config_kind=text(config.get("kind")) or "ValidatingWebhookConfiguration",
                    config_name=text(meta(config).get("name")),
                    name=text(hook.get("name")),
                    operations=ops,
                    client_config=as_dict(hook.get("clientConfig")),
                    notes=notes,
                )
            )
    return found


# -- backends ----------------------------------------------------------------------------------


def _service_of(hook: MatchedWebhook) -> tuple[str, str] | None:
    service = as_dict(hook.client_config.get("service"))
    namespace, name = text(service.get("namespace")), text(service.get("name"))
    return (namespace, name) if namespace and name else None


def ready_endpoints(slices: list[JSON]) -> int:
    # EndpointSlice docs: a missing `ready` condition should be interpreted as ready.
    return sum(
        1
        for s in slices
        for endpoint in list_of(as_dict(s).get("endpoints"))
        if as_dict(as_dict(endpoint).get("conditions")).get("ready") is not False
    )


def slices_ready(namespace: str, name: str, view: ClusterView, failed: ReadFailed) -> int:
    """Ready endpoints of a Service that could not be read, from its EndpointSlices alone:
    they stand on their own. Raises `failed` when there are none to judge by (no slices, or
    none readable either)."""
    try:
        slices = reads.endpoint_slices(view, namespace, name)
    except ReadFailed:
        raise failed from None
    if not slices:
        raise failed
    return ready_endpoints(slices)


def slices_problem(
    namespace: str, name: str, view: ClusterView, failed: ReadFailed
) -> BackendProblem | None:
    if slices_ready(namespace, name, view, failed):
        return None
    return BackendProblem(
        "has no ready endpoints",
        Evidence(
            f"Service {namespace}/{name} has no ready endpoints (its EndpointSlices say so; "
            f"the Service itself was not read: {failed.reason})",
            ObjectRef("Service", name, namespace, "v1"),
            {"readyEndpoints": 0, "serviceRead": failed.reason},
        ),
        Remedy(
            "find why the webhook's pods are not ready and restore them",
            _pods_command(namespace, {}, name),
        ),
        basis=f"the EndpointSlices of Service {namespace}/{name} (the Service not read)",
    )


def _pods_command(namespace: str, service: JSON, name: str) -> str:
    selector = as_dict(as_dict(service.get("spec")).get("selector"))
    if selector:
        joined = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        return f"kubectl get pods -n {shlex.quote(namespace)} -l {shlex.quote(joined)} -o wide"
    return (
        f"kubectl get endpointslices -n {shlex.quote(namespace)} "
        f"-l kubernetes.io/service-name={shlex.quote(name)}"
    )


def backend_problem(hook: MatchedWebhook, view: ClusterView) -> BackendProblem | None:
    """Why the webhook's Service cannot answer, or None when it can (or cannot be checked)."""
    target = _service_of(hook)
    if target is None:
        return None
    namespace, name = target
    ref = ObjectRef("Service", name, namespace, "v1")
    try:
        service = reads.service(view, namespace, name)
    except ReadFailed as failed:
        return slices_problem(namespace, name, view, failed)
    if service is None:
        return BackendProblem(
            "missing",
            Evidence(
                f"Service {namespace}/{name} does not exist",
                ref,
                {"exists": False},
                about=Subject("Service", name, namespace, exists=False),
            ),
            Remedy(
                f"restore Service {namespace}/{name}: repair or reinstall the operator that "
                "serves the webhook",
                f"kubectl get deployments,pods -n {shlex.quote(namespace)}",
            ),
            confidence=CERTAIN,
            basis=f"its Service {namespace}/{name} does not exist",
        )
    if text(as_dict(service.get("spec")).get("type")) == "ExternalName":
        return None  # resolved through DNS outside the API: cannot be checked here
    slices = reads.endpoint_slices(view, namespace, name)
    if ready_endpoints(slices):
        return None
    return BackendProblem(
        "has no ready endpoints",
        Evidence(
            f"Service {namespace}/{name} has no ready endpoints",
            ref,
            {"readyEndpoints": 0, "endpointSlices": len(slices)},
            about=Subject("Service", name, namespace, exists=True),
        ),
        Remedy(
            "find why the webhook's pods are not ready and restore them",
            _pods_command(namespace, service, name),
        ),
        confidence=CERTAIN,
        basis=f"its Service {namespace}/{name} has no ready endpoints",
    )


# -- TLS: the caBundle's certificates, x509 failures quoted in conditions and events ----------

FAILED_WEBHOOK = re.compile(r'failed calling webhook "([^"]+)"')


def _renew_remedy(what: str, check: str | None) -> Remedy:
    return Remedy(
        f"renew {what} and put its CA in caBundle (cert-manager's CA injector or the "
        "operator's own rotation does both: make sure it runs, then restart the webhook's pods)",
        check,
    )


def _bundle_check(config_kind: str, config_name: str, hook: str) -> str:
    path = f'{{.webhooks[?(@.name=="{hook}")].clientConfig.caBundle}}'
    return (
        f"kubectl get {config_kind.lower()} {shlex.quote(config_name)} -o "
        f"jsonpath={shlex.quote(path)} | base64 -d | openssl x509 -noout -subject -dates"
    )


def bundle_problem(
    client_config: JSON, now: datetime, ref: ObjectRef, check: str | None
) -> BackendProblem | None:
    """The caBundle's certificate that has expired or is not yet valid at `now`: every call
    to the backend then fails TLS verification, whatever its Service shows."""
    invalid = invalid_at(ca_bundle(client_config.get("caBundle")) or [], now)
    if invalid is None:
        return None
    certificate, state = invalid
    name = f" {certificate.subject}" if certificate.subject else ""
    if state == "expired":
        when = f"expired {human_duration((now - certificate.not_after).total_seconds())} ago"
    else:
        when = f"not valid for {human_duration((certificate.not_before - now).total_seconds())}"
    valid = f"{format_time(certificate.not_before)} to {format_time(certificate.not_after)}"
    return BackendProblem(
        f"certificate {state}",
        Evidence(
            f"caBundle certificate{name} is valid from {valid}: {when}; every call fails with "
            "x509: certificate has expired or is not yet valid",
            ref,
            {
                "subject": certificate.subject,
                "notBefore": format_time(certificate.not_before),
                "notAfter": format_time(certificate.not_after),
                "state": state,
            },
        ),
        _renew_remedy("the backend's serving certificate", check),
        headline=f"TLS certificate{name} in caBundle {when}",
        basis=f"its caBundle's certificate is {state}",
    )


def x509_what(failure: str) -> str:
    """An x509 failure in a few words, for clipped summaries (the whole is in the evidence)."""
    return (
        "untrusted certificate" if "unknown authority" in failure else "certificate not valid now"
    )


def x509_headline(failure: str) -> str:
    if "unknown authority" in failure:
        return "TLS: certificate signed by unknown authority (x509)"
    return "TLS: certificate expired or not yet valid (x509)"


def quoted_problem(
    name: str, said: Iterable[tuple[str, ObjectRef | None]], check: str | None
) -> BackendProblem | None:
    """A condition or event message that quotes an x509 failure calling webhook `name`."""
    for message, ref in said:
        calls = FAILED_WEBHOOK.search(message)
        failure = x509_error(message) if calls and calls.group(1) == name else None
        if failure is None:
            continue
        untrusted = "unknown authority" in failure
        return BackendProblem(
            x509_what(failure),
            Evidence(f"calling webhook {name} failed: {failure}", ref, {"x509": failure}),
            _renew_remedy(
                "the CA in caBundle to the one that signed the serving certificate"
                if untrusted
                else "the backend's serving certificate",
                check,
            ),
            headline=x509_headline(failure),
            confidence=CERTAIN,
            basis="the API server's x509 failure calling it, quoted",
        )
    return None


def messages_about(
    namespace: str | None, uid: str, view: ClusterView
) -> list[tuple[str, ObjectRef | None]]:
    """The namespace's condition messages and the object's event messages, each with where it
    was read; what cannot be read says nothing."""
    found: list[tuple[str, ObjectRef | None]] = []
    try:
        ns = reads.namespace(view, namespace) if namespace else None
        events = reads.events_for(view, namespace, uid) if namespace and uid else []
    except ReadFailed:
        return found
    if ns is not None:
        ref = ObjectRef("Namespace", text(meta(ns).get("name")), None, "v1")
        conditions = list_of(as_dict(ns.get("status")).get("conditions"))
        found += [(text(as_dict(c).get("message")), ref) for c in conditions]
    for event in map(as_dict, events):
        involved = as_dict(event.get("involvedObject"))
        ref = ObjectRef(text(involved.get("kind")), text(involved.get("name")), namespace, None)
        found.append((text(event.get("message")), ref))
    return found


def tls_problem(
    hook: MatchedWebhook, now: datetime, said: Iterable[tuple[str, ObjectRef | None]]
) -> BackendProblem | None:
    check = _bundle_check(hook.config_kind, hook.config_name, hook.name)
    return bundle_problem(hook.client_config, now, hook.config_ref, check) or quoted_problem(
        hook.name, said, check
    )


# "conversion webhook for widgets.example.com/v1, Kind=Widget failed: ..." (apiextensions)
FAILED_CONVERSION = re.compile(
    r"conversion webhook for ([a-z0-9.-]+)/[a-z0-9]+, Kind=(\S+?) failed"
)


def conversion_tls_problem(crd: JSON, now: datetime, said: Iterable[str]) -> BackendProblem | None:
    """A CRD's conversion webhook that cannot be called over TLS: the certificate in its
    caBundle, or an x509 failure in a message naming its group and kind."""
    spec = as_dict(crd.get("spec"))
    conversion = as_dict(spec.get("conversion"))
    config = as_dict(as_dict(conversion.get("webhook")).get("clientConfig")) or as_dict(
        conversion.get("webhookClientConfig")
    )
    name = text(meta(crd).get("name"))
    ref = ObjectRef("CustomResourceDefinition", name, None, "apiextensions.k8s.io/v1")
    check = (
        f"kubectl get crd {shlex.quote(name)} -o "
        "jsonpath='{.spec.conversion.webhook.clientConfig.caBundle}' | base64 -d | "
        "openssl x509 -noout -subject -dates"
    )
    found = bundle_problem(config, now, ref, check)
    if found is not None:
        return found
    group, kind = text(spec.get("group")), text(as_dict(spec.get("names")).get("kind"))
    for message in said:
        names = FAILED_CONVERSION.search(message)
        failure = x509_error(message) if names and names.groups() == (group, kind) else None
        if failure is not None:
            return BackendProblem(
                x509_what(failure),
                Evidence(f"converting {kind}.{group} failed: {failure}", ref, {"x509": failure}),
                _renew_remedy("the conversion webhook's serving certificate", check),
                headline=x509_headline(failure),
                confidence=CERTAIN,
                basis="the API server's x509 failure converting it, quoted",
            )
    return None


def _delete_config_remedy(hook: MatchedWebhook) -> Remedy:
    return Remedy(
        f"delete {hook.config_kind} {hook.config_name} (all its webhooks go with it)",
        f"kubectl delete {hook.config_kind.lower()} {shlex.quote(hook.config_name)}",
        destructive=True,
        when=(
            "the operator that served it is gone for good and left the configuration behind; "
            "while it is meant to run, restore it instead (writes go unchecked meanwhile)"
        ),
    )


def _webhook_blocker(hook: MatchedWebhook, problem: BackendProblem, resource: Resource) -> Blocker:
    ops = "/".join(hook.operations)
    service = _service_of(hook) or ("", "")
    headline = problem.headline or f"service {'/'.join(service)} {problem.what}"
    down = "cannot be called over TLS" if problem.headline else "is down"
    return Blocker(
        type=WEBHOOK,
        summary=f"webhook {hook.name}: {headline}",
        evidence=(
            Evidence(
                f"webhook {hook.name} rejects {ops} of {resource.qualified} while its "
                f"backend {down} (failurePolicy Fail)",
                hook.config_ref,
                hook.fields(resource),
                about=Subject(hook.config_kind, hook.config_name),
            ),
            problem.evidence,
        ),
        remedy=(problem.remedy, _delete_config_remedy(hook)),
        # failurePolicy Fail: the API server rejects the write whenever the call fails
        confidence=problem.confidence,
        basis=f"failurePolicy Fail and {problem.basis}",
    )


def webhook_blockers(
    resource: Resource,
    operations: Collection[str],
    namespace: str | None,
    view: ClusterView,
    *,
    labels: Labels | None = None,
    uid: str = "",
) -> list[Blocker]:
    """`webhook` blockers: webhooks with failurePolicy Fail whose rules match resource and any of
    operations (UPDATE to remove finalizers, DELETE of content) in namespace, and whose backend is
    broken (service missing, no ready endpoints) or cannot be called over TLS (its caBundle's
    certificate out of date, an x509 failure quoted by the namespace's conditions or the events
    of object `uid`). labels: the object's labels, if known."""
    blockers: list[Blocker] = []
    said: list[tuple[str, ObjectRef | None]] | None = None
    for hook in matching_webhooks(resource, operations, namespace, view, labels=labels):
        problem = backend_problem(hook, view)
        if problem is None:
            if said is None:  # read once, and only for a webhook whose backend looks up
                said = messages_about(namespace, uid, view)
            problem = tls_problem(hook, view.now, said)
        if problem is not None:
            blockers.append(_webhook_blocker(hook, problem, resource))
    _, unread = reads.webhook_configurations_each(view)  # read already: memoised or in memory
    if unread is not None and not blockers:
        raise unread  # the kind that could not be read may hold the webhook: a check not made
    return blockers


def unverified_webhooks(hooks: Iterable[MatchedWebhook], resource: Resource) -> list[Evidence]:
    """Of matching_webhooks(...), those called by URL: their backend cannot be checked."""
    return [
        Evidence(
            f"webhook {hook.name} (url) intercepts {'/'.join(hook.operations)} of "
            f"{resource.qualified}; its backend cannot be checked from the API",
            hook.config_ref,
            {**hook.fields(resource), "url": text(hook.client_config.get("url"))},
        )
        for hook in hooks
        if _service_of(hook) is None and text(hook.client_config.get("url"))
    ]
