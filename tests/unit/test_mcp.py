"""`kubectl terminating mcp` without a cluster: how answers are bounded, how it starts (a bad
kubeconfig is one line) and that it speaks the protocol with no SDK installed (the single-file
build has none). The protocol itself: test_mcp_protocol.py; with the SDK's client: e2e."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kubectl_terminating.agents.tools import Limits, bounded

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
"""


def document(count: int, size: int = 10) -> dict[str, object]:
    items = [{"name": f"pod-{i}", "pad": "x" * size} for i in range(count)]
    return {"kind": "List", "items": items, "summary": [{"count": count}]}


def test_an_answer_within_the_limits_is_untouched() -> None:
    whole = document(3)
    assert bounded(whole, Limits(max_items=3)) is whole


def test_items_beyond_the_cap_are_cut_with_a_note() -> None:
    cut = bounded(document(120), Limits(max_items=50))
    assert [i["name"] for i in cut["items"]] == [f"pod-{i}" for i in range(50)]
    assert cut["summary"] == [{"count": 120}]  # the summary still counts every one
    truncated = cut["truncated"]
    assert truncated["shown"] == 50 and truncated["total"] == 120
    assert "Only the first 50 of 120 items" in truncated["note"]


def test_large_items_are_cut_by_size_but_one_always_shows() -> None:
    cut = bounded(document(10, size=1000), Limits(max_items=50, max_chars=3500))
    assert len(cut["items"]) == 3
    huge = bounded(document(2, size=10_000), Limits(max_items=50, max_chars=100))
    assert len(huge["items"]) == 1
    assert json.dumps(huge)  # still a JSON document


INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"},
}


def run_mcp(
    *args: str, kubeconfig: Path, code: str = "", stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    script = f"{code}\nfrom kubectl_terminating.cli import main\nmain({['mcp', *args]!r})"
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env={"KUBECONFIG": str(kubeconfig), "PATH": "/usr/bin:/bin"},
        input=stdin,
        timeout=60,
    )


def test_it_serves_without_the_sdk(tmp_path: Path) -> None:
    """The Krew binary carries no MCP SDK and no pydantic: the server must not need them."""
    config = tmp_path / "config"
    config.write_text(KUBECONFIG)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "terminating_types"},
        },
    ]
    sdk = ("mcp", "mcp_types", "pydantic", "pydantic_core")
    blocked = f"import sys\nfor m in {sdk!r}: sys.modules[m] = None"
    done = run_mcp(
        kubeconfig=config, code=blocked, stdin="".join(json.dumps(m) + "\n" for m in messages)
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]  # the notification is not answered
    assert answers[0]["result"]["serverInfo"]["name"] == "kubectl-terminating"
    assert len(answers[1]["result"]["tools"]) == 6
    types = answers[2]["result"]["structuredContent"]
    assert types["items"][0]["type"] == "node-missing"


def test_no_other_command_loads_the_server() -> None:
    code = (
        "import sys\n"
        "from kubectl_terminating.cli import main\n"
        "try:\n    main(['pods', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(any(m.startswith('kubectl_terminating.agents') for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"


def test_an_unknown_context_fails_at_start(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(KUBECONFIG)
    done = run_mcp("--context", "nope", kubeconfig=config)
    assert done.returncode == 1
    assert done.stdout == ""  # nothing on the protocol's channel
    assert done.stderr.splitlines() == ['error: context "nope" does not exist']


def test_mcp_refuses_several_contexts(tmp_path: Path) -> None:
    done = run_mcp("--all-contexts", kubeconfig=tmp_path / "none")
    assert done.returncode == 2
    assert "mcp reads one cluster: run one per context" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_apply_command_names_the_connection_the_server_uses() -> None:
    from kubectl_terminating.agents.tools import Tools
    from kubectl_terminating.options import Options

    tools = Tools(Options(kind="all", context="prod eu", kubeconfig="/k/config"))
    options = Options(kind="pods", names=("web-0",), namespace="shop")
    assert tools.command_line(options) == (
        "kubectl terminating --kubeconfig /k/config --context 'prod eu' fix pods web-0 -n shop"
    )
    namespaces = Options(kind="namespaces", names=("foo",), namespace="shop")
    assert tools.command_line(namespaces).endswith("fix namespaces foo")  # no -n for a namespace


def test_a_failed_run_is_its_error_line_not_its_warnings() -> None:
    from kubectl_terminating.agents.tools import _error_line

    stderr = (
        'Warning: cannot list nodes: forbidden\nError from server (NotFound): pods "x" not found\n'
    )
    assert _error_line(stderr) == 'Error from server (NotFound): pods "x" not found'


def test_preflight_refuses_flags_and_says_kubectls_usage_line() -> None:
    import pytest

    from kubectl_terminating.agents.tools import ToolFailed, Tools
    from kubectl_terminating.options import Options

    tools = Tools(Options(kind="all", kubeconfig="/nonexistent"))
    with pytest.raises(ToolFailed, match="target names what would be deleted"):
        tools.preflight(["-f", "chart.yaml"])  # an agent has no file to name
    with pytest.raises(ToolFailed) as usage:  # judged before any connection
        tools.preflight(["helm"])
    assert str(usage.value) == "error: preflight helm takes exactly one release name (and no -f)"
