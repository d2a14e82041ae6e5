"""A discovered skill and its diagnostics, and the plain records they are reported as."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

Scope = Literal["user", "workspace"]
SkillRecord = dict[str, Any]


@dataclass(slots=True)
class Diagnostics:
    """What is wrong with a skill. ``valid`` is false when it must not be used."""

    valid: bool
    verified: bool
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    #: why this skill was chosen over another one of the same name
    activation_reason: str | None = None

    def record(self) -> SkillRecord:
        out: SkillRecord = {
            "valid": self.valid,
            "verified": self.verified,
            "warnings": list(self.warnings),
            "failures": list(self.failures),
        }
        if self.activation_reason is not None:
            out["activation_reason"] = self.activation_reason
        return out


@dataclass(slots=True)
class Skill:
    """One skill found in a root. ``body`` and ``front_matter`` are ``None`` if unreadable."""

    name: str
    description: str
    scope: Scope
    #: absolute path of SKILL.md as found (symlinks not resolved)
    path: str
    #: resolved real path of SKILL.md; ``None`` when it was refused before resolving
    real_path: str | None
    real_root: str
    tags: tuple[str, ...]
    version: str | None
    front_matter: dict[str, Any] | None
    body: str | None
    diagnostics: Diagnostics

    def summary(self) -> SkillRecord:
        out: SkillRecord = {
            "name": self.name,
            "description": self.description,
            "scope": self.scope,
            "path": self.path,
        }
        if self.tags:
            out["tags"] = list(self.tags)
        if self.version is not None:
            out["version"] = self.version
        out["diagnostics"] = self.diagnostics.record()
        return out

    def view(self, files: list[str]) -> SkillRecord:
        out = self.summary()
        diagnostics = out.pop("diagnostics")
        # a copy: the parsed front matter is shared with the parse cache
        out["front_matter"] = copy.deepcopy(self.front_matter or {})
        out["body"] = self.body or ""
        out["files"] = files
        out["diagnostics"] = diagnostics
        return out
