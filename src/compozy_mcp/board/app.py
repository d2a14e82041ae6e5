"""The board's routes: the page shell, its two assets, the cards and their stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import anyio
import jinja2
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from compozy_mcp.board.render import (
    attention_text,
    columns,
    patch_text,
    transcript_line,
    waiting_text,
)
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost

#: no inline script, no inline style, nothing from another origin, never framed
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
#: what the page needs before the token is known: the shell and its assets (no data)
ASSETS = {
    "board.js": "text/javascript",
    "session.js": "text/javascript",
    "loops.js": "text/javascript",
    "board.css": "text/css",
}
OPEN_PATHS = ("/", "/session", "/loops", *(f"/static/{name}" for name in ASSETS))
#: the transcript's most recent events a session page shows
TRANSCRIPT_EVENTS = 300
#: sessions the board shows at most (pages of the session list read in turn)
MAX_CARDS = 2000
PAGE = 200
#: a burst of events (an agent's chunks) is drawn once; a change the runtime does not publish
#: (a session created or archived by a CLI without the daemon) is seen within this long
SETTLE_SECONDS = 0.15
RECHECK_SECONDS = 5.0

_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("compozy_mcp.board", "templates"),
    autoescape=True,  # every session name, agent message and branch is untrusted
    undefined=jinja2.StrictUndefined,
)


def _page(body: str | bytes, media_type: str = "text/html; charset=utf-8") -> Response:
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)


def _asset(name: str) -> bytes:
    return resources.files("compozy_mcp.board").joinpath("static", name).read_bytes()


def _archived(request: Request) -> bool:
    return request.query_params.get("archived", "") in ("1", "true")


#: how an error becomes a response: the API's own mapping (the daemon passes it in, so that the
#: board answers with the same statuses and bodies without a surface importing another)
ErrorResponder = Callable[[CompozyError], Response]


class Board:
    def __init__(self, host: LocalHost, on_error: ErrorResponder) -> None:
        self.host = host
        self.on_error = on_error
        self.assets = {name: _asset(name) for name in ASSETS}

    async def sessions(self, archived: bool) -> list[dict[str, Any]]:
        """Every session the board shows (live ones, and archived ones when asked)."""
        found: list[dict[str, Any]] = []
        filters: dict[str, Any] = {"limit": PAGE}
        for wanted in (False, True) if archived else (False,):
            filters = {"limit": PAGE, "archived": wanted}
            while len(found) < MAX_CARDS:
                page = await self.host.call(ops.LIST_SESSIONS, filters)
                found.extend(page["sessions"])
                if "next_cursor" not in page:
                    break
                filters["cursor"] = page["next_cursor"]
        return found

    async def cards(self, archived: bool) -> str:
        sessions = await self.sessions(archived)
        board = columns(sessions, datetime.now(UTC))
        needs_you = sum(1 for _, cards in board for card in cards if card["needs_you"])
        return _templates.get_template("cards.html").render(columns=board, needs_you=needs_you)

    async def shell(self, request: Request) -> Response:
        return _page(_templates.get_template("board.html").render())

    def static(self, name: str) -> Route:
        body, media_type = self.assets[name], ASSETS[name]

        async def serve(_: Request) -> Response:
            return _page(body, media_type)

        return Route(f"/static/{name}", serve, methods=["GET"])

    async def session_shell(self, request: Request) -> Response:
        return _page(_templates.get_template("session.html").render())

    async def session_fragment(self, request: Request) -> Response:
        try:
            return _page(await self.session_detail(request.query_params.get("id", "")))
        except CompozyError as error:
            return self.on_error(error)

    async def session_detail(self, session_id: str) -> str:
        session = (await self.host.call(ops.SESSION_STATUS, {"session_id": session_id}))["session"]
        page = await self.host.call(
            ops.SESSION_EVENTS, {"cursor": 0, "limit": TRANSCRIPT_EVENTS, "session_id": session_id}
        )
        events = [transcript_line(event) for event in page["events"]]
        diff = None
        if session.get("worktree") is not None:
            diff = patch_text(await self.host.call(ops.SESSION_DIFF, {"session_id": session_id}))
        return _templates.get_template("session_detail.html").render(
            s=session,
            events=events,
            diff=diff,
            attention=attention_text(session),
            waiting_on=waiting_text(session),
        )

    async def loops_shell(self, request: Request) -> Response:
        return _page(_templates.get_template("loops.html").render())

    async def loops_fragment(self, request: Request) -> Response:
        try:
            runs = (await self.host.call(ops.LIST_LOOP_RUNS, {}))["runs"]
        except CompozyError as error:
            return self.on_error(error)
        return _page(_templates.get_template("loop_runs.html").render(runs=runs))

    async def cards_fragment(self, request: Request) -> Response:
        try:
            return _page(await self.cards(_archived(request)))
        except CompozyError as error:
            return self.on_error(error)

    async def stream(self, request: Request) -> Response:
        archived = _archived(request)
        try:  # an error is an ordinary response, before the stream starts
            first = await self.cards(archived)
        except CompozyError as error:
            return self.on_error(error)

        async def frames() -> AsyncIterator[bytes]:
            shown = first
            yield _frame(shown)
            with self.host.any_event() as changed:
                while True:
                    with anyio.move_on_after(RECHECK_SECONDS):
                        await changed.wait()
                        await anyio.sleep(SETTLE_SECONDS)
                    changed.clear()
                    drawn = await self.cards(archived)
                    if drawn != shown:
                        shown = drawn
                        yield _frame(drawn)
                    else:
                        yield b": keepalive\n\n"

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={**SECURITY_HEADERS, "X-Accel-Buffering": "no"},
        )


def _frame(html: str) -> bytes:
    """One ``board`` event holding the cards' HTML, a ``data:`` line per line."""
    lines = "".join(f"data: {line}\n" for line in html.splitlines() or [""])
    return f"event: board\n{lines}\n".encode()


def board_routes(host: LocalHost, on_error: ErrorResponder) -> list[Route]:
    board = Board(host, on_error)
    return [
        Route("/", board.shell, methods=["GET"]),
        *(board.static(name) for name in ASSETS),
        Route("/board/cards", board.cards_fragment, methods=["GET"]),
        Route("/session", board.session_shell, methods=["GET"]),
        Route("/board/session", board.session_fragment, methods=["GET"]),
        Route("/loops", board.loops_shell, methods=["GET"]),
        Route("/board/loops", board.loops_fragment, methods=["GET"]),
        Route("/board/stream", board.stream, methods=["GET"]),
    ]
