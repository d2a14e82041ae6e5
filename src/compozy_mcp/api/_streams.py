"""``GET /api/sessions/{id}/events`` as Server-Sent Events: the stored events after the cursor
(``cursor`` or ``Last-Event-ID``), then each new one as the agent sends it (the runtime wakes
the stream when it stores events). ``until=turn_end`` ends the stream after the next
``turn_ended`` event. A comment line every 15 s keeps idle proxies from closing it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

from compozy_mcp import jsonutil
from compozy_mcp.hostapi import HostClient
from compozy_mcp.hostapi import operations as ops

KEEPALIVE_SECONDS = 15.0


def wants_stream(accept: str) -> bool:
    return "text/event-stream" in accept


def _frame(event: dict[str, Any]) -> bytes:
    data = jsonutil.dumps(event).decode()
    return f"id: {event['seq']}\nevent: {event['kind']}\ndata: {data}\n\n".encode()


async def event_stream(
    host: HostClient, session_id: str, cursor: int, *, until_turn_end: bool
) -> StreamingResponse:
    """The stream response; the first page is read before it starts, so that an unknown
    session is an ordinary error response. Events are sent as the runtime stores them (it
    wakes the stream: nothing is polled)."""
    await host.call(ops.SESSION_EVENTS, {"cursor": cursor, "limit": 1, "session_id": session_id})

    async def frames() -> AsyncIterator[bytes]:
        idle = 0.0
        async for event in host.follow_events(session_id, cursor):
            if event is None:
                idle += 1.0
                if idle >= KEEPALIVE_SECONDS:
                    idle = 0.0
                    yield b": keepalive\n\n"
                continue
            idle = 0.0
            yield _frame(event)
            if until_turn_end and event["kind"] == "turn_ended":
                return

    return StreamingResponse(
        frames(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
