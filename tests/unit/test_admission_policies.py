"""ValidatingAdmissionPolicy and MutatingAdmissionPolicy denials of the writes deletion needs,
read from the denial the API server wrote, beside webhooks: the policy and its binding named.

The denials' words are the API server's (k8s.io/apiserver pkg/admission/plugin/policy/
validating/dispatcher.go and generic/policy_dispatcher.go at v0.37.2), as the namespace
controller quotes them in its content failure condition.
"""

from __future__ import annotations

from kubectl_terminating import causes
from kubectl_terminating.explain.admission_policy import MUTATING, VALIDATING, Denial, denials
from kubectl_terminating.fix.plan import Refusal, plan
from kubectl_terminating.model import JSON
from kubectl_terminating.view import Discovery
from tests.unit.builders import explain_namespace_among, messages

VAP_DENIED = (
    "configmaps \"settings\" is forbidden: ValidatingAdmissionPolicy 'keep-settings' with "
    "binding 'keep-settings-binding' denied request: settings are kept"
)
MAP_DENIED = (
    "policy 'stamp-owner' with binding 'stamp-owner-binding' denied request: expression "
    "'object.metadata.labels.owner' resulted in error: no such key: owner"
)
CONDITION = {
    "type": "NamespaceDeletionContentFailure",
    "status": "True",
    "reason": "ContentDeletionFailed",
    "message": f"Failed to delete all resource types, 1 remaining: {VAP_DENIED}",
}


def namespace(*conditions: JSON) -> JSON:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": "shop", "uid": "u-1", "deletionTimestamp": "2026-03-01T10:00:00Z"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating", "conditions": list(conditions)},
    }


def test_the_denials_name_policy_and_binding() -> None:
    assert denials(VAP_DENIED) == [
        Denial(VALIDATING, "keep-settings", "keep-settings-binding", "settings are kept")
    ]
    assert denials(MAP_DENIED) == [
        Denial(
            MUTATING,
            "stamp-owner",
            "stamp-owner-binding",
            "expression 'object.metadata.labels.owner' resulted in error: no such key: owner",
        )
    ]
    # a policy that fails to configure has no binding; the generic form quotes its name
    assert denials('policy "p" denied request: failed to configure policy: x') == [
        Denial(MUTATING, "p", None, "failed to configure policy: x")
    ]
    # two joined denials are two, each with its own message
    both = denials(f"Failed to delete all resource types, 2 remaining: {VAP_DENIED}, {VAP_DENIED}")
    assert len(both) == 1 and both[0].message == "settings are kept"
    assert denials('failed calling webhook "w.example.com": Post ...') == []


def test_a_policy_denying_the_controllers_deletes_holds_the_namespace() -> None:
    finding = explain_namespace_among(
        namespace(CONDITION), [], discovery=Discovery(resources=[], complete=False)
    )
    main = finding.main_blocker
    assert main is not None and main.type == causes.ADMISSION_POLICY
    assert main.summary == "ValidatingAdmissionPolicy keep-settings denies the namespace's deletes"
    assert main.confidence == causes.CERTAIN
    said = "ValidatingAdmissionPolicy keep-settings (binding keep-settings-binding) denied: "
    assert said + "settings are kept" in messages(main)
    assert [(s.kind, s.name) for s in main.subjects] == [
        ("ValidatingAdmissionPolicy", "keep-settings")
    ]
    read, unbind = main.remedy
    assert read.command == "kubectl get validatingadmissionpolicy keep-settings -o yaml"
    assert not read.destructive
    assert unbind.destructive
    assert unbind.command == (
        "kubectl delete validatingadmissionpolicybinding keep-settings-binding"
    )
    steps = [s for section in plan([finding]) for s in section.steps]
    refused = [s for s in steps if isinstance(s, Refusal) and s.blocker is main]
    assert refused and "on purpose" in refused[0].reason
