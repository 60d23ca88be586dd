"""`kubectl terminating preflight`: read the target, build the report on the live cluster,
print it, exit 0 clear / 3 blocked / 4 undecided."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import IO

from kubectl_terminating.connection import connected, guarded
from kubectl_terminating.errors import UsageError
from kubectl_terminating.model import JSON
from kubectl_terminating.options import Options
from kubectl_terminating.preflight.api import Target, build_report
from kubectl_terminating.preflight.render import render
from kubectl_terminating.preflight.report import Report
from kubectl_terminating.terminal import safe

FIRST_ORDERED_MINOR = 33  # KEP-5080: ordered namespace deletion on by default


@dataclass(frozen=True)
class PreflightFlags:
    words: tuple[str, ...]
    filenames: tuple[str, ...]
    cascade: str
    order: str | None
    fail_on: str
    output: str | None
    explain: bool
    from_file: str | None = None

    def target(self) -> Target:
        """The target without the cluster: `ns NAME...`, `helm RELEASE`, TYPE/NAME..., -f."""
        words = self.words
        head = words[0].lower() if words else ""
        if self.explain and self.output in ("json", "yaml"):
            raise UsageError(f"--explain prints text; -o {self.output} already has every detail")
        if head in ("ns", "namespace", "namespaces"):
            if not words[1:] or self.filenames:
                raise UsageError("preflight ns takes one or more namespace names (and no -f)")
            return Target(namespaces=words[1:], cascade=self.cascade, fail_on=self.fail_on)
        if head == "helm":
            if len(words) != 2 or self.filenames:
                raise UsageError("preflight helm takes exactly one release name (and no -f)")
            if self.from_file:
                raise UsageError(
                    "preflight helm reads the release from the cluster; with --from-file use "
                    "helm get manifest RELEASE | kubectl terminating preflight -f - --from-file ..."
                )
            return Target(
                release=words[1],
                deleter=self.order or "helm",
                cascade=self.cascade,
                fail_on=self.fail_on,
            )
        if not words and not self.filenames:
            raise UsageError(
                "say what would be deleted: ns NAME..., TYPE/NAME..., -f PATH or helm RELEASE"
            )
        return Target(
            objects=words,
            deleter=self.order or "kubectl",
            cascade=self.cascade,
            fail_on=self.fail_on,
        )


def _minor(version: dict[str, object]) -> int | None:
    digits = "".join(c for c in str(version.get("minor", "")) if c.isdigit())
    return int(digits) if digits else None


def run_preflight(
    options: Options, flags: PreflightFlags, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    stdout, stderr = out or sys.stdout, err or sys.stderr
    return guarded(lambda: _run(options, flags, stdout, stderr), stderr)


def _run(options: Options, flags: PreflightFlags, out: IO[str], err: IO[str]) -> int:
    from kubectl_terminating.preflight.sources import read_manifests

    target = flags.target()
    manifest = read_manifests(flags.filenames) if flags.filenames else ()
    if flags.from_file:
        report = _from_file(options, flags.from_file, replace(target, manifest=manifest))
    else:
        report = _live(options, target, manifest, err)
    if flags.output in ("json", "yaml"):  # the text report lists them itself
        for line in report.unchecked:
            print(f"Warning: {safe(line)}", file=err)
    out.write(render(report, flags.output, flags.explain))
    return int(report.exit_code)


def _from_file(options: Options, path: str, target: Target) -> Report:
    """A snapshot (`kubectl get -o json` of what the deletion touches, a dump): what the file
    lacks is a check not made. Its server's version is unknown: no `certain` from ordered
    namespace deletion."""
    from kubectl_terminating.snapshot import SnapshotSource

    source = SnapshotSource.open(path, options.now, options.max_file_bytes)
    target = replace(
        target, namespace=options.namespace or "default", ordered_namespace_deletion=False
    )
    report = build_report(source.view, target)
    report.unchecked = list(dict.fromkeys([*source.loaded.warnings, *report.unchecked]))
    return report


def _live(options: Options, target: Target, manifest: tuple[JSON, ...], err: IO[str]) -> Report:
    from kubectl_terminating.live import LiveView
    from kubectl_terminating.preflight.sources import helm_release_manifest

    with connected(options, err) as client:
        namespace = options.namespace or client.connection.namespace or "default"
        minor = _minor(client.get("/version"))
        if target.release:
            manifest = helm_release_manifest(client, target.release, namespace)
        target = replace(
            target,
            manifest=manifest,
            namespace=namespace,
            ordered_namespace_deletion=minor is None or minor >= FIRST_ORDERED_MINOR,
        )
        return build_report(LiveView(client), target)
