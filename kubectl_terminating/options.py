"""What the user asked for, independent of click, settled as kubectl's GetOptions does it:
the flags are validated (`Options.from_flags`), then completed once where to look is known
(`complete`: the namespace, the snapshot defaults, the detail level), then run. Nothing after
`complete` decides any of these again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kubectl_terminating.errors import UsageError
from kubectl_terminating.render.style import Style

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
    cluster: str | None = None
    user: str | None = None
    request_timeout: str = "0"
    verbosity: int = 0
    server: str | None = None
    token: str | None = None
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    impersonate_extra: tuple[str, ...] = ()  # KEY=VALUE
    username: str | None = None
    password: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    disable_compression: bool = False
    from_file: str | None = None
    now: bool = False
    node_evidence: bool = False  # read the kubelet's own word (nodeproxy.py); exec-equivalent

    @classmethod
    def from_flags(cls, kind: str, names: tuple[str, ...], flags: dict[str, Any]) -> Options:
        options = cls(kind=kind, names=names, **flags)
        options.validate()
        return options

    def validate(self) -> None:
        if self.all_namespaces and self.names and self.kind != "namespaces":
            raise UsageError("a resource cannot be retrieved by name across all namespaces")
        if self.kind == "all" and self.names:
            raise UsageError("`all` takes no names; use -n/-A and -l to narrow it")
        if self.now and not self.from_file:
            raise UsageError("--now only applies with --from-file")
        if self.explain and self.output in ("json", "yaml", "name"):
            raise UsageError(f"--explain prints text; -o {self.output} already has every detail")
        if self.summary and self.explain:
            raise UsageError("--summary and --explain cannot be combined")
        if self.node_evidence and self.kind == "namespaces":
            raise UsageError("--node-evidence applies to pods and all")
        if self.summary and self.output in ("json", "yaml", "name"):
            raise UsageError(f"--summary prints text; -o {self.output} has no summary of its own")


@dataclass(frozen=True)
class PrintOptions:
    """How a table is printed: one value instead of positional booleans."""

    all_namespaces: bool = False  # a NAMESPACE column for namespaced kinds
    wide: bool = False  # -o wide: the extra columns
    no_headers: bool = False
    style: Style = field(default_factory=Style)


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

    def print_options(self, style: Style) -> PrintOptions:
        o = self.options
        return PrintOptions(o.all_namespaces, o.output == "wide", o.no_headers, style)


def complete(options: Options, context_namespace: str | None) -> Request:
    """kubectl's Complete: the namespace is the flag's, else the kubeconfig context's
    (context_namespace: None for a snapshot, which has no context: it is then looked at
    whole, as with -A)."""
    if options.from_file and not options.namespace:
        options = replace(options, all_namespaces=True)
    namespace = None if options.all_namespaces else (options.namespace or context_namespace)
    return Request(options, namespace)
