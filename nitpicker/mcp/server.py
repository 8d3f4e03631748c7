"""The MCP server object, its error reporting, the tool decorator and the argument types the
tools share. The tools themselves are in :mod:`nitpicker.mcp.tools` and
:mod:`nitpicker.mcp.audit_tools`."""


from __future__ import annotations

import functools
import re
import sqlite3
import types
from collections.abc import Callable, Mapping
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

import typing_extensions
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from nitpicker import __version__
from nitpicker.errors import UserError
from nitpicker.query import (
    CONSOLE_LEVELS,
    DUPLICATE_FIELDS,
    LINK_TYPES,
    MISMATCH_TYPES,
    SORT_FIELDS,
    SORT_ORDERS,
    SQLITE_INTEGER_MAX,
    STATUS_RANGE,
)
from nitpicker.query.archives import ArchiveRegistry

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext


__all__ = ["registry", "sanitize", "server", "tool"]


INSTRUCTIONS = """\
Query nitpicker crawl archives (.nitpicker files: one SQLite file per crawl of a website).
Always call open_archive first with the path of a .nitpicker file; pass the archive_id it
returns to every other tool, and call close_archive when done. Start with get_summary.
Lists are paged: limit (1-1000) and offset in; items, total (every match), offset, limit out.
Archives are read-only: no tool changes them."""

# -- errors -------------------------------------------------------------------------------------

_ABSOLUTE_PATH = re.compile(r"""(?:/[^\s'",)]+){2,}""")
_PYDANTIC_HELP = re.compile(r"\n *For further information visit \S+")


def sanitize(message: str) -> str:
    """``message`` with every absolute-path-like run (``/a/b…``) replaced by ``<path>``, and
    pydantic's "For further information visit <url>" line left out."""
    return _ABSOLUTE_PATH.sub("<path>", _PYDANTIC_HELP.sub("", message))


_F = TypeVar("_F", bound=Callable[..., Any])


def _reporting_errors(fn: _F) -> _F:
    """``fn`` raising the errors a caller can fix as :class:`ToolError` (shown to the model)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, UserError) as exc:  # bad arguments, an archive it cannot read
            raise ToolError(sanitize(str(exc))) from exc
        except sqlite3.DatabaseError as exc:
            raise ToolError(sanitize(f"Corrupt archive ({exc})")) from exc

    return cast("_F", wrapper)


async def _sanitize_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext
                           ) -> HandlerResult:
    """Middleware: no tool error text (the SDK's own, for bad arguments, included) carries a
    path."""
    result = await call_next(ctx)
    if ctx.method != "tools/call":
        return result
    if isinstance(result, CallToolResult) and result.is_error:
        content = [
            TextContent(type="text", text=sanitize(block.text))
            if isinstance(block, TextContent) else block
            for block in result.content
        ]
        return result.model_copy(update={"content": content})
    if isinstance(result, dict) and result.get("isError"):  # the result as sent on the wire
        return {**result, "content": [
            {**block, "text": sanitize(block["text"])} if block.get("type") == "text" else block
            for block in result.get("content", [])
        ]}
    return result


server: MCPServer[Any] = MCPServer(
    "nitpicker",
    version=__version__,
    instructions=INSTRUCTIONS,
    log_level="WARNING",
    middleware=[_sanitize_errors],
)
registry = ArchiveRegistry()
"""The archives this server has open (one registry per server process)."""

# -- output schemas -----------------------------------------------------------------------------

_named: dict[Any, Any] = {}


def _output_type(hint: Any) -> Any:
    """``hint``, a parametrised ``Paged[PageListItem]`` made a named class ``PagedPageListItem``.

    The SDK derives the output schema from a TypedDict class, but wraps anything else, a generic
    alias included, in ``{"result": ...}``. The query library's TypedDicts are
    ``typing_extensions`` ones, which pydantic reads (nested ones too) on every Python.
    """
    origin = get_origin(hint)
    if origin is None:
        return hint
    if hint not in _named:
        bindings = dict(zip(origin.__parameters__, get_args(hint), strict=True))
        fields = {name: _bound(t, bindings) for name, t in get_type_hints(origin).items()}
        name = origin.__name__ + "".join(_type_name(arg) for arg in get_args(hint))
        named = cast("Any", typing_extensions.TypedDict)(name, fields)  # a name built at run time
        named.__doc__ = origin.__doc__
        _named[hint] = named
    return _named[hint]


def _bound(hint: Any, bindings: Mapping[Any, Any]) -> Any:
    """``hint`` with its type variables replaced by ``bindings`` (``list[T]`` -> ``list[X]``)."""
    if isinstance(hint, TypeVar):
        return bindings[hint]
    parameters = getattr(hint, "__parameters__", ())
    return hint[tuple(bindings[p] for p in parameters)] if parameters else hint


def _type_name(hint: Any) -> str:
    if get_origin(hint) in (Union, types.UnionType):
        return "Or".join(_type_name(arg) for arg in get_args(hint))
    return str(getattr(hint, "__name__", hint))


_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)


def tool(fn: _F) -> _F:
    """Register ``fn`` as a tool: its name, docstring, parameters and return type."""
    fn.__annotations__["return"] = _output_type(get_type_hints(fn)["return"])
    server.add_tool(_reporting_errors(fn), annotations=_READ_ONLY)
    return fn


# -- argument types -----------------------------------------------------------------------------

ArchiveId = Annotated[str, Field(description="The archive ID returned by open_archive "
                                             "(archive_1, archive_2, ...).")]
PageUrl = Annotated[str, Field(description="The exact URL of the page (tried as given, then "
                                           "normalised: #fragment dropped, ...).")]
Limit = Annotated[int, Field(ge=1, le=1000, description="Most items to return (1-1000).")]
Offset = Annotated[int, Field(ge=0, le=SQLITE_INTEGER_MAX, description="Items to skip (paging).")]
Status = Annotated[int | None, Field(ge=STATUS_RANGE[0], le=STATUS_RANGE[1])]
"""An HTTP status filter: -1 (fetch error) to 999."""
SortField = Literal["url", "status", "title", "link_score"]
SortOrder = Literal["asc", "desc"]
LinkType = Literal["broken", "external", "orphaned"]
DuplicateField = Literal["title", "description"]
MismatchType = Literal["canonical", "og:title", "og:description"]
ConsoleLevel = Literal["error", "warning", "info", "log", "debug"]
Priority = Literal["critical", "high", "medium", "low", "info"]

assert get_args(SortField) == SORT_FIELDS and get_args(SortOrder) == SORT_ORDERS
assert get_args(LinkType) == LINK_TYPES and get_args(DuplicateField) == DUPLICATE_FIELDS
assert get_args(MismatchType) == MISMATCH_TYPES and get_args(ConsoleLevel) == CONSOLE_LEVELS

