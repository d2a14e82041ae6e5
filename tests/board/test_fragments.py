"""The hook runs fragment pages on as ``compozy hooks runs`` does: the query's filter and
cursor go to the tool, and a page with more after it ends in an "Older runs" button."""

from __future__ import annotations

from typing import Any, cast

import pytest
from starlette.requests import Request
from starlette.responses import Response

from compozy_mcp.board._app import HOOK_RUNS_PAGE, Board
from compozy_mcp.errors import CompozyError
from compozy_mcp.hostapi import operations as ops
from compozy_mcp.hostapi.local import LocalHost
from compozy_mcp.hostapi.operation import Operation

pytestmark = pytest.mark.anyio

RUN = {
    "run_id": 7,
    "hook_id": "guard",
    "event": "tool.pre_call",
    "tool_id": "compozy__session_rename",
    "tool_call_id": "call-1",
    "started_at": "2026-12-04T12:00:00Z",
    "duration_ms": 3.25,
    "outcome": "timeout",
    "decision": "none",
    "patch_applied": False,
    "stderr_tail": "",
    "detail": "took longer than 5 s",
}


class ToolHost:
    """Answers the invoke operation with ``answer`` and remembers each call."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, operation: Operation[Any], args: dict[str, Any]) -> dict[str, Any]:
        assert operation is ops.INVOKE
        self.calls.append((args["tool_id"], args["input"]))
        return {"result": {"structured": self.answer}}


def _refuse(error: CompozyError) -> Response:
    raise error


def _request(query: str) -> Request:
    return Request({"type": "http", "method": "GET", "query_string": query.encode()})


async def test_hook_runs_pass_the_filter_and_cursor_and_offer_the_next_page() -> None:
    host = ToolHost({"runs": [RUN], "next_cursor": "c-2"})
    html = await Board(cast(LocalHost, host), _refuse).hook_runs(_request("failed=1&cursor=c-1"))
    assert host.calls == [
        (
            "compozy__hooks_runs",
            {"limit": HOOK_RUNS_PAGE, "failed": True, "cursor": "c-1", "result_view": "full"},
        )
    ]
    assert 'class="hook-run failed" id="hook-run-7"' in html  # a timeout is a failure
    assert "took longer than 5 s" in html
    assert 'class="older" id="older-runs" data-cursor="c-2">Older runs</button>' in html


async def test_the_last_page_of_hook_runs_has_no_older_button() -> None:
    host = ToolHost({"runs": [{**RUN, "outcome": "ok", "decision": "allow"}]})
    html = await Board(cast(LocalHost, host), _refuse).hook_runs(_request(""))
    assert host.calls[0][1] == {"limit": HOOK_RUNS_PAGE, "result_view": "full"}
    assert 'class="hook-run" id="hook-run-7"' in html
    assert "Older runs" not in html
