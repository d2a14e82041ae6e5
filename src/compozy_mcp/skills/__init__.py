"""Skills: folders holding a SKILL.md, found under the user root and a workspace root."""

from compozy_mcp.skills._errors import SkillNotFound, SkillUnreadable
from compozy_mcp.skills._metadata import NAME_PATTERN
from compozy_mcp.skills._model import Diagnostics, Scope, Skill, SkillRecord
from compozy_mcp.skills._service import SkillService
from compozy_mcp.skills.schema import (
    DIAGNOSTICS_SCHEMA,
    SKILL_SEARCH_ITEM_SCHEMA,
    SKILL_SUMMARY_SCHEMA,
    SKILL_VIEW_SCHEMA,
)

__all__ = [
    "DIAGNOSTICS_SCHEMA",
    "NAME_PATTERN",
    "SKILL_SEARCH_ITEM_SCHEMA",
    "SKILL_SUMMARY_SCHEMA",
    "SKILL_VIEW_SCHEMA",
    "Diagnostics",
    "Scope",
    "Skill",
    "SkillNotFound",
    "SkillRecord",
    "SkillService",
    "SkillUnreadable",
]
