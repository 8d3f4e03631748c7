"""``python -m nitpicker.mcp``: the MCP server on stdio."""

from nitpicker.mcp import main

main()
