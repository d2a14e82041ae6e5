"""``tools/call`` without the SDK's per-call model work, where it adds nothing.

For every request the SDK's server validates the params against the protocol version's
request model, validates the params again into the handler's model, and validates the
handler's result against the version's result model and dumps it back (``mode="json"``): on
``session_status`` that is more CPU than our whole dispatch. A native tool's result is built
by :func:`~compozy_mcp.proxy.server.call_result` in its wire form, from a record already
proved JSON (its text is that JSON), so checking it per call checks our own output.

:class:`ToolCalls`, a server middleware inside the SDK's OpenTelemetry span, answers a plain
``tools/call`` itself: the params are checked by hand (a name, an arguments object, and a
``_meta`` equal to the last one the SDK's own model accepted on that protocol version), the
handler is given the name and arguments, and a :class:`WireResult` goes out as it
is, with the ``serverInfo`` stamp the SDK puts on 2026-era results. Anything else (another
method, a connection not yet initialized, params with other fields or a new ``_meta``, a
result of another kind) takes the SDK's path or the SDK's own serializer, so what reaches the
client is what the SDK would have sent.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR
from mcp_types import CORE_RESULT_TYPES, SERVER_INFO_META_KEY
from mcp_types.methods import serialize_server_result, validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

METHOD = "tools/call"
#: the params a plain call carries; any other (a task, an input response) takes the SDK's path
PLAIN_PARAMS = frozenset({"name", "arguments", "_meta"})


class WireResult(dict[str, Any]):
    """A ``tools/call`` result built in its wire form by the proxy, exactly as the result model
    of 2026-07-28 dumps it (:func:`~compozy_mcp.proxy.server.call_result`; the SDK takes any
    dict as a result's wire form). Its own type tells :class:`ToolCalls` that it needs no
    validation (a test proves the two equal for real results)."""


#: the server's ``tools/call`` handler, given the tool's name and arguments
Handler = Callable[[ServerRequestContext[Any], str, dict[str, Any] | None], Awaitable[Any]]


class ToolCalls:
    """The server middleware answering plain ``tools/call`` requests (see the module)."""

    def __init__(self, handler: Handler, server_info: Mapping[str, Any]) -> None:
        self._handler = handler
        # the SDK deep-copies its stamp per call; a flat one is copied by dict()
        self._server_info = dict(server_info)
        self._flat_info = all(
            isinstance(value, str | int | float | bool) for value in server_info.values()
        )
        #: the last ``_meta`` the SDK's request model accepted, by protocol version
        self._checked_meta: dict[str, Any] = {}

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != METHOD or not self._plain(ctx):
            return await call_next(ctx)
        params = ctx.params
        assert params is not None  # _plain
        result = await self._handler(ctx, params["name"], params.get("arguments"))
        return self.wire(result, ctx.protocol_version)

    def _plain(self, ctx: ServerRequestContext[Any]) -> bool:
        """Whether the request is a plain call on an initialized connection whose params the
        SDK's request model accepts (checked by hand, or by the model once per new
        ``_meta``)."""
        params = ctx.params
        connection = getattr(ctx.session, "_connection", None)
        if (
            type(params) is not dict
            or connection is None
            or not connection.initialize_accepted
            or not PLAIN_PARAMS.issuperset(params)
            or type(params.get("name")) is not str
        ):
            return False
        arguments = params.get("arguments")
        if arguments is not None and (
            type(arguments) is not dict or not all(type(key) is str for key in arguments)
        ):
            return False
        version = ctx.protocol_version
        meta = params.get("_meta")
        if meta is None and version not in MODERN_PROTOCOL_VERSIONS:
            return True  # optional before 2026-07-28; name and arguments are all there is
        if meta is not None and self._checked_meta.get(version) == meta:
            return True
        try:
            validate_client_request(METHOD, version, params)
        except (KeyError, ValueError, ValidationError):
            return False  # the SDK's path refuses it, in its own words
        if meta is not None:
            self._checked_meta[version] = copy.deepcopy(meta)
        return True

    def wire(self, result: Any, version: str) -> dict[str, Any]:
        """``result`` as the SDK's server would send it on ``version``."""
        modern = version in MODERN_PROTOCOL_VERSIONS
        if type(result) is WireResult:
            dumped = dict(result)
            if not modern:
                del dumped["resultType"]  # not in the 2025-11-25 result
        else:
            dumped = _sdk_wire(result, version)
        if not modern:
            return dumped
        meta = dumped.get("_meta")
        if meta is None or (isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None):
            info = dict(self._server_info) if self._flat_info else copy.deepcopy(self._server_info)
            dumped["_meta"] = {**(meta or {}), SERVER_INFO_META_KEY: info}
        return dumped


def _sdk_wire(result: Any, version: str) -> dict[str, Any]:
    """A result of another kind (an error, an input request, an upstream server's result)
    dumped and checked against ``version``'s result model, as the SDK's server does."""
    if isinstance(result, BaseModel):
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    else:
        dumped = dict(result)
    result_type = dumped.get("resultType")
    if (
        version not in MODERN_PROTOCOL_VERSIONS
        or not isinstance(result_type, str)
        or result_type in CORE_RESULT_TYPES
    ):
        try:
            dumped = serialize_server_result(METHOD, version, dumped)
        except ValidationError:
            log.exception("tools/call returned an invalid result")
            raise MCPError(
                code=INTERNAL_ERROR, message="Handler returned an invalid result"
            ) from None
    if version in MODERN_PROTOCOL_VERSIONS and dumped.get("resultType") is None:
        dumped["resultType"] = "complete"
    return dumped
