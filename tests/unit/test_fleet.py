"""Several contexts in one run (fleet.py): flag rules, the concurrency and deadline of each
context, the summary across clusters and the one-file snapshot of several contexts. Reading
real clusters is tested in tests/e2e/test_fleet.py."""

from __future__ import annotations

import copy
import io
import json
import threading
from pathlib import Path

import pytest

from kubectl_terminating import fleet
from kubectl_terminating.cli import main
from kubectl_terminating.fleet import Part, gather, report_fleet, run_snapshots
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import Finding
from kubectl_terminating.options import Options
from kubectl_terminating.render.fleet import fleet_summary_text
from kubectl_terminating.render.structured import list_document
from kubectl_terminating.snapshot import load, snapshot_list, write_bundle
from tests.unit.test_render_pods import volumes_stuck
from tests.unit.test_summary import held_by


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--contexts", "a,b", "--all-contexts"], "--contexts and --all-contexts cannot"),
        (["--all-contexts", "--context", "a"], "--context cannot be combined with --all-contexts"),
        (["--contexts", "a", "--server", "https://x"], "--server cannot be combined"),
        (["--contexts", "a", "--token", "t"], "--token cannot be combined with --contexts"),
        (["--contexts", " , "], "--contexts needs at least one context name"),
        (["--all-contexts", "--from-file", "f.json"], "--from-file cannot be combined"),
        (["--all-contexts", "-o", "name"], "-o name cannot say which context"),
    ],
)
def test_flags_that_name_one_cluster_are_usage_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_usage_error(["pods", *args], message, capsys)


def assert_usage_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line exits 2 with message on stderr, as kubectl's usage errors."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_fix_and_dump_take_the_fleet_flags_as_kubectl_global_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_usage_error(["--all-contexts", "fix", "pods"], "fix works on one cluster", capsys)
    dump = ["dump", "-f", "x.json", "--contexts", "a", "--context", "b"]
    assert_usage_error(dump, "--context cannot be combined with --contexts", capsys)


def test_help_lists_the_fleet_flags_with_the_global_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["pods", "--help"])
    help_text = capsys.readouterr().out
    globals_section = help_text[help_text.index("Global options") :]
    assert "--contexts NAME,..." in globals_section
    assert "--all-contexts" in globals_section


# -- gather: each context on its own ------------------------------------------------------------


def test_a_context_that_never_answers_is_given_up_and_frees_its_slot() -> None:
    """With one worker, a hung first context must not keep the second from being read."""
    never = threading.Event()

    def read(name: str) -> Part:
        if name == "hung":
            never.wait()
        return Part(name, error=None, log=f"read {name}")

    parts = gather(["hung", "ok"], read, deadline=0.5, workers=1)
    never.set()
    assert [(p.context, p.error, p.log) for p in parts] == [
        ("hung", "no answer within 0.5s", ""),
        ("ok", None, "read ok"),
    ]


def test_at_most_workers_contexts_are_read_at_once() -> None:
    lock, running, peak = threading.Lock(), [0], [0]

    def read(name: str) -> Part:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        threading.Event().wait(0.05)
        with lock:
            running[0] -= 1
        return Part(name)

    names = [f"c{i}" for i in range(10)]
    parts = gather(names, read, workers=3)
    assert [p.context for p in parts] == names
    assert peak[0] <= 3


def test_a_bug_on_one_context_is_that_context_s_warning() -> None:
    def read(name: str) -> Part:
        if name == "bad":
            raise KeyError("boom")
        return Part(name)

    parts = gather(["bad", "good"], read)
    assert parts[0].error == "internal error KeyError: 'boom'"
    assert parts[1].error is None


# -- the summary across clusters ----------------------------------------------------------------


def in_context(finding: Finding, context: str) -> Finding:
    copied = copy.deepcopy(finding)
    copied.context = context
    return copied


def test_summary_groups_one_cause_across_clusters() -> None:
    driver = volumes_stuck()
    found = [in_context(driver, "prod-eu-1") for _ in range(4)]
    found += [in_context(driver, "prod-us-2") for _ in range(2)]
    found += [in_context(driver, f"dev-{i}") for i in range(5)]
    found.append(in_context(held_by(1, "example.com/drain"), "prod-us-2"))
    lines = fleet_summary_text(found).splitlines()
    assert lines == [
        "Summary: 12 pods in 7 clusters, 2 causes",
        "CSI driver ebs.csi.aws.com not installed or not running: 11 pods in 7 clusters: "
        "prod-eu-1 (4), "
        "prod-us-2 (2), dev-0 (1), dev-1 (1), dev-2 (1), ... 2 more",
        "finalizer example.com/drain: 1 pod in 1 cluster: prod-us-2 (1)",
    ]


def test_json_items_and_summary_name_their_contexts() -> None:
    found = [in_context(volumes_stuck(), "a"), in_context(volumes_stuck(), "b")]
    document = list_document(found, [], json_extras)
    assert [item["context"] for item in document["items"]] == ["a", "b"]
    assert next(iter(document["items"][0])) == "context"
    assert document["summary"][0]["contexts"] == [
        {"context": "a", "count": 1},
        {"context": "b", "count": 1},
    ]


def test_a_single_context_run_has_no_context_keys() -> None:
    document = list_document([volumes_stuck()], [], json_extras)
    assert "context" not in document["items"][0]
    assert "contexts" not in document["summary"][0]


# -- one file for several contexts --------------------------------------------------------------


