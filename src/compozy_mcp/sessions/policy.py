"""Permission policies: matching names against them, and narrowing a parent's for a child.

An entry is an exact name, ``*`` (everything), or a prefix ending in ``*``
(``compozy__session_*``). Workspace paths are directories; a path allows itself and
everything below it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from compozy_mcp.sessions.model import PermissionPolicy

POLICY_KINDS = ("tools", "skills", "mcp_servers")


def allows(entries: Sequence[str], name: str) -> bool:
    """Whether a list of policy entries allows ``name``."""
    for entry in entries:
        if entry in (name, "*"):
            return True
        if entry.endswith("*") and name.startswith(entry[:-1]):
            return True
    return False


def _normal_path(path: str, base: str) -> str:
    joined = path if posixpath.isabs(path) else posixpath.join(base, path)
    return posixpath.normpath(joined)


def path_allowed(parents: Sequence[str], path: str) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in parents)


@dataclass(frozen=True, slots=True)
class Narrowed:
    policy: PermissionPolicy
    #: entries the child asked for that the parent's policy does not allow, by kind
    exceeding: dict[str, list[str]]


def narrow(
    parent: PermissionPolicy,
    *,
    base_path: str,
    tools: Sequence[str] | None,
    skills: Sequence[str] | None,
    mcp_servers: Sequence[str] | None,
    workspace_paths: Sequence[str] | None,
) -> Narrowed:
    """The child's policy: what it asked for (or the parent's, for kinds it left out).

    A child never gets more than its parent; whatever exceeds is reported, not granted.
    """
    exceeding: dict[str, list[str]] = {}
    chosen: dict[str, list[str]] = {}
    for kind, requested in zip(POLICY_KINDS, (tools, skills, mcp_servers), strict=True):
        granted: list[str] = list(getattr(parent, kind))
        if requested is None:
            chosen[kind] = granted
            continue
        over = [entry for entry in requested if not allows(granted, entry)]
        if over:
            exceeding[kind] = over
        chosen[kind] = list(dict.fromkeys(requested))
    parent_paths = [_normal_path(p, base_path) for p in parent.workspace_paths]
    if workspace_paths is None:
        paths = parent_paths
    else:
        paths = list(dict.fromkeys(_normal_path(p, base_path) for p in workspace_paths))
        over_paths = [p for p in paths if not path_allowed(parent_paths, p)]
        if over_paths:
            exceeding["workspace_paths"] = over_paths
    return Narrowed(
        PermissionPolicy(
            tools=chosen["tools"],
            skills=chosen["skills"],
            mcp_servers=chosen["mcp_servers"],
            workspace_paths=paths,
        ),
        exceeding,
    )
