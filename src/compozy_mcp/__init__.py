"""compozy-mcp: an MCP server for managed agent sessions, with compact and full result views."""

__version__ = "0.1.0"

#: the package's face is its version; each subpackage has a face of its own (its __all__)
__all__ = ["__version__"]