def snapshot(context: str, objects: list[dict[str, object]]) -> dict[str, object]:
    return {
        "apiVersion": "terminating.kubectl.io/v1",
        "kind": "Snapshot",
        "header": {"context": context, "capturedAt": "2026-01-01T12:00:00Z"},
        "objects": objects,
    }


def two_contexts(tmp_path: Path) -> Path:
    """A `dump --contexts` file: eu and us hold the same stuck pod, a CSI driver installed in
    eu only; context "down" could not be saved."""
    from tests.unit.builders import healthy_cluster, pod_fixture, terminated

    pod = terminated(pod_fixture("pod-web-0"), 143, "Error", "2026-01-01T11:49:45Z")
    uninstalled = pod_fixture("csinode-worker-1")
    uninstalled["spec"]["drivers"] = []
    eu = [pod, uninstalled, *healthy_cluster("csidriver-ebs", "csinode-worker-1")]
    path = tmp_path / "fleet.json.gz"
    write_bundle(
        str(path),
        snapshot_list(
            [snapshot("eu", eu), snapshot("us", [pod, *healthy_cluster()])],
            ['context "down": unable to connect'],
        ),
    )
    return path


def test_a_snapshot_list_is_explained_per_context(tmp_path: Path) -> None:
    """Two contexts' snapshots in one file: each explained against its own objects (the same
    pod name in both, a CSI driver installed in one only)."""
    path = two_contexts(tmp_path)
    loaded = load(str(path))
    assert [c for c, _ in loaded.contexts] == ["eu", "us"]
    out, err = io.StringIO(), io.StringIO()
    code = run_snapshots(Options(kind="pods", output="json", from_file=str(path)), loaded, out, err)
    assert code == 0
    items = json.loads(out.getvalue())["items"]
    assert [(i["context"], i["name"]) for i in items] == [("eu", "web-0"), ("us", "web-0")]
    eu_blockers, us_blockers = ({b["type"] for b in i["blockers"]} for i in items)
    assert "csi-driver-missing" in eu_blockers
    assert "csi-driver-missing" not in us_blockers
    assert 'Warning: context "down": unable to connect' in err.getvalue()


def test_fleet_exit_status(tmp_path: Path) -> None:
    """As test_exit_1_only_when_no_context_could_be_read (e2e): 1 only when no context could
    be read; one is enough for 0, and --exit-code says 3 when something is stuck there."""
    out, err = io.StringIO(), io.StringIO()
    down = [Part("gamma", error="unable to connect"), Part("beta", error="forbidden")]
    assert report_fleet(down, out, err) == 1
    assert out.getvalue() == ""
    assert err.getvalue().splitlines() == [
        'Warning: context "gamma": unable to connect',
        'Warning: context "beta": forbidden',
        "error: none of the 2 contexts could be read",
    ]
    path = two_contexts(tmp_path)
    for exit_code, expected in ((False, 0), (True, 3)):
        options = Options(kind="pods", from_file=str(path), exit_code=exit_code)
        out, err = io.StringIO(), io.StringIO()
        assert run_snapshots(options, load(str(path)), out, err) == expected
        assert 'Warning: context "down": unable to connect' in err.getvalue()
        assert "web-0" in out.getvalue()
        # a context read beside one that could not be: the readable one decides
        (read,) = parts_of(options, path, "eu")
        out, err = io.StringIO(), io.StringIO()
        assert report_fleet([down[0], read], out, err) == expected
        assert 'Warning: context "gamma": unable to connect' in err.getvalue()
        assert "none of" not in err.getvalue() and "web-0" in out.getvalue()


def parts_of(options: Options, path: Path, *contexts: str) -> list[Part]:
    """The named contexts of a `dump --contexts` file, each read as a fleet run reads one."""
    captured: list[Part] = []

    def keep(parts: list[Part], *_args: object) -> int:
        captured.extend(p for p in parts if p.context in contexts)
        return 0

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fleet, "report_fleet", keep)
        run_snapshots(options, load(str(path)), io.StringIO(), io.StringIO())
    return captured


# -- exec credential plugins never prompt in a fleet run ---------------------------------------


def test_exec_plugin_of_a_fleet_context_runs_non_interactive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal a single context's plugin may prompt (spec.interactive true); a fleet
    context's gets spec.interactive false and stdin at end of file."""
    from kubectl_terminating.errors import ConfigError
    from kubectl_terminating.kubeconfig import Connection, run_exec_plugin

    plugin = tmp_path / "plugin"
    plugin.write_text(
        "#!/bin/sh\n"
        'case "$KUBERNETES_EXEC_INFO" in *\'"interactive": false\'*) mode=quiet;;'
        " *) mode=asked;; esac\n"
        "read answer && mode=read-a-line\n"
        'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        '"status":{"token":"%s"}}\' "$mode"\n'
    )
    plugin.chmod(0o755)
    exec_config = {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}
    monkeypatch.setattr(
        "sys.stdout", type("Terminal", (io.StringIO,), {"isatty": lambda _: True})()
    )
    with (tmp_path / "stdin").open("w+") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        connection = Connection("https://x", "c", "default", exec_config=exec_config)
        assert run_exec_plugin(connection)["token"] == "asked"
        connection.interactive = False
        assert run_exec_plugin(connection)["token"] == "quiet"
    failing = {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/false"}
    connection = Connection("https://x", "c", "default", exec_config=failing, interactive=False)
    with pytest.raises(ConfigError, match="exec credential plugin '/bin/false' failed"):
        run_exec_plugin(connection)
