"""kubectl's credential-plugin policy: the user's kuberc says which exec credential plugins
of a kubeconfig may run (`credentialPluginPolicy: AllowAll | DenyAll | Allowlist`,
`credentialPluginAllowlist`). `check` is asked before any exec plugin runs.

The rules, as kubectl 1.36.3 applies them (kubernetes/kubectl v0.36.3 and
kubernetes/client-go v0.36.3, the staging copies of kubernetes/kubernetes v1.36.3):

- Which file (kubectl pkg/kuberc/kuberc.go, LoadKuberc, DefaultGetPreferences;
  pkg/cmd/util/helpers.go, KubeRC): `KUBECTL_KUBERC=false` turns kuberc off; else
  `KUBERC=off` turns it off; else `$KUBERC` names the file ("explicit"); else
  `$HOME/.kube/kuberc`. (kubectl's `--kuberc` flag is kubectl's own: a plugin never sees it.)
- Reading it (pkg/kuberc/marshal.go, decodePreference): the YAML documents in turn; the first
  that decodes as `kind: Preference` of `kubectl.config.k8s.io` (v1beta1, or v1alpha1, which
  has no policy fields) is used. Unknown fields are a warning (strict decoding), not an error.
  Documents that do not decode (wrong types, another kind) are skipped; when some were tried
  and none was usable, or the file cannot be read: an error when the file is explicit, else a
  warning and no preferences at all (so no policy). A default file that does not exist is
  silently no kuberc.
- The fields (pkg/config/v1beta1/types.go, conversion.go): an empty policy is AllowAll; an
  allowlist entry is `{command: ...}` or the deprecated `{name: ...}`; both, different: the
  document does not decode.
- Validation (client-go plugin/pkg/client/auth/exec/exec.go, ValidatePluginPolicy), an error
  whichever file it came from: an unknown policy; an allowlist (even empty) with a policy other
  than Allowlist; Allowlist with no allowlist, an empty one, an empty entry, or an entry that
  is not a clean path (Go's filepath.Clean).
- Matching (exec.go, checkAllowlistLocked, resolveAllowListEntriesLocked): the command
  (cleaned) or its resolution by Go's exec.LookPath equals an entry verbatim, or equals the
  LookPath resolution of an entry with the same basename. So `get-token` allows the
  `get-token` found first on PATH, and no other file of that name; `/usr/bin/get-token`
  allows that file, named by path or found on PATH. A command LookPath cannot resolve is
  refused. As client-go, the resolved path is what then runs.

Not done: kubectl's checks of `aliases` and `defaults` (nothing here uses them); duplicate
keys (kubectl's strict warning) are not reported, the last one wins in both.
"""

from __future__ import annotations

import os
import posixpath
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_terminating.errors import ConfigError

GROUP = "kubectl.config.k8s.io"
KIND = "Preference"
POLICIES = ("AllowAll", "DenyAll", "Allowlist")

Warn = Callable[[str], None]

# Each version's fields, for strict decoding (an unknown field is a warning) and types (a
# value of the wrong type and the document does not decode): str, [spec], or {field: spec}.
_OPTION = {"name": str, "default": str}
_V1ALPHA1: dict[str, Any] = {
    "apiVersion": str,
    "kind": str,
    "defaults": [{"command": str, "options": [_OPTION]}],
    "aliases": [
        {
            "name": str,
            "command": str,
            "prependArgs": [str],
            "appendArgs": [str],
            "options": [_OPTION],
        }
    ],
}
_V1BETA1: dict[str, Any] = {
    **_V1ALPHA1,
    "credentialPluginPolicy": str,
    "credentialPluginAllowlist": [{"name": str, "command": str}],
}
_VERSIONS = {f"{GROUP}/v1alpha1": _V1ALPHA1, f"{GROUP}/v1beta1": _V1BETA1}


@dataclass(frozen=True)
class Policy:
    """The policy in force; source: the kuberc it came from (None: no kuberc)."""

    kind: str = "AllowAll"
    allowlist: tuple[str, ...] = ()
    source: str | None = None

    def said(self) -> str:
        where = f" (kuberc {self.source})" if self.source else ""
        return f'policy set to "{self.kind}"{where}'


