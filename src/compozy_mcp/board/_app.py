"""The board's routes: the page shells, their assets, the fragments they draw and the cards'
stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from compozy_mcp import jsonutil
from compozy_mcp.board._render import (
    attention_text,
    columns,
    patch_text,
    task_columns,
    transcript_lines,
    waiting_text,
)
from compozy_mcp.clock import timestamp
from compozy_mcp.errors import CompozyError, InvalidRequest
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.store.tasks import TASK_STATES

if TYPE_CHECKING:
    import jinja2

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
#: the pages: each a shell (no data: it loads before the token is known) and its script
PAGES = ("session", "loops", "tasks", "hooks", "approvals")
#: what the pages need before the token is known: the shells and their assets (no data)
ASSETS = {
    "common.js": "text/javascript",
    "board.js": "text/javascript",
    **{f"{page}.js": "text/javascript" for page in PAGES},
    "board.css": "text/css",
}
OPEN_PATHS = ("/", *(f"/{page}" for page in PAGES), *(f"/static/{name}" for name in ASSETS))
#: transcript events one fragment holds; the page reads the next ones until it has them all
TRANSCRIPT_PAGE = 300
#: hook runs one page of the hook runs page shows (the tool's own maximum is 200)
HOOK_RUNS_PAGE = 100
#: sessions the board shows at most (pages of the session list read in turn)
MAX_CARDS = 2000
PAGE = 200
#: tasks the tasks page shows at most, open ones and ended (done, cancelled) ones, each in
#: the list's claim order: ended tasks never push open ones off the page
OPEN_TASKS, ENDED_TASKS = 500, 100
ENDED = ["done", "cancelled"]
OPEN = [state for state in TASK_STATES if state not in ENDED]
#: a burst of events (an agent's chunks) is drawn once; a change the runtime does not publish
#: (a session created or archived by a CLI without the daemon) is seen within this long
SETTLE_SECONDS = 0.15
RECHECK_SECONDS = 5.0


@cache
def _templates() -> jinja2.Environment:
    """The pages' templates, loaded when the board is first asked for: a daemon nobody opens
    the board of never holds Jinja2 and its compiled templates (about 2 MB of its memory)."""
    import jinja2

    templates = jinja2.Environment(
        loader=jinja2.PackageLoader("compozy_mcp.board", "templates"),
        # every session name, agent message, hook stderr and tool input is untrusted
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    # JSON as a person reads it (indented, characters as they are), escaped as any text is;
    # Jinja's own tojson writes "<" as \u003c, which is safe but unreadable
    templates.filters["pretty"] = jsonutil.dumps_pretty
    return templates


def _render(template: str, **context: Any) -> str:
    return _templates().get_template(template).render(**context)


@cache
def _shell(page: str) -> str:
    """A page's shell: it holds no data, so it is drawn once, when first asked for."""
    return _render(f"{page}.html")


def _page(body: str | bytes, media_type: str = "text/html; charset=utf-8") -> Response:
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)


def _asset(name: str) -> bytes:
    return resources.files("compozy_mcp.board").joinpath("static", name).read_bytes()


def _archived(request: Request) -> bool:
    return request.query_params.get("archived", "") in ("1", "true")


def _cursor(request: Request) -> int:
    text = request.query_params.get("cursor", "0")
    if not text.isdigit():
        raise InvalidRequest(f'the transcript cursor must be a whole number, got "{text}"')
    return int(text)


#: how an error becomes a response: the API's own mapping (the daemon passes it in, so that the
#: board answers with the same statuses and bodies without a surface importing another)
ErrorResponder = Callable[[CompozyError], Response]
Fragment = Callable[[Request], Awaitable[str]]


#: how long after its last change a session's last turn is read again at every redraw
RECENT_SECONDS = 2


