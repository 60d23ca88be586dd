"""The plan's digest: what `--confirm` binds the operator's consent to."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from kubectl_terminating.fix.observe import Planned, canonical

DIGEST_LENGTH = 16  # hex characters: short enough to type, long enough not to collide


def digest(actions: Sequence[Planned]) -> str:
    payload = canonical([a.identity() for a in actions])
    return hashlib.sha256(payload.encode()).hexdigest()[:DIGEST_LENGTH]
