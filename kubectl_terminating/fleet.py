"""Several clusters in one run: kubeconfig contexts (`--contexts a,b,c`, `--all-contexts`)
or the hub's ClusterProfiles (`--cluster-profiles`, clusterprofiles.py)."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any

from kubectl_terminating import kinds
from kubectl_terminating.clusterprofiles import Member
from kubectl_terminating.connection import connected, error_line, read_kuberc
from kubectl_terminating.errors import ConfigError, TerminatingError
from kubectl_terminating.options import Options, Request, complete
from kubectl_terminating.run import Result, collect, problems, report

if TYPE_CHECKING:
    from kubectl_terminating.client import Client
    from kubectl_terminating.snapshot import Loaded

# Clusters read at once: each has its own pool of DEFAULT_WORKERS connections, so this
# bounds the threads and sockets of a run over a hundred contexts.
FLEET_WORKERS = 4
# How long one context may take, from its first request to its last, before the run gives
# up on it (a cluster that accepts connections and never answers must not hold the others).
CONTEXT_DEADLINE = 120.0


@dataclass
class Part:
    """What one context gave: a result (or, for dump, a bundle) or why it could not be read."""

    context: str
    request: Request | None = None
    result: Result | None = None
    bundle: tuple[dict[str, Any], list[str], int] | None = None  # dump.capture's answer
    error: str | None = None
    log: str = ""  # what its run wrote on stderr (-v request lines and totals)


def context_names(options: Options) -> list[str]:
    """--contexts in the order given (each once), or every context of the kubeconfig."""
    from kubectl_terminating.kubeconfig import kubeconfig_paths, merge_kubeconfigs

    if options.contexts is not None:
        return list(dict.fromkeys(c.strip() for c in options.contexts.split(",") if c.strip()))
    names = sorted(merge_kubeconfigs(kubeconfig_paths(options.kubeconfig))["contexts"])
    if not names:
        raise ConfigError("--all-contexts: the kubeconfig has no contexts")
    return names


def _why(error: TerminatingError) -> str:
    line = error_line(error)
    return line.removeprefix("error: ")


Work = Callable[[Request, "Client", IO[str]], Part]


def members(options: Options, err: IO[str]) -> list[Member]:
    """The clusters to read: each context named, or each ClusterProfile of the hub."""
    if options.cluster_profiles is not None:
        from kubectl_terminating.clusterprofiles import members as profiles

        return profiles(options, err)
    return [Member(name) for name in context_names(options)]


def _on_context(options: Options, member: Member, work: Work) -> Part:
    """work on one cluster, with its own connection; its errors are the Part's."""
    context = member.name
    single = replace(
        options, context=context, contexts=None, all_contexts=False, cluster_profiles=None
    )
    log = io.StringIO()
    try:
        if member.error is not None:
            raise ConfigError(member.error)
        with connected(single, log, interactive=False, resolved=member.connection) as client:
            part = work(complete(single, client.connection.namespace), client, log)
    except TerminatingError as error:  # its line is said after the context's name, once
        part = Part(context, error=_why(error).removeprefix(f'context "{context}": '))
    part.log = log.getvalue()
    return part


def _found(context: str, request: Request, result: Result) -> Part:
    for finding in result.findings:
        finding.context = context
    return Part(context, request=request, result=result)


class _Slot:
    def __init__(self, context: str) -> None:
        self.context = context
        self.started: float | None = None
        self.part: Part | None = None


def gather(
    names: Sequence[str],
    read: Callable[[str], Part],
    deadline: float = CONTEXT_DEADLINE,
    workers: int = FLEET_WORKERS,
) -> list[Part]:
    """read(name) for each name, at most `workers` at once, in the order of names. A read
    still running `deadline` seconds after it started is given up (its thread, a daemon, is
    left behind: a blocked socket read cannot be interrupted) and its slot goes to the next."""
    gate = threading.Semaphore(workers)
    changed = threading.Condition()
    slots = [_Slot(name) for name in names]

    def work(slot: _Slot) -> None:
        gate.acquire()
        with changed:
            slot.started = time.monotonic()
            changed.notify_all()  # its deadline now counts
        try:
            part = read(slot.context)
        except Exception as error:  # a bug on one context must not cost the others
            part = Part(slot.context, error=f"internal error {type(error).__name__}: {error}")
        with changed:
            if slot.part is None:  # not given up meanwhile
                slot.part = part
                gate.release()
            changed.notify_all()

    for slot in slots:
        threading.Thread(target=work, args=(slot,), name=slot.context, daemon=True).start()
    with changed:
        while True:
            now = time.monotonic()
            ends = {s: s.started + deadline for s in slots if s.part is None and s.started}
            for slot, end in ends.items():
                if now >= end:
                    slot.part = Part(slot.context, error=f"no answer within {deadline:g}s")
                    gate.release()
            if all(s.part is not None for s in slots):
                return [s.part for s in slots if s.part is not None]
            left = [end for slot, end in ends.items() if slot.part is None]
            changed.wait(max(0.0, min(left) - now) if left else None)


