"""How a proxy advertises its tools (``--discovery``, :mod:`compozy_mcp.proxy.discovery`), in a
module of its own: the daemon and the CLI name the mode without importing the MCP SDK."""

from __future__ import annotations

from enum import StrEnum


class Discovery(StrEnum):
    FULL = "full"
    SEARCH = "search"
