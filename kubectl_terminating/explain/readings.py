"""The generic reader: what an object's events and status say, read through the catalogue's
evidence entries (catalogue/evidence.py), as blockers.

A cause module that reads an entry with more context (the volume trace, the node check) runs
first and says it better; this reader says what the catalogue knows where no cause before it
said a blocker of that type: a pasted pod without node or status, a Service whose load balancer
cannot be deleted. So a new event-derived cause is one catalogue entry (and a row in causes.py
when its type is new): docs/catalogue.md.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from datetime import timedelta

from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.causes import CERTAIN, LIKELY, cause_of, weaker
from kubectl_terminating.explain.common import Facts, as_dict, meta, ref_of, text
from kubectl_terminating.explain.events import event_evidence, event_time, events_about
from kubectl_terminating.model import JSON, Blocker, Evidence, Remedy
from kubectl_terminating.timeutil import format_time, parse_time


def _requested(obj: JSON) -> str:
    """When the deletion was asked for (deletionTimestamp less its grace period), RFC 3339."""
    m = meta(obj)
    deadline = parse_time(text(m.get("deletionTimestamp")))
    grace = m.get("deletionGracePeriodSeconds")
    if deadline is None:
        return ""
    return format_time(deadline - timedelta(seconds=grace if isinstance(grace, int) else 0))


def _before_deletion(event: JSON, obj: JSON) -> bool:
    """The event's last sighting is older than the deletion request: not about this deletion."""
    when, asked = parse_time(event_time(event)), parse_time(_requested(obj))
    return when is not None and asked is not None and when < asked


def _blocker(facts: Facts, reading: catalogue.Reading, said: Evidence, stale: bool) -> Blocker:
    entry = reading.entry
    confidence = weaker(entry.confidence, LIKELY) if stale else entry.confidence
    basis = f"{said.message.split(':', 1)[0]}: {entry.meaning}"
    if stale:
        basis += "; said before the deletion was requested"
    evidence = [said, Evidence(f"meaning: {entry.meaning}", ref_of(facts.obj, facts.finding.kind))]
    if entry.finalizer and entry.finalizer not in facts.finding.finalizers:
        evidence.append(
            Evidence(
                f"finalizer {entry.finalizer} is implied by the event; the object's finalizers "
                + ("are not in the file" if not facts.finding.finalizers else "do not show it"),
                fields={"finalizer": entry.finalizer},
            )
        )
    remedies = tuple(Remedy(r.action, r.command or None) for r in entry.remedy)
    target = shlex.quote(facts.finding.name)
    namespace = facts.finding.namespace
    describe = f"kubectl describe {facts.finding.kind.lower()} {target}" + (
        f" -n {shlex.quote(namespace)}" if namespace else ""
    )
    return Blocker(
        entry.proves,
        reading.summary(),
        tuple(evidence),
        (*remedies, Remedy("read the object's events and state", describe)),
        confidence=confidence,
        basis=basis,
    )


def reading_blockers(facts: Facts, events: list[JSON], readers_looked: bool) -> list[Blocker]:
    """A blocker for each catalogue entry the object's events or status match, where no cause
    before this one said a blocker of its type (newest event first; one per entry).
    readers_looked: the modules that read an entry with more context (its `reader`) could look
    (a pod placed on its node); what they left unsaid, the evidence around it contradicted."""
    finding = facts.finding
    if any(cause_of(b.type).not_stuck for b in finding.blockers):
        return []
    kind = finding.kind
    said: dict[str, tuple[catalogue.Reading, Blocker]] = {}
    status = as_dict(facts.obj.get("status"))
    reason, message = text(status.get("reason")), text(status.get("message"))
    if reason or message:
        reading = catalogue.read_status(reason, message, kind)
        if reading is not None and not (readers_looked and reading.entry.reader):
            evidence = Evidence(
                f"status.reason {reason}: {message}" if message else f"status.reason {reason}",
                ref_of(facts.obj, kind),
                {"reason": reason or None, "message": message or None},
            )
            said[reading.entry.key] = reading, _blocker(facts, reading, evidence, stale=False)
    for event in sorted(events, key=event_time, reverse=True):
        reading = catalogue.read_event(text(event.get("reason")), text(event.get("message")), kind)
        if reading is None or reading.entry.key in said:
            continue
        if readers_looked and reading.entry.reader:
            continue
        stale = _before_deletion(event, facts.obj)
        said[reading.entry.key] = reading, _blocker(facts, reading, event_evidence(event), stale)
    have = {b.type for b in finding.blockers}
    found: list[Blocker] = []
    for reading, blocker in said.values():
        if blocker.type not in have:
            have.add(blocker.type)
            found.append(blocker)
        else:  # a cause above said it: the component's own word is evidence on that blocker
            _add_to(finding.blockers, blocker, reading.entry.finalizer)
    return found


def _add_to(blockers: list[Blocker], said: Blocker, implied: str) -> None:
    """The reading's evidence and remedies on the first blocker of its type that has not got
    them (its summary names the same finalizer, where the reading implies one)."""
    for i, blocker in enumerate(blockers):
        if blocker.type != said.type or said.evidence[0] in blocker.evidence:
            continue
        if implied and implied not in blocker.summary:
            continue
        remedies = tuple(r for r in said.remedy if r not in blocker.remedy)
        # the owner's own word names why the finalizer stays: the headline says that
        summary = said.summary if implied and said.confidence == CERTAIN else blocker.summary
        blockers[i] = replace(
            blocker,
            summary=summary,
            evidence=(*blocker.evidence, *said.evidence[:2]),
            remedy=(*remedies[:-1], *blocker.remedy),  # the last is a plain describe
        )
        return


def object_events(facts: Facts) -> list[JSON]:
    """The events of an object whose kind some catalogue entry reads (no read for others)."""
    finding = facts.finding
    if finding.kind not in catalogue.kinds_read():
        return []
    return events_about(
        facts.view, finding.kind, finding.namespace or "", finding.name, finding.uid or ""
    )
