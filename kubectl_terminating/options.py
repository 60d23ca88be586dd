"""What the user asked for, independent of click, settled as kubectl's GetOptions does it:
the flags are validated (`Options.from_flags`), then completed once where to look is known
(`complete`: the namespace, the snapshot defaults, the detail level), then run. Nothing after
`complete` decides any of these again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from kubectl_terminating.errors import UsageError
from kubectl_terminating.kubeconfig import Overrides

KINDS = ("pods", "namespaces", "all")
OUTPUTS = ("wide", "json", "yaml", "name")


@dataclass(frozen=True)
class Options:
    kind: str
    names: tuple[str, ...] = ()
    namespace: str | None = None
    all_namespaces: bool = False
    selector: str | None = None
    output: str | None = None
    explain: bool = False
    summary: bool = False
    no_headers: bool = False
    color: str = "auto"
    exit_code: bool = False
    kubeconfig: str | None = None
    context: str | None = None
    contexts: str | None = None  # --contexts a,b,c (fleet.py)
    all_contexts: bool = False
    # --cluster-profiles[=SELECTOR]: the hub's ClusterProfiles ("": all), clusterprofiles.py
    cluster_profiles: str | None = None
    clusterprofile_provider_file: str | None = None
    cluster: str | None = None
    user: str | None = None
    request_timeout: str = "0"
    verbosity: int = 0
    # --knowledge-file: read (and checked) by the CLI before the command runs (explain.knowledge)
    knowledge_files: tuple[str, ...] = ()
    # the connection flags (--server, --token, --as, ...), declared once: kubeconfig.Overrides,
    # which the kubeconfig resolution applies as they are
    overrides: Overrides = field(default_factory=Overrides)
    from_file: str | None = None
    now: bool = False
    max_file_size: str | None = None  # --max-file-size: a quantity or MB (bounded.parse_size)
    watch: bool = False  # -w (watch.py)
    watch_only: bool = False
    output_watch_events: bool = False
    node_evidence: bool = False  # read the kubelet's own word (nodeproxy.py); exec-equivalent

    @classmethod
    def from_flags(cls, kind: str, names: tuple[str, ...], flags: dict[str, Any]) -> Options:
        """The flags as click parsed them, named after the fields (the connection flags
        after those of Overrides)."""
        flags = dict(flags)
        connecting = {f.name: flags.pop(f.name) for f in fields(Overrides) if f.name in flags}
        options = cls(kind=kind, names=names, overrides=Overrides(**connecting), **flags)
        options.validate()
        return options

    def validate(self) -> None:
        if self.all_namespaces and self.names and self.kind != "namespaces":
            raise UsageError("a resource cannot be retrieved by name across all namespaces")
        if self.kind == "all" and self.names:
            raise UsageError("`all` takes no names; use -n/-A and -l to narrow it")
        if self.now and not self.from_file:
            raise UsageError("--now only applies with --from-file")
        if self.max_file_size is not None:
            if not self.from_file:
                raise UsageError("--max-file-size only applies with --from-file")
            file_size_cap(self.max_file_size)  # a bad size is a usage error, before any read
        if self.explain and self.output in ("json", "yaml", "name"):
            raise UsageError(f"--explain prints text; -o {self.output} already has every detail")
        if self.summary and self.explain:
            raise UsageError("--summary and --explain cannot be combined")
        if self.summary and self.output in ("json", "yaml", "name"):
            raise UsageError(f"--summary prints text; -o {self.output} has no summary of its own")
        self.validate_fleet()
        self.validate_watch()

    @property
    def watching(self) -> bool:
        return self.watch or self.watch_only

    def validate_watch(self) -> None:
        if self.output_watch_events and not self.watching:
            raise UsageError("--output-watch-events only applies with --watch or --watch-only")
        if not self.watching:
            return
        for flag, given in (
            ("--explain", self.explain),
            ("--summary", self.summary),
            ("--from-file", self.from_file),
            ("--cluster-profiles", self.cluster_profiles is not None),
            ("--contexts/--all-contexts", self.fleet),
            (f"-o {self.output}", self.output in ("yaml", "name")),
        ):
            if given:
                raise UsageError(f"{flag} cannot be combined with --watch")
        if self.output_watch_events and self.output != "json":
            raise UsageError("--output-watch-events applies with -o json")

    @property
    def fleet(self) -> bool:
        """Whether the run spans several clusters (fleet.py): kubeconfig contexts or the
        hub's ClusterProfiles."""
        return self.contexts is not None or self.all_contexts or self.cluster_profiles is not None

    @property
    def fleet_flag(self) -> str:
        if self.cluster_profiles is not None:
            return "--cluster-profiles"
        return "--all-contexts" if self.all_contexts else "--contexts"

    def validate_fleet(self) -> None:
        if self.clusterprofile_provider_file and self.cluster_profiles is None:
            raise UsageError("--clusterprofile-provider-file only applies with --cluster-profiles")
        if not self.fleet:
            return
        if self.contexts is not None and self.all_contexts:
            raise UsageError("--contexts and --all-contexts cannot be combined")
        if self.contexts is not None and not [c for c in self.contexts.split(",") if c.strip()]:
            raise UsageError("--contexts needs at least one context name")
        if self.cluster_profiles is not None:
            self.validate_profiles()
        fleet_flag = self.fleet_flag
        # each context brings its own cluster and credentials: a flag that names one cluster
        # or one credential would apply it to every cluster (with --cluster-profiles,
        # --context names the hub)
        for flag, value in (
            ("--context", self.context if self.cluster_profiles is None else None),
            ("--cluster", self.cluster),
            ("--user", self.user),
            *((flag, True) for flag in self.overrides.one_cluster_flags()),
            ("--from-file", self.from_file),
        ):
            if value:
                raise UsageError(f"{flag} cannot be combined with {fleet_flag}")
        if self.output == "name":
            raise UsageError("-o name cannot say which context an object is in; use -o json")

    def validate_profiles(self) -> None:
        if self.contexts is not None or self.all_contexts:
            raise UsageError("--cluster-profiles cannot be combined with --contexts/--all-contexts")
        if not self.clusterprofile_provider_file:
            raise UsageError(
                "--cluster-profiles needs --clusterprofile-provider-file PATH (the exec "
                "plugin of each access provider, as the cluster-inventory-api reads it)"
            )
        if not self.cluster_profiles and any("=" in name for name in self.names):
            # pflag's rule for a flag whose value is optional: only `=` gives it one
            raise UsageError(
                "give --cluster-profiles its selector after `=`: --cluster-profiles=env=prod"
            )

    @property
    def max_file_bytes(self) -> int:
        """The cap on what --from-file expands to, in bytes."""
        return file_size_cap(self.max_file_size)


