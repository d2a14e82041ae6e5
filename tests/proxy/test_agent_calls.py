"""Issue 12 over MCP: a waiting ``compozy__session_prompt`` streams its turn as progress
notifications (the echo agent runs wherever the proxy's store is), on every transport: stdio,
and Streamable HTTP (issue 30), whose answer to such a call is an event stream that carries
the notifications, then the result."""

from __future__ import annotations

import pytest
from tests.proxy.support import Mode, Proxy, create_session, record

pytestmark = pytest.mark.anyio


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


async def test_compact_events_over_mcp_keep_the_turns_status_and_stop_reason(
    proxy: Proxy, mode: Mode
) -> None:
    """Spec, what compact keeps (state, stop reasons), as an MCP client receives it."""
    async with proxy.client(mode) as client:
        sid = (await create_session(client, provider="echo"))["id"]
        prompt = {"session_id": sid, "prompt": "hi", "wait": True, "timeout_seconds": 60}
        await client.call_tool("compozy__session_prompt", prompt)
        events = record(await client.call_tool("compozy__session_events", {"session_id": sid}))
        ended = events["events"][-1]
        assert (ended["kind"], ended["payload"]) == (
            "turn_ended",
            {"status": "completed", "stop_reason": "end_turn"},
        )
        assert all("payload" not in e for e in events["events"] if e["kind"].endswith("_chunk"))
