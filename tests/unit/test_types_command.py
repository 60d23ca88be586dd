"""`kubectl terminating types`: the blocker types straight from causes.TABLE, in rank order,
as kubectl api-resources lists resource types, with no cluster and no kubeconfig."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from typing import Any

import pytest
import yaml

from kubectl_terminating import causes
from kubectl_terminating.causes import PROPOSED, TABLE, Cause
from kubectl_terminating.cli import cli, main
from kubectl_terminating.completion import complete
from kubectl_terminating.model import API_VERSION
from tests.unit.golden import assert_golden


def types(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(["types", *args])
    assert done.value.code == 0
    return capsys.readouterr().out


def rows(text: str) -> list[list[str]]:
    """The table's cells (columns are three spaces apart; a cell has at most single spaces)."""
    return [[c.strip() for c in line.split("   ") if c.strip()] for line in text.splitlines()]


@pytest.mark.parametrize("output", [None, "wide", "name"])
def test_the_types_users_script_on_are_those_reviewed(
    capsys: pytest.CaptureFixture[str], output: str | None
) -> None:
    """The type names are an interface (`-o json` items, alert labels, `fix` refusals): the
    output is compared with a reviewed copy, not with the table it is printed from, so that a
    renamed or dropped type fails here."""
    text = types(capsys, *(["-o", output] if output else []))
    assert_golden(f"types/{output or 'table'}.txt", text)


def test_the_table_lists_every_row_in_rank_order(capsys: pytest.CaptureFixture[str]) -> None:
    [header, *lines] = rows(types(capsys))
    assert header == ["TYPE", "STAGE", "GROUP BY", "FIX", "LABEL"]
    assert [line[0] for line in lines] == [cause.type for cause in TABLE]
    assert [line[4] for line in lines] == [cause.label for cause in TABLE]
    by_type = {line[0]: line for line in lines}
    assert by_type["node-not-ready"][1:4] == ["deletion", "Node", "proposes"]
    assert by_type["runtime-unavailable"][1:4] == ["containers", "Node", "refuses"]
    assert by_type["csi-driver-missing"][1:4] == ["volumes", "CSIDriver", "refuses"]
    assert by_type["webhook"][1:4] == [
        "-",
        "ValidatingWebhookConfiguration,MutatingWebhookConfiguration",
        "proposes",
    ]
    assert by_type["grace-period"][1:4] == ["-", "-", "context"]
    assert by_type["namespace-terminating"][3] == "context"  # context, though it has no refusal


def test_wide_adds_while_what_each_holds(capsys: pytest.CaptureFixture[str]) -> None:
    [header, *lines] = rows(types(capsys, "-o", "wide"))
    assert header == ["TYPE", "STAGE", "GROUP BY", "FIX", "LABEL", "HOLDS WHILE"]
    assert [line[5] for line in lines] == [cause.holds_while for cause in TABLE]
    bare = [cells[0] for cells in rows(types(capsys, "--no-headers"))]
    assert bare == [cause.type for cause in TABLE]


def test_json_is_a_list_of_the_rows_in_rank_order(capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(types(capsys, "-o", "json"))
    assert (document["apiVersion"], document["kind"]) == (API_VERSION, "List")
    items = document["items"]
    assert [(i["type"], i["rank"]) for i in items] == [(c.type, r) for r, c in enumerate(TABLE)]
    for item, cause in zip(items, TABLE, strict=True):
        assert item == {
            "kind": "BlockerType",
            "type": cause.type,
            "rank": item["rank"],
            "label": cause.label,
            "holdsWhile": cause.holds_while,
            "stage": cause.stage,
            "groupBy": list(cause.group),
            "nodeLog": cause.node_log,
            "clusterWide": cause.cluster_wide,
            "context": cause.context,
            "fix": {
                "proposes": cause.refusal is PROPOSED and not cause.context,
                "refusal": cause.refusal,
            },
        }
    by_type = {item["type"]: item for item in items}
    assert by_type["apiservice-unavailable"]["clusterWide"] is True
    assert by_type["apiservice-unavailable"]["fix"] == {"proposes": True, "refusal": None}
    assert "runtime must come back" in by_type["runtime-unavailable"]["fix"]["refusal"]
    assert by_type["grace-period"]["fix"] == {"proposes": False, "refusal": None}
    assert yaml.safe_load(types(capsys, "-o", "yaml")) == document


def test_name_prints_one_type_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert types(capsys, "-o", "name").splitlines() == [cause.type for cause in TABLE]


def test_a_row_added_to_the_table_is_listed_with_no_other_edit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    new = Cause("kubelet-wedged", "kubelet wedged", "the kubelet renews nothing", "deletion")
    monkeypatch.setattr(causes, "TABLE", (*TABLE[:2], new, *TABLE[2:]))
    [_, *lines] = rows(types(capsys))
    assert lines[2] == ["kubelet-wedged", "deletion", "-", "refuses", "kubelet wedged"]
    assert len(lines) == len(TABLE) + 1
    [item] = [i for i in json.loads(types(capsys, "-o", "json"))["items"] if i["rank"] == 2]
    assert (item["type"], item["fix"]["refusal"]) == ("kubelet-wedged", causes.NOT_AUTOMATED)
    assert types(capsys, "-o", "name").splitlines()[2] == "kubelet-wedged"


def test_it_needs_no_kubeconfig_and_opens_no_connection(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("types opened a connection")

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    # global flags are taken, as by kubectl api-resources, and name a server never reached
    out = types(capsys, "-o", "name", "--server", "https://192.0.2.1:6443")
    assert out.splitlines()[0] == TABLE[0].type


def test_it_loads_nothing_that_connects() -> None:
    code = (
        "import sys\n"
        "from kubectl_terminating.cli import main\n"
        "try:\n    main(['types', '-o', 'name'])\nexcept SystemExit as done:\n"
        "    print('exit', done.code)\n"
        "loaded = ('urllib3', 'kubernetes', 'kubectl_terminating.connection',\n"
        "          'kubectl_terminating.client', 'kubectl_terminating.explain')\n"
        "print(sorted(m for m in loaded if m in sys.modules))"
    )
    env = {"KUBECONFIG": "/nonexistent/kubeconfig", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    *listed, exited, loaded = done.stdout.splitlines()
    assert (listed, exited, loaded) == ([c.type for c in TABLE], "exit 0", "[]")


def test_a_bad_output_is_a_usage_error_as_for_the_other_commands() -> None:
    for command in ("types", "pods"):
        done = subprocess.run(
            [sys.executable, "-m", "kubectl_terminating", command, "-o", "table"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, command
        assert done.stdout == ""
        assert done.stderr.splitlines()[-1] == (
            "Error: Invalid value for '-o' / '--output': 'table' is not one of "
            "'wide', 'json', 'yaml', 'name'."
        )
        assert "Traceback" not in done.stderr


def test_completion_offers_the_command_and_its_outputs() -> None:
    out = io.StringIO()
    complete(cli, ["__complete", "ty"], out)
    assert out.getvalue().splitlines()[:-1] == ["types"]
    out = io.StringIO()
    complete(cli, ["__complete", "types", "-o", "y"], out)
    assert out.getvalue().splitlines()[:-1] == ["yaml"]
