"""The MCP stdio protocol of agents/protocol.py and the tool calls of agents/server.py, message by
message, without a cluster: what JSON-RPC 2.0 and the specification's handshake ask of a server.
The SDK's own client speaks to it in tests/e2e/test_mcp.py and tests/dist/smoke.py."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from kubectl_terminating.agents.protocol import VERSIONS, check_arguments, serve
from kubectl_terminating.agents.server import TOOLS, build
from kubectl_terminating.agents.tools import Tools
from kubectl_terminating.options import Options

JSON = dict[str, Any]


def exchange(*messages: object, raw: str = "") -> list[Any]:
    """The server's answers, one per line, to messages sent one per line (then raw)."""
    lines = [json.dumps(m) + "\n" for m in messages] + ([raw] if raw else [])
    out = io.StringIO()
    serve(build(Tools(Options(kind="all"))), lines, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def request(ident: object, method: str, params: JSON | None = None) -> JSON:
    message: JSON = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return message


def test_initialize_answers_the_clients_version_or_our_newest() -> None:
    known, unknown = exchange(
        request(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}}),
        request(2, "initialize", {"protocolVersion": "2099-01-01", "capabilities": {}}),
    )
    assert known["result"]["protocolVersion"] == "2025-03-26"
    assert unknown["result"]["protocolVersion"] == VERSIONS[-1]
    result = known["result"]
    assert result["serverInfo"]["name"] == "kubectl-terminating"
    assert set(result["capabilities"]) == {"tools", "resources", "prompts"}
    assert "Every tool only reads" in result["instructions"]


def test_notifications_get_no_answer_and_ping_an_empty_one() -> None:
    answers = exchange(
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        request("p", "ping"),
    )
    assert answers == [{"jsonrpc": "2.0", "id": "p", "result": {}}]


def test_the_stateless_probe_is_refused_so_clients_fall_back_to_initialize() -> None:
    (answer,) = exchange(request(1, "server/discover", {}))
    assert answer["error"]["code"] == -32601  # what the SDK's client falls back on


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("{not json\n", -32700),
        ('{"id": 1, "method": "ping"}\n', -32600),  # no jsonrpc member
        ('{"jsonrpc": "2.0", "id": 1}\n', -32600),  # no method
        ('{"jsonrpc": "2.0", "id": true, "method": "ping"}\n', -32600),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}\n', -32602),
    ],
)
def test_malformed_messages_get_the_json_rpc_error(line: str, code: int) -> None:
    (answer,) = exchange(raw=line)
    assert answer["error"]["code"] == code
    assert "result" not in answer


def test_a_batch_is_answered_as_one_array_without_its_notifications() -> None:
    (answer,) = exchange(
        [request(1, "ping"), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    )
    assert answer == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_tools_are_listed_read_only_with_their_schemas() -> None:
    (answer,) = exchange(request(1, "tools/list"))
    tools = {tool["name"]: tool for tool in answer["result"]["tools"]}
    assert set(tools) == {tool.name for tool in TOOLS}
    for tool in tools.values():
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False
        assert tool["inputSchema"]["type"] == "object"
    explain = tools["terminating_explain"]["inputSchema"]
    assert explain["required"] == ["kind", "name"]
    assert explain["properties"]["kind"]["enum"] == ["pods", "namespaces", "all"]


def test_a_tool_call_answers_text_and_structured_content() -> None:
    (answer,) = exchange(request(1, "tools/call", {"name": "terminating_types", "arguments": {}}))
    result = answer["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["structuredContent"]["items"][0]["type"] == "node-missing"


def test_bad_arguments_are_an_error_result_the_model_can_read() -> None:
    wrong, missing, unknown = exchange(
        request(1, "tools/call", {"name": "terminating_list", "arguments": {"kind": "bogus"}}),
        request(2, "tools/call", {"name": "terminating_explain", "arguments": {"kind": "pods"}}),
        request(3, "tools/call", {"name": "terminating_nope", "arguments": {}}),
    )
    assert wrong["result"]["isError"] is True
    assert wrong["result"]["content"][0]["text"] == (
        "error: terminating_list: kind must be one of pods, namespaces, all"
    )
    assert missing["result"]["content"][0]["text"] == (
        "error: terminating_explain: missing required argument: name"
    )
    assert unknown["error"]["code"] == -32602  # an unknown tool is a protocol error


def test_the_resource_and_the_prompt() -> None:
    listed, read, absent, prompt = exchange(
        request(1, "resources/list"),
        request(2, "resources/read", {"uri": "terminating://types"}),
        request(3, "resources/read", {"uri": "terminating://nope"}),
        request(
            4,
            "prompts/get",
            {"name": "diagnose-stuck-namespace", "arguments": {"namespace": "shop"}},
        ),
    )
    assert listed["result"]["resources"][0]["uri"] == "terminating://types"
    contents = read["result"]["contents"][0]
    assert json.loads(contents["text"])["items"][0]["type"] == "node-missing"
    assert absent["error"]["code"] == -32002
    text = prompt["result"]["messages"][0]["content"]["text"]
    assert "terminating_explain" in text and "'shop'" in text


def test_arguments_are_checked_and_defaults_filled() -> None:
    schema = next(t for t in TOOLS if t.name == "terminating_preflight").schema
    checked = check_arguments(schema, {"target": ["ns", "shop"], "extra": 1})
    assert checked == {
        "target": ["ns", "shop"],
        "namespace": None,
        "cascade": "background",
        "fail_on": "likely",
    }
    for bad, why in (
        ({"target": []}, "target needs at least 1 item(s)"),
        ({"target": "ns shop"}, "target must be an array of strings"),
        ({"target": ["ns"], "namespace": 3}, "namespace must be a string"),
        (
            {"target": ["ns"], "fail_on": "maybe"},
            "fail_on must be one of certain, likely, possible",
        ),
    ):
        with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(")", r"\)")):
            check_arguments(schema, bad)
