"""Global flags before or after the command, in kubectl's spellings, and their completion."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating import commands as run_module
from kubectl_terminating import kinds
from kubectl_terminating.cli import GLOBAL_NAMES, GlobalGroup, cli, main, pflag_style
from kubectl_terminating.completion import complete
from kubectl_terminating.kubeconfig import Overrides
from kubectl_terminating.options import KINDS, Options
from kubectl_terminating.render.summary import SUMMARY_AFTER_ROWS


def parsed(monkeypatch: pytest.MonkeyPatch, *args: str) -> Options:
    """The Options a command line gives (nothing is run)."""
    seen: list[Options] = []

    def fake_run(options: Options) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr(run_module, "run", fake_run)
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    assert exited.value.code == 0
    return seen[0]


def test_every_kind_has_its_command_and_its_registry_entry() -> None:
    assert set(cli.commands) == {
        *KINDS,
        "dump",
        "fix",
        "mcp",
        "options",
        "preflight",
        "serve",
        "types",
    }
    assert tuple(kind.command for kind in kinds.KINDS) == KINDS


def test_global_flags_before_and_after_the_command_mean_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flags = ["--context", "prod", "-n", "shop", "--as", "jane", "-s", "https://h:6443", "-v", "6"]
    before = parsed(monkeypatch, *flags, "pods", "web-0")
    after = parsed(monkeypatch, "pods", "web-0", *flags)
    assert before == after
    assert (before.context, before.namespace, before.verbosity) == ("prod", "shop", 6)
    assert before.names == ("web-0",)
    assert (before.overrides.impersonate, before.overrides.server) == ("jane", "https://h:6443")


def test_after_the_command_wins_and_repeated_groups_add_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    options = parsed(
        monkeypatch,
        "--context=a",
        "--as-group",
        "g1",
        "ns",
        "--context",
        "b",
        "--as-group",
        "g2",
        "--insecure-skip-tls-verify",
    )
    assert options.context == "b"
    assert options.overrides.impersonate_groups == ("g1", "g2")
    assert options.overrides.insecure_skip_tls_verify


def test_pflag_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    options = parsed(
        monkeypatch,
        "-v=6",
        "--insecure-skip-tls-verify=true",
        "all",
        "-n=shop",
        "--disable-compression=false",
        "-A=false",
    )
    assert options.verbosity == 6 and options.namespace == "shop"
    assert options.overrides.insecure_skip_tls_verify
    assert not options.overrides.disable_compression
    assert not options.all_namespaces
    # after `--` nothing is rewritten; a value that is no boolean is left for click to refuse
    assert pflag_style(["--", "-v=6"], set()) == ["--", "-v=6"]
    # shorthand flags run together, the last one with a value (kubectl takes `get pods -Av=6`)
    together = parsed(monkeypatch, "all", "-Av=6")
    assert together.all_namespaces and together.verbosity == 6
    # ... but a value written without a space keeps its `=`: -lapp=web is -l app=web
    assert parsed(monkeypatch, "pods", "-lapp=web").selector == "app=web"
    assert pflag_style(["--explain=maybe"], {"--explain"}) == ["--explain=maybe"]


def test_a_connection_flag_is_its_field_of_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    # each field of kubeconfig.Overrides is taken by its own flag, straight into the field
    for field in fields(Overrides):
        flag = field.metadata["flag"].opts[-1]
        on_off = isinstance(field.default, bool)
        options = parsed(monkeypatch, "pods", *([flag] if on_off else [flag, "k=v"]))
        expected: Any = True if on_off else ("k=v",) if isinstance(field.default, tuple) else "k=v"
        assert options.overrides == replace(Overrides(), **{field.name: expected}), flag


def test_every_command_gets_every_global_flag() -> None:
    for command in cli.commands.values():
        names = {p.name for p in command.params}
        assert names >= GLOBAL_NAMES, command.name


def test_a_new_command_gets_the_global_flags_for_free() -> None:
    group = GlobalGroup("stand-in")  # not `cli`: a command added there would leak into others
    seen: dict[str, Any] = {}

    @group.command("probe")
    def probe(**flags: Any) -> None:
        seen.update(flags)

    group.main(["--context", "x", "probe", "--as", "y", "-n=z"], standalone_mode=False)
    assert (seen["context"], seen["impersonate"], seen["namespace"]) == ("x", "y", "z")
    assert set(seen) == GLOBAL_NAMES


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["--context", "prod", "po"], ["pods"]),
        (["--context", "prod", "pods", "--kube"], ["--kubeconfig"]),
        (["-n", "shop", "ns", "--as-"], ["--as-group", "--as-uid", "--as-user-extra"]),
        (["--context", ""], []),  # a context name is typed here, not a command
        (["--insec"], ["--insecure-skip-tls-verify"]),
    ],
)
def test_completion_skips_global_flags_and_their_values(
    words: list[str], expected: list[str]
) -> None:
    out = io.StringIO()
    complete(cli, ["__complete", *words], out)
    assert out.getvalue().splitlines()[:-1] == expected


def _stderr_of(code: str) -> str:
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    return done.stderr


def test_library_log_records_never_reach_stderr_once_connected() -> None:
    noise = "import logging; logging.getLogger('kubernetes.config').warning('library noise')"
    assert "library noise" in _stderr_of(noise)  # Python's default: printed
    connect = (
        "import io; from kubectl_terminating.connection import connect; "
        "from kubectl_terminating.options import Options; "
        "from kubectl_terminating.kubeconfig import Overrides; "
        "connect(Options('pods', overrides=Overrides(server='https://h:1', token='t')), "
        "io.StringIO()); "
    )
    assert _stderr_of(connect + noise) == ""


def test_options_lists_the_global_flags_as_kubectl_options_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--context", "any", "options"])  # takes the global flags too, as kubectl's does
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("The following options can be passed to any command")
    for name in ("--kubeconfig", "--as-group", "--request-timeout", "--color"):
        assert out.count(f"  {name} ") == 1, name
    assert "--all-namespaces" not in out  # a command's own flags are not global


def test_help_ends_with_kubectls_pointers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        'Use "kubectl terminating <command> --help" for more information about a command.',
        'Use "kubectl terminating options" for a list of global command-line options '
        "(applies to all commands).",
    ]


# -- what users script on, through the command line (the e2e twins: tests/e2e/test_pods.py) ----

KUBECTL_GET = (
    Path(__file__).parent.parent / "fixtures" / "snapshots" / "kubectl-get-pods-nodes.json"
)


def cli_run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int | str | None, str]:
    """`kubectl terminating ARGS`: its exit status and stdout."""
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    return exited.value.code, capsys.readouterr().out


def in_grace(tmp_path: Path) -> str:
    """A file whose only pod is deleted, its grace period not over (with --now)."""
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": "slow-0",
            "namespace": "shop",
            "deletionTimestamp": "2099-01-01T00:00:00Z",
        },
        "spec": {"nodeName": "worker-1", "terminationGracePeriodSeconds": 30},
    }
    path = tmp_path / "grace.json"
    path.write_text(json.dumps({"kind": "List", "items": [pod]}))
    return str(path)


def test_exit_code_is_3_only_when_something_is_stuck(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stuck = ["pods", "--from-file", str(KUBECTL_GET)]
    assert cli_run(capsys, *stuck)[0] == 0
    code, out = cli_run(capsys, *stuck, "--exit-code")
    assert code == 3 and "web-1" in out
    code, out = cli_run(capsys, "pods", "--from-file", in_grace(tmp_path), "--now", "--exit-code")
    assert code == 0 and "slow-0" in out


def many_stuck(tmp_path: Path) -> tuple[str, int]:
    """KUBECTL_GET with its stuck pods copied past SUMMARY_AFTER_ROWS rows, where a table ends
    with its causes; the file and how many rows it gives."""
    data = json.loads(KUBECTL_GET.read_text())
    stuck = [
        i for i in data["items"] if i["kind"] == "Pod" and i["metadata"].get("deletionTimestamp")
    ]
    copies = SUMMARY_AFTER_ROWS // len(stuck) + 1
    for n in range(1, copies):
        for pod in stuck:
            copy = json.loads(json.dumps(pod))
            copy["metadata"]["name"] += f"-{n}"
            copy["metadata"]["uid"] = f"{pod['metadata'].get('uid', 'uid')}-{n}"
            data["items"].append(copy)
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data))
    return str(path), copies * len(stuck)


def test_no_headers_prints_the_rows_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Past SUMMARY_AFTER_ROWS the table ends with the causes; --no-headers is the rows only."""
    path, count = many_stuck(tmp_path)
    assert count > SUMMARY_AFTER_ROWS
    for extra in ([], ["-o", "wide"]):
        code, table = cli_run(capsys, "pods", "--from-file", path, *extra)
        assert code == 0 and table.startswith("NAMESPACE ")
        rows = [line.split() for line in table.splitlines()[1 : count + 1]]
        assert len(table.splitlines()) > count + 1  # the summary of causes follows the rows
        code, bare = cli_run(capsys, "pods", "--from-file", path, "--no-headers", *extra)
        assert code == 0 and [line.split() for line in bare.splitlines()] == rows
