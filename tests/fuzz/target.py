"""A target of hostile calls: one app or daemon, reached through an MCP client, an HTTP client
and (the soak) an MCP client of a stdio proxy relaying it, driven from hypothesis's thread
through a blocking portal."""

from __future__ import annotations

import json
from typing import Any

import anyio.from_thread
import httpx2
from hypothesis import strategies as st
from mcp.client import Client
from tests.fuzz.calls import TOOLS, hostile_input, resolve, typed_error

from compozy_mcp.validation import lone_surrogate_at


class Target:
    """One app, reached through an MCP client and an HTTP client, from hypothesis's thread."""

    def __init__(
        self, portal: anyio.from_thread.BlockingPortal, *, mcp_sends_surrogates: bool = True
    ) -> None:
        self.portal = portal
        # the SDK's HTTP client cannot encode a lone surrogate; such calls go over the HTTP API
        # (raw stdio tests send them over MCP: tests/proxy/test_robustness.py)
        self.mcp_sends_surrogates = mcp_sends_surrogates
        self.sessions: list[str] = []
        self.mcp: Client | None = None
        self.http: httpx2.AsyncClient | None = None
        #: a client of ``compozy proxy`` over stdio, when the target has one (the soak)
        self.stdio: Client | None = None
        self.answers: dict[str, int] = {}

    def count(self, kind: str) -> None:
        self.answers[kind] = self.answers.get(kind, 0) + 1

    @property
    def surfaces(self) -> list[str]:
        """The surfaces this target is reached through, in a fixed order."""
        return ["mcp", "http", *(["stdio"] if self.stdio is not None else [])]

    async def call(self, surface: str, tool_id: str, tool_input: Any) -> None:
        if surface == "http":
            await self.call_http(tool_id, tool_input)
        else:
            await self.call_mcp(tool_id, tool_input, stdio=surface == "stdio")

    async def call_mcp(self, tool_id: str, tool_input: Any, *, stdio: bool = False) -> None:
        client, kind = (self.stdio, "stdio") if stdio else (self.mcp, "mcp")
        assert client is not None
        if (stdio or not self.mcp_sends_surrogates) and lone_surrogate_at(tool_input) is not None:
            # the SDK's clients cannot encode a lone surrogate: such calls go over the HTTP API
            await self.call_http(tool_id, tool_input)
            return
        arguments = tool_input if isinstance(tool_input, dict) else {"value": tool_input}
        result = await client.call_tool(tool_id, arguments)
        if result.is_error:
            assert isinstance(result.structured_content, dict), result
            assert typed_error(result.structured_content["error"]), result
            self.count(f"{kind} typed error")
        else:
            assert isinstance(result.structured_content, dict), result
            self.count(f"{kind} result")
            self._learn(result.structured_content)

    async def call_http(self, tool_id: str, tool_input: Any) -> None:
        assert self.http is not None
        # stdlib JSON escapes a lone surrogate (\\ud800), as a hostile client would send it
        body = json.dumps({"input": tool_input}).encode()
        response = await self.http.post(
            f"/tools/{tool_id}/invoke", content=body, headers={"Content-Type": "application/json"}
        )
        assert response.status_code < 500, (response.status_code, response.text)
        body = response.json()
        if response.status_code >= 400:
            assert typed_error(body["error"]), body
            self.count("http typed error")
        else:
            self.count("http result")
            self._learn(body["result"]["structured"])

    def _learn(self, structured: dict[str, Any]) -> None:
        session = structured.get("session")
        ident = session.get("id") if isinstance(session, dict) else structured.get("session_id")
        if isinstance(ident, str) and ident not in self.sessions and len(self.sessions) < 50:
            self.sessions.append(ident)


def fuzz_one(target: Target, data: st.DataObject) -> None:
    """Draw one hostile call (tool, input, surface) and make it."""
    tool_id = data.draw(st.sampled_from(TOOLS), label="tool")
    tool_input = resolve(data.draw(hostile_input(tool_id), label="input"), target.sessions)
    surface = data.draw(st.sampled_from(target.surfaces), label="surface")
    target.portal.call(target.call, surface, tool_id, tool_input)
