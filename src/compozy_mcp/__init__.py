"""compozy-mcp: an MCP server for managed agent sessions, with compact and full result views."""

__version__ = "0.1.0"
