"""External MCP servers served through the proxy, untouched ("upstream" servers).

- :mod:`.config`: the definitions in ``$COMPOZY_HOME/mcp.yaml`` and a workspace's
  ``.compozy/mcp.yaml``, and the ``compozy.tools`` entry points (extension tools);
- :mod:`.status`: what a running proxy reports about each server, read by ``compozy mcp list``;
- :mod:`.connection` and :mod:`.supervisor`: the live connections (they load the MCP SDK's
  client, so only the commands that serve MCP import them).

Importing this package, :mod:`.config` or :mod:`.status` loads no MCP SDK.
"""

__all__ = ["asking", "config", "connection", "defined", "http", "probe", "status", "supervisor"]
