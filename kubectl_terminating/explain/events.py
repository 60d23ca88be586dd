"""Events: which ones are about an object, how old, and the evidence one gives.

Events are matched by their object's uid (the server indexes involvedObject.uid). A file is
read as pasted: `kubectl describe` prints events without any uid, and a thin paste may leave
the object's own uid out, so there an event that names the object (kind, namespace, name) and
no other uid is the object's too.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubectl_terminating import reads
from kubectl_terminating.catalogue import evidence as catalogue
from kubectl_terminating.explain.common import as_dict, meta, text
from kubectl_terminating.model import JSON, Evidence, ObjectRef
from kubectl_terminating.view import ClusterView, in_memory


def involved(event: JSON) -> JSON:
    return as_dict(event.get("involvedObject") or event.get("regarding"))


def events_about(view: ClusterView, kind: str, namespace: str, name: str, uid: str) -> list[JSON]:
    """The events about one object: by uid; in a file also those that name it without a uid
    (or, for an object pasted without uid, with any). Raises ReadFailed as the reads do."""
    where = namespace or None  # a cluster-scoped object's events are in `default`
    found = [as_dict(e) for e in reads.events_for(view, where, uid)] if uid else []
    if not in_memory(view) or not name:
        return found
    seen = {id(e) for e in found}
    for event in map(as_dict, reads.events_named(view, where, kind, name)):
        other = text(involved(event).get("uid"))
        if id(event) not in seen and (not uid or not other):
            found.append(event)
    return found


def event_time(event: JSON) -> str:
    series = as_dict(event.get("series"))
    for value in (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
    ):
        if text(value):
            return text(value)
    return ""


def event_evidence(event: JSON) -> Evidence:
    reason, message = text(event.get("reason")), text(event.get("message"))
    clipped = message if len(message) <= 200 else message[:197] + "..."
    m = meta(event)
    count = event.get("count")
    return Evidence(
        f"event {reason}: {clipped}",
        ObjectRef("Event", text(m.get("name")), text(m.get("namespace")) or None, "v1"),
        {
            "reason": reason,
            "message": message,
            "count": count if isinstance(count, int) else None,
            "lastTimestamp": event_time(event) or None,
        },
    )


def newest_event(
    events: list[JSON], reasons: Iterable[str] = (), phrases: Iterable[str] = ()
) -> JSON | None:
    """The newest event with one of reasons, or whose message contains one of phrases."""
    reasons, phrases = set(reasons), [p.lower() for p in phrases]
    found = [
        e
        for e in events
        if text(e.get("reason")) in reasons
        or any(p in text(e.get("message")).lower() for p in phrases)
    ]
    return max(found, key=event_time) if found else None


def newest_saying(events: list[JSON], keys: Iterable[str]) -> JSON | None:
    """The newest event that says what one of the catalogue's entries `keys` reads."""
    keys = tuple(keys)
    said = [
        e
        for e in events
        if any(catalogue.matches(k, text(e.get("reason")), text(e.get("message"))) for k in keys)
    ]
    return max(said, key=event_time) if said else None
