"""Where sessions live (workspaces) and how they are presented (profiles)."""

from __future__ import annotations

from pathlib import Path

from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import AlreadyExists, ResourceNotFound
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.ledger import new_id
from compozy_mcp.store.base import ProfileRow, Store, WorkspaceRow

DEFAULT_PROFILE = ProfileRow(
    id="prof_default", name="Default", color="#64748b", icon="sparkles", created_at=""
)
DEFAULT_WORKSPACE_ID = "ws_default"


class Workspaces:
    """Workspaces and profiles. Reads are cheap; ``add_*`` write (run them off the loop)."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def _now(self) -> str:
        return timestamp(self._clock.now())

    def ensure_defaults(self, workspace_path: Path) -> None:
        """Create the default profile and workspace the first time a store is used."""
        with self._store.read() as reader:
            if reader.profile(DEFAULT_PROFILE.id) and reader.workspace(DEFAULT_WORKSPACE_ID):
                return
        now = self._now()
        with self._store.write() as writer:
            if writer.profile(DEFAULT_PROFILE.id) is None:
                writer.insert_profile(
                    ProfileRow(
                        id=DEFAULT_PROFILE.id,
                        name=DEFAULT_PROFILE.name,
                        color=DEFAULT_PROFILE.color,
                        icon=DEFAULT_PROFILE.icon,
                        created_at=now,
                    )
                )
            if writer.workspace(DEFAULT_WORKSPACE_ID) is None:
                writer.insert_workspace(
                    WorkspaceRow(
                        id=DEFAULT_WORKSPACE_ID,
                        name="default",
                        path=str(workspace_path.resolve()),
                        created_at=now,
                    )
                )

    def add_workspace(self, path: Path, name: str | None = None) -> WorkspaceRow:
        row = WorkspaceRow(
            id=new_id("ws").replace("-", "_", 1),
            name=name or path.name or "workspace",
            path=str(path.resolve()),
            created_at=self._now(),
        )
        with self._store.write() as writer:
            taken = next((w for w in writer.workspaces() if w.path == row.path), None)
            if taken is not None:
                raise AlreadyExists(
                    f'{row.path} is already registered as workspace "{taken.id}" ("{taken.name}")',
                    reason=Reason.WORKSPACE_EXISTS,
                )
            writer.insert_workspace(row)
        return row

    def set_trust(self, workspace_id: str, trusted: bool) -> WorkspaceRow:
        """Trust a workspace (its ``.compozy/hooks.yaml`` runs from then on) or no longer. The
        operator's alone: no tool offers it, so no session can trust its own workspace."""
        with self._store.write() as writer:
            current = writer.workspace(workspace_id)
            if current is None:
                raise ResourceNotFound("", "workspace", workspace_id)
            # trusting again keeps the first time it was trusted
            at = (current.trusted_at or self._now()) if trusted else None
            writer.set_workspace_trust(workspace_id, at)
            found = writer.workspace(workspace_id)
        assert found is not None
        return found

    def add_profile(
        self, name: str, color: str | None = None, icon: str | None = None
    ) -> ProfileRow:
        row = ProfileRow(
            id=new_id("prof").replace("-", "_", 1),
            name=name,
            color=color,
            icon=icon,
            created_at=self._now(),
        )
        with self._store.write() as writer:
            taken = next((p for p in writer.all_profiles() if p.name == name), None)
            if taken is not None:
                raise AlreadyExists(
                    f'a profile named "{name}" already exists ("{taken.id}")',
                    reason=Reason.PROFILE_EXISTS,
                )
            writer.insert_profile(row)
        return row

    def workspaces(self) -> list[WorkspaceRow]:
        with self._store.read() as reader:
            return reader.workspaces()

    def profiles(self) -> list[ProfileRow]:
        with self._store.read() as reader:
            return reader.all_profiles()

    def workspace(self, workspace_id: str | None) -> WorkspaceRow | None:
        with self._store.read() as reader:
            return reader.workspace(workspace_id or DEFAULT_WORKSPACE_ID)

    def workspace_of(self, call: CallInfo, session_id: str) -> WorkspaceRow:
        """The workspace a session belongs to."""
        with self._store.read() as reader:
            row = reader.session(session_id)
            if row is None:
                raise ResourceNotFound(call.tool_id, "session", session_id)
            workspace = reader.workspace(row.workspace_id)
        if workspace is None:  # pragma: no cover - a foreign key keeps it
            raise ResourceNotFound(call.tool_id, "workspace", row.workspace_id)
        return workspace
