"""The ``compozy`` command line. Commands import what they need when they run, so that a
command that needs no MCP server or HTTP stack never loads them."""

__all__ = ["main"]
