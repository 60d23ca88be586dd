"""What the namespace controller's conditions prove that the tool's view does not show: each
name they give that no blocker covers becomes a blocker of its type (content phase only).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kubectl_terminating import reads
from kubectl_terminating.causes import (
    APISERVICE_UNAVAILABLE,
    CERTAIN,
    CONTENT_REMAINING,
    CONVERSION_WEBHOOK,
    FINALIZER,
    LIKELY,
    WEBHOOK,
    cause_of,
)
from kubectl_terminating.explain.common import as_dict, list_of, meta, text
from kubectl_terminating.explain.finalizers import (
    lease_liveness,
    owner_fact,
    owner_phrase,
    short_owner,
    try_read,
)
from kubectl_terminating.explain.knowledge import lookup
from kubectl_terminating.explain.namespace_conditions import (
    FAILED_CONVERSION,
    FAILED_WEBHOOK,
    GROUP_VERSION,
    apiservice_remedies,
    clip,
    failure_reason,
    namespace_conditions,
    ns_ref,
    still_remaining,
)
from kubectl_terminating.explain.namespace_facts import NamespaceFacts
from kubectl_terminating.model import FINALIZER_ON, JSON, Blocker, Evidence, Remedy
from kubectl_terminating.resources import (
    CONTENT_FAILURE,
    CONTENT_REMAINING_CONDITION,
    FINALIZERS_REMAINING_CONDITION,
    PODS,
)
from kubectl_terminating.view import ClusterView

# The controller's messages (pkg/controller/namespace/deletion/namespaced_resources_deleter.go):
# "Some resources are remaining: " then "<plural>.<group> has N resource instances" joined by
# ", " (the core group leaves "pods."), and "Some content in the namespace has finalizers
# remaining: " then "<finalizer> in N resource instances", sorted.
REMAINING_TYPE = re.compile(r"([a-z0-9][a-z0-9-]*)\.([a-z0-9.-]*) has (\d+) resource instances?")
REMAINING_FINALIZER = re.compile(r"(\S+) in (\d+) resource instances?")
TYPES_SAID = "Some resources are remaining: "
FINALIZERS_SAID = "Some content in the namespace has finalizers remaining: "
# The last item of a message cut in a paste: the name it carried, and its count if it got that
# far ("pods. has 2 res", "kfdef-finalizer.kfdef.apps.kubeflow.org").
CUT_TYPE = re.compile(r"([a-z0-9][a-z0-9-]*)\.([a-z0-9.-]*)(?: has (\d+) .*| has.*)?")
CUT_FINALIZER = re.compile(r"(\S+?)(?: in (\d+) .*| in.*)?")


@dataclass(frozen=True)
class Named:
    """One thing a current condition names, with the condition that names it."""

    name: str
    count: int
    condition: JSON
    # the last name of a message cut short in a paste: it may be cut too, its count unknown (0)
    cut: bool = False

    def evidence(self, ns: JSON, note: str = "") -> Evidence:
        condition = self.condition
        message = f"{text(condition.get('type'))}: {text(condition.get('message'))}"
        if self.cut:
            what = "what follows" if self.count else "its count and what follows"
            cut = f"the message is cut after {self.name}: {what} unknown"
            note = f"{note}; {cut}" if note else cut
        return Evidence(message + (f" ({note})" if note else ""), ns_ref(ns), condition)


def _named_in(
    condition: JSON, said: str, whole: re.Pattern[str], cut: re.Pattern[str]
) -> list[tuple[tuple[str, ...], bool]]:
    """The items a controller message names (each `whole`'s groups), the last one read with
    `cut` when a paste cut it short (True beside it)."""
    message = text(condition.get("message"))
    if not message.startswith(said):  # another release's words: what matches whole
        return [(groups, False) for groups in whole.findall(message)]
    items = message[len(said) :].split(", ")
    found: list[tuple[tuple[str, ...], bool]] = []
    for i, item in enumerate(items):
        if (full := whole.fullmatch(item)) is not None:
            found.append((full.groups(), False))
        elif i == len(items) - 1 and (part := cut.fullmatch(item)) is not None:
            *name, count = part.groups()
            found.append(((*name, count or "0"), True))
    return found


def _current(ns: JSON, condition_type: str) -> list[JSON]:
    return [
        c
        for c in namespace_conditions(ns)
        if c.get("type") == condition_type and c.get("status") == "True"
    ]


def remaining_types(ns: JSON) -> list[Named]:
    """Types the controller counted, as `plural` (core) or `plural.group`, with their count."""
    return [
        Named(f"{plural}.{group}" if group else plural, int(n), c, cut)
        for c in _current(ns, CONTENT_REMAINING_CONDITION)
        for (plural, group, n), cut in _named_in(c, TYPES_SAID, REMAINING_TYPE, CUT_TYPE)
    ]


def remaining_finalizers(ns: JSON) -> list[Named]:
    return [
        Named(finalizer, int(n), c, cut)
        for c in _current(ns, FINALIZERS_REMAINING_CONDITION)
        for (finalizer, n), cut in _named_in(c, FINALIZERS_SAID, REMAINING_FINALIZER, CUT_FINALIZER)
    ]


def still_there(ns: JSON) -> list[Named]:
    """Types the controller deleted and found still there, none with a finalizer ("unexpected
    items still remain"), counted as 0 (the failure gives no count)."""
    return [
        Named(name, 0, c)
        for c in _current(ns, CONTENT_FAILURE)
        for name in still_remaining(text(c.get("message")))
    ]


def unnamed_remaining(ns: JSON) -> list[JSON]:
    """Current "remaining" conditions whose message names no type and no finalizer (a message
    cut short in a paste, or an odd release): content is left all the same."""
    named = {
        (text(n.condition.get("type")), text(n.condition.get("message")))
        for n in (*remaining_types(ns), *remaining_finalizers(ns))
    }
    return [
        c
        for kind in (CONTENT_REMAINING_CONDITION, FINALIZERS_REMAINING_CONDITION)
        for c in _current(ns, kind)
        if (text(c.get("type")), text(c.get("message"))) not in named
    ]


def says_content_remains(ns: JSON) -> bool:
    return bool(remaining_types(ns) or remaining_finalizers(ns) or unnamed_remaining(ns))


def found_no_content(ns: JSON) -> bool:
    """The controller's last pass found nothing left (NamespaceContentRemaining=False).

    Not proof that no pod is left: with ordered deletion (KEP-5080, on by default from 1.33)
    the controller deletes the pods first and, while any remain within their grace period or
    with a finalizer, writes every condition's "ok" variant ("All content successfully
    removed") without counting anything (kubernetes/kubernetes#138208;
    pkg/controller/namespace/deletion/namespaced_resources_deleter.go deleteAllContent, its
    pods-first early return, at v1.36.3 and v1.37.2)."""
    return any(
        c.get("type") == CONTENT_REMAINING_CONDITION and c.get("status") == "False"
        for c in namespace_conditions(ns)
    )


def pods_listed(facts: NamespaceFacts) -> bool:
    """The listing looked at the namespace's pods (found none or some)."""
    content = facts.content
    return content is not None and PODS.qualified in content.covered


def no_content(facts: NamespaceFacts) -> bool:
    """Nothing left, as both the listing and the controller's conditions say. An empty
    listing of only partly known types (a `kubectl get` file) counts only if the
    controller's last pass found nothing either (NamespaceContentRemaining=False) and the
    file's pods were listed: from 1.33 that condition is written while pods remain."""
    content = facts.content
    if content is None or not content.empty or says_content_remains(facts.ns):
        return False
    return content.complete or (found_no_content(facts.ns) and pods_listed(facts))


def _failures(ns: JSON, reason: str) -> list[JSON]:
    return [c for c in namespace_conditions(ns) if failure_reason(c) == reason]


def failing_group_versions(ns: JSON) -> list[Named]:
    return [
        Named(gv, 1, c)
        for c in _failures(ns, "DiscoveryFailed")
        for gv in dict.fromkeys(GROUP_VERSION.findall(text(c.get("message"))))
    ]


def failing_webhooks(ns: JSON) -> list[Named]:
    return [
        Named(name, 1, c)
        for c in _failures(ns, "ContentDeletionFailed")
        for name in dict.fromkeys(FAILED_WEBHOOK.findall(text(c.get("message"))))
    ]


def failing_conversions(ns: JSON) -> list[tuple[str, str, Named]]:
    """(group, Kind, named) for every conversion webhook a content failure names."""
    return [
        (group, kind, Named(f"{group}/{version}", 1, c))
        for c in _failures(ns, "ContentDeletionFailed")
        for group, version, kind in FAILED_CONVERSION.findall(text(c.get("message")))
    ]


# -- what the tool's own view already covers ---------------------------------------------------


def _covered(found: Sequence[Blocker], of_type: Callable[[str], bool], needle: str) -> bool:
    """A blocker of a type that names finalizers names it, in its summary or as the finalizer
    it is about (pvc-protection's summary says "claim in use by pod X", not the finalizer)."""
    return any(
        of_type(b.type)
        and (
            needle in b.summary
            or any(s.kind == FINALIZER_ON and s.name == needle for s in b.subjects)
        )
        for b in found
    )


def _names_finalizer(blocker_type: str) -> bool:
    return cause_of(blocker_type).names_finalizer


def _seen(read: Callable[[], list[JSON]], names: Callable[[JSON], Iterable[str]]) -> set[str]:
    """Names of the objects a view read returns; none when it cannot be read (not in a file,
    forbidden): then only the condition can tell."""
    objects, failure = try_read(read)
    return set() if failure is not None else {n for o in objects or [] for n in names(o)}


def _webhook_names(config: JSON) -> list[str]:
    return [text(as_dict(h).get("name")) for h in list_of(config.get("webhooks"))]


def _crd_group_kind(crd: JSON) -> list[str]:
    spec = as_dict(crd.get("spec"))
    return [f"{text(as_dict(spec.get('names')).get('kind'))}.{text(spec.get('group'))}"]


def _finalizer_blocker(named: Named, ns: JSON, view: ClusterView) -> Blocker:
    owner = lookup(named.name)
    liveness = lease_liveness(owner.lease_names if owner else (), view)
    where = f"on {named.count} object{'s' if named.count != 1 else ''}"
    if named.cut and not named.count:
        where = "on objects"
    owned = (
        owner_fact(owner)
        if owner
        else Evidence(f"no known owner for {named.name}: the controller that added it removes it")
    )
    remedy = Remedy(owner.remedy) if owner else Remedy(f"restore the controller of {named.name}")
    name = text(meta(ns).get("name"))
    return Blocker(
        FINALIZER,
        clip(f"finalizer {named.name} {where} ({owner_phrase(owner, liveness.state)})"),
        (
            named.evidence(ns, "the controller's count; those objects are not in this view"),
            owned,
            *liveness.evidence,
        ),
        (
            remedy,
            Remedy(
                f"find the objects that carry it ({short_owner(owner)})",
                f"kubectl terminating all -n {shlex.quote(name)} --explain",
            ),
        ),
        # a cut message: the last name is as pasted, and may be cut too
        confidence=LIKELY if named.cut else CERTAIN,
        basis="the namespace controller's condition names the finalizer"
        + ("; its message is cut after it" if named.cut else ""),
    )


def _content_blocker(
    missing: Sequence[Named], ns: JSON, covered: frozenset[str], deleted: Sequence[Named] = ()
) -> Blocker:
    """What the controller counted (or found still there after deleting it) beyond the view;
    types it deleted are followed to their objects' own blockers (pods to their kubelet)."""
    # a type whose count the paste cut has at least one object
    total = sum(n.count or int(n.cut) for n in missing)
    at_least = "at least " if any(n.cut and not n.count for n in missing) else ""
    types = ", ".join(f"{n.name} ({n.count})" if n.count else n.name for n in missing)
    name = text(meta(ns).get("name"))
    after = {n.name for n in deleted}

    def note(named: Named) -> str:
        if named.name in covered:
            return f"{named.name}: listed just now, none left; the controller counts again soon"
        if named.name in after:
            return (
                f"{named.name}: deleted by the controller and still there with no finalizer: "
                "each waits on its own blocker (a pod on its node's kubelet), no delete was "
                "rejected; this view could not list them"
            )
        return f"{named.name}: the controller's count; this view could not list the type"

    if after and all(n.name in after for n in missing):
        summary = f"{types} still there after the controller deleted them"
    else:
        summary = (
            f"{at_least}{total} object{'s' if total != 1 else ''} left (per the controller): "
            f"{types}"
        )
    quoted = shlex.quote(name)
    pods_left = "pods" in after and any(n.name == "pods" for n in missing)
    follow = [
        Remedy(
            "see why the pods stay: each waits on its own blocker (node, runtime, volumes)",
            f"kubectl terminating pods -n {quoted} --explain",
        )
    ][: int(pods_left)]
    conditions = {id(n.condition): n for n in [*missing, *deleted]}.values()
    return Blocker(
        CONTENT_REMAINING,
        clip(summary),
        (*(n.evidence(ns) for n in conditions), *(Evidence(note(n)) for n in missing)),
        (
            *follow,
            Remedy(
                "the namespace controller deletes these by itself once nothing holds them; "
                "list them with the permissions it has",
                f"kubectl terminating all -n {quoted} --explain",
            ),
        ),
        # the controller, which deletes the content, names the types it found left (a name the
        # paste cut may be cut too)
        confidence=LIKELY if any(n.cut for n in missing) else CERTAIN,
        basis="the namespace controller's condition names the types left"
        + ("; its message is cut" if any(n.cut for n in missing) else ""),
    )


def _unnamed_blocker(conditions: Sequence[JSON], ns: JSON) -> Blocker:
    name = text(meta(ns).get("name"))
    return Blocker(
        CONTENT_REMAINING,
        "content left (per the controller; its condition names no type)",
        tuple(
            Evidence(f"{text(c.get('type'))}=True: {text(c.get('message'))}", ns_ref(ns), c)
            for c in conditions
        ),
        (
            Remedy(
                "list what is left with the permissions the controller has; what holds those "
                "objects holds the namespace",
                f"kubectl terminating all -n {shlex.quote(name)} --explain",
            ),
        ),
        # content is left, but what holds it the condition does not say
        confidence=LIKELY,
        basis="the namespace controller's condition says content is left, naming none",
    )


def _from_condition(
    blocker_type: str, summary: str, named: Named, ns: JSON, note: str, *remedies: Remedy
) -> Blocker:
    return Blocker(
        blocker_type,
        clip(summary),
        (named.evidence(ns, note),),
        remedies,
        confidence=CERTAIN,
        basis=f"the namespace controller's {text(named.condition.get('type'))} condition names it",
    )


def _apiservice_blocker(named: Named, ns: JSON) -> Blocker:
    group, _, version = named.name.partition("/")
    apiservice = f"{version}.{group}"
    return _from_condition(
        APISERVICE_UNAVAILABLE,
        f"API {named.name} unavailable: discovery fails (APIService {apiservice})",
        named,
        ns,
        "the controller's discovery failed for it",
        *apiservice_remedies(apiservice, {}),
    )


def _webhook_blocker(named: Named, ns: JSON) -> Blocker:
    return _from_condition(
        WEBHOOK,
        f"webhook {named.name} rejects the controller's deletes",
        named,
        ns,
        "the controller's delete was rejected by it",
        Remedy(
            f"restore the backend of webhook {named.name} (see its configuration's "
            "clientConfig); the namespace controller then retries by itself",
            "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations",
        ),
    )


def _conversion_blocker(group: str, kind: str, named: Named, ns: JSON) -> Blocker:
    return _from_condition(
        CONVERSION_WEBHOOK,
        f"conversion webhook of {kind}.{group} fails",
        named,
        ns,
        "the controller's lists or deletes of it failed",
        Remedy(
            f"restore the conversion webhook of the {kind} CRD (usually its operator); "
            "deletion then resumes by itself",
            f"kubectl get crd -o name | grep {shlex.quote('.' + group)}",
        ),
    )


def condition_blockers_beyond_view(
    ns: JSON,
    view: ClusterView,
    found: Sequence[Blocker],
    shown: set[str],
    covered: frozenset[str],
    listed_finalizers: set[str] | None,
) -> list[Blocker]:
    """Blockers for what the current conditions name and no blocker in `found` covers.

    shown: types the tool's listing shows objects of (or could not list); covered: every type
    it listed, empty or not; listed_finalizers: finalizers on the objects it listed, None when
    that listing is partial (a file, a type it could not list): only then do the condition's
    finalizers count beyond it, a complete listing being fresher than the last pass."""
    blockers: list[Blocker] = []
    counted = remaining_types(ns)
    deleted = [n for n in still_there(ns) if n.name not in shown]
    types = [*counted, *(n for n in deleted if n.name not in {c.name for c in counted})]
    missing = [n for n in types if n.name not in shown]
    if missing:
        blockers.append(_content_blocker(missing, ns, covered, deleted))
    unnamed = unnamed_remaining(ns)
    if (
        unnamed
        and not shown
        and not missing
        and not any(cause_of(b.type).names_content or _names_finalizer(b.type) for b in found)
    ):
        blockers.append(_unnamed_blocker(unnamed, ns))
    for named in remaining_finalizers(ns) if listed_finalizers is None else ():
        if not _covered(found, _names_finalizer, named.name):
            blockers.append(_finalizer_blocker(named, ns, view))
    # An APIService, webhook or CRD the view holds was judged by the view itself (an available
    # APIService, a DELETE-only webhook for content already deleted): only what it lacks is
    # taken from the condition.
    apiservices = _seen(lambda: reads.apiservices(view), lambda a: [text(meta(a).get("name"))])
    for named in failing_group_versions(ns):
        group, _, version = named.name.partition("/")
        if f"{version}.{group}" not in apiservices:
            blockers.append(_apiservice_blocker(named, ns))
    webhooks = _seen(lambda: reads.webhook_configurations(view), _webhook_names)
    for named in failing_webhooks(ns):
        if named.name not in webhooks and not _covered(found, WEBHOOK.__eq__, named.name):
            blockers.append(_webhook_blocker(named, ns))
    crds = _seen(lambda: reads.crds(view), _crd_group_kind)
    for group, kind, named in failing_conversions(ns):
        if f"{kind}.{group}" not in crds:
            blockers.append(_conversion_blocker(group, kind, named, ns))
    return blockers
