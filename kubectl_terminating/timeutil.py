"""Kubernetes timestamps and kubectl's human durations."""

from __future__ import annotations

from datetime import datetime, timezone


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp as the API writes it; None for anything unparsable."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def format_time(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds_since(value: object, now: datetime) -> int | None:
    parsed = parse_time(value)
    if parsed is None:
        return None
    return int((now - parsed).total_seconds())


def human_duration(seconds: float | None) -> str:
    """kubectl's duration.HumanDuration (apimachinery/pkg/util/duration)."""
    if seconds is None:
        return "<unknown>"
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return _pair(minutes, "m", s % 60, "s")
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return _pair(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return _pair(hours // 24, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        return _pair(hours // 24 // 365, "y", hours // 24 % 365, "d")
    return f"{hours // 24 // 365}y"


def _pair(big: int, unit: str, rest: int, rest_unit: str) -> str:
    """`5m30s`, or `5m` when the rest is 0."""
    return f"{big}{unit}{rest}{rest_unit}" if rest else f"{big}{unit}"
