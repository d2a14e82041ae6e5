"""The two ways looking a skill up can fail."""

from __future__ import annotations


class SkillNotFound(Exception):
    """No discovered skill has this name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no skill named {name!r}")
        self.name = name


class SkillUnreadable(Exception):
    """The skill exists but is invalid or unsafe to read; ``reason`` is its first failure."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"skill {name!r} cannot be read: {reason}")
        self.name = name
        self.reason = reason
