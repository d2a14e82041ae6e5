"""Issue 12 over MCP: a waiting ``compozy__session_prompt`` streams its turn as progress
notifications (the echo agent runs wherever the proxy's store is).

Progress needs a response stream: the in-process and stdio proxies have one; the daemon's
Streamable HTTP endpoint answers with single JSON responses (SSE events are capped at 1 MiB by
the SDK's client, results are not), so over HTTP the turn arrives whole at its end and a client
follows it live on ``GET /api/sessions/{id}/events`` (Server-Sent Events)."""

from __future__ import annotations

import pytest
from tests.proxy.support import Mode, Proxy, create_session, record

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "proxy", ["inproc", pytest.param("stdio", marks=pytest.mark.process)], indirect=True
)
async def test_a_waiting_prompt_reports_its_turn_as_progress(proxy: Proxy, mode: Mode) -> None:
    async with proxy.client(mode) as client:
        sid = (await create_session(client, provider="echo"))["id"]
        seen: list[tuple[float, str | None]] = []

        async def report(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, message))

        result = await client.call_tool(
            "compozy__session_prompt",
            {"session_id": sid, "prompt": "hello progress", "wait": True, "timeout_seconds": 60},
            progress_callback=report,
        )
        turn = record(result)["turn"]
        assert (turn["status"], turn["summary"]["text"]) == ("completed", "echo: hello progress")
        messages = [message for _, message in seen]
        assert messages == [
            "turn_started",
            "The user said 2 words.",
            "echo: ",
            "hello progress",
            "turn_ended",
        ]
        assert [done for done, _ in seen] == [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("proxy", [pytest.param("http", marks=pytest.mark.process)], indirect=True)
async def test_over_http_a_waiting_prompt_returns_the_ended_turn(proxy: Proxy, mode: Mode) -> None:
    async with proxy.client(mode) as client:
        sid = (await create_session(client, provider="echo"))["id"]
        result = await client.call_tool(
            "compozy__session_prompt",
            {"session_id": sid, "prompt": "over http", "wait": True, "timeout_seconds": 60},
        )
        assert record(result)["turn"]["summary"]["text"] == "echo: over http"