def run_fleet(options: Options, out: IO[str], err: IO[str]) -> int:
    """pods, ns or all over every context asked for."""
    from kubectl_terminating.live import LiveSource

    def read(request: Request, client: Client, log: IO[str]) -> Part:
        result = collect(request, LiveSource(client), log)
        return _found(client.connection.context, request, result)

    read_kuberc(err)  # broken: the one error line, before any context runs
    parts = _gathered(members(options, err), options, read)
    return report_fleet(parts, out, err)


def _gathered(found: Sequence[Member], options: Options, work: Work) -> list[Part]:
    by_name = {member.name: member for member in found}
    return gather(list(by_name), lambda name: _on_context(options, by_name[name], work))


def run_snapshots(options: Options, loaded: Loaded, out: IO[str], err: IO[str]) -> int:
    """--from-file on a `dump --contexts` file: each context's snapshot explained on its own."""
    from kubectl_terminating.snapshot import SnapshotSource

    parts = []
    for context, snapshot in loaded.contexts:
        request = complete(options, None)
        source = SnapshotSource.of(snapshot, options.now)
        parts.append(_found(context, request, collect(request, source, err)))
    return report_fleet(parts, out, err, loaded.warnings)


def _print_logs(parts: Sequence[Part], err: IO[str]) -> None:
    """What each context's run wrote on stderr (-v), each line naming its context."""
    for part in parts:
        for line in part.log.splitlines():
            print(f'context "{part.context}": {line}', file=err)


def _failures(parts: Sequence[Part], saved: Sequence[str]) -> list[str]:
    return [*saved, *(f'context "{p.context}": {p.error}' for p in parts if p.error)]


def _none_read(parts: Sequence[Part], warnings: list[str], err: IO[str]) -> int:
    from kubectl_terminating.run import print_problems

    print_problems(Result([]), err, warnings)
    print(f"error: none of the {len(parts)} contexts could be read", file=err)
    return 1


def report_fleet(
    parts: Sequence[Part], out: IO[str], err: IO[str], saved: Sequence[str] = ()
) -> int:
    """The merged findings of every context read; saved: the warnings a fleet snapshot
    recorded (contexts that could not be saved)."""
    from kubectl_terminating.render.fleet import fleet_printer

    _print_logs(parts, err)
    warnings = _failures(parts, saved)
    read = [(p, p.request, p.result) for p in parts if p.request and p.result]
    if not read:
        return _none_read(parts, warnings, err)
    for part, _, result in read:
        warnings += [f'context "{part.context}": {w}' for w in problems(result)]
    # a name is missing when no context has it (it may live in one cluster only)
    missing = [m for m in read[0][2].missing if all(m in r.missing for _, _, r in read)]
    namespaces = {r.namespace for _, _, r in read}
    merged = Result(
        [f for _, _, r in read for f in r.findings],
        missing=missing,
        namespace=namespaces.pop() if len(namespaces) == 1 else None,
    )
    request = read[0][1]
    table = kinds.by_command(request.options.kind).table
    show = fleet_printer(request, table, kinds.json_extras, out)
    return report(request, merged, out, err, show, warnings)


def dump_fleet(options: Options, path: str, err: IO[str]) -> int:
    """`dump` over several contexts: one file with a snapshot per context read."""
    from kubectl_terminating.dump import capture, save
    from kubectl_terminating.snapshot import snapshot_list

    def read(request: Request, client: Client, _log: IO[str]) -> Part:
        return Part(client.connection.context, bundle=capture(request, client, _log))

    read_kuberc(err)
    parts = _gathered(members(options, err), options, read)
    _print_logs(parts, err)
    failures = _failures(parts, ())
    done = [(p.context, p.bundle) for p in parts if p.bundle is not None]
    if not done:
        return _none_read(parts, failures, err)
    warnings = [f'context "{c}": {w}' for c, (_, found, _) in done for w in found]
    data = snapshot_list([data for _, (data, _, _) in done], failures)
    counts = (
        sum(len(data["objects"]) for _, (data, _, _) in done),
        sum(count for _, (_, _, count) in done),
    )
    save(path, data, failures + warnings, counts, err, f" in {len(done)} contexts")
    return 0
