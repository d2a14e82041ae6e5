"""Loops: graphs of tool calls and agent turns, linted against result views, run with the
contracts they started with pinned."""

__all__ = ["limits", "redaction", "service"]
