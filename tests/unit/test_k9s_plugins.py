"""integrations/k9s/plugins.yaml, checked the way k9s v0.50 loads it.

k9s validates a plugins file against its JSON schema (internal/config/json/schemas/
plugins.json in github.com/derailed/k9s) and refuses the whole file if it fails; SCHEMA below
is written from reading that file. It then substitutes its variables ($NAMESPACE, $NAME,
$CONTEXT, ...; internal/view/env.go) into each argument, and rejects a plugin whose shortcut
is already bound in a view (internal/view/actions.go). tests/e2e/test_k9s.py runs the real
k9s where it builds.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

PLUGINS = Path(__file__).resolve().parents[2] / "integrations" / "k9s" / "plugins.yaml"
# What k9s's schema asks of each plugin: these keys, these types, nothing else at the top.
REQUIRED = {"shortCut", "description", "scopes", "command"}
TYPES: dict[str, type | tuple[type, ...]] = {
    "shortCut": str,
    "override": bool,
    "description": str,
    "confirm": bool,
    "dangerous": bool,
    "scopes": list,
    "command": str,
    "background": bool,
    "overwriteOutput": bool,
    "args": list,
}
# k9s's variables (internal/view/helpers.go k8sEnv and defaultEnv)
K9S_VARIABLES = {"NAMESPACE", "NAME", "CONTEXT", "CLUSTER", "USER", "GROUPS", "KUBECONFIG"}
ENV_RX = re.compile(r"(\$(!?)([\w\-]+))|(\$\{(!?)([\w\-%/: ]+)})")  # k9s's envRX


def plugins() -> dict[str, dict[str, Any]]:
    document = yaml.safe_load(PLUGINS.read_text())
    assert set(document) == {"plugins"}
    found: dict[str, dict[str, Any]] = document["plugins"]
    return found


def test_every_plugin_passes_k9s_schema() -> None:
    for name, plugin in plugins().items():
        assert set(plugin) >= REQUIRED, name
        for key, value in plugin.items():
            if key in TYPES:
                assert isinstance(value, TYPES[key]), (name, key)
        assert all(isinstance(s, str) for s in plugin["scopes"])
        assert all(isinstance(a, str | int | float) for a in plugin.get("args", []))


def overlap(a: list[str], b: list[str]) -> bool:
    return "all" in a or "all" in b or bool(set(a) & set(b))


def test_no_two_plugins_bind_one_key_in_the_same_view() -> None:
    items = list(plugins().items())
    for i, (name, plugin) in enumerate(items):
        for other, theirs in items[i + 1 :]:
            if overlap(plugin["scopes"], theirs["scopes"]):
                assert plugin["shortCut"] != theirs["shortCut"], (name, other)


def test_explain_is_offered_on_pods_namespaces_and_any_resource() -> None:
    explains = [p for n, p in plugins().items() if "--explain" in " ".join(p["args"])]
    scopes = {s for p in explains for s in p["scopes"]}
    assert {"pods", "namespaces", "all"} <= scopes
    assert not any(p.get("dangerous") for p in explains)


def test_fix_is_a_dry_run_and_hidden_in_read_only_mode() -> None:
    fixes = [p for p in plugins().values() if " fix " in " ".join(p["args"])]
    assert {s for p in fixes for s in p["scopes"]} == {"pods", "namespaces"}
    for plugin in fixes:
        assert plugin["dangerous"] is True
        assert "--apply" not in " ".join(plugin["args"])


def test_k9s_values_reach_the_shell_as_arguments_never_as_code() -> None:
    """k9s splices its values into each argument as text: in the `sh -c` script a name or a
    context would be read as shell code. So the script names none of them, and each value is
    an argument of its own."""
    for name, plugin in plugins().items():
        assert plugin["command"] == "sh" and plugin["args"][0] == "-c", name
        script, *positional = plugin["args"][1:]
        spliced = {m[2] or m[5] for m in ENV_RX.findall(script)}
        assert not {v.upper() for v in spliced} & K9S_VARIABLES, (name, spliced)
        assert positional[0] == "sh"  # $0
        assert all(re.fullmatch(r"\$[A-Z]+", a) for a in positional[1:]), name
        used = {int(n) for n in re.findall(r"\$(\d)", script)}
        assert used == set(range(1, len(positional))), name


def run_plugin(name: str, values: list[str], tmp_path: Path) -> list[str]:
    """The plugin's script as k9s runs it (`sh -c SCRIPT sh VALUES...`), with a `kubectl`
    that prints its arguments and a `less` that passes them through; the arguments."""
    for tool, body in [("kubectl", 'printf "%s\\n" "$@"'), ("less", "cat")]:
        (tmp_path / tool).write_text(f"#!/bin/sh\n{body}\n")
        (tmp_path / tool).chmod(0o755)
    script = plugins()[name]["args"][1]
    done = subprocess.run(
        ["sh", "-c", script, "sh", *values],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
    )
    return done.stdout.splitlines()


def test_terminating_here_reads_every_namespace_for_a_cluster_scoped_object(
    tmp_path: Path,
) -> None:
    """k9s gives "-" as $NAMESPACE of a cluster-scoped object (client.ClusterScope), seen in
    the real k9s (tests/e2e/test_k9s.py): that is every namespace, not one named "-"."""
    for namespace, scope in [("-", "--all-namespaces"), ("", "--all-namespaces")]:
        args = run_plugin("terminating-explain-any", [namespace, "ctx", "/kc"], tmp_path)
        assert args[:3] == ["terminating", "all", scope], namespace
    args = run_plugin("terminating-explain-any", ["shop", "ctx", "/kc"], tmp_path)
    assert args[:3] == ["terminating", "all", "--namespace=shop"]
    assert args[3:] == ["--context", "ctx", "--kubeconfig", "/kc", "--explain", "--color", "always"]
