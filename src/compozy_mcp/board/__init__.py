"""The operator's board: a page the daemon serves at ``/`` to watch every session.

Server-rendered (Jinja2, autoescaped: session names and agent output are untrusted), one
plain script served by the daemon (no build step, works offline), a strict
Content-Security-Policy (no inline script). The page shell holds no data, so that it loads
before the token is known; the cards come from ``/board/cards`` and ``/board/stream`` (the
one server-sent event stream, woken by the runtime's own publish), both behind the token.
Every mutation the page makes is a ``POST`` to the HTTP API (the Host API the CLI uses).
"""

from compozy_mcp.board._app import OPEN_PATHS, board_routes

__all__ = ["OPEN_PATHS", "board_routes"]
