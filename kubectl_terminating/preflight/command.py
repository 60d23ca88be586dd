"""`kubectl terminating preflight`: read the target, build the report on the live cluster,
print it, exit 0 clear / 3 blocked / 4 undecided."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import IO

from kubectl_terminating.connection import guarded
from kubectl_terminating.errors import UsageError
from kubectl_terminating.options import Options
from kubectl_terminating.preflight.api import Target
from kubectl_terminating.preflight.reading import live_report, snapshot_report
from kubectl_terminating.preflight.render import render
from kubectl_terminating.terminal import safe


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
            if self.from_file:  # the release lives in the cluster
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


def run_preflight(
    options: Options, flags: PreflightFlags, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    stdout, stderr = out or sys.stdout, err or sys.stderr
    return guarded(lambda: _run(options, flags, stdout, stderr), stderr)


def _run(options: Options, flags: PreflightFlags, out: IO[str], err: IO[str]) -> int:
    from kubectl_terminating.preflight.sources import read_manifests

    target = flags.target()
    manifest = read_manifests(flags.filenames) if flags.filenames else ()
    if options.fleet:
        from kubectl_terminating.preflight.contexts import exit_code, judged, render_all

        results = judged(options, target, manifest, err)
        out.write(render_all(results, flags.output, flags.explain))
        return exit_code(results)
    if flags.from_file:
        report = snapshot_report(options, flags.from_file, replace(target, manifest=manifest))
    else:
        report = live_report(options, target, manifest, err)
    if flags.output in ("json", "yaml"):  # the text report lists them itself
        for line in report.unchecked:
            print(f"Warning: {safe(line)}", file=err)
    out.write(render(report, flags.output, flags.explain))
    return int(report.exit_code)
