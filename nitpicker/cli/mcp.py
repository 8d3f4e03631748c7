"""``nitpicker mcp``: serve the archive query tools to an AI assistant over MCP (stdio).

The server lives in :mod:`nitpicker.mcp`; it is imported only when the command runs, so the
rest of the CLI does not pay for loading the MCP SDK.
"""

from __future__ import annotations

import typer

__all__ = ["app", "mcp"]

app = typer.Typer()


@app.command()
def mcp() -> None:
    """Serve the archive query tools to an MCP client (Claude Desktop, an IDE, an agent).

    The client starts this command and speaks MCP (JSON-RPC) on its stdin and stdout.

    Archives are opened by path with the open_archive tool, read-only: never modified.

    Example: nitpicker mcp
    """
    from nitpicker.mcp import main

    main()
