"""The HTTP API routes (mounted at ``/api`` by the daemon): HTTP in, a Host API operation, JSON out.

Routes translate, nothing more: path, query, header and body become the arguments of one
:class:`~compozy_mcp.hostapi.HostClient` operation, and its payload (or error) becomes the
response. Request bodies are JSON objects of at most :data:`MAX_BODY_BYTES`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from compozy_mcp import jsonutil
from compozy_mcp.api.responses import error_response, wants_diagnostic
from compozy_mcp.api.streams import event_stream, wants_stream
from compozy_mcp.errors import (
    CompozyError,
    InternalError,
    MethodNotAllowed,
    RequestBodyInvalid,
    RequestTooLarge,
    RouteNotFound,
    ToolInvalidInput,
)
from compozy_mcp.hostapi import HostClient
from compozy_mcp.hostapi.inputs import SESSION_LIST, TOOL_SEARCH
from compozy_mcp.hostapi.tasks import TASK_LIST_QUERY, TASK_OPERATIONS, TaskOperation
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.reasons import Reason

log = logging.getLogger(__name__)

#: the largest request body accepted (the same limit as the MCP endpoint's)
MAX_BODY_BYTES = 4 * 1024 * 1024
#: ``GET /api/sessions`` query parameters: the ``compozy__session_list`` inputs
SESSION_FILTERS = ("workspace_id", "state", "archived", "parent_session_id", "agent_name", "cursor")

Handler = Callable[[Request], Awaitable[tuple[int, dict[str, Any]]]]


def _id_convertor(*actions: str) -> PathConvertor:
    """An id that may hold ``/`` (a client percent-encodes it; the operation then reports the
    id as unknown) but does not end in one of the path's actions, so that a wrong method on an
    action (``GET .../archive``) is a 405 rather than a lookup of the id ``x/archive``."""

    class IdConvertor(PathConvertor):
        regex = ".*" + "".join(f"(?<!/{action})" for action in actions)

    return IdConvertor()


register_url_convertor("compozy_tool_id", _id_convertor("invoke", "approvals"))
#: what follows a session id in a path: ``/sessions/{id}/<action>``
SESSION_ACTIONS = (
    "archive",
    "unarchive",
    "prompt",
    "cancel",
    "history",
    "events",
    "approve",
    "diff",
    "merge",
    "pull-request",
)
register_url_convertor("compozy_session_id", _id_convertor(*SESSION_ACTIONS))
#: the body fields of ``POST /sessions/{id}/prompt`` and ``/approve``
PROMPT_FIELDS = ("prompt", "wait", "timeout_seconds")
APPROVE_FIELDS = ("interaction_id", "decision")
register_url_convertor("compozy_loop_id", _id_convertor("runs"))
register_url_convertor("compozy_run_id", _id_convertor("cancel", "approve"))
#: the body fields of ``POST /sessions/{id}/merge`` and ``/pull-request``, and ``/worktrees``
MERGE_FIELDS = ("into", "mode", "message")
PULL_REQUEST_FIELDS = ("into", "title", "body", "draft", "remote")
WORKTREE_FIELDS = ("session_id", "branch", "base")
#: ``GET /api/worktrees`` query parameters: the ``compozy__worktree_list`` inputs
WORKTREE_FILTERS = ("workspace_id", "session_id")
WORKTREE_LIST = "compozy__worktree_list"
#: ``GET /api/loop-runs`` query parameters: the ``compozy__loop_runs`` inputs
LOOP_RUN_FILTERS = ("loop_id", "status", "cursor")
LOOP_RUNS = "compozy__loop_runs"
LOOP_INSPECT = "compozy__loop_inspect"


def json_response(payload: dict[str, Any], status: int = 200) -> Response:
    return Response(jsonutil.dumps(payload), status_code=status, media_type="application/json")


def _endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            status, payload = await handler(request)
        except CompozyError as error:
            return error_response(error, diagnostic=wants_diagnostic(request))
        except ClientDisconnect:  # gone before its body arrived: nobody reads the answer
            return Response(status_code=400)
        except Exception:  # the daemon keeps serving; the log has the traceback, by error id
            internal = InternalError.logged()
            log.exception("%s %s failed (%s)", request.method, request.url.path, internal.error_id)
            return error_response(internal)
        return json_response(payload, status)

    return endpoint


#: an empty request body, told apart from a JSON ``null`` (which is not an object)
_EMPTY = object()


async def _body(request: Request) -> Any:
    """The request body as JSON; :data:`_EMPTY` when it is empty."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY_BYTES:
            raise _too_large()
    if not data.strip():
        return _EMPTY
    try:
        return jsonutil.loads_request(bytes(data))
    except ValueError:
        raise RequestBodyInvalid(
            "the request body is not valid JSON", reason=Reason.BODY_NOT_JSON
        ) from None


