"""Admission policies that deny the writes deletion still needs: a ValidatingAdmissionPolicy or
MutatingAdmissionPolicy whose binding rejects the namespace controller's DELETE of content (or
a finalizer's removal), read from the denial the API server wrote. Webhooks are webhooks.py's;
a policy runs in the API server itself, so nothing is "down": it denies on purpose.

The denials' words (k8s.io/apiserver at v0.37.2, the same at v0.36.3):
- ValidatingAdmissionPolicy (pkg/admission/plugin/policy/validating/dispatcher.go Dispatch):
  "ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request: <message>"
  (without " with binding ..." when the policy itself fails to configure), wrapped by
  admission.NewForbidden as `<resource> "<name>" is forbidden: ...`;
- MutatingAdmissionPolicy, through the generic dispatcher (pkg/admission/plugin/policy/generic/
  policy_dispatcher.go PolicyError.Error): "policy '<policy>' with binding '<binding>' denied
  request: <message>" (or `policy "<policy>" denied request: ...`). DELETE runs validating
  admission only (pkg/endpoints/handlers/delete.go), so a MutatingAdmissionPolicy can deny a
  finalizer's removal (UPDATE), never the controller's deletes.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from kubectl_terminating.causes import ADMISSION_POLICY, CERTAIN
from kubectl_terminating.explain.common import text
from kubectl_terminating.explain.namespace_conditions import (
    clip,
    failure_reason,
    namespace_conditions,
    ns_ref,
)
from kubectl_terminating.explain.namespace_facts import NamespaceFacts
from kubectl_terminating.model import JSON, Blocker, Evidence, ObjectRef, Remedy, Subject

ADMISSION_API = "admissionregistration.k8s.io/v1"
VALIDATING = "ValidatingAdmissionPolicy"
MUTATING = "MutatingAdmissionPolicy"
# what follows "denied request: " up to the next error the controller joined (", <resource>
# \"name\" is forbidden" / ", policy '") or the end
_REST = r"(?P<message>.*?)(?=, \S+ \"[^\"]*\" is forbidden: |, policy '|, ValidatingAdmission|$)"
VAP_DENIAL = re.compile(
    r"ValidatingAdmissionPolicy '(?P<policy>[^']+)'(?: with binding '(?P<binding>[^']+)')? "
    r"denied request: " + _REST
)
MAP_DENIAL = re.compile(
    r"(?<![A-Za-z])policy (?:'(?P<policy>[^']+)'|\"(?P<quoted>[^\"]+)\")"
    r"(?: with binding '(?P<binding>[^']+)')? denied request: " + _REST
)


@dataclass(frozen=True)
class Denial:
    """One policy denial quoted in a message."""

    kind: str  # VALIDATING or MUTATING
    policy: str
    binding: str | None
    message: str

    @property
    def binding_kind(self) -> str:
        return f"{self.kind}Binding"

    @property
    def policy_ref(self) -> ObjectRef:
        return ObjectRef(self.kind, self.policy, None, ADMISSION_API)


def denials(message: str) -> list[Denial]:
    """Every policy denial the message quotes, once each, in order."""
    found: list[Denial] = []
    for m in VAP_DENIAL.finditer(message):
        found.append(Denial(VALIDATING, m["policy"], m["binding"], m["message"].strip()))
    for m in MAP_DENIAL.finditer(message):
        found.append(
            Denial(MUTATING, m["policy"] or m["quoted"], m["binding"], m["message"].strip())
        )
    return list(dict.fromkeys(found))


def policy_remedies(denial: Denial) -> tuple[Remedy, ...]:
    policy = shlex.quote(denial.policy)
    read = Remedy(
        f"read why {denial.kind} {denial.policy} denies (its matchConstraints and validations "
        "or mutations) and change what it checks, or what the deletion writes, so they agree; "
        "deletion then resumes by itself",
        f"kubectl get {denial.kind.lower()} {policy} -o yaml",
    )
    if denial.binding is None:
        return (read,)
    binding = shlex.quote(denial.binding)
    unbind = Remedy(
        f"LAST RESORT: delete {denial.binding_kind} {denial.binding}: the policy stops applying "
        "to every write it bound, not only this deletion's",
        f"kubectl delete {denial.binding_kind.lower()} {binding}",
        destructive=True,
        when="the policy wrongly denies the deletion's writes and cannot be fixed in time; "
        "recreate the binding once the deletion is done",
    )
    return read, unbind


def denial_blocker(denial: Denial, said: Evidence, write: str) -> Blocker:
    """A blocker for one denial; `said` is the evidence that quotes it, `write` what it denied
    ("deletes", short: the binding is in the evidence)."""
    bound = f" (binding {denial.binding})" if denial.binding else ""
    return Blocker(
        ADMISSION_POLICY,
        clip(f"{denial.kind} {denial.policy} denies {write}"),
        (
            said,
            Evidence(
                f"{denial.kind} {denial.policy}{bound} denied: {denial.message}",
                denial.policy_ref,
                {
                    "policy": denial.policy,
                    "binding": denial.binding,
                    "kind": denial.kind,
                    "message": denial.message,
                },
                about=Subject(denial.kind, denial.policy),
            ),
        ),
        policy_remedies(denial),
        # the API server's own admission wrote the denial the component quotes
        confidence=CERTAIN,
        basis=f"the API server's denial by {denial.kind} {denial.policy}, as quoted",
    )


def _failures(ns: JSON) -> Iterable[JSON]:
    return (c for c in namespace_conditions(ns) if failure_reason(c) == "ContentDeletionFailed")


def policy_denial_blockers(facts: NamespaceFacts) -> list[Blocker]:
    """Policies the namespace controller's content failure quotes denying its deletes."""
    ns = facts.ns
    blockers = []
    for condition in _failures(ns):
        message = text(condition.get("message"))
        said = Evidence(
            f"{text(condition.get('type'))}=True (ContentDeletionFailed): {message}",
            ns_ref(ns),
            condition,
        )
        # DELETE never runs mutating admission: only a validating policy denies these
        for denial in denials(message):
            if denial.kind == VALIDATING:
                blockers.append(denial_blocker(denial, said, "the namespace's deletes"))
    return blockers