def file_size_cap(flag: str | None) -> int:
    """Bytes of --max-file-size (its default when not given); a bad value is a UsageError."""
    from kubectl_terminating.bounded import DEFAULT_MAX_BYTES, parse_size

    if flag is None:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(flag)
    except ValueError as error:
        raise UsageError(f"--max-file-size: {error}") from None


@dataclass(frozen=True)
class Request:
    """One run, completed: every default decided, nothing left to settle."""

    options: Options
    namespace: str | None  # where to look; None: every namespace

    @property
    def detailed(self) -> bool:
        """Whether findings carry every detail (a namespace's pods explained too)."""
        return self.options.explain or self.options.output in ("json", "yaml")

    @property
    def brief(self) -> bool:
        """Only the table (not wide), --summary or names will be shown: no pod's spec or
        status beyond its node (find.find_pods reads pods on a dead node metadata only)."""
        return not self.options.explain and self.options.output in (None, "", "name")


def complete(options: Options, context_namespace: str | None) -> Request:
    """kubectl's Complete: the namespace is the flag's, else the kubeconfig context's
    (context_namespace: None for a snapshot, which has no context: it is then looked at
    whole, as with -A)."""
    if options.from_file and not options.namespace:
        options = replace(options, all_namespaces=True)
    namespace = None if options.all_namespaces else (options.namespace or context_namespace)
    return Request(options, namespace)
