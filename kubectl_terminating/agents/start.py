"""Start `kubectl terminating mcp`: the kubeconfig resolved once, as every command does (a bad
one is the one error line, before any MCP traffic), then the stdio server (server.py)."""

from __future__ import annotations

import io
from typing import IO

from kubectl_terminating.connection import connect, guarded
from kubectl_terminating.options import Options


def start(options: Options, max_items: int, err: IO[str]) -> int:
    def body() -> int:
        from kubectl_terminating.agents.server import serve_stdio
        from kubectl_terminating.agents.tools import Limits, Tools

        # the context, cluster and credentials the calls will use: an unknown context or a
        # malformed kubeconfig fails now; an exec plugin never prompts (stdin is the protocol)
        connect(options, io.StringIO(), interactive=False)
        return serve_stdio(Tools(options, Limits(max_items=max_items)))

    return guarded(body, err)
