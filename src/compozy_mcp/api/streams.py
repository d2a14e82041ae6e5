"""``GET /api/sessions/{id}/events`` as Server-Sent Events: the stored events after the cursor
(``cursor`` or ``Last-Event-ID``), then each new one as the agent sends it. ``until=turn_end``
ends the stream after the next ``turn_ended`` event. A comment line every 15 s keeps idle
proxies from closing it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.responses import StreamingResponse

from compozy_mcp import jsonutil
from compozy_mcp.hostapi import HostClient

#: how often a live stream looks for new events (the runtime writes them in 0.25 s batches)
POLL_SECONDS = 0.2
KEEPALIVE_SECONDS = 15.0
PAGE = 500


def wants_stream(accept: str) -> bool:
    return "text/event-stream" in accept


def _frame(event: dict[str, Any]) -> bytes:
    data = jsonutil.dumps(event).decode()
    return f"id: {event['seq']}\nevent: {event['kind']}\ndata: {data}\n\n".encode()


async def event_stream(
    host: HostClient, session_id: str, cursor: int, *, until_turn_end: bool
) -> StreamingResponse:
    """The stream response; the first page is read before it starts, so that an unknown
    session is an ordinary error response."""
    first = await host.session_events(session_id, {"cursor": cursor, "limit": PAGE})

    async def frames() -> AsyncIterator[bytes]:
        page, position, idle = first, cursor, 0.0
        while True:
            for event in page["events"]:
                yield _frame(event)
                position = event["seq"]
                if until_turn_end and event["kind"] == "turn_ended":
                    return
            if not page["events"]:
                await anyio.sleep(POLL_SECONDS)
                idle += POLL_SECONDS
                if idle >= KEEPALIVE_SECONDS:
                    idle = 0.0
                    yield b": keepalive\n\n"
            else:
                idle = 0.0
            page = await host.session_events(session_id, {"cursor": position, "limit": PAGE})

    return StreamingResponse(
        frames(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
