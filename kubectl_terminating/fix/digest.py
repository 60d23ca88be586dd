"""The plan's digest: what `--confirm` binds the operator's consent to.

It covers every write the plan would make: the target, its uid and resourceVersion, the action,
the exact request, the blocker it answers and the facts read to prove it. Anything that changes
one of them (the object is edited, a Lease appears, a Service comes back) changes the digest,
so a digest copied from an earlier dry run no longer matches.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from kubectl_terminating.fix.observe import Planned, canonical

DIGEST_LENGTH = 16  # hex characters: short enough to type, long enough not to collide


def digest(actions: Sequence[Planned]) -> str:
    payload = canonical([a.identity() for a in actions])
    return hashlib.sha256(payload.encode()).hexdigest()[:DIGEST_LENGTH]
