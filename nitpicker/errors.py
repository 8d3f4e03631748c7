"""The one base class of an error the user fixes: bad input, a file that is not what it
should be, a setup that is missing.

Each layer raises its own subclass (``ConfigError``, ``ArchiveOpenError``, ``UrlFileError``,
``PluginSetupError``, ``SheetsError``, …) with a message of one line that names the bad
value. The interfaces turn any of them into that line the same way, in one place each: the
command line into ``Error: <message>`` on stderr and exit 1
(:class:`nitpicker.cli.NitpickerGroup`), the MCP server into the tool's error. Anything else
is a bug, and its traceback is shown.

A leaf module: it imports nothing of the package, so every layer can import it.
"""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(Exception):
    """An error the user fixes; its message is one line naming the bad value."""
