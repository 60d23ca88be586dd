"""The Model Context Protocol's stdio transport and its handshake era, as little as a server of
read-only tools needs: JSON-RPC 2.0, one message a line (`initialize`, `ping`, `tools/*`,
`resources/*`, `prompts/*`). Ours, not the SDK's: the single-file build cannot carry the SDK
without slowing every command (docs/choices.md, "MCP server"); the SDK is the test client.

A client that probes the stateless era first (`server/discover`) gets "method not found" and
falls back to `initialize`, as the specification asks of clients.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import IO, Any

JSON = dict[str, Any]

# The handshake revisions we answer, oldest first; a client asking for another gets our newest
# (the specification's negotiation: it then decides whether to go on).
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@dataclass(frozen=True)
class Server:
    """What the server offers: its name, instructions and methods (name → handler of params)."""

    name: str
    version: str
    instructions: str
    capabilities: JSON
    methods: Mapping[str, Callable[[JSON], JSON]]


def initialize(server: Server, params: JSON) -> JSON:
    asked = params.get("protocolVersion")
    return {
        "protocolVersion": asked if asked in VERSIONS else VERSIONS[-1],
        "capabilities": server.capabilities,
        "serverInfo": {"name": server.name, "version": server.version},
        "instructions": server.instructions,
    }


def handle(server: Server, message: object) -> JSON | None:
    """The answer to one message; None for a notification (no id), which is never answered."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, RpcError(INVALID_REQUEST, "Invalid Request"))
    ident = message.get("id")
    method = message.get("method")
    if "id" not in message:
        return None  # notifications/initialized, notifications/cancelled, ...: nothing to do
    if not isinstance(method, str) or not isinstance(ident, str | int) or isinstance(ident, bool):
        return _error(ident, RpcError(INVALID_REQUEST, "Invalid Request"))
    params = message.get("params", {})
    try:
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            result = initialize(server, params)
        elif method == "ping":
            result = {}
        elif method in server.methods:
            result = server.methods[method](params)
        else:
            raise RpcError(METHOD_NOT_FOUND, "Method not found", method)
    except RpcError as error:
        return _error(ident, error)
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: object, error: RpcError) -> JSON:
    body: JSON = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": ident, "error": body}


def serve(server: Server, lines: Iterable[str], out: IO[str]) -> None:
    """Answers each line until the input ends (the client closed stdin: the session is over).
    A batch (a JSON array) is answered as one array, as JSON-RPC 2.0 has it."""
    for line in lines:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            answer: object = _error(None, RpcError(PARSE_ERROR, "Parse error"))
        else:
            if isinstance(message, list) and message:
                answers = [a for a in (handle(server, m) for m in message) if a is not None]
                answer = answers or None
            else:
                answer = handle(server, message)
        if answer is not None:
            out.write(json.dumps(answer, ensure_ascii=True, separators=(",", ":")) + "\n")
            out.flush()


def check_arguments(schema: JSON, arguments: object) -> JSON:
    """arguments checked against a tool's input schema (the subset the tools use: strings,
    booleans, enums, nullable strings, arrays of strings), defaults filled in. Raises
    ValueError with what is wrong, for the tool's error result (the model can correct it)."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be an object")
    properties: JSON = schema.get("properties", {})
    missing = [name for name in schema.get("required", ()) if arguments.get(name) is None]
    if missing:
        raise ValueError(f"missing required argument: {', '.join(missing)}")
    checked: JSON = {}
    for name, spec in properties.items():
        value = arguments.get(name, spec.get("default"))
        checked[name] = _check(name, spec, value)
    return checked  # arguments the schema does not name are ignored, as the SDK does


def _check(name: str, spec: JSON, value: object) -> object:
    if "anyOf" in spec:  # a nullable value: null, or the other alternative
        if value is None:
            return None
        spec = next(s for s in spec["anyOf"] if s.get("type") != "null")
    kind = spec.get("type")
    if kind == "string" and not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    if kind == "boolean" and not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false")
    if kind == "array":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{name} must be an array of strings")
        if len(value) < spec.get("minItems", 0):
            raise ValueError(f"{name} needs at least {spec['minItems']} item(s)")
    if "enum" in spec and value not in spec["enum"]:
        raise ValueError(f"{name} must be one of {', '.join(map(str, spec['enum']))}")
    return value
