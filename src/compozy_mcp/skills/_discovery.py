"""Finding the skills of the user root and a workspace root, and choosing one per name.

Each call re-scans the roots (skills change on disk); only parsing is cached.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from compozy_mcp.skills._cache import ParseCache, cache_key
from compozy_mcp.skills._fsguard import Refused, check_skill_file, is_within, read_checked
from compozy_mcp.skills._metadata import ParsedSkill, failed, parse_skill
from compozy_mcp.skills._model import Diagnostics, Scope, Skill

SKILL_FILE = "SKILL.md"


def workspace_root(workspace_path: Path) -> Path:
    return workspace_path / ".compozy" / "skills"


def discover(user_root: Path, workspace_path: Path | None, cache: ParseCache) -> list[Skill]:
    """Every skill by name, sorted; a workspace skill replaces a user skill of the same name."""
    chosen = {skill.name: skill for skill in scan_root(user_root, "user", cache)}
    if workspace_path is not None:
        root = workspace_root(workspace_path)
        # a workspace whose skills root is the user root (the home directory, say) adds nothing
        if os.path.realpath(root) != os.path.realpath(user_root):
            for skill in scan_root(root, "workspace", cache):
                shadowed = chosen.get(skill.name)
                if shadowed is not None:
                    skill.diagnostics.activation_reason = (
                        f"workspace skill overrides the user skill at {shadowed.path}"
                    )
                chosen[skill.name] = skill
    return [chosen[name] for name in sorted(chosen)]


def scan_root(root: Path, scope: Scope, cache: ParseCache) -> list[Skill]:
    """The skills of one root, one per name: the first folder (by name) wins a collision."""
    shown_root = os.path.abspath(root)
    real_root = os.path.realpath(shown_root)
    try:
        with os.scandir(shown_root) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:  # a missing (or unlistable) root has no skills
        return []
    cache.fit(len(entries))
    winners: dict[str, Skill] = {}
    for entry in entries:
        skill = _load_folder(entry, scope, real_root, cache)
        if skill is None:
            continue
        winner = winners.get(skill.name)
        if winner is None:
            winners[skill.name] = skill
        else:
            winner.diagnostics.warnings.append(
                f'another skill in {shown_root} also declares name "{skill.name}": {skill.path}'
            )
    return list(winners.values())


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a SKILL.md was found."""

    folder: str
    scope: Scope
    path: str
    real_root: str


def _load_folder(
    entry: os.DirEntry[str], scope: Scope, real_root: str, cache: ParseCache
) -> Skill | None:
    """The skill in one folder of the root, or ``None`` if the entry is not a skill folder."""
    place = _Place(entry.name, scope, os.path.join(entry.path, SKILL_FILE), real_root)
    try:
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if not is_within(target, real_root):
                if not os.path.isdir(target):
                    return None
                raise Refused("skill folder is a symlink to a folder outside the skills root")
        if not entry.is_dir():
            return None
        checked = check_skill_file(place.path, real_root)
        if checked is None:
            return None
        parsed = cache.get(cache_key(checked.real_path, checked.stat))
        if parsed is None:
            data, info = read_checked(checked, real_root)
            parsed = parse_skill(data)
            cache.put(cache_key(checked.real_path, info), parsed)
    except Refused as exc:
        return _build(place, failed(str(exc)))
    except OSError as exc:
        return _build(place, failed(f"skill folder cannot be inspected: {exc.strerror or exc}"))
    return _build(place, parsed, checked.real_path)


def _build(place: _Place, parsed: ParsedSkill, real_path: str | None = None) -> Skill:
    """The listed skill: a (possibly cached) parse placed in its folder, with fresh diagnostics."""
    folder = place.folder
    warnings = list(parsed.warnings)
    if parsed.name is not None and parsed.name != folder:
        warnings.append(f'name "{parsed.name}" differs from its folder "{folder}"')
    verified = parsed.valid and parsed.intact and parsed.name == folder
    return Skill(
        # an unreadable name is replaced by the folder's, so the skill can still be listed
        name=parsed.name if parsed.name is not None else folder,
        description=parsed.description,
        scope=place.scope,
        path=place.path,
        real_path=real_path,
        real_root=place.real_root,
        tags=parsed.tags,
        version=parsed.version,
        front_matter=dict(parsed.front_matter) if parsed.front_matter is not None else None,
        body=parsed.body,
        diagnostics=Diagnostics(
            valid=parsed.valid,
            verified=verified,
            warnings=warnings,
            failures=list(parsed.failures),
        ),
    )
