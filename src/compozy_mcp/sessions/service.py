"""The session service: every session operation, as the async layers above call it.

The work is done by one class per job, each synchronous and one store transaction per call:

- :class:`~.lifecycle.Lifecycle`: create, read, list, archive, unarchive, rename, stop;
- :class:`~.binding.RuntimeBinding`: runtime_set, runtime_clear, rewind, clear, continue
  (fenced); a bind starts its agent through the :class:`~.runtime.RuntimeDriver` between two
  transactions;
- :class:`~.turns.TurnLedger`: turns queued, run and finished, and what agents report;
- :class:`~.spawning.Spawner`: spawn and fork, within a parent's budget and policy;
- :class:`~.access.Access`: what a managed session may call and act on (its policy, its
  tree, whether it has ended);
- :class:`~.workspaces.Workspaces`: where sessions live and how they are presented;
- :class:`~.events.SessionEvents`: what a runtime reports.

This facade decides where that work runs: **writes** in worker threads (they may wait for
another process's write lock, which must never stall the event loop), **reads** on the loop
(in WAL mode a reader never waits), except a read that finds a session whose TTL has passed,
which hands over to a write that stops it first. Methods return complete records; views are
applied above this layer.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio

from compozy_mcp.agents.definitions import AgentCatalog
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock
from compozy_mcp.sessions.access import Access
from compozy_mcp.sessions.binding import RuntimeBinding
from compozy_mcp.sessions.events import SessionEvents
from compozy_mcp.sessions.interactions import Interactions
from compozy_mcp.sessions.ledger import Fences, Record, SessionLedger
from compozy_mcp.sessions.lifecycle import Lifecycle, SessionFilter, SessionPage
from compozy_mcp.sessions.model import PermissionPolicy, Selection, SessionState
from compozy_mcp.sessions.runtime import (
    BindFailed,
    Binding,
    BindTicket,
    RuntimeDriver,
    checked_selection,
)
from compozy_mcp.sessions.spawning import Spawner, SpawnRequest
from compozy_mcp.sessions.turns import TurnLedger
from compozy_mcp.sessions.workspaces import Workspaces
from compozy_mcp.store.base import ProfileRow, Store, StoreReader, TranscriptTurn, WorkspaceRow

T = TypeVar("T")


class _NoDriver:
    """Until the assembly sets the driver: no agent can run."""

    def agents(self, workspace_path: str | None = None) -> AgentCatalog:
        return AgentCatalog({}, [])

    async def start(self, ticket: BindTicket) -> Binding:
        raise BindFailed("no_runtime", "this process runs no agents")

    async def bound(self, session_id: str) -> None:
        return None

    async def release(self, session_id: str, generation: int | None = None) -> None:
        return None

    async def reconcile(self) -> None:
        return None


class Sessions:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        offload: Offload,
        *,
        default_workspace_path: Path | None = None,
    ) -> None:
        self.ledger = SessionLedger(store, clock)
        self.lifecycle = Lifecycle(self.ledger)
        self.binding = RuntimeBinding(self.ledger)
        self.turns = TurnLedger(self.ledger)
        #: set by the assembly: the runtime is built on these sessions
        self.driver: RuntimeDriver = _NoDriver()
        self.spawner = Spawner(self.ledger)
        self.access = Access(self.ledger)
        self.workspaces = Workspaces(store, clock)
        self.events = SessionEvents(self.ledger)
        self.interactions = Interactions(self.ledger)
        self._offload = offload
        self.workspaces.ensure_defaults(default_workspace_path or Path(os.getcwd()))

    # --- where work runs -------------------------------------------------------------------

    async def _read(self, body: Callable[[StoreReader], T]) -> T:
        ledger = self.ledger
        with ledger.store.read() as reader:
            if not ledger.has_expired(reader):
                return body(reader)
        return await self._offload(self._read_after_expiry, body)

    def _read_after_expiry(self, body: Callable[[StoreReader], T]) -> T:
        with self.ledger.store.write() as writer:
            self.ledger.stop_expired(writer)
            return body(writer)

    async def _write(self, work: Callable[[], T]) -> T:
        return await self._offload(work)

    def agent_catalog(self, workspace_id: str | None = None) -> AgentCatalog:
        """The agent definitions a session of this workspace (default: none) may select."""
        path = None
        if workspace_id is not None:
            with self.ledger.store.read() as reader:
                workspace = reader.workspace(workspace_id)
            path = workspace.path if workspace is not None else None
        return self.driver.agents(path)

    def _session_workspace(self, session_id: str | None) -> str | None:
        if session_id is None:
            return None
        with self.ledger.store.read() as reader:
            row = reader.session(session_id)
        return row.workspace_id if row is not None else None

    def _selection(
        self,
        call: CallInfo,
        workspace_id: str | None,
        provider: str | None,
        model: str | None,
        reasoning_effort: str | None,
    ) -> Selection | None:
        """The checked selection a call asks for; ``None`` (nothing read) without a provider."""
        if provider is None:
            return None
        catalog = self.agent_catalog(workspace_id)
        return checked_selection(call, catalog, provider, model, reasoning_effort)

    async def bind(self, call: CallInfo, ticket: BindTicket | None, record: Record) -> Record:
        """Start the agent of a ticket and record the outcome (shielded: a caller that goes
        away must not leave the session ``binding`` or an agent without its session)."""
        if ticket is None:
            return record
        with anyio.CancelScope(shield=True):
            outcome: Binding | BindFailed
            try:
                outcome = await self.driver.start(ticket)
            except BindFailed as exc:
                outcome = exc
            record, accepted = await self._offload(self.binding.complete, call, ticket, outcome)
            if not accepted and isinstance(outcome, Binding):
                await self.driver.release(ticket.session_id, ticket.generation + 1)
            elif accepted and isinstance(outcome, Binding):
                await self.driver.bound(ticket.session_id)
        return record

    # --- reads ---------------------------------------------------------------------------

    async def status(self, call: CallInfo, session_id: str) -> Record:
        return await self._read(lambda reader: self.lifecycle.status(reader, call, session_id))

    async def list_sessions(self, call: CallInfo, filters: SessionFilter) -> SessionPage:
        """A page of sessions; a managed session sees only itself and its descendants."""
        query = replace(self.lifecycle.query(call, filters), subtree_of=call.scope.session_id)
        return await self._read(lambda reader: self.lifecycle.page(reader, query))

    def policy(self, session_id: str) -> PermissionPolicy | None:
        """A session's permission policy (cached: policies never change)."""
        return self.access.policy(session_id)

    def caller(self, session_id: str) -> tuple[SessionState, WorkspaceRow | None] | None:
        """A calling session's state and workspace, read as they are (no TTL handling: this
        describes a call being made, it does not act on the session); ``None`` if unknown."""
        with self.ledger.store.read() as reader:
            row = reader.session(session_id)
            if row is None:
                return None
            return self.ledger.read_state(row), reader.workspace(row.workspace_id)

    def lineage_below(self, session_id: str) -> list[str]:
        """``session_id`` and all its descendants (children, their children, ...)."""
        found = [session_id]
        with self.ledger.store.read() as reader:
            level = [session_id]
            while level:
                level = [child.session_id for child in reader.child_summaries(level)]
                found += level
        return found

    def transcript(self, call: CallInfo, session_id: str) -> list[TranscriptTurn]:
        with self.ledger.store.read() as reader:
            self.ledger.load(reader, call, session_id, read_only=True)
            return reader.transcript(session_id)

    # --- writes --------------------------------------------------------------------------

    async def create(
        self,
        call: CallInfo,
        *,
        agent_name: str,
        session_id: str | None = None,
        name: str | None = None,
        workspace_id: str | None = None,
        profile_id: str | None = None,
        session_type: Literal["user", "automation"] = "user",
        branch: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        reasoning_effort: str | None = None,
    ) -> Record:
        selection = self._selection(call, workspace_id, provider, model, reasoning_effort)
        if call.scope.session_id is not None:  # a managed session creates only children
            request = SpawnRequest(
                agent_name=agent_name,
                ttl_seconds=1,  # set from the caller's remaining TTL
                name=name,
                spawn_role="created",
                selection=selection,
                branch=branch,
                session_id=session_id,
                session_type=session_type,
            )
            return await self._offload(self.spawner.create_child, call, request)
        work = functools.partial(
            self.lifecycle.create,
            call,
            agent_name=agent_name,
            selection=selection,
            session_id=session_id,
            name=name,
            workspace_id=workspace_id,
            profile_id=profile_id,
            session_type=session_type,
            branch=branch,
        )
        return await self._write(work)

    async def archive(self, call: CallInfo, session_id: str) -> Record:
        record = await self._offload(self.lifecycle.archive, call, session_id)
        await self.driver.reconcile()
        return record

    async def unarchive(self, call: CallInfo, session_id: str) -> Record:
        return await self._offload(self.lifecycle.unarchive, call, session_id)

    async def rename(self, call: CallInfo, session_id: str, name: str) -> Record:
        return await self._offload(self.lifecycle.rename, call, session_id, name)

    async def stop(self, call: CallInfo, session_id: str, reason: str | None = None) -> Record:
        record = await self._offload(self.lifecycle.stop, call, session_id, reason)
        await self.driver.reconcile()  # the stop cascades: end every agent it unbound
        return record

    def sweep_expired(self) -> int:
        """Stop every session whose TTL has passed (a write: run it off the loop)."""
        with self.ledger.store.write() as writer:
            return self.ledger.stop_expired(writer)

    async def delete(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        """Delete an archived session and its descendants: ``{"session_id", "sessions",
        "transcript_turns", "artifacts"}`` (what was deleted)."""
        ids, counts = await self._offload(self.lifecycle.delete, call, session_id)
        for ident in ids:
            self.access.forget(ident)
        await self.driver.reconcile()
        return {
            "session_id": session_id,
            "sessions": ids,
            "transcript_turns": counts.transcript_turns,
            "artifacts": counts.artifacts,
        }

    async def runtime_set(
        self, call: CallInfo, session_id: str, selection: Selection, fences: Fences
    ) -> Record:
        catalog = self.agent_catalog(self._session_workspace(session_id))
        checked_selection(
            call, catalog, selection.provider, selection.model, selection.reasoning_effort
        )
        record, ticket = await self._offload(
            self.binding.runtime_set, call, session_id, selection, fences
        )
        return await self.bind(call, ticket, record)

    async def runtime_clear(self, call: CallInfo, session_id: str) -> Record:
        record = await self._offload(self.binding.runtime_clear, call, session_id)
        await self.driver.release(session_id)
        return record

    async def rewind(self, call: CallInfo, session_id: str, to_turn: int, fences: Fences) -> Record:
        found = await self._offload(self.binding.rewind, call, session_id, to_turn, fences)
        await self.driver.release(session_id)  # the old context goes with its process
        return await self.bind(call, found[1], found[0])

    async def clear(self, call: CallInfo, session_id: str, fences: Fences) -> Record:
        found = await self._offload(self.binding.clear, call, session_id, fences)
        await self.driver.release(session_id)
        return await self.bind(call, found[1], found[0])

    async def continue_(
        self, call: CallInfo, session_id: str, prompt: str | None, fences: Fences
    ) -> Record:
        found = await self._offload(self.binding.continue_, call, session_id, prompt, fences)
        return await self.bind(call, found[1], found[0])

    async def fork(
        self,
        call: CallInfo,
        session_id: str,
        *,
        fences: Fences,
        at_turn: int | None = None,
        name: str | None = None,
    ) -> Record:
        work = functools.partial(
            self.spawner.fork, call, session_id, fences=fences, at_turn=at_turn, name=name
        )
        return await self._write(work)

    async def spawn(
        self,
        call: CallInfo,
        request: SpawnRequest,
        *,
        provider: str | None = None,
        model: str | None = None,
        reasoning_effort: str | None = None,
    ) -> Record:
        workspace_id = (
            self._session_workspace(request.parent_session_id) if provider is not None else None
        )
        selection = self._selection(call, workspace_id, provider, model, reasoning_effort)
        if selection is not None:
            request = replace(request, selection=selection)
        return await self._offload(self.spawner.spawn, call, request)

    # --- workspaces and profiles -----------------------------------------------------------

    async def add_workspace(self, path: Path, name: str | None = None) -> WorkspaceRow:
        return await self._offload(self.workspaces.add_workspace, path, name)

    async def add_profile(
        self, name: str, color: str | None = None, icon: str | None = None
    ) -> ProfileRow:
        return await self._offload(self.workspaces.add_profile, name, color, icon)


__all__ = [
    "SessionFilter",
    "SessionPage",
    "Sessions",
    "SpawnRequest",
]
