"""ASGI middleware over ``/mcp``: valid JSON is never refused as "not JSON".

The SDK parses a POST's body with pydantic, which refuses JSON it cannot represent: a lone
surrogate escape (``"\\ud800"``) or an integer of 5,001 digits is answered "Parse error", and
``1e400`` reaches the tools as infinity (and an upstream server as ``null``). Here a body that
orjson cannot read is parsed by :func:`compozy_mcp.jsonutil.loads_request`; one that holds
such a value is answered at once, as the stdio proxy answers it: a request whose id no reply
can carry gets Invalid Request with id null, any other request an Invalid params error naming
the field and what is wrong with it. Everything else goes to the SDK untouched.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from compozy_mcp import jsonutil
from compozy_mcp.proxy._stdio import INVALID_REQUEST, usable_id
from compozy_mcp.validation import unrepresentable_at

INVALID_PARAMS = -32602
#: the ASGI scope key under which a POST's decoded JSON-RPC message (a dict) is passed on, so
#: that nothing after this middleware has to decode the body again to route it
DECODED_MESSAGE = "compozy.mcp_message"


class RepresentableJson:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        parts: list[bytes] = []
        length = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            parts.append(message.get("body", b""))
            length += len(parts[-1])
            if not message.get("more_body", False) or length > self.max_body_bytes:
                break
        answer = None
        if length <= self.max_body_bytes:
            body = b"".join(parts)
            try:
                decoded = orjson.loads(body)
            except orjson.JSONDecodeError:
                answer = _answer(body)  # not JSON orjson reads: maybe JSON the SDK cannot
            else:
                if isinstance(decoded, dict):
                    scope = {**scope, DECODED_MESSAGE: decoded}
        if answer is not None:
            status, payload = answer
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": jsonutil.dumps(payload)})
            return

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)


def _answer(body: bytes) -> tuple[int, dict[str, Any]] | None:
    """The answer to a body orjson refused, when it holds what no tool can take; ``None`` for
    the SDK to handle."""
    try:
        value = jsonutil.loads_request(body)
    except ValueError:
        return None  # not JSON: the SDK's parse error
    if not isinstance(value, dict) or "method" not in value:
        return None
    found = unrepresentable_at(value)
    if found is None:
        return None  # e.g. an integer past 64 bits, which pydantic reads
    if "id" not in value:
        return None  # a notification is never answered; the SDK refuses it
    ident = value["id"]
    if not usable_id(ident):
        error = {"code": INVALID_REQUEST, "message": "Invalid Request"}
        return 400, {"jsonrpc": "2.0", "id": None, "error": error}
    where, problem = found
    error = {"code": INVALID_PARAMS, "message": f"{where} {problem}"}
    return 200, {"jsonrpc": "2.0", "id": ident, "error": error}
