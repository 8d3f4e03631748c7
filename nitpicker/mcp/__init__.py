"""The MCP server: the query library as tools an AI assistant calls (``nitpicker mcp``).

Every tool is a thin typed function over one :mod:`nitpicker.query` function: its signature is
the tool's input schema, its docstring the description the model reads, its return type (the
library's ``TypedDict``) the output schema, so results arrive as structured content. Archives are
opened by path with ``open_archive`` and named by id afterwards
(:class:`~nitpicker.query.archives.ArchiveRegistry`); they are opened read-only and never
modified.

A bad argument (an unknown id, a bad choice, a URL the archive does not have) is a tool error
(``is_error``) whose text names the problem; no error text carries an absolute path
(:func:`sanitize`). Run it with ``nitpicker mcp`` or ``python -m nitpicker.mcp`` (stdio).
"""

from __future__ import annotations

from nitpicker.mcp import content_tools as _content_tools  # noqa: F401  (registers every tool)
from nitpicker.mcp.server import registry, sanitize, server
from nitpicker.mcp.tools import OpenedArchive

__all__ = ["OpenedArchive", "main", "registry", "sanitize", "server"]


def main() -> None:
    """Serve on stdio until the client closes the connection."""
    try:
        server.run()
    finally:
        registry.close_all()
