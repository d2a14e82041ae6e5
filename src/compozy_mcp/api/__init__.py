"""The daemon's HTTP API (``/api``), a surface over the Host API (:mod:`compozy_mcp.hostapi`).

- :mod:`.routes`: the routes (Starlette): HTTP in, one Host API operation, JSON out;
- :mod:`.responses`: the one mapping from errors to HTTP statuses and bodies;
- :mod:`.auth`: the Host/Origin allow-list and the bearer token, checked before any route;
- :mod:`.openapi`: the routes' OpenAPI 3.1 document.

The daemon (:mod:`compozy_mcp.daemon`) mounts it beside the hosted MCP endpoint. Importing this
package loads nothing.
"""

__all__ = ["auth", "openapi", "responses", "routes"]
