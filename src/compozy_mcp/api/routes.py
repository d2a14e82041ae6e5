"""The HTTP API routes (mounted at ``/api`` by the daemon): HTTP in, a Host API operation, JSON out.

Routes translate, nothing more, and are derived from the declared operations
(:mod:`compozy_mcp.hostapi.operations`): path, query, header and body become the arguments of
one :class:`~compozy_mcp.hostapi.HostClient` call, and its payload (or error) becomes the
response. Request bodies are JSON objects of at most :data:`MAX_BODY_BYTES`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from compozy_mcp import jsonutil
from compozy_mcp.api._streams import event_stream, wants_stream
from compozy_mcp.api.responses import error_response, wants_diagnostic
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
from compozy_mcp.hostapi.operation import Body, Kind, Operation
from compozy_mcp.hostapi.operations import OPERATIONS, SESSION_EVENTS
from compozy_mcp.hostapi.wire import SESSION_HEADER
from compozy_mcp.reasons import Reason

log = logging.getLogger(__name__)

#: the largest request body accepted (the same limit as the MCP endpoint's)
MAX_BODY_BYTES = 4 * 1024 * 1024

Handler = Callable[[Request], Awaitable[tuple[int, dict[str, Any]]]]


def _id_convertor(*actions: str) -> PathConvertor:
    """An id that may hold ``/`` (a client percent-encodes it; the operation then reports the
    id as unknown) but does not end in one of the path's actions, so that a wrong method on an
    action (``GET .../archive``) is a 405 rather than a lookup of the id ``x/archive``."""

    class IdConvertor(PathConvertor):
        regex = ".*" + "".join(f"(?<!/{action})" for action in actions)

    return IdConvertor()


def route_paths(operations: Sequence[Operation[Any]]) -> dict[str, str]:
    """Each operation's path as a route: an id followed by more takes any text (``path``); an
    id that ends the path takes any text that does not end in one of the actions that follow
    that id in another path (a convertor registered for it)."""
    actions: dict[str, set[str]] = {}
    for operation in operations:
        for field in operation.path_fields:
            head, _, tail = operation.path.partition("{" + field + "}")
            if tail:
                actions.setdefault(head + field, set()).add(tail.lstrip("/"))
    routed: dict[str, str] = {}
    for operation in operations:
        path = operation.path
        for field in operation.path_fields:
            head, _, tail = path.partition("{" + field + "}")
            if tail:
                convertor = "path"
            else:
                key = head + field
                convertor = "compozy_" + re.sub(r"[^a-z0-9]+", "_", key).strip("_")
                register_url_convertor(convertor, _id_convertor(*sorted(actions.get(key, ()))))
            path = head + "{" + field + ":" + convertor + "}" + tail
        routed[operation.name] = path
    return routed


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


def _fields(body: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
    """A body that holds only ``allowed`` fields (each checked by the tool it goes to)."""
    extra = sorted(set(body) - set(allowed))
    if extra:
        raise RequestBodyInvalid(
            f'the request body takes {", ".join(allowed)}; got "{extra[0]}"',
            reason=Reason.BODY_INVALID,
        )
    return body


def _boolean(tool_id: str, name: str, text: str) -> bool:
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
    if value is None:
        raise ToolInvalidInput.for_field(tool_id, name, "must be true or false")
    return value


def _query_args(operation: Operation[Any], request: Request) -> dict[str, Any]:
    """The query parameters as the operation's input fields."""
    query = request.query_params
    checked_as = operation.checked_as
    if operation.unknown_query is not None:
        extra = sorted(set(query) - {param.name for param in operation.query})
        if extra:
            raise ToolInvalidInput.for_field(checked_as, extra[0], operation.unknown_query)
    args: dict[str, Any] = {}
    for param in operation.query:
        if param.name not in query or param.stream_only:
            continue
        text = query[param.name]
        value: Any = text
        if param.kind is Kind.INTEGER:
            value = _integer(checked_as, param.name, text)
        elif param.kind is Kind.BOOLEAN:
            value = _boolean(checked_as, param.name, text)
        elif param.kind is Kind.LIST:
            # an item named twice is named once (the tools take each once)
            value = list(dict.fromkeys(item for item in text.split(",") if item))
        args[param.input_field] = value
    return args


class Routes:
    def __init__(self, host: HostClient, openapi: Callable[[], dict[str, Any]]) -> None:
        self.host = host
        self.openapi = openapi

    async def openapi_document(self, request: Request) -> tuple[int, dict[str, Any]]:
        return 200, self.openapi()

    def handler(self, operation: Operation[Any]) -> Handler:
        """What serves ``operation``: its path's ids, its query or body, as its input."""

        async def handle(request: Request) -> tuple[int, dict[str, Any]]:
            if operation.body is Body.NONE:
                args = _query_args(operation, request)
            else:
                required = operation.body is Body.OBJECT
                args = await (_object_body(request) if required else _optional_body(request))
                if operation.body_fields is not None:
                    _fields(args, operation.body_fields)
                if "approval_token" in args and not isinstance(args["approval_token"], str):
                    # a JSON null is no token: refused, never read as absent
                    raise RequestBodyInvalid(
                        'the request body field "approval_token" must be a string',
                        reason=Reason.BODY_INVALID,
                    )
                for dropped in operation.body_drops:
                    args.pop(dropped, None)
            for field in operation.path_fields:
                args[field] = request.path_params[field]
            session = _session(request) if operation.as_session else None
            return operation.status, await self.host.call(operation, args, session=session)

        return handle

    async def events_endpoint(self, request: Request) -> Response:
        """JSON pages, or a Server-Sent Events stream when the client accepts one."""
        until = request.query_params.get("until")
        if until not in (None, "turn_end"):  # never read as absent
            return error_response(
                ToolInvalidInput.for_field(
                    SESSION_EVENTS.checked_as, "until", 'must be "turn_end" when given'
                )
            )
        if not wants_stream(request.headers.get("accept", "")):
            return await _endpoint(self.handler(SESSION_EVENTS))(request)
        try:
            last = request.headers.get("last-event-id")
            cursor = _integer(SESSION_EVENTS.checked_as, "Last-Event-ID", last) if last else 0
            cursor = _query_args(SESSION_EVENTS, request).get("cursor", cursor)
            return await event_stream(
                self.host,
                request.path_params["session_id"],
                cursor,
                until_turn_end=request.query_params.get("until") == "turn_end",
            )
        except CompozyError as error:
            return error_response(error)

    def table(self) -> list[Route]:
        """Every route, in matching order (a path without ids before one with: ``/tools/search``
        before ``/tools/{tool_id}``): one per path, with its methods."""
        routed = route_paths(OPERATIONS)
        ordered = sorted(OPERATIONS, key=lambda operation: len(operation.path_fields))
        by_path: dict[str, dict[str, Handler]] = {"/openapi.json": {"GET": self.openapi_document}}
        for operation in ordered:
            if operation is not SESSION_EVENTS:
                handlers = by_path.setdefault(routed[operation.name], {})
                handlers[operation.method] = self.handler(operation)
        routes = [
            Route(path, _endpoint(_by_method(handlers)), methods=list(handlers))
            for path, handlers in by_path.items()
        ]
        events = Route(routed[SESSION_EVENTS.name], self.events_endpoint, methods=["GET"])
        return [*routes, events]


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
