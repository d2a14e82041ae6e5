"""The Host API as its clients see it: in-process (:class:`~.local.LocalHost`) or over HTTP
(:class:`~.remote.RemoteHost`). Each operation returns the JSON payload the HTTP route sends
and raises a :class:`~compozy_mcp.errors.CompozyError` on failure."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

Payload = dict[str, Any]


class HostClient(Protocol):
    # --- tools: ToolDescriptorPayloads; invoke runs the one dispatcher -----------------------

    async def list_tools(self, *, session: str | None = None) -> Payload: ...

    async def tool_info(self, tool_id: str, *, session: str | None = None) -> Payload: ...

    async def search_tools(
        self, query: str | None, *, limit: int | None = None, session: str | None = None
    ) -> Payload: ...

    async def invoke(
        self,
        tool_id: str,
        tool_input: Any,
        *,
        session: str | None = None,
        approval_token: str | None = None,
    ) -> Payload:
        """``approval_token``: a one-shot approval token minted for this call."""
        ...

    # --- approvals ---------------------------------------------------------------------------

    async def mint_approval(
        self, tool_id: str, fields: Any, *, session: str | None = None
    ) -> Payload:
        """``{"approval": {"token", ...}}``: a one-shot token for one call of ``tool_id`` by
        ``fields["session_id"]``, with ``input`` or its ``input_digest`` (operator only)."""
        ...

    # --- sessions: the complete SessionPayload, never a view ---------------------------------

    async def list_sessions(self, filters: Mapping[str, Any]) -> Payload: ...

    async def session_status(self, session_id: str) -> Payload: ...

    async def create_session(self, fields: Any) -> Payload: ...

    async def archive_session(self, session_id: str) -> Payload: ...

    async def unarchive_session(self, session_id: str) -> Payload: ...

    async def delete_session(self, session_id: str) -> Payload: ...

    # --- agents and turns: the full records of the agent and turn tools --------------------

    async def list_agents(self, workspace_id: str | None = None) -> Payload:
        """``{"agents": [...], "problems": [...]}`` (``compozy__agent_list``, full)."""
        ...

    async def prompt_session(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        """``{"turn": ...}``: ``fields`` are ``prompt``, ``wait``, ``timeout_seconds``."""
        ...

    async def cancel_turn(self, session_id: str) -> Payload: ...

    async def session_history(self, session_id: str, params: Mapping[str, Any]) -> Payload:
        """``{"session_id", "turns": [...], "next_cursor"?}``: ``cursor``, ``limit``."""
        ...

    async def session_events(self, session_id: str, params: Mapping[str, Any]) -> Payload:
        """``{"session_id", "events": [...], "next_cursor"}``: ``cursor``, ``limit``."""
        ...

    async def approve_session(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        """Answer a pending interaction: ``fields`` are ``interaction_id`` and ``decision``."""
        ...

    def follow_events(self, session_id: str, cursor: int) -> AsyncIterator[Payload | None]:
        """The session's stored events after ``cursor``, then each new one as it is stored
        (woken by the runtime, never polled); ``None`` now and then while nothing happens (a
        stream's chance to keep its connection alive). Ends when the caller stops."""
        ...

    # --- worktrees and hand-off: the full records of the worktree tools ----------------------

    async def session_diff(self, session_id: str) -> Payload:
        """The session's changes against its worktree's base (``compozy__session_diff``,
        full: with the patch)."""
        ...

    async def merge_session(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        """Merge its work; ``fields``: ``into``, ``mode``, ``message``."""
        ...

    async def open_pull_request(self, session_id: str, fields: Mapping[str, Any]) -> Payload:
        """Push its branch and open a pull request; ``fields``: ``into``, ``title``,
        ``body``, ``draft``, ``remote``."""
        ...

    async def task(self, operation: str, args: Mapping[str, Any]) -> Payload:
        """The complete result of ``compozy__task_<operation>`` (see
        :data:`~compozy_mcp.hostapi.tasks.TASK_OPERATIONS`)."""
        ...

    async def heartbeat(self, operation: str, args: Mapping[str, Any]) -> Payload:
        """The complete result of ``compozy__agent_heartbeat_<operation>`` (``set``,
        ``status``, ``wake``; see :data:`~compozy_mcp.hostapi.tasks.HEARTBEAT_OPERATIONS`)."""
        ...

    async def list_worktrees(self, filters: Mapping[str, Any]) -> Payload:
        """``{"worktrees": [...]}``: ``workspace_id``, ``session_id``, ``include_removed``,
        ``limit``."""
        ...

    async def worktree_info(self, worktree_id: str) -> Payload: ...

    async def create_worktree(self, fields: Mapping[str, Any]) -> Payload:
        """``fields``: ``session_id``, ``branch``, ``base``."""
        ...

    async def remove_worktree(self, worktree_id: str, *, force: bool = False) -> Payload: ...

    # --- the store ---------------------------------------------------------------------------

    async def vacuum_store(self) -> Payload: ...

    # --- loops: the compozy__loop_* tools' full records ----------------------------------------

    async def validate_loop(self, fields: Any) -> Payload:
        """``{"valid", "items"}`` for ``{"definition"}`` (YAML/JSON text or an object)."""
        ...

    async def list_loops(self) -> Payload: ...

    async def create_loop(self, fields: Any) -> Payload: ...

    async def loop_info(self, loop_id: str, version: int | None = None) -> Payload: ...

    async def start_loop_run(self, loop_id: str, fields: Any) -> Payload:
        """Start a run of a stored Loop; ``fields``: version, inputs, wait, timeout_seconds."""
        ...

    async def list_loop_runs(self, filters: Mapping[str, Any]) -> Payload: ...

    async def loop_run_status(self, run_id: str) -> Payload: ...

    async def cancel_loop_run(self, run_id: str) -> Payload: ...

    async def approve_loop_run(self, run_id: str, fields: Any) -> Payload:
        """Answer the gate the run waits at; ``fields``: decision, node_id, answers, note, wait,
        timeout_seconds."""
        ...

    # --- workspaces and profiles -------------------------------------------------------------

    async def list_workspaces(self) -> Payload: ...

    async def add_workspace(self, fields: Any) -> Payload: ...

    async def trust_workspace(self, workspace_id: str, trusted: bool) -> Payload:
        """Trust a workspace, so that its ``.compozy/hooks.yaml`` runs (``trusted``), or no
        longer: ``{"workspace": ...}``."""
        ...

    async def list_profiles(self) -> Payload: ...

    async def add_profile(self, fields: Any) -> Payload: ...

    # --- upstream MCP servers ----------------------------------------------------------------

    async def list_mcp_servers(self) -> Payload:
        """``{"servers": [...]}``: the MCP servers this host connects, with its connection's
        state, tool count and last error (none when it connects none)."""
        ...

    async def aclose(self) -> None: ...


class McpServerListing(Protocol):
    """What a process that connects upstream MCP servers reports about them."""

    def listing(self) -> Payload: ...
