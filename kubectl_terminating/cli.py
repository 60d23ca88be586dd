"""Command line: kubectl-style flags in, an Options object out; nothing else lives here.

Imports stay light: `--help` and `--version` must not load the HTTP stack or the explainers.
"""

from __future__ import annotations

import gc
import os
import shlex
import sys
import warnings
from collections.abc import Callable
from dataclasses import Field, fields
from typing import Any, ClassVar, TypeVar

import click
from click.core import ParameterSource

from kubectl_terminating import __version__
from kubectl_terminating.catalogue import KNOWLEDGE_ENV
from kubectl_terminating.errors import TerminatingError, UsageError
from kubectl_terminating.fix.flags import FIX_KINDS, FIX_OPTIONS, FixOptions
from kubectl_terminating.kubeconfig import Flag, Overrides
from kubectl_terminating.options import OUTPUTS, Options

F = TypeVar("F", bound=Callable[..., Any])
PROG = "kubectl terminating"
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EXAMPLES = """\b
Examples:
  # every terminating pod in every namespace, how overdue, and what holds it
  kubectl terminating pods -A

\b
  # why one pod is stuck, with evidence and what to do (safest first)
  kubectl terminating pods -n shop web-0 --explain

\b
  # every terminating namespace, then why foo is stuck
  kubectl terminating ns
  kubectl terminating ns foo --explain

\b
  # every terminating object of any kind
  kubectl terminating all -A
"""


