"""Shared fixtures: an app on an in-memory store with a clock that only moves when told."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from compozy_mcp.assembly import App, open_app
from compozy_mcp.calls import OPERATOR, CallScope
from compozy_mcp.clock import FixedClock
from compozy_mcp.config import Settings
from compozy_mcp.dispatch import ToolResult
from compozy_mcp.store import SQLiteStore

START = datetime(2026, 11, 10, 14, 2, 11, tzinfo=UTC)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def settings(tmp_path: Path, workspace: Path) -> Settings:
    return Settings(home=tmp_path / "home", default_workspace_path=workspace)


@pytest.fixture
def app(settings: Settings, clock: FixedClock) -> Iterator[App]:
    with open_app(settings, store=SQLiteStore.memory(), clock=clock) as opened:
        yield opened


class Caller:
    """Calls tools through the dispatcher, the way every surface does."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(
        self, tool_id: str, tool_input: Any = None, *, scope: CallScope = OPERATOR
    ) -> ToolResult:
        return await self.app.dispatcher.call(tool_id, tool_input or {}, scope=scope)

    async def structured(self, tool_id: str, tool_input: Any = None, **kw: Any) -> dict[str, Any]:
        return (await self(tool_id, tool_input, **kw)).structured

    async def session(self, tool_id: str, tool_input: Any = None, **kw: Any) -> dict[str, Any]:
        session: dict[str, Any] = (await self.structured(tool_id, tool_input, **kw))["session"]
        return session

    async def create(self, **fields: Any) -> dict[str, Any]:
        fields.setdefault("agent_name", "general")
        return await self.session("compozy__session_create", fields)

    async def full(self, session_id: str) -> dict[str, Any]:
        return await self.session(
            "compozy__session_status", {"session_id": session_id, "result_view": "full"}
        )


@pytest.fixture
def call(app: App) -> Caller:
    return Caller(app)
