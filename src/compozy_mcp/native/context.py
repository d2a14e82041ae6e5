"""What a handler receives besides its input: the call's identity and the services."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from compozy_mcp.calls import CallInfo, CallScope

if TYPE_CHECKING:
    from compozy_mcp.artifacts import ArtifactService
    from compozy_mcp.config import Settings
    from compozy_mcp.info.catalog import ToolCatalog
    from compozy_mcp.sessions.service import SessionService
    from compozy_mcp.skills import SkillService


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    sessions: SessionService
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