class AliasedGroup(click.Group):
    """Subcommands answer to kubectl's short names too (ns, po)."""

    aliases: ClassVar[dict[str, str]] = {
        "ns": "namespaces",
        "namespace": "namespaces",
        "pod": "pods",
        "po": "pods",
    }

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, self.aliases.get(cmd_name, cmd_name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        _, command, rest = super().resolve_command(ctx, args)
        return (command.name if command else None), command, rest


def with_options(*groups: list[Callable[[F], F]]) -> Callable[[F], F]:
    """Apply groups of click options in the order they are listed in --help."""

    def decorate(function: F) -> F:
        for option in reversed([o for group in groups for o in group]):
            function = option(function)
        return function

    return decorate


SCOPE_OPTIONS = [
    click.option("-A", "--all-namespaces", is_flag=True, help="Look in every namespace."),
    click.option("-l", "--selector", metavar="SELECTOR", help="Label selector, e.g. app=web."),
]

OUTPUT_OPTIONS = [
    click.option(
        "-o",
        "--output",
        type=click.Choice(OUTPUTS),
        help="Output format: wide, json, yaml or name (default: a table).",
    ),
    click.option("--explain", is_flag=True, help="Every blocker with evidence and remedies."),
    click.option(
        "--summary",
        is_flag=True,
        help="Only the count of objects per cause (printed after any table longer than "
        "20 rows; -o json has it as `summary`).",
    ),
    click.option("--no-headers", is_flag=True, help="Omit the table headers."),
    click.option(
        "--exit-code",
        is_flag=True,
        help="Exit 3 when stuck objects were found (for scripts and CI).",
    ),
    click.option(
        "--from-file",
        metavar="PATH",
        help="Explain a snapshot instead of a live cluster: a `dump` bundle, `kubectl get -o "
        "json` output or a `kubectl cluster-info dump` folder (all namespaces unless -n).",
    ),
    click.option(
        "--now",
        is_flag=True,
        help="With --from-file: compute ages from the current time, not the capture time.",
    ),
    click.option(
        "--max-file-size",
        metavar="SIZE",
        help="With --from-file: the most the file (or folder) may expand to, as a quantity "
        "(800M, 1Gi) or MB; beyond it the file is refused (default: 500 MB).",
    ),
]

# kubectl get's watch flags, same help texts (watch.py)
WATCH_OPTIONS = [
    click.option(
        "-w",
        "--watch",
        is_flag=True,
        help="After listing/getting the requested object, watch for changes: a line when an "
        "object starts terminating, when what holds it changes and when it is gone.",
    ),
    click.option(
        "--watch-only",
        is_flag=True,
        help="Watch for changes to the requested object(s), without listing/getting first.",
    ),
    click.option(
        "--output-watch-events",
        is_flag=True,
        help="Output watch event objects when --watch or --watch-only is used (with -o json). "
        "Existing objects are output as initial ADDED events.",
    ),
]

# Several clusters in one run (fleet.py): global like --context, which they replace.
FLEET_OPTIONS = [
    click.option(
        "--contexts",
        metavar="NAME,...",
        help="Comma-separated names of kubeconfig contexts to read, concurrently, each with its "
        "own credentials (pods, namespaces, all, dump).",
    ),
    click.option(
        "--all-contexts",
        is_flag=True,
        help="Read every context of the kubeconfig, concurrently, each with its own "
        "credentials (pods, namespaces, all, dump).",
    ),
    click.option(
        "--cluster-profiles",
        metavar="[=SELECTOR]",
        help="Read every cluster of the hub's inventory (the ClusterProfiles in the current "
        "context's namespace, those matching the label selector given after `=`), "
        "concurrently, each with its access provider's exec credential plugin.",
    ),
    click.option(
        "--clusterprofile-provider-file",
        metavar="PATH",
        help="The JSON file naming the exec credential plugin of each ClusterProfile access "
        "provider (as the cluster-inventory-api's --clusterprofile-provider-file).",
    ),
]

# pflag's NoOptDefVal: these take a value only after `=`; alone, they get this one
OPTIONAL_VALUES = {"--cluster-profiles": ""}

NODE_EVIDENCE_OPTIONS = [
    click.option(
        "--node-evidence",
        is_flag=True,
        help="Also read the kubelet's own word about each stuck pod whose blocker is on its "
        "node (log lines about the pod, stats/summary, the kubelet's pods), GET only. In a pod: "
        "from the kubelet itself, with `get` on nodes/log, nodes/stats and nodes/pods. "
        "Elsewhere: through the API server's node proxy, with `get nodes/proxy`, which is "
        "exec-equivalent: it lets a user run commands in any container of the node. Off by "
        "default.",
    ),
]


def _connection_option(field: Field[Any]) -> Callable[[F], F]:
    flag: Flag = field.metadata["flag"]
    if isinstance(field.default, bool):
        return click.option(*flag.opts, field.name, is_flag=True, help=flag.help)
    multiple = isinstance(field.default, tuple)
    return click.option(
        *flag.opts, field.name, metavar=flag.metavar, multiple=multiple, help=flag.help
    )


# --server, --token, --as, ...: declared once, as the fields of kubeconfig.Overrides
CONNECTION_OPTIONS = [_connection_option(f) for f in fields(Overrides)]


# kubectl's global flags (k8s.io/cli-runtime ConfigFlags, same help texts): every command
# takes them, before or after its name (see GlobalGroup).
GLOBAL_OPTIONS = [
    click.option(
        "--kubeconfig", metavar="PATH", help="Path to the kubeconfig file to use for CLI requests."
    ),
    click.option("--context", metavar="NAME", help="The name of the kubeconfig context to use."),
    *FLEET_OPTIONS,
    click.option("--cluster", metavar="NAME", help="The name of the kubeconfig cluster to use."),
    click.option("--user", metavar="NAME", help="The name of the kubeconfig user to use."),
    click.option(
        "-n",
        "--namespace",
        metavar="NS",
        help="If present, the namespace scope for this CLI request (default: the context's).",
    ),
    *CONNECTION_OPTIONS,
    click.option(
        "--request-timeout",
        default="0",
        metavar="DURATION",
        help="The length of time to wait before giving up on a single server request. Non-zero "
        "values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero "
        "means don't timeout requests.",
    ),
    click.option(
        "-v",
        "--v",
        "verbosity",
        type=int,
        default=0,
        metavar="N",
        help="number for the log level verbosity: 1 request totals, 6 every request, the proxy "
        "and who is impersonated (never a secret).",
    ),
    click.option(
        "--knowledge-file",
        "knowledge_files",
        multiple=True,
        metavar="PATH",
        help="Your own operators' finalizers (who removes each, its workload, what it guards), "
        "read before the built-in ones; repeatable; also $KUBECTL_TERMINATING_KNOWLEDGE "
        "(paths separated by ':'). Schema: docs/knowledge.md.",
    ),
    click.option(
        "--color",
        type=click.Choice(("auto", "always", "never")),
        default="auto",
        show_default=True,
        help="Colour the output (auto respects NO_COLOR and non-terminals).",
    ),
]


def global_params() -> list[click.Parameter]:
    """Fresh click parameters for the global options, in --help order."""

    @with_options(GLOBAL_OPTIONS)
    def holder() -> None: ...

    params: list[click.Parameter] = holder.__click_params__  # type: ignore[attr-defined]
    return list(reversed(params))


GLOBAL_NAMES = frozenset(p.name for p in global_params() if p.name)


GLOBAL_SECTION = "Global options (before or after the command)"
OPTIONS_HINT = (
    f'Use "{PROG} options" for a list of global command-line options (applies to all commands).'
)


def _global_records(ctx: click.Context, params: list[click.Parameter]) -> list[tuple[str, str]]:
    return [r for p in params if p.name in GLOBAL_NAMES if (r := p.get_help_record(ctx))]


def _format_global_options(
    ctx: click.Context, formatter: click.HelpFormatter, params: list[click.Parameter]
) -> None:
    with formatter.section(GLOBAL_SECTION):
        formatter.write_dl(_global_records(ctx, params))


def _own_options(
    ctx: click.Context, formatter: click.HelpFormatter, params: list[click.Parameter]
) -> None:
    records = [
        r
        for p in params
        if isinstance(p, click.Option) and p.name not in GLOBAL_NAMES
        if (r := p.get_help_record(ctx))
    ]
    if records:
        with formatter.section("Options"):
            formatter.write_dl(records)


# strconv.ParseBool, which kubectl's flag parser (pflag) uses for `--flag=value`
_BOOLEANS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def _short_with_value(name: str, flags: set[str]) -> bool:
    """`-v`, or short on/off flags run together before it (`-Av`), but not `-lapp` (the
    value of -l written without a space: `-lapp=web` stays as typed)."""
    if len(name) < 2 or name[0] != "-" or name[1] == "-" or name in flags:
        return False
    return all(f"-{letter}" in flags for letter in name[1:-1])


def pflag_style(args: list[str], flags: set[str]) -> list[str]:
    """kubectl's spellings that click does not take: `--insecure-skip-tls-verify=true` (or
    `=false`) for an on/off flag, `-v=6` / `-n=shop` for a short option with a value, and
    `--cluster-profiles` alone (OPTIONAL_VALUES)."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return out + args[index:]
        name, equals, value = arg.partition("=")
        if arg in OPTIONAL_VALUES:
            out.append(f"{arg}={OPTIONAL_VALUES[arg]}")
        elif equals and name in flags and value in _BOOLEANS:
            out += [name] if _BOOLEANS[value] else []
        elif equals and _short_with_value(name, flags):
            out.append(name + value)
        else:
            out.append(arg)
    return out


def _use_knowledge(ctx: click.Context, files: tuple[str, ...]) -> None:
    """The user's knowledge files, read before the command runs: a broken one is its one
    line and exit status 1, and nothing else runs."""
    if not files and not os.environ.get(KNOWLEDGE_ENV):
        return  # the explainers stay unloaded (`types`, `options`)
    from kubectl_terminating.connection import error_line
    from kubectl_terminating.explain import knowledge

    paths = knowledge.user_files(files)

    try:
        knowledge.use_files(paths)
    except TerminatingError as error:
        click.echo(error_line(error), err=True)
        ctx.exit(error.exit_code)


class GlobalCommand(click.Command):
    """A command of `kubectl terminating`: it takes the global options after its name too;
    any given before the name (parsed by the group) count as if given after it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        present = {p.name for p in self.params}
        self.params += [p for p in global_params() if p.name not in present]

    def invoke(self, ctx: click.Context) -> Any:
        parent = ctx.parent
        if parent is not None:
            for name in GLOBAL_NAMES:
                given = parent.get_parameter_source(name)
                if given in (None, ParameterSource.DEFAULT) or name not in parent.params:
                    continue
                mine = ctx.get_parameter_source(name)
                value = parent.params[name]
                if isinstance(value, tuple):  # repeatable: both positions add up, as in kubectl
                    ctx.params[name] = value + tuple(ctx.params.get(name) or ())
                elif mine in (None, ParameterSource.DEFAULT):
                    ctx.params[name] = value
        _use_knowledge(ctx, tuple(ctx.params.get("knowledge_files") or ()))
        return super().invoke(ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        params = self.get_params(ctx)
        _own_options(ctx, formatter, params)
        _format_global_options(ctx, formatter, params)


class GlobalGroup(AliasedGroup):
    """The global options are parsed before the command name here and after it by each
    command: a command added to this group (`@cli.command(...)`) gets them for free, as
    keyword arguments of its callback (see GLOBAL_OPTIONS for their names)."""

    command_class = GlobalCommand

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params += global_params()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        flags = {
            opt
            for command in (self, *self.commands.values())
            for p in command.params
            if isinstance(p, click.Option) and p.is_flag and not p.count
            for opt in p.opts
        }
        return super().parse_args(ctx, pflag_style(args, flags))

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        params = self.get_params(ctx)
        _own_options(ctx, formatter, params)
        self.format_commands(ctx, formatter)
        _format_global_options(ctx, formatter, params)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        # kubectl's closing lines, word for word but for the name
        formatter.write_paragraph()
        formatter.write(f'Use "{PROG} <command> --help" for more information about a command.\n')
        formatter.write(OPTIONS_HINT + "\n")


@click.group(cls=GlobalGroup, context_settings=CONTEXT, epilog=EXAMPLES)
@click.version_option(
    __version__, "--version", prog_name="kubectl terminating", message="%(prog)s %(version)s"
)
def cli(**_global_options: Any) -> None:
    """Find Pods and Namespaces stuck in Terminating and explain why, with evidence.

    Read-only: pods, ns, all, dump and serve never change the cluster. Remedies are printed,
    safest first, and destructive ones are labelled. Only `fix --apply` writes (see fix --help),
    and `serve --record-events` writes Events (never the objects themselves).
    """


def _command(kind: str, summary: str) -> Callable[[F], click.Command]:
    def wrap(function: F) -> click.Command:
        # the node's word is about pods: `ns` does not take --node-evidence
        node = NODE_EVIDENCE_OPTIONS if kind != "namespaces" else []

        @click.argument("names", nargs=-1, metavar="[NAME]...")
        @with_options(SCOPE_OPTIONS, OUTPUT_OPTIONS, WATCH_OPTIONS, node)
        @click.pass_context
        def command(ctx: click.Context, /, names: tuple[str, ...], **flags: Any) -> None:
            try:
                options = Options.from_flags(kind, names, flags)
            except UsageError as error:
                raise click.UsageError(error.message, ctx) from None
            from kubectl_terminating.commands import run

            ctx.exit(run(options))

        command.__doc__ = summary
        return cli.command(kind, context_settings=CONTEXT)(command)

    return wrap


@_command("pods", "Terminating Pods and what blocks each (aliases: po, pod).")
def pods() -> None: ...


@_command("namespaces", "Terminating Namespaces and what blocks each (alias: ns).")
def namespaces() -> None: ...


@_command("all", "Every terminating object of any kind (metadata only).")
def all_objects() -> None: ...


@cli.command("dump", context_settings=CONTEXT)
@click.option(
    "-f",
    "--filename",
    required=True,
    metavar="PATH",
    help="Where to save the snapshot (gzip-compressed when it ends in .gz).",
)
@with_options(SCOPE_OPTIONS, NODE_EVIDENCE_OPTIONS)
def dump(filename: str, **flags: Any) -> None:
    """Save what the diagnosis needs, for offline use (--from-file).

    Finds every terminating object in scope and records exactly what the explainers read
    for it: the objects, their nodes, leases, volumes, CSI objects, events, webhooks,
    APIServices, CRDs, discovery and the content left in terminating namespaces, with the
    cluster version and the capture time. The data of Secrets and ConfigMaps is never
    saved. Share the file with whoever diagnoses the cluster:

    \b
      kubectl terminating dump -A -f bundle.json.gz
      kubectl terminating pods --from-file bundle.json.gz --explain
    """
    from kubectl_terminating.commands import dump as run_dump

    try:
        options = Options.from_flags("all", (), flags)
    except UsageError as error:
        raise click.UsageError(error.message) from None
    sys.exit(run_dump(options, filename))


@cli.command("options", context_settings=CONTEXT)
@click.pass_context
def options_command(ctx: click.Context, /, **_global_options: Any) -> None:
    """The global options, which every command takes (as `kubectl options`)."""
    formatter = ctx.make_formatter()
    formatter.write("The following options can be passed to any command, before or after it:\n\n")
    with formatter.indentation():
        formatter.write_dl(_global_records(ctx, ctx.command.get_params(ctx)))
    click.echo(formatter.getvalue(), nl=False)


@cli.command("types", context_settings=CONTEXT)
@click.option(
    "-o",
    "--output",
    type=click.Choice(OUTPUTS),
    help="Output format: wide (adds HOLDS WHILE), json or yaml (every field, with why fix "
    "refuses a type), or name (default: a table).",
)
@click.option("--no-headers", is_flag=True, help="Omit the table headers.")
def types_command(output: str | None, no_headers: bool, **_global_options: Any) -> None:
    """The blocker types, in rank order (needs no cluster).

    As `kubectl api-resources` lists resource types. Each TYPE is a stable value of
    `blockers[].type` in -o json; the first of an object's blockers in this order is its main
    blocker. ON NODE: it happens on the pod's node (the summary groups it by node). FIX: what
    `fix` does with it: proposes a write once its checks allow it, refuses (-o yaml says why),
    or has nothing to do (context: it only says when the object goes). Reads no kubeconfig
    and never connects.

    \b
    Examples:
      # every blocker type and what fix does with it
      kubectl terminating types

    \b
      # also while what each can still hold an object
      kubectl terminating types -o wide

    \b
      # every field, with why fix refuses a type
      kubectl terminating types -o yaml
    """
    from kubectl_terminating.typelist import render

    click.echo(render(output, no_headers), nl=False)


@cli.command("preflight", context_settings=CONTEXT)
@click.argument("words", nargs=-1, metavar="(ns NAME... | TYPE/NAME... | helm RELEASE)")
@click.option(
    "-f",
    "--filename",
    "filenames",
    multiple=True,
    metavar="PATH",
    help="A manifest that would be deleted (a file, a folder, or - for stdin): helm template, "
    "helm get manifest, kustomize build.",
)
@click.option(
    "--cascade",
    type=click.Choice(("background", "foreground", "orphan")),
    default="background",
    show_default=True,
    help="As kubectl delete's: whether dependents go too, and whether the object waits for them.",
)
@click.option(
    "--order",
    type=click.Choice(("helm", "kubectl")),
    help="Whose order the manifest is deleted in: helm (Helm's uninstall order, one pass) or "
    "kubectl (the file's). Default: helm for `preflight helm`, else kubectl.",
)
@click.option(
    "--fail-on",
    type=click.Choice(("certain", "likely", "possible")),
    default="likely",
    help="Exit 3 when a prediction is at least this confident (default: likely).",
)
@click.option("-o", "--output", type=click.Choice(("json", "yaml")), help="Output format.")
@click.option("--explain", is_flag=True, help="Every prediction with evidence and steps.")
@click.option(
    "--from-file",
    metavar="PATH",
    help="Judge a snapshot instead of a live cluster (`kubectl get -o json` of what the "
    "deletion touches, a `dump`); what it lacks is a check not made.",
)
@click.pass_context
def preflight(
    ctx: click.Context,
    /,
    words: tuple[str, ...],
    filenames: tuple[str, ...],
    cascade: str,
    order: str | None,
    fail_on: str,
    output: str | None,
    explain: bool,
    from_file: str | None,
    **flags: Any,
) -> None:
    """Before a deletion: will it get stuck, and why (read-only).

    Computes what the deletion takes with it (a namespace's content, the garbage collector's
    dependents, a CRD's objects, a manifest's or release's objects), then judges finalizer
    owners, webhook and APIService backends and nodes on the cluster as it will be without
    them. Each prediction names the blocker type `--explain` will report once stuck, with a
    confidence (certain, likely, possible) and what to do before deleting. Exit codes: 0 clear,
    3 blocked at --fail-on, 4 undecided (a weaker prediction or a check not made).

    \b
      kubectl terminating preflight ns shop
      kubectl terminating preflight deployment/operator crd/widgets.example.com -n shop
      helm template ./chart | kubectl terminating preflight -f - --order helm
      kubectl terminating preflight helm my-release -n shop --explain
    """
    from kubectl_terminating.preflight.command import PreflightFlags, run_preflight

    if flags.get("cluster_profiles") is not None:
        raise click.UsageError("preflight reads kubeconfig contexts: use --contexts", ctx)
    if _fleet(flags) and from_file:
        raise click.UsageError("--from-file judges one snapshot: drop --contexts", ctx)
    try:
        options = Options.from_flags("all", (), flags)
    except UsageError as error:
        raise click.UsageError(error.message, ctx) from None
    settings = PreflightFlags(words, filenames, cascade, order, fail_on, output, explain, from_file)
    try:
        settings.target()
    except UsageError as error:
        raise click.UsageError(error.message, ctx) from None
    ctx.exit(run_preflight(options, settings))


def _fleet(flags: dict[str, Any]) -> bool:
    """--contexts, --all-contexts or --cluster-profiles given (checked before Options,
    whose check says less)."""
    return (
        flags.get("contexts") is not None
        or bool(flags.get("all_contexts"))
        or flags.get("cluster_profiles") is not None
    )


@cli.command("fix", context_settings=CONTEXT)
@click.argument("kind", type=click.Choice(FIX_KINDS), metavar="(pods|ns|all)")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@with_options(SCOPE_OPTIONS, FIX_OPTIONS)
@click.pass_context
def fix(ctx: click.Context, /, kind: str, names: tuple[str, ...], **flags: Any) -> None:
    """Unstick what the evidence proves safe: a dry-run plan by default.

    Prints, for each stuck object, the writes it would make (each with the facts that allow
    it and the exact API request and precondition) and the blockers it refuses to touch,
    with why. Nothing is written without --apply; --apply runs unattended only with the
    dry run's --confirm DIGEST. Every fact is read again right before its write: if any
    changed, the run stops (exit 3). Exit codes: 0 done or nothing to do, 1 error, 3
    refused or changed.

    \b
      kubectl terminating fix ns foo
      kubectl terminating fix ns foo --apply --confirm 3f2a9c1e0b7d4e55
      kubectl terminating fix pods -n shop --node-down worker-3
    """
    try:
        fix_options = FixOptions.from_flags(
            flags, " ".join([PROG, *(shlex.quote(a) for a in sys.argv[1:])])
        )
    except UsageError as error:
        raise click.UsageError(error.message, ctx) from None
    if _fleet(flags):
        raise click.UsageError("fix works on one cluster at a time: use --context", ctx)
    try:
        options = Options.from_flags(AliasedGroup.aliases.get(kind, kind), names, flags)
    except UsageError as error:
        raise click.UsageError(error.message, ctx) from None
    from kubectl_terminating.fix.command import run_fix

    ctx.exit(run_fix(options, fix_options))


def _one_cluster(ctx: click.Context, command: str, flags: dict[str, Any]) -> Options:
    """The options of a long-running command over `all` in one cluster (serve, mcp)."""
    if _fleet(flags):
        raise click.UsageError(f"{command} reads one cluster: run one per context", ctx)
    try:
        return Options.from_flags("all", (), flags)
    except UsageError as error:
        raise click.UsageError(error.message, ctx) from None


@cli.command("serve", context_settings=CONTEXT)
@click.option(
    "--metrics-bind-address",
    "address",
    default=":9101",
    show_default=True,
    metavar="HOST:PORT",
    help="Where to serve /metrics, the API (/api/v1/) and the pages (`:PORT`: every interface).",
)
@click.option(
    "--external-url",
    default="",
    metavar="URL",
    help="The URL users reach the pages at (through an ingress or the API server's service "
    "proxy): the alerts link there.",
)
@click.option(
    "--interval",
    default="1m",
    show_default=True,
    metavar="DURATION",
    help="Time between two runs of the diagnosis (30s, 5m).",
)
@with_options(NODE_EVIDENCE_OPTIONS)
@click.option(
    "--record-events",
    is_flag=True,
    help="Write a Warning Event (DeletionBlocked) on each stuck object, saying its main "
    "blocker: `kubectl describe` shows it. Needs create/patch on events.k8s.io events and "
    "get/create/update on its Lease (one replica writes). Off by default: serve only reads.",
)
@click.option(
    "--events-qps",
    type=click.FloatRange(min=0, min_open=True),
    default=5.0,
    show_default=True,
    metavar="N",
    help="With --record-events: Event writes per second, at most.",
)
@click.option(
    "--events-burst",
    type=click.IntRange(min=1),
    default=25,
    show_default=True,
    metavar="N",
    help="With --record-events: Event writes allowed at once before --events-qps applies.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    /,
    address: str,
    external_url: str,
    interval: str,
    record_events: bool,
    events_qps: float,
    events_burst: int,
    **flags: Any,
) -> None:
    """Export the diagnosis as Prometheus metrics, an HTTP API and pages (read-only).

    With --record-events it also writes a Warning Event on each stuck object.

    Runs the diagnosis of `all -A` (or -n NAMESPACE) every --interval and serves, per main
    blocker, kind and namespace, how many objects are stuck and how long the oldest has
    been; with run durations and failed reads per resource. Beside /metrics: the findings
    (/api/v1/findings), one object's explanation (/api/v1/explain/RESOURCE/NS/NAME) and the
    same as pages (/). In a pod it reads through its service account. Stops on SIGTERM or
    Ctrl-C.

    \b
      kubectl terminating serve --metrics-bind-address :9101 --interval 30s
    """
    from kubectl_terminating.connection import guarded
    from kubectl_terminating.exporter.serve import ServeOptions
    from kubectl_terminating.exporter.serve import serve as run_serve

    options = _one_cluster(ctx, "serve", flags)
    serving = ServeOptions(address, interval, external_url, record_events, events_qps, events_burst)
    ctx.exit(guarded(lambda: run_serve(options, serving, sys.stderr), sys.stderr))


@cli.command("mcp", context_settings=CONTEXT)
@click.option(
    "--max-items",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    metavar="N",
    help="The most objects one answer lists; the rest are cut, with a note saying so.",
)
@click.pass_context
def mcp(ctx: click.Context, /, max_items: int, **flags: Any) -> None:
    """Serve the diagnosis to AI agents: an MCP server over stdio (read-only).

    Tools: terminating_list, terminating_explain, terminating_summary, terminating_types,
    terminating_preflight and terminating_fix_plan (the dry run only: applying stays a
    human's `fix --apply --confirm DIGEST`). Each answers with the -o json document of the
    same command. The connection is resolved as for every command (--kubeconfig, --context,
    -n: the default namespace) once, at start; each call reads the cluster again. Protocol
    revisions 2024-11-05 to 2025-11-25.

    \b
      kubectl terminating mcp --context prod
    """
    options = _one_cluster(ctx, "mcp", flags)
    from kubectl_terminating.agents.start import start

    ctx.exit(start(options, max_items, sys.stderr))


def _restore_library_path() -> None:
    # A PyInstaller build points LD_LIBRARY_PATH at its own bundle; exec credential plugins
    # (aws, gcloud, kubelogin) started from here must get the user's original value back.
    if getattr(sys, "frozen", False):
        original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
        if original is not None:
            os.environ["LD_LIBRARY_PATH"] = original
        else:
            os.environ.pop("LD_LIBRARY_PATH", None)


# The cyclic collector's thresholds: a run decodes and keeps a few hundred thousand objects
# (pods, findings) that are freed by reference counts, not cycles; at Python's default (a pass
# every 700 new objects, a full pass once they pile up) the collector took about 40 ms of the
# 0.5 s CPU of `pods -A` in an outage of 2,000 pods. Cycles are still collected.
GC_THRESHOLDS = (50_000, 20, 20)


def main(argv: list[str] | None = None) -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    _restore_library_path()
    if not sys.warnoptions:
        # Only our own `Warning:` lines reach stderr, never a library's (urllib3, kubernetes,
        # Python deprecations); `python -W ...` still shows them when debugging.
        warnings.simplefilter("ignore")
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["__complete"], ["__completeNoDesc"]):
        # Hidden: the krew-installed binary answers completion itself, so the helper on
        # PATH can be the one-line script `kubectl terminating __complete "$@"`.
        from kubectl_terminating.completion import complete

        sys.exit(complete(cli, args, sys.stdout))
    cli.main(args=args, prog_name=PROG)


def complete_main() -> None:
    """`kubectl_complete-terminating`: the completion helper kubectl 1.26+ runs."""
    from kubectl_terminating.completion import complete

    sys.exit(complete(cli, sys.argv[1:], sys.stdout))