def _too_large() -> RequestTooLarge:
    return RequestTooLarge(f"the request body is larger than {MAX_BODY_BYTES} bytes")


async def _object_body(request: Request) -> dict[str, Any]:
    body = await _body(request)
    if body is _EMPTY:
        raise RequestBodyInvalid(
            "the request body is empty; send a JSON object", reason=Reason.BODY_MISSING
        )
    if not isinstance(body, dict):
        raise RequestBodyInvalid(
            "the request body must be a JSON object", reason=Reason.BODY_NOT_OBJECT
        )
    return body


async def _optional_body(request: Request) -> dict[str, Any]:
    """A JSON object body, or ``{}`` when there is none (a JSON ``null`` is not an object)."""
    body = await _body(request)
    if body is _EMPTY:
        return {}
    if not isinstance(body, dict):
        raise RequestBodyInvalid(
            "the request body must be a JSON object", reason=Reason.BODY_NOT_OBJECT
        )
    return body


def _session(request: Request) -> str | None:
    return request.headers.get(SESSION_HEADER) or None


def _integer(tool_id: str, name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ToolInvalidInput.for_field(tool_id, name, "must be an integer") from None


def _until_turn_end(request: Request) -> bool:
    """The events route's ``until``: absent, or ``turn_end`` (anything else is refused, never
    read as absent)."""
    until = request.query_params.get("until")
    if until not in (None, "turn_end"):
        raise ToolInvalidInput.for_field(
            "compozy__session_events", "until", 'must be "turn_end" when given'
        )
    return until == "turn_end"


def _fields(body: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
    """A body that holds only ``allowed`` fields (each checked by the tool it goes to)."""
    extra = sorted(set(body) - set(allowed))
    if extra:
        raise RequestBodyInvalid(
            f'the request body takes {", ".join(allowed)}; got "{extra[0]}"',
            reason=Reason.BODY_INVALID,
        )
    return body


def _task_query(tool_id: str, request: Request) -> dict[str, Any]:
    """``GET /api/tasks`` filters as ``compozy__task_list`` inputs."""
    query = request.query_params
    extra = sorted(set(query) - set(TASK_LIST_QUERY))
    if extra:
        raise ToolInvalidInput.for_field(tool_id, extra[0], "is not a filter of tasks")
    args: dict[str, Any] = {
        name: query[name] for name in ("workspace_id", "label") if name in query
    }
    if "state" in query:
        # a state named twice filters as once (the tool takes each state once)
        args["states"] = list(dict.fromkeys(s for s in query["state"].split(",") if s))
    if "limit" in query:
        args["limit"] = _integer(tool_id, "limit", query["limit"])
    return args


def _boolean(tool_id: str, name: str, text: str) -> bool:
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
    if value is None:
        raise ToolInvalidInput.for_field(tool_id, name, "must be true or false")
    return value


class Routes:
    def __init__(self, host: HostClient, openapi: Callable[[], dict[str, Any]]) -> None:
        self.host = host
        self.openapi = openapi

    async def openapi_document(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, self.openapi()

    async def list_tools(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.list_tools(session=_session(request))

    async def search_tools(self, request: Request) -> tuple[int, dict[str, Any]]:
        query = request.query_params
        limit = query.get("limit")
        found = await self.host.search_tools(
            query.get("q"),
            limit=None if limit is None else _integer(TOOL_SEARCH, "limit", limit),
            session=_session(request),
        )
        return 200, found

    async def tool_info(self, request: Request) -> tuple[int, dict[str, Any]]:
        tool_id = request.path_params["tool_id"]
        return 200, await self.host.tool_info(tool_id, session=_session(request))

    async def invoke(self, request: Request) -> tuple[int, dict[str, Any]]:
        tool_id = request.path_params["tool_id"]
        body = await _object_body(request)
        extra = sorted(set(body) - {"input", "approval_token"})
        if extra:
            raise RequestBodyInvalid(
                'the request body takes only "input" (the tool input) and "approval_token"; '
                f'got "{extra[0]}"',
                reason=Reason.BODY_INVALID,
            )
        token = body.get("approval_token")
        if "approval_token" in body and not isinstance(token, str):
            raise RequestBodyInvalid(
                'the request body field "approval_token" must be a string',
                reason=Reason.BODY_INVALID,
            )
        if "input" not in body:
            raise RequestBodyInvalid(
                'the request body needs "input": the tool input, a JSON object',
                reason=Reason.BODY_INVALID,
            )
        tool_input = body["input"]
        if not isinstance(tool_input, dict):
            raise RequestBodyInvalid(
                'the request body field "input" must be a JSON object',
                reason=Reason.INPUT_NOT_OBJECT,
            )
        return 200, await self.host.invoke(
            tool_id, tool_input, session=_session(request), approval_token=token
        )

    async def mint_approval(self, request: Request) -> tuple[int, dict[str, Any]]:
        tool_id = request.path_params["tool_id"]
        body = await _object_body(request)
        return 201, await self.host.mint_approval(tool_id, body, session=_session(request))

    async def list_sessions(self, request: Request) -> tuple[int, dict[str, Any]]:
        query = request.query_params
        filters: dict[str, Any] = {name: query[name] for name in SESSION_FILTERS if name in query}
        if "archived" in filters:
            filters["archived"] = _boolean(SESSION_LIST, "archived", filters["archived"])
        if "limit" in query:
            filters["limit"] = _integer(SESSION_LIST, "limit", query["limit"])
        return 200, await self.host.list_sessions(filters)

    async def create_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 201, await self.host.create_session(await _object_body(request))

    async def session_status(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.session_status(request.path_params["session_id"])

    async def archive_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.archive_session(request.path_params["session_id"])

    async def unarchive_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.unarchive_session(request.path_params["session_id"])

    async def delete_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.delete_session(request.path_params["session_id"])

    # --- agents and turns ---------------------------------------------------------------------

    async def list_agents(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.list_agents(request.query_params.get("workspace_id"))

    async def prompt_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = _fields(await _object_body(request), PROMPT_FIELDS)
        return 200, await self.host.prompt_session(request.path_params["session_id"], body)

    async def cancel_turn(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.cancel_turn(request.path_params["session_id"])

    def _page(self, request: Request, tool_id: str) -> dict[str, Any]:
        query = request.query_params
        return {
            name: _integer(tool_id, name, query[name])
            for name in ("cursor", "limit")
            if name in query
        }

    async def session_history(self, request: Request) -> tuple[int, dict[str, Any]]:
        params = self._page(request, "compozy__session_history")
        return 200, await self.host.session_history(request.path_params["session_id"], params)

    async def session_events(self, request: Request) -> tuple[int, dict[str, Any]]:
        params = self._page(request, "compozy__session_events")
        _until_turn_end(request)  # a JSON page ignores it, but it must be one we know
        return 200, await self.host.session_events(request.path_params["session_id"], params)

    async def events_endpoint(self, request: Request) -> Response:
        """JSON pages, or a Server-Sent Events stream when the client accepts one."""
        if not wants_stream(request.headers.get("accept", "")):
            return await _endpoint(self.session_events)(request)
        try:
            tool_id = "compozy__session_events"
            last = request.headers.get("last-event-id")
            cursor = _integer(tool_id, "Last-Event-ID", last) if last else 0
            cursor = self._page(request, tool_id).get("cursor", cursor)
            return await event_stream(
                self.host,
                request.path_params["session_id"],
                cursor,
                until_turn_end=_until_turn_end(request),
            )
        except CompozyError as error:
            return error_response(error)

    async def approve_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = _fields(await _object_body(request), APPROVE_FIELDS)
        return 200, await self.host.approve_session(request.path_params["session_id"], body)

    # --- worktrees and hand-off -------------------------------------------------------------

    async def session_diff(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.session_diff(request.path_params["session_id"])

    async def merge_session(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = _fields(await _optional_body(request), MERGE_FIELDS)
        return 200, await self.host.merge_session(request.path_params["session_id"], body)

    async def open_pull_request(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = _fields(await _optional_body(request), PULL_REQUEST_FIELDS)
        return 200, await self.host.open_pull_request(request.path_params["session_id"], body)

    async def list_worktrees(self, request: Request) -> tuple[int, dict[str, Any]]:
        query = request.query_params
        filters: dict[str, Any] = {n: query[n] for n in WORKTREE_FILTERS if n in query}
        if "include_removed" in query:
            filters["include_removed"] = _boolean(
                WORKTREE_LIST, "include_removed", query["include_removed"]
            )
        if "limit" in query:
            filters["limit"] = _integer(WORKTREE_LIST, "limit", query["limit"])
        return 200, await self.host.list_worktrees(filters)

    async def worktree_info(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.worktree_info(request.path_params["worktree_id"])

    async def create_worktree(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = _fields(await _object_body(request), WORKTREE_FIELDS)
        return 201, await self.host.create_worktree(body)

    async def remove_worktree(self, request: Request) -> tuple[int, dict[str, Any]]:
        text = request.query_params.get("force")
        force = False if text is None else _boolean("compozy__worktree_remove", "force", text)
        return 200, await self.host.remove_worktree(request.path_params["worktree_id"], force=force)

    async def vacuum_store(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.vacuum_store()

    async def list_workspaces(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.list_workspaces()

    async def add_workspace(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 201, await self.host.add_workspace(await _object_body(request))

    async def trust_workspace(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.trust_workspace(request.path_params["workspace_id"], True)

    async def distrust_workspace(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.trust_workspace(request.path_params["workspace_id"], False)

    async def list_profiles(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.list_profiles()

    async def add_profile(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 201, await self.host.add_profile(await _object_body(request))

    async def list_mcp_servers(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.list_mcp_servers()

    async def validate_loop(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.validate_loop(await _object_body(request))

    async def list_loops(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.list_loops()

    async def create_loop(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 201, await self.host.create_loop(await _object_body(request))

    async def loop_info(self, request: Request) -> tuple[int, dict[str, Any]]:
        query = request.query_params
        version = (
            _integer(LOOP_INSPECT, "version", query["version"]) if "version" in query else None
        )
        return 200, await self.host.loop_info(request.path_params["loop_id"], version)

    async def start_loop_run(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = await _object_body(request)
        return 201, await self.host.start_loop_run(request.path_params["loop_id"], body)

    async def list_loop_runs(self, request: Request) -> tuple[int, dict[str, Any]]:
        query = request.query_params
        filters: dict[str, Any] = {n: query[n] for n in LOOP_RUN_FILTERS if n in query}
        if "limit" in query:
            filters["limit"] = _integer(LOOP_RUNS, "limit", query["limit"])
        return 200, await self.host.list_loop_runs(filters)

    async def loop_run_status(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.loop_run_status(request.path_params["run_id"])

    async def cancel_loop_run(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, await self.host.cancel_loop_run(request.path_params["run_id"])

    async def approve_loop_run(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = await _object_body(request)
        return 200, await self.host.approve_loop_run(request.path_params["run_id"], body)

    # --- tasks ------------------------------------------------------------------------------

    def task_handler(self, operation: TaskOperation) -> Handler:
        """The handler of one task operation: path id and body (or query) as the tool's input."""

        async def handler(request: Request) -> tuple[int, dict[str, Any]]:
            if operation.has_body:
                args = await _optional_body(request)
                args.pop("result_view", None)  # routes answer full records
            else:
                args = _task_query(operation.tool_id, request)
            if operation.path_field is not None:
                args[operation.path_field] = request.path_params[operation.path_field]
            return operation.status, await self.host.task(operation.name, args)

        return handler

    def table(self) -> list[Route]:
        """Every route, in matching order: one per path, with its methods."""
        spec: list[tuple[str, str, Handler]] = [
            ("/openapi.json", "GET", self.openapi_document),
            ("/tools", "GET", self.list_tools),
            ("/tools/search", "GET", self.search_tools),
            ("/tools/{tool_id:path}/invoke", "POST", self.invoke),
            ("/tools/{tool_id:path}/approvals", "POST", self.mint_approval),
            ("/tools/{tool_id:compozy_tool_id}", "GET", self.tool_info),
            ("/sessions", "GET", self.list_sessions),
            ("/sessions", "POST", self.create_session),
            ("/sessions/{session_id:path}/archive", "POST", self.archive_session),
            ("/sessions/{session_id:path}/unarchive", "POST", self.unarchive_session),
            ("/sessions/{session_id:path}/prompt", "POST", self.prompt_session),
            ("/sessions/{session_id:path}/cancel", "POST", self.cancel_turn),
            ("/sessions/{session_id:path}/history", "GET", self.session_history),
            ("/sessions/{session_id:path}/approve", "POST", self.approve_session),
            ("/sessions/{session_id:path}/diff", "GET", self.session_diff),
            ("/sessions/{session_id:path}/merge", "POST", self.merge_session),
            ("/sessions/{session_id:path}/pull-request", "POST", self.open_pull_request),
            ("/worktrees", "GET", self.list_worktrees),
            ("/worktrees", "POST", self.create_worktree),
            ("/worktrees/{worktree_id}", "GET", self.worktree_info),
            ("/worktrees/{worktree_id}", "DELETE", self.remove_worktree),
            ("/agents", "GET", self.list_agents),
            ("/sessions/{session_id:compozy_session_id}", "GET", self.session_status),
            ("/sessions/{session_id:compozy_session_id}", "DELETE", self.delete_session),
            ("/store/vacuum", "POST", self.vacuum_store),
            ("/workspaces", "GET", self.list_workspaces),
            ("/workspaces", "POST", self.add_workspace),
            ("/workspaces/{workspace_id}/trust", "POST", self.trust_workspace),
            ("/workspaces/{workspace_id}/trust", "DELETE", self.distrust_workspace),
            ("/profiles", "GET", self.list_profiles),
            ("/profiles", "POST", self.add_profile),
            ("/mcp/servers", "GET", self.list_mcp_servers),
            ("/loops/validate", "POST", self.validate_loop),
            ("/loops", "GET", self.list_loops),
            ("/loops", "POST", self.create_loop),
            ("/loops/{loop_id:path}/runs", "POST", self.start_loop_run),
            ("/loops/{loop_id:compozy_loop_id}", "GET", self.loop_info),
            ("/loop-runs", "GET", self.list_loop_runs),
            ("/loop-runs/{run_id:path}/cancel", "POST", self.cancel_loop_run),
            ("/loop-runs/{run_id:path}/approve", "POST", self.approve_loop_run),
            ("/loop-runs/{run_id:compozy_run_id}", "GET", self.loop_run_status),
        ]
        spec += [(op.path, op.method, self.task_handler(op)) for op in TASK_OPERATIONS]
        by_path: dict[str, dict[str, Handler]] = {}
        for path, method, handler in spec:
            by_path.setdefault(path, {})[method] = handler
        return [
            Route(path, _endpoint(_by_method(handlers)), methods=list(handlers))
            for path, handlers in by_path.items()
        ] + [Route("/sessions/{session_id:path}/events", self.events_endpoint, methods=["GET"])]


def _by_method(handlers: dict[str, Handler]) -> Handler:
    """One handler for a path; the route has already refused a method it does not take."""
    if len(handlers) == 1:
        return next(iter(handlers.values()))

    async def handler(request: Request) -> tuple[int, dict[str, Any]]:
        method = "GET" if request.method == "HEAD" else request.method
        return await handlers[method](request)

    return handler


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 and 405 (no route, wrong method), as JSON errors."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        allow = (exc.headers or {}).get("Allow", "")
        error: CompozyError = MethodNotAllowed(
            f"{request.method} is not allowed on {request.url.path}; allowed: {allow}"
        )
        return error_response(error, {"Allow": allow} if allow else None)
    if exc.status_code == 404:
        return error_response(RouteNotFound(f"no route {request.url.path}"))
    return error_response(InternalError(f"HTTP {exc.status_code}: {exc.detail}"))


EXCEPTION_HANDLERS: dict[Any, Any] = {HTTPException: http_error}


def api_app(host: HostClient, openapi: Callable[[], dict[str, Any]]) -> Starlette:
    """The API as an ASGI app whose paths are relative to its mount point (``/api``);
    ``openapi`` gives the document ``GET /openapi.json`` serves."""
    app = Starlette(routes=Routes(host, openapi).table(), exception_handlers=EXCEPTION_HANDLERS)
    app.router.redirect_slashes = False
    return app