def kuberc_path(environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    """The kuberc kubectl would read and whether it was named (KUBERC); None: turned off."""
    if environ.get("KUBECTL_KUBERC", "").lower() == "false":
        return None, False
    named = environ.get("KUBERC", "")
    if named == "off":
        return None, False
    if named:
        return Path(named), True
    return Path(environ.get("HOME", "~")).expanduser() / ".kube" / "kuberc", False


def _type_error(value: Any, spec: Any, where: str, unknown: list[str]) -> str | None:
    """Why value does not decode as spec (None: it does); unknown fields are collected."""
    if value is None:  # JSON null: the zero value
        return None
    if spec is str:
        return None if isinstance(value, str) else f"{where}: expected a string"
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"{where}: expected a list"
        for i, item in enumerate(value):
            if (why := _type_error(item, spec[0], f"{where}[{i}]", unknown)) is not None:
                return why
        return None
    if not isinstance(value, dict):
        return f"{where or 'document'}: expected a mapping"
    for key, item in value.items():
        field = f"{where}.{key}" if where else str(key)
        if key not in spec:
            unknown.append(field)
        elif (why := _type_error(item, spec[key], field, unknown)) is not None:
            return why
    return None


def _documents(text: str) -> list[str]:
    """The YAML documents of text, split on `---` lines as Kubernetes' YAML reader does."""
    docs: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        rest = line[3:].strip() if line.startswith("---") else None
        if rest is not None and (not rest or rest.startswith("#")):
            docs.append("\n".join(current))
            current = []
        else:
            current.append(line)
    docs.append("\n".join(current))
    return [doc for doc in docs if doc.strip()]


def _entry(item: Any) -> str:
    """An allowlist entry's command (`name` is its deprecated spelling)."""
    item = item or {}
    name, command = item.get("name") or "", item.get("command") or ""
    if name and command and name != command:
        raise ValueError("both `name` and `command` of an allowlist entry, different")
    return str(command or name)


def _decode(doc: str, unknown: list[str]) -> dict[str, Any] | None:
    """The document as a Preference, or None when kubectl could not decode it as one."""
    import yaml

    try:
        data = yaml.safe_load(doc)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        return None
    spec = _VERSIONS.get(str(data.get("apiVersion")))
    if spec is None or _type_error(data, spec, "", unknown) is not None:
        return None
    try:
        entries = data.get("credentialPluginAllowlist")
        if entries is not None:
            data["credentialPluginAllowlist"] = [_entry(item) for item in entries]
    except ValueError:
        return None  # the conversion error: the document does not decode
    return {k: v for k, v in data.items() if k in spec}


def _read(path: Path, explicit: bool, warn: Warn) -> dict[str, Any] | None:
    """The Preference of the kuberc at path; None: no preferences (kubectl goes on)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        if explicit:
            raise ConfigError(f"kuberc {path}: {reason}") from None
        if not isinstance(error, FileNotFoundError):
            warn(f"kuberc {path}: {reason}; no preferences loaded")
        return None
    docs = _documents(text)
    for doc in docs:
        unknown: list[str] = []
        preference = _decode(doc, unknown)
        if preference is not None:
            if unknown:
                warn(f"kuberc {path}: ignoring unknown field(s) {', '.join(unknown)}")
            return preference
    if not docs:
        return None
    reason = f"kuberc {path}: no valid Preference of {GROUP} in it"
    if explicit:
        raise ConfigError(reason)
    warn(f"{reason}; no preferences loaded")
    return None


def go_clean(path: str) -> str:
    """Go's filepath.Clean on a POSIX path (normpath keeps a leading `//`; Go does not)."""
    cleaned = posixpath.normpath(path)
    return cleaned[1:] if cleaned.startswith("//") else cleaned


def _validate(preference: dict[str, Any], source: Path) -> Policy:
    kind = preference.get("credentialPluginPolicy") or ""
    entries: list[str] | None = preference.get("credentialPluginAllowlist")
    where = f"kuberc {source}: credential plugin policy"
    if kind not in ("", *POLICIES):
        raise ConfigError(f'{where}: unknown policy "{kind}" (one of {", ".join(POLICIES)})')
    if kind != "Allowlist":
        if entries is not None:
            raise ConfigError(
                f'{where}: credentialPluginAllowlist is set but the policy is "{kind}", not '
                '"Allowlist"'
            )
        return Policy(kind or "AllowAll", (), str(source))
    if entries is None:
        raise ConfigError(f'{where} is "Allowlist" but credentialPluginAllowlist is unspecified')
    if not entries:
        raise ConfigError(f'{where} is "Allowlist" but the allowlist is empty; use "DenyAll"')
    for number, entry in enumerate(entries, 1):
        if not entry:
            raise ConfigError(f"{where}: allowlist entry #{number} is empty")
        if go_clean(entry) != entry:
            raise ConfigError(
                f'{where}: allowlist entry "{entry}" is not a clean path ("{go_clean(entry)}")'
            )
    return Policy("Allowlist", tuple(entries), str(source))


_cache: dict[tuple[str, bool, tuple[int, ...] | None], Policy | ConfigError] = {}
_lock = threading.Lock()


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def load(environ: Mapping[str, str] | None = None, warn: Warn | None = None) -> Policy:
    """The policy of the user's kuberc: read once per version of the file (its warnings, to
    warn, said once); a kuberc kubectl would refuse is a ConfigError."""
    env = os.environ if environ is None else environ
    path, explicit = kuberc_path(env)
    if path is None:
        return Policy()
    key = (str(path), explicit, _signature(path))
    with _lock:
        known = _cache.get(key)
        if known is None:
            try:
                preference = _read(path, explicit, warn or (lambda _: None))
                known = Policy() if preference is None else _validate(preference, path)
            except ConfigError as error:
                known = error
            _cache[key] = known
    if isinstance(known, ConfigError):
        raise ConfigError(known.message)
    return known


def look_path(name: str, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """Go's exec.LookPath on POSIX: (the path, why it cannot be used, or None). A name with a
    slash is checked as is; a bare name is searched in PATH, an empty entry being `.`, and
    a relative result is refused (Go's ErrDot)."""

    def executable(path: str) -> str | None:
        try:
            mode = os.stat(path).st_mode
        except OSError as error:
            return error.strerror or "not found"
        if stat.S_ISDIR(mode):
            return "is a directory"
        return None if os.access(path, os.X_OK) else "permission denied"

    if "/" in name:
        return name, executable(name)
    search = environ.get("PATH", "")
    for directory in search.split(os.pathsep) if search else []:
        path = go_clean(posixpath.join(directory or ".", name))
        if executable(path) is None:
            if not posixpath.isabs(path):
                return path, "found in the current directory through PATH"
            return path, None
    return "", "executable file not found in $PATH"


def _base(path: str) -> str:
    """Go's filepath.Base."""
    stripped = path.rstrip("/")
    return posixpath.basename(stripped) if stripped else ("/" if path else ".")


def allowed(policy: Policy, command: str, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """(what to run, why the policy refuses it, or None). Under Allowlist what runs is the
    path the allowlist was compared with, never a new PATH search (the subprocess would
    search the plugin's own env PATH, which Go does not)."""
    if policy.kind == "AllowAll":
        return command, None
    if policy.kind == "DenyAll":
        return command, policy.said()
    wanted = go_clean(command)
    # a path that cannot be run is refused here; client-go may allow it, then fails to run it
    run, why = look_path(wanted, environ)
    if why is not None:
        return command, f"{policy.said()} and its path cannot be resolved: {why}"
    # client-go's verbatim matches of the command or of run are this too: such an entry
    # resolves to run itself
    for entry in policy.allowlist:
        if _base(entry) == _base(run) and look_path(entry, environ) == (run, None):
            return run, None
    return command, f"{policy.said()} and {run} is not in its credentialPluginAllowlist"


def check(
    command: str,
    context_label: str,
    environ: Mapping[str, str] | None = None,
    policy: Policy | None = None,
) -> str:
    """What to run for the exec credential plugin command of context_label, as the user's
    kuberc allows it; a ConfigError (one line naming the context and the policy) when the
    policy refuses it or the kuberc is broken. policy: the one to apply (default: load's)."""
    env = os.environ if environ is None else environ
    in_force = load(env) if policy is None else policy
    run, why = allowed(in_force, command, env)
    if why is not None:
        prefix = f'context "{context_label}": ' if context_label else ""
        raise ConfigError(f'{prefix}exec credential plugin "{command}" not allowed: {why}')
    return run
