"""The daemon's HTTP API (``/api``) over TCP and a Unix socket.

- :mod:`.operations`: the Host API itself (no HTTP): the operations the routes, the CLI's
  clients and the ``compozy_host__*`` MCP tools share, returning the payloads the routes send;
- :mod:`.errors`: the one mapping from errors to HTTP statuses and bodies;
- :mod:`.auth`: the Host/Origin allow-list and the bearer token, checked before any route;
- :mod:`.app`: the routes (Starlette); :mod:`.openapi`: their OpenAPI 3.1 document;
- :mod:`.daemon`: the combined app (``/api`` + the hosted MCP endpoint ``/mcp``) and serving it.

Importing this package loads nothing; only :mod:`.app`, :mod:`.auth`, :mod:`.errors` and
:mod:`.daemon` load the HTTP stack, so an in-process CLI command using :mod:`.operations`
never does.
"""
