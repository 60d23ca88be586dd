"""Typed errors: each knows the one line a user sees and its exit status (ExitStatus, the
one list of exit codes: README.md, "Exit codes")."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Every exit code of every command."""

    OK = 0  # ran (found or not); fix: done, nothing to do, or a dry run
    ERROR = 1  # one line on stderr; a named object not found
    USAGE = 2
    STUCK = 3  # pods/ns/all --exit-code: stuck objects found; fix: refused or changed
    INTERRUPTED = 130  # Ctrl-C


class TerminatingError(Exception):
    """Base of every error the CLI reports as one line on stderr."""

    exit_code = ExitStatus.ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(TerminatingError):
    """No usable kubeconfig, unknown context, malformed file."""


class UsageError(TerminatingError):
    exit_code = ExitStatus.USAGE


class ApiError(TerminatingError):
    """The API server answered with an error status."""

    def __init__(self, message: str, status: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class Unreachable(TerminatingError):
    """The API server could not be reached (refused, DNS, timeout, TLS)."""


class Unauthorized(ApiError):
    pass


class Forbidden(ApiError):
    pass


class NotFound(ApiError):
    pass


class NotServed(NotFound):
    """A 404 about the type, not an object: the server does not serve that group, version or
    resource (an object's NotFound names the object in its Status details)."""


class Gone(ApiError):
    """A continue token or resourceVersion expired (HTTP 410)."""


class DeadlineExceeded(ApiError):
    """A check read (discovery, a per-type list, a related object) got no answer in time.

    An ApiError, so the explainers' runner turns it into a warning ("could not list X: no
    answer within 10s") like a 403, instead of letting one slow API stall or fail the run.
    """
