"""What a handler receives besides its input: the call's identity and the services."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from compozy_mcp.calls import CallInfo, CallScope

if TYPE_CHECKING:
    from compozy_mcp.artifacts import ArtifactService
    from compozy_mcp.config import Settings
    from compozy_mcp.native.registry import RegisteredTool
    from compozy_mcp.sessions.service import Sessions
    from compozy_mcp.skills import SkillService


class ToolCatalog(Protocol):
    """The catalog the contract tools read (built above this layer, in ``info``)."""

    def visible(self, scope: CallScope) -> Sequence[RegisteredTool]: ...

    def descriptor(self, tool: RegisteredTool) -> dict[str, Any]: ...

    def describe(self, tool_id: str, scope: CallScope) -> dict[str, Any] | None: ...

    def search(self, query: str, scope: CallScope, limit: int) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    sessions: Sessions
    skills: SkillService
    artifacts: ArtifactService
    catalog: ToolCatalog


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
