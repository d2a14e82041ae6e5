"""Every upstream server a process may connect, by name: the extensions installed, then
``$COMPOZY_HOME/mcp.yaml``, then the workspace's ``.compozy/mcp.yaml``; a later definition of a
name wins over an earlier one. A definition that is not valid is skipped with a warning (one
reserved name in ``mcp.yaml`` used to keep the daemon from starting)."""

from __future__ import annotations

from pathlib import Path

from compozy_mcp.upstream._extensions import discovered
from compozy_mcp.upstream.config import ServerDefinition, user_file, workspace_file


def defined(home: Path, workspace: Path | None) -> dict[str, ServerDefinition]:
    found: dict[str, ServerDefinition] = {d.name: d for d in discovered()}
    found.update(user_file(home).servers(skip_invalid=True))
    if workspace is not None:
        found.update(workspace_file(workspace).servers(skip_invalid=True))
    return found