class LastTurns:
    """Each session's last turn, read again only when its session changed (``updated_at``):
    a redraw of the board reads the turns of the sessions that moved, not of all of them."""

    def __init__(self, host: LocalHost) -> None:
        self.host = host
        self.known: dict[str, tuple[str, dict[str, Any] | None]] = {}

    async def of(self, sessions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        stamps = {session["id"]: str(session.get("updated_at", "")) for session in sessions}
        # a stamp has whole seconds: a session changed within the last ones may have changed
        # again under the same stamp (a turn that starts and ends in one second), so it is read
        recent = timestamp(datetime.now(UTC) - timedelta(seconds=RECENT_SECONDS))
        stale = [
            sid
            for sid, stamp in stamps.items()
            if self.known.get(sid, ("",))[0] != stamp or stamp >= recent
        ]
        if stale:
            fresh = await self.host.last_turns(stale)
            if len(self.known) > 2 * MAX_CARDS:  # sessions deleted meanwhile are forgotten
                self.known = {sid: self.known[sid] for sid in stamps if sid in self.known}
            for sid in stale:
                self.known[sid] = (stamps[sid], fresh.get(sid))
        return {sid: turn for sid in stamps if (turn := self.known[sid][1]) is not None}


class Board:
    def __init__(self, host: LocalHost, on_error: ErrorResponder) -> None:
        self.host = host
        self.on_error = on_error
        self.assets = {name: _asset(name) for name in ASSETS}
        self.last_turns = LastTurns(host)

    async def sessions(self, archived: bool) -> list[dict[str, Any]]:
        """Every session the board shows (live ones, and archived ones when asked)."""
        found: list[dict[str, Any]] = []
        for wanted in (False, True) if archived else (False,):
            filters: dict[str, Any] = {"limit": PAGE, "archived": wanted}
            while len(found) < MAX_CARDS:
                page = await self.host.call(ops.LIST_SESSIONS, filters)
                found.extend(page["sessions"])
                if "next_cursor" not in page:
                    break
                filters["cursor"] = page["next_cursor"]
        return found

    async def cards(self, archived: bool) -> str:
        sessions = await self.sessions(archived)
        board = columns(sessions, datetime.now(UTC), await self.last_turns.of(sessions))
        needs_you = sum(1 for _, cards in board for card in cards if card["needs_you"])
        return _render("cards.html", columns=board, needs_you=needs_you)

    async def shell(self, request: Request) -> Response:
        return _page(_shell("board"))

    def page_shell(self, page: str) -> Route:
        async def serve(_: Request) -> Response:
            return _page(_shell(page))

        return Route(f"/{page}", serve, methods=["GET"])

    def static(self, name: str) -> Route:
        body, media_type = self.assets[name], ASSETS[name]

        async def serve(_: Request) -> Response:
            return _page(body, media_type)

        return Route(f"/static/{name}", serve, methods=["GET"])

    def fragment(self, path: str, render: Fragment) -> Route:
        """``GET path``: the HTML ``render`` makes of the request, or the API's error."""

        async def serve(request: Request) -> Response:
            try:
                return _page(await render(request))
            except CompozyError as error:
                return self.on_error(error)

        return Route(path, serve, methods=["GET"])

    async def session_detail(self, request: Request) -> str:
        session_id = request.query_params.get("id", "")
        session = (await self.host.call(ops.SESSION_STATUS, {"session_id": session_id}))["session"]
        diff = None
        if session.get("worktree") is not None:
            diff = patch_text(await self.host.call(ops.SESSION_DIFF, {"session_id": session_id}))
        return _render(
            "session_detail.html",
            s=session,
            diff=diff,
            attention=attention_text(session),
            waiting_on=waiting_text(session),
        )

    async def transcript(self, request: Request) -> str:
        """The session's events after ``cursor``, a page of them; the page says where the next
        one starts and whether there is more (the page reads on until it has them all)."""
        session_id, cursor = request.query_params.get("id", ""), _cursor(request)
        page = await self.host.call(
            ops.SESSION_EVENTS,
            {"cursor": cursor, "limit": TRANSCRIPT_PAGE, "session_id": session_id},
        )
        return _render(
            "transcript.html",
            lines=transcript_lines(page["events"]),
            next_cursor=page["next_cursor"],
            more=len(page["events"]) == TRANSCRIPT_PAGE,
        )

    async def loop_runs(self, request: Request) -> str:
        runs = (await self.host.call(ops.LIST_LOOP_RUNS, {}))["runs"]
        return _render("loop_runs.html", runs=runs)

    async def _tool(self, tool_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        """A native tool's full result, called as the CLI calls it (``host.invoke``)."""
        payload = await self.host.call(
            ops.INVOKE, {"tool_id": tool_id, "input": {**tool_input, "result_view": "full"}}
        )
        structured: dict[str, Any] = payload["result"]["structured"]
        return structured

    async def hook_runs(self, request: Request) -> str:
        """The hook run log, newest first (as ``compozy hooks runs --full``): failed runs only
        with ``failed=1``; ``cursor`` pages on."""
        query = request.query_params
        tool_input: dict[str, Any] = {"limit": HOOK_RUNS_PAGE}
        if query.get("failed") in ("1", "true"):
            tool_input["failed"] = True
        if query.get("cursor"):
            tool_input["cursor"] = query["cursor"]
        found = await self._tool("compozy__hooks_runs", tool_input)
        return _render("hook_runs.html", runs=found["runs"], next_cursor=found.get("next_cursor"))

    async def grants(self, request: Request) -> str:
        """The remembered approvals (as ``compozy approvals list --full``), each with revoke."""
        found = await self._tool("compozy__tool_approvals_list", {})
        return _render("grants.html", grants=found["grants"])

    async def tasks(self, request: Request) -> str:
        """Tasks by state: the open ones, then the ended ones (each in claim order)."""
        listed = [
            *(await self.host.call(ops.TASK_LIST, {"states": OPEN, "limit": OPEN_TASKS}))["tasks"],
            *(await self.host.call(ops.TASK_LIST, {"states": ENDED, "limit": ENDED_TASKS}))[
                "tasks"
            ],
        ]
        return _render("task_list.html", columns=task_columns(listed))

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

    async def cards(request: Request) -> str:
        return await board.cards(_archived(request))

    return [
        Route("/", board.shell, methods=["GET"]),
        *(board.page_shell(page) for page in PAGES),
        *(board.static(name) for name in ASSETS),
        board.fragment("/board/cards", cards),
        board.fragment("/board/session", board.session_detail),
        board.fragment("/board/transcript", board.transcript),
        board.fragment("/board/loops", board.loop_runs),
        board.fragment("/board/hooks", board.hook_runs),
        board.fragment("/board/approvals", board.grants),
        board.fragment("/board/tasks", board.tasks),
        Route("/board/stream", board.stream, methods=["GET"]),
    ]
