"""The hosted MCP proxy: native tools over stdio and Streamable HTTP (TCP or a Unix socket),
built on the official SDK's low-level ``Server``. Importing this package loads the SDK, so
only commands that serve MCP import it."""

__all__ = ["discovery", "http_sessions", "relay", "server", "transports"]
