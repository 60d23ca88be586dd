"""Start `kubectl terminating mcp`: the kubeconfig resolved once, as every command does (a bad
one is the one error line, before any MCP traffic), then the SDK's stdio server."""

from __future__ import annotations

import io
from typing import IO

from kubectl_terminating.connection import connect, guarded
from kubectl_terminating.errors import ConfigError
from kubectl_terminating.options import Options

MISSING_SDK = (
    "kubectl terminating mcp needs the mcp package, which this installation does not have: "
    "pip install 'kubectl-terminating[mcp]'"
)


def start(options: Options, max_items: int, err: IO[str]) -> int:
    def body() -> int:
        from kubectl_terminating.agents.tools import Limits, Tools

        # the context, cluster and credentials the calls will use: an unknown context or a
        # malformed kubeconfig fails now; an exec plugin never prompts (stdin is the protocol)
        connect(options, io.StringIO(), interactive=False)
        try:
            from kubectl_terminating.agents.server import serve_stdio
        except ImportError as error:
            if (error.name or "").split(".")[0] not in ("mcp", "pydantic"):
                raise
            raise ConfigError(MISSING_SDK) from None
        return serve_stdio(Tools(options, Limits(max_items=max_items)))

    return guarded(body, err)
