"""The skill service: list, search and view the skills a session can use."""

from __future__ import annotations

import os
from pathlib import Path

from compozy_mcp.skills._cache import ParseCache
from compozy_mcp.skills._discovery import discover
from compozy_mcp.skills._errors import SkillNotFound, SkillUnreadable
from compozy_mcp.skills._fsguard import list_files
from compozy_mcp.skills._model import Skill, SkillRecord
from compozy_mcp.skills._search import rank

# module-level aliases: inside the class, ``list`` names the method
SkillRecords = list[SkillRecord]
_Skills = list[Skill]


class SkillService:
    """Skills of ``user_root`` (scope ``user``) and ``<workspace>/.compozy/skills``."""

    def __init__(self, user_root: Path) -> None:
        self._user_root = user_root
        self._cache = ParseCache()

    def list(self, workspace_path: Path | None) -> SkillRecords:
        """Summaries of every skill, sorted by name."""
        return [skill.summary() for skill in self._discover(workspace_path)]

    def search(self, query: str, workspace_path: Path | None, limit: int = 20) -> SkillRecords:
        """Summaries with a ``score``, best first; skills that do not match are left out."""
        ranked = rank(self._discover(workspace_path), query, limit)
        return [{**skill.summary(), "score": points} for skill, points in ranked]

    def view(self, name: str, workspace_path: Path | None) -> SkillRecord:
        """The whole skill; ``SkillNotFound`` or ``SkillUnreadable`` if it cannot be shown."""
        # the name is only ever compared with discovered names, never joined into a path; a
        # name no folder entry can have is refused before the roots are even scanned
        if not _could_be_listed(name):
            raise SkillNotFound(name)
        skill = next((s for s in self._discover(workspace_path) if s.name == name), None)
        if skill is None:
            raise SkillNotFound(name)
        diagnostics = skill.diagnostics
        if not diagnostics.valid or skill.real_path is None or skill.body is None:
            reason = diagnostics.failures[0] if diagnostics.failures else "the skill is invalid"
            raise SkillUnreadable(name, reason)
        return skill.view(_files(skill))

    def _discover(self, workspace_path: Path | None) -> _Skills:
        return discover(self._user_root, workspace_path, self._cache)


def _files(skill: Skill) -> list[str]:
    assert skill.real_path is not None
    return list_files(os.path.dirname(skill.real_path), skill.real_root)


def _could_be_listed(name: object) -> bool:
    """Whether ``name`` could be a skill's name or folder name (no path syntax at all)."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and not any(char in name for char in ("\x00", "/", "\\"))
        and not name.startswith("~")
        and not os.path.isabs(name)
    )
