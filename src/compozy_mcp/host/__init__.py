"""The Host API as an MCP server (``compozy mcp serve``): ``compozy_host__*`` tools. Importing
:mod:`.server` loads the MCP SDK, so only that command imports it."""

__all__ = ["server"]
