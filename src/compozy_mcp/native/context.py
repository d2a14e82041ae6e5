"""What a handler receives besides its input: the call's identity and the services."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from compozy_mcp.calls import CallInfo, CallScope

if TYPE_CHECKING:
    from compozy_mcp.agents.definitions import AgentCatalog
    from compozy_mcp.artifacts import ArtifactService
    from compozy_mcp.config import Settings
    from compozy_mcp.native.registry import RegisteredTool
    from compozy_mcp.sessions.heartbeats import Heartbeats
    from compozy_mcp.sessions.model import Interaction
    from compozy_mcp.sessions.service import Sessions
    from compozy_mcp.sessions.tasks import Tasks
    from compozy_mcp.skills import SkillService


class ToolCatalog(Protocol):
    """The catalog the contract tools read (built above this layer, in ``info``)."""

    def visible(self, scope: CallScope) -> Sequence[RegisteredTool]: ...

    def descriptor(self, tool: RegisteredTool) -> dict[str, Any]: ...

    def describe(self, tool_id: str, scope: CallScope) -> dict[str, Any] | None: ...

    def search(self, query: str, scope: CallScope, limit: int) -> list[dict[str, Any]]: ...


class HookAdmin(Protocol):
    """The hooks the hook tools manage (implemented above this layer, in ``hooks``).

    Records are the shapes of :mod:`compozy_mcp.native.hook_schema`; a hook that does not
    exist is a :class:`~compozy_mcp.errors.ResourceNotFound` of kind ``hook``.
    """

    async def list(self, call: CallInfo, event: str | None) -> dict[str, Any]:
        """``{"hooks": [...], "problems": [...]}``: every hook, and what could not be loaded."""
        ...

    async def info(self, call: CallInfo, hook_id: str) -> dict[str, Any]: ...

    async def create(self, call: CallInfo, definition: dict[str, Any]) -> dict[str, Any]: ...

    async def update(
        self, call: CallInfo, hook_id: str, changes: dict[str, Any]
    ) -> dict[str, Any]: ...

    async def set_enabled(self, call: CallInfo, hook_id: str, enabled: bool) -> dict[str, Any]: ...

    async def delete(self, call: CallInfo, hook_id: str) -> dict[str, Any]: ...

    async def runs(self, call: CallInfo, filters: dict[str, Any]) -> dict[str, Any]:
        """``{"runs": [...], "next_cursor"?}``, newest first; a managed session sees the runs of
        calls made by itself and its descendants only."""
        ...

    async def test(self, call: CallInfo, request: dict[str, Any]) -> dict[str, Any]:
        """Run one hook once on a payload, apply nothing, call no tool; what it decided."""
        ...


class ApprovalAdmin(Protocol):
    """Approvals as the approval tools use them (implemented above this layer, in
    ``approvals``). Records are the shapes of :mod:`compozy_mcp.native.approval_tools`."""

    async def list_grants(self, call: CallInfo, filters: dict[str, Any]) -> dict[str, Any]:
        """``{"grants": [...]}``; a managed session sees its own workspace's only."""
        ...

    async def set_grant(self, call: CallInfo, args: dict[str, Any]) -> dict[str, Any]: ...

    async def set_mode(self, call: CallInfo, session_id: str, mode: Any) -> dict[str, Any]: ...

    async def revoke(self, call: CallInfo, grant_id: str) -> dict[str, Any]: ...

    async def answer(
        self, call: CallInfo, session_id: str, interaction_id: str, decision: str
    ) -> dict[str, Any]:
        """Answer a pending interaction of any kind, by the answerer of its kind."""
        ...


class LoopAdmin(Protocol):
    """Loops: definitions and runs (implemented above this layer, in ``loops``). Records are
    the shapes of :mod:`compozy_mcp.loops._records`; ``definition`` is the Loop document as
    YAML or JSON text, or as an object."""

    async def validate(self, call: CallInfo, definition: Any) -> dict[str, Any]:
        """``{"valid", "items": [{node_id, path, code, message, severity, line, column}]}``."""
        ...

    async def create(
        self, call: CallInfo, definition: Any, loop_id: str | None
    ) -> dict[str, Any]: ...

    async def info(self, call: CallInfo, loop_id: str, version: int | None) -> dict[str, Any]: ...

    async def list_loops(self, call: CallInfo) -> dict[str, Any]: ...

    async def run(self, call: CallInfo, request: dict[str, Any]) -> dict[str, Any]: ...

    async def status(self, call: CallInfo, run_id: str) -> dict[str, Any]: ...

    async def runs(self, call: CallInfo, filters: dict[str, Any]) -> dict[str, Any]: ...

    async def cancel(self, call: CallInfo, run_id: str) -> dict[str, Any]: ...

    async def approve(self, call: CallInfo, request: dict[str, Any]) -> dict[str, Any]: ...


class AgentAdmin(Protocol):
    """The agents sessions run and their turns (implemented above this layer, in ``runtime``).

    Turn records are :func:`compozy_mcp.runtime._turn.turn_record`'s; a session the call may
    not read is refused as for any session tool."""

    def agents(self, workspace_path: str | None = None) -> AgentCatalog: ...

    async def prompt(self, call: CallInfo, session_id: str, text: str, *, wait: bool) -> str:
        """Queue a prompt as the next turn; returns its turn id."""
        ...

    async def ensure_running(self, call: CallInfo, session_id: str) -> None: ...

    async def wait_turn(
        self, call: CallInfo, session_id: str, turn_id: str, timeout: float
    ) -> dict[str, Any]: ...

    async def turn(self, call: CallInfo, session_id: str, turn_id: str) -> dict[str, Any]: ...

    async def cancel(self, call: CallInfo, session_id: str) -> dict[str, Any]: ...

    async def approve(
        self, call: CallInfo, session_id: str, interaction_id: str, decision: str
    ) -> Interaction: ...

    def latest_turn_id(self, call: CallInfo, session_id: str) -> str | None: ...

    def history(
        self, call: CallInfo, session_id: str, after_turn: int, limit: int
    ) -> dict[str, Any]: ...

    def events(
        self, call: CallInfo, session_id: str, after_seq: int, limit: int
    ) -> dict[str, Any]: ...

    def follow(self, session_id: str) -> AsyncIterator[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    sessions: Sessions
    skills: SkillService
    artifacts: ArtifactService
    catalog: ToolCatalog
    hooks: HookAdmin
    approvals: ApprovalAdmin
    loops: LoopAdmin
    tasks: Tasks
    heartbeats: Heartbeats
    #: ``None`` when the assembly was given a driver of its own (benchmarks)
    agents: AgentAdmin | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    info: CallInfo
    services: Services

    @property
    def tool_id(self) -> str:
        return self.info.tool_id

    @property
    def scope(self) -> CallScope:
        return self.info.scope
