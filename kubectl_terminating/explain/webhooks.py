"""Admission webhooks that would reject the writes deletion still needs.

A webhook with `failurePolicy: Fail` whose backend is down rejects every request it intercepts.
When it intercepts the UPDATE that removes a finalizer (or the DELETE of remaining content), the
object can never go. Only what the API shows is checked: the webhook's Service is missing or has
no ready endpoints. `clientConfig.url` webhooks point outside the cluster and cannot be checked;
`unverified_webhooks` lists them for the "nothing found" case.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_terminating import reads
from kubectl_terminating.causes import WEBHOOK
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy, Subject
from kubectl_terminating.resources import Resource
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
    )


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
    return Blocker(
        type=WEBHOOK,
        summary=f"webhook {hook.name}: service {'/'.join(service)} {problem.what}",
        evidence=(
            Evidence(
                f"webhook {hook.name} rejects {ops} of {resource.qualified} while its "
                "backend is down (failurePolicy Fail)",
                hook.config_ref,
                hook.fields(resource),
                about=Subject(hook.config_kind, hook.config_name),
            ),
            problem.evidence,
        ),
        remedy=(problem.remedy, _delete_config_remedy(hook)),
    )


def webhook_blockers(
    resource: Resource,
    operations: Collection[str],
    namespace: str | None,
    view: ClusterView,
    *,
    labels: Labels | None = None,
) -> list[Blocker]:
    """`webhook` blockers: webhooks with failurePolicy Fail whose rules match resource and any of
    operations (UPDATE to remove finalizers, DELETE of content) in namespace, and whose backend is
    broken (service missing, no ready endpoints). labels: the object's labels, if known."""
    blockers: list[Blocker] = []
    for hook in matching_webhooks(resource, operations, namespace, view, labels=labels):
        problem = backend_problem(hook, view)
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
