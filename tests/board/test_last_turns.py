"""The last turns the board's cards show (``LocalHost.last_turns``): each session's last turn
in its compact record, read in one store read, with the echo agent run in this process."""

from __future__ import annotations

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.sessions.turn_record import COMPACT_TURN_FIELDS

pytestmark = pytest.mark.anyio


async def test_each_session_that_has_a_turn_gives_its_last_one_compact(
    call: Caller, app: App
) -> None:
    talked = (await call.create(provider="echo"))["id"]
    quiet = (await call.create())["id"]
    for text in ("first", "second"):
        args = {"session_id": talked, "prompt": text, "wait": True, "timeout_seconds": 30}
        await call("compozy__session_prompt", args)
    turns = await LocalHost(app).last_turns([talked, quiet, "sess-unknown"])
    assert list(turns) == [talked]  # never prompted, or unknown: left out
    last = turns[talked]
    assert (last["turn"], last["status"], last["summary"]["text"]) == (
        2,
        "completed",
        "echo: second",
    )
    assert set(last) <= set(COMPACT_TURN_FIELDS)  # compact: no chunks, thoughts or tool calls
