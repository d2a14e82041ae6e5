"""Extension tools: installed packages that register an MCP server in the ``compozy.tools``
entry point group. The entry point's name is the server's name; its object is an MCP SDK
``Server`` or ``MCPServer`` (or a function that returns one), which the proxy connects to
in-process and serves exactly like an upstream server: same prefix, same listing, untouched.

::

    [project.entry-points."compozy.tools"]
    notes = "notes_tools.server:server"

Discovery reads package metadata only; nothing is imported until the proxy connects.
"""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint, entry_points

from compozy_mcp.errors import ConfigError
from compozy_mcp.upstream.config import Scope, ServerDefinition, Transport, check_name

log = logging.getLogger(__name__)

GROUP = "compozy.tools"


def discovered() -> list[ServerDefinition]:
    """The extension servers installed, by name (the first of two with one name wins)."""
    found: dict[str, ServerDefinition] = {}
    for point in entry_points(group=GROUP):
        try:
            check_name(point.name, f"entry point {point.name!r} of {GROUP}")
        except ConfigError as error:
            log.warning("%s; skipped", error.message)
            continue
        found.setdefault(
            point.name,
            ServerDefinition(
                point.name, Transport.EXTENSION, Scope.EXTENSION, entry_point=point.value
            ),
        )
    return [found[name] for name in sorted(found)]


def load(definition: ServerDefinition) -> object:
    """Import the entry point's object (blocking: run it in a worker thread)."""
    if definition.entry_point is None:
        raise ValueError(f"{definition.name} is not an extension")
    return EntryPoint(definition.name, definition.entry_point, GROUP).load()
