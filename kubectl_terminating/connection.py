"""Connecting to the cluster the kubeconfig flags select, and saying what went wrong."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

from kubectl_terminating.errors import (
    ApiError,
    ExitStatus,
    TerminatingError,
    Unauthorized,
    UsageError,
)
from kubectl_terminating.options import Options
from kubectl_terminating.terminal import safe

if TYPE_CHECKING:
    from kubectl_terminating.client import Client
    from kubectl_terminating.kubeconfig import Connection

EXIT_INTERRUPTED = ExitStatus.INTERRUPTED


def error_line(error: TerminatingError) -> str:
    """The one line kubectl would print for this error."""
    if isinstance(error, ApiError) and error.reason and not isinstance(error, Unauthorized):
        return f"Error from server ({error.reason}): {safe(error.message)}"
    return f"error: {safe(error.message)}"


def guarded(body: Callable[[], int], err: IO[str]) -> int:
    """body's exit code; an error is its one line on err and its exit code."""
    try:
        return body()
    except TerminatingError as error:
        print(error_line(error), file=err)
        return error.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def read_kuberc(err: IO[str]) -> None:
    """The user's kuberc read now, as kubectl reads it at start (credential_policy.py): a
    broken one is the run's one error line and its warnings are said once, before any
    context may run an exec credential plugin."""
    from kubectl_terminating.credential_policy import load

    load(warn=lambda line: print(f"Warning: {safe(line)}", file=err))


def connect(
    options: Options,
    err: IO[str],
    interactive: bool = True,
    resolved: Connection | None = None,
) -> Client:
    """A client for the cluster the kubeconfig flags select (nothing is sent yet);
    interactive: whether its exec credential plugin may prompt on the terminal; resolved:
    a connection built elsewhere (a ClusterProfile's), used instead of the kubeconfig's."""
    import logging

    from kubectl_terminating.client import Client, parse_duration
    from kubectl_terminating.kubeconfig import Selection, resolve

    root = logging.getLogger()
    if not root.handlers:  # a library's log record never reaches stderr (logging.lastResort)
        root.addHandler(logging.NullHandler())

    read_kuberc(err)
    try:
        timeout = parse_duration(options.request_timeout)
    except ValueError as error:
        raise UsageError(str(error)) from None
    connection = resolved or resolve(
        Selection(
            kubeconfig=options.kubeconfig,
            context=options.context,
            cluster=options.cluster,
            user=options.user,
            namespace=options.namespace,
            overrides=options.overrides,
        )
    )
    connection.interactive = interactive
    return Client(connection, request_timeout=timeout, verbosity=options.verbosity, log=err)


def report_stats(options: Options, client: Client, err: IO[str]) -> None:
    """With -v 1 or more: the run's request totals on err."""
    if options.verbosity >= 1:
        s = client.stats
        print(
            f"requests: {s.requests}, bytes: {s.bytes}, retries: {s.retries}, "
            f"request time: {s.seconds:.2f}s",
            file=err,
        )


@contextmanager
def connected(
    options: Options,
    err: IO[str],
    interactive: bool = True,
    resolved: Connection | None = None,
) -> Iterator[Client]:
    """A client for the block; its request totals are reported when the block ends."""
    client = connect(options, err, interactive, resolved)
    try:
        yield client
    finally:
        report_stats(options, client, err)
