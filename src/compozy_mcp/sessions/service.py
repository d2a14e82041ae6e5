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
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio

from compozy_mcp.agents.definitions import AgentCatalog
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock
from compozy_mcp.errors import (
    ResourceNotFound,
    ToolConflict,
    ToolInvalidInput,
    WorktreeUnavailable,
)
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions._binding import RuntimeBinding
from compozy_mcp.sessions._events import SessionEvents
from compozy_mcp.sessions._record import session_directory
from compozy_mcp.sessions._turns import TurnLedger
from compozy_mcp.sessions._workspaces import DEFAULT_WORKSPACE_ID, Workspaces
from compozy_mcp.sessions.access import Access
from compozy_mcp.sessions.heartbeats import replied_nothing, wake_turns
from compozy_mcp.sessions.interactions import Interactions
from compozy_mcp.sessions.ledger import Fences, Record, SessionLedger, new_id, require_open
from compozy_mcp.sessions.lifecycle import Lifecycle, SessionFilter, SessionPage
from compozy_mcp.sessions.model import PermissionPolicy, PullRequest, Selection, SessionState
from compozy_mcp.sessions.runtime import (
    BindFailed,
    Binding,
    BindTicket,
    RuntimeDriver,
    checked_selection,
)
from compozy_mcp.sessions.spawning import Spawner, SpawnRequest
from compozy_mcp.sessions.worktrees import MergeMode, SessionWorktrees
from compozy_mcp.store.base import (
    ProfileRow,
    SessionRow,
    Store,
    StoreReader,
    StoreWriter,
    TranscriptTurn,
    WorkspaceRow,
)
from compozy_mcp.store.worktrees import WorktreeQuery, WorktreeRow
from compozy_mcp.worktrees.github import PullRequestAsk

T = TypeVar("T")
#: reads of a store on a server run at once, in worker threads (its reader connections)
READS_AT_ONCE = 8


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
        worktrees_dir: Path | None = None,
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
        self.worktrees = SessionWorktrees(
            self.ledger, worktrees_dir or Path.home() / ".compozy" / "worktrees"
        )
        self._offload = offload
        # git may take seconds (a checkout, a large diff): its own threads, never the writes'
        self._git = Offload()
        #: reads of a store on a server (as many at once as its reader connections)
        self._reads = Offload(READS_AT_ONCE)
        self.workspaces.ensure_defaults(default_workspace_path or Path(os.getcwd()))

    # --- where work runs -------------------------------------------------------------------

    async def _read(self, body: Callable[[StoreReader], T]) -> T:
        if self.ledger.store.reads_wait_on_a_server:
            # round trips to a server would hold the event loop (and every other call)
            return await self._reads(self._read_here, body)
        ledger = self.ledger
        with ledger.store.read() as reader:
            if not ledger.has_expired(reader):
                return body(reader)
        return await self._offload(self._read_after_expiry, body)

    def _read_here(self, body: Callable[[StoreReader], T]) -> T:
        """:meth:`_read` in a worker thread: the read, or the write that stops expired
        sessions first."""
        with self.ledger.store.read() as reader:
            if not self.ledger.has_expired(reader):
                return body(reader)
        return self._read_after_expiry(body)

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

    def _check_inherited(self, call: CallInfo, managed: str, **asked: str | None) -> None:
        """A managed session's children take its workspace and profile: another one asked for
        is refused naming the field, never silently replaced by the parent's."""
        with self.ledger.store.read() as reader:
            parent = reader.session(managed)
        if parent is None:
            return  # the scope check reports the unknown session
        own = {"workspace_id": parent.workspace_id, "profile_id": parent.profile_id}
        for field, value in asked.items():
            if value is not None and value != own[field]:
                raise ToolInvalidInput.for_field(
                    call.tool_id,
                    field,
                    f'must be "{own[field]}", the creating session\'s own: a managed '
                    f"session's children take its {field.removesuffix('_id')}",
                )

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
            try:
                record, accepted = await self._offload(self.binding.complete, call, ticket, outcome)
            except BaseException:
                # not recorded (a busy store): an agent no record names must not run on
                if isinstance(outcome, Binding):
                    await self.driver.release(ticket.session_id, ticket.generation + 1)
                raise
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

    def directory(self, session_id: str) -> str | None:
        """Where the session works: its worktree's directory when it has an active one, else
        its workspace's (``None`` for an unknown session)."""
        with self.ledger.store.read() as reader:
            row = reader.session(session_id)
            if row is None:
                return None
            state = self.ledger.read_state(row)
            tree = reader.worktree(state.worktree_id) if state.worktree_id else None
            if tree is not None and tree.state == "active":
                return session_directory(tree)
            workspace = reader.workspace(state.workspace_id)
        return workspace.path if workspace is not None else None

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

    def last_turns(self, session_ids: Sequence[str]) -> dict[str, TranscriptTurn]:
        """The last turn of each of ``session_ids`` that has one, in one read (the board's
        cards show it; an unknown session or one never prompted is left out). A heartbeat's
        wake that the agent answered with only ``HEARTBEAT_OK`` is not shown: the turn before
        it is (issue 27: such a reply is not surfaced to the operator)."""
        found: dict[str, TranscriptTurn] = {}
        with self.ledger.store.read() as reader:
            for session_id in session_ids:
                row = reader.session(session_id)
                if row is None:
                    continue
                turns = self.ledger.read_state(row).transcript_turns
                woken = wake_turns(reader.heartbeat(session_id)) if turns else set()
                # the wakes kept are the recent ones: a few turns back at most
                back = min(turns, len(woken) + 1)
                recent = reader.transcript(session_id, after_turn=turns - back, limit=back)
                for turn in reversed(recent):
                    if turn.turn_id not in woken or not replied_nothing(turn.final_message):
                        found[session_id] = turn
                        break
        return found

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
        worktree: bool = False,
        base: str | None = None,
    ) -> Record:
        """Create a session; ``worktree``: in a git worktree of its own, on a new branch
        (``branch``, else ``compozy/<name>``) from ``base`` (default: the workspace's HEAD)."""
        selection = self._selection(call, workspace_id, provider, model, reasoning_effort)
        managed = call.scope.session_id
        if managed is not None:
            self._check_inherited(call, managed, workspace_id=workspace_id, profile_id=profile_id)
        planned: WorktreeRow | None = None
        if worktree:
            session_id = session_id or new_id("sess")
            where = self._session_workspace(managed) if managed else workspace_id
            planned = await self._plan_worktree(
                call, where, session_id, name=name, branch=branch, base=base
            )
        try:
            if managed is not None:  # a managed session creates only children
                request = SpawnRequest(
                    agent_name=agent_name,
                    ttl_seconds=1,  # set from the caller's remaining TTL
                    name=name,
                    spawn_role="created",
                    selection=selection,
                    branch=branch,
                    session_id=session_id,
                    session_type=session_type,
                    worktree=worktree,
                    planned_worktree=planned,
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
                worktree=planned,
            )
            return await self._write(work)
        except BaseException:
            await self._discard_worktree(planned)
            raise

    # --- worktrees ---------------------------------------------------------------------------

    async def _plan_worktree(
        self,
        call: CallInfo,
        workspace_id: str | None,
        session_id: str,
        *,
        name: str | None,
        branch: str | None,
        base: str | None,
    ) -> WorktreeRow:
        """A worktree made for a session about to be created (checked not to exist yet)."""
        ident = workspace_id or DEFAULT_WORKSPACE_ID
        with self.ledger.store.read() as reader:
            workspace = reader.workspace(ident)
            taken = reader.session(session_id) is not None
        if workspace is None:
            raise ResourceNotFound(call.tool_id, "workspace", ident)
        if taken:
            raise ToolConflict(
                call.tool_id, f'session "{session_id}" already exists', reason=Reason.SESSION_EXISTS
            )
        plan = functools.partial(
            self.worktrees.plan, call, workspace, session_id, name=name, branch=branch, base=base
        )
        return await self._git(plan)

    def _spawned_already(self, parent: str | None, key: str | None) -> bool:
        """Whether a spawn with this idempotency key made a child already (a retry: it gets
        that child back, and no second worktree is made)."""
        if parent is None or key is None:
            return False
        with self.ledger.store.read() as reader:
            children = reader.children([parent])
            return any(self.ledger.read_state(c).lineage.idempotency_key == key for c in children)

    async def _discard_worktree(self, planned: WorktreeRow | None) -> None:
        """Undo a worktree made for a session that was not created after all."""
        if planned is not None:
            with anyio.CancelScope(shield=True):
                await self._git(self.worktrees.discard, planned)

    def _save_worktree(self, row: WorktreeRow) -> None:
        with self.ledger.store.write() as writer:
            writer.put_worktree(row)

    def _worktree_of(self, call: CallInfo, session_id: str) -> tuple[SessionState, WorktreeRow]:
        """A session and its worktree (the active one, else the last it had)."""
        with self.ledger.store.read() as reader:
            _, state = self.ledger.load(reader, call, session_id, read_only=True)
            row = reader.worktree(state.worktree_id) if state.worktree_id else None
        if row is None:
            raise WorktreeUnavailable(
                call.tool_id,
                f'session "{session_id}" has no worktree; create it with worktree: true, or '
                f"give it one with compozy__worktree_create",
                reason=Reason.NO_WORKTREE,
            )
        return state, row

    async def diff(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        """What the session changed against its worktree's base, uncommitted work included."""
        _, row = self._worktree_of(call, session_id)
        return await self._git(self.worktrees.diff, call, row)

    async def merge(
        self,
        call: CallInfo,
        session_id: str,
        *,
        into: str | None = None,
        mode: MergeMode = "merge",
        message: str | None = None,
    ) -> dict[str, Any]:
        """Merge the session's work into ``into`` (default: the branch its worktree came
        from); a conflict changes nothing."""
        state, row = self._worktree_of(call, session_id)
        if state.runtime.status == "running":
            raise ToolConflict(
                call.tool_id,
                f'session "{session_id}" is running a turn; merge once it ends',
                reason=Reason.TURN_RUNNING,
            )
        work = functools.partial(
            self.worktrees.merge, call, row, into=into, mode=mode, message=message
        )
        merged, result = await self._git(work)
        if merged is not row:
            await self._offload(self._save_worktree, merged)
        return result

    async def pull_request(
        self,
        call: CallInfo,
        session_id: str,
        *,
        into: str | None = None,
        title: str | None = None,
        body: str | None = None,
        draft: bool = False,
        remote: str = "origin",
    ) -> dict[str, Any]:
        """Push the session's branch and open its pull request with ``gh``; the session
        records it (``pull_request``)."""
        state, row = self._worktree_of(call, session_id)
        target = into or row.base_ref
        if target is None:
            raise ToolInvalidInput.for_field(
                call.tool_id, "into", "is required: the worktree came from a detached HEAD"
            )
        ask = PullRequestAsk(
            branch=row.branch,
            base=target,
            title=title or state.name or f"Work of session {session_id}",
            body=body or f"Opened by compozy from session {session_id} (branch {row.branch}).",
            draft=draft,
            remote=remote,
        )
        opened, created = await self._git(self.worktrees.pull_request, call, row, ask)

        def change(_: StoreWriter, __: SessionRow, changed: SessionState) -> bool:
            changed.pull_request = PullRequest(**opened)
            return True

        await self._offload(self.ledger.mutate, call, session_id, change)
        return {
            "session_id": session_id,
            "branch": row.branch,
            "into": target,
            "remote": remote,
            "created": created,
            "pull_request": opened,
        }

    async def list_worktrees(
        self,
        call: CallInfo,
        *,
        workspace_id: str | None = None,
        session_id: str | None = None,
        include_removed: bool = False,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        """Worktrees, newest first (a managed session: its own and its descendants')."""
        sessions: list[str] | None = None
        if call.scope.session_id is not None:
            sessions = self.lineage_below(call.scope.session_id)
        if session_id is not None:
            sessions = [session_id] if sessions is None or session_id in sessions else []
        query = WorktreeQuery(
            workspace_id=workspace_id,
            session_ids=sessions,
            states=None if include_removed else ("active", "missing"),
            limit=limit,
        )
        with self.ledger.store.read() as reader:
            rows = reader.worktrees(query)
        return [self.worktrees.record(row) for row in rows]

    async def inspect_worktree(self, call: CallInfo, worktree_id: str) -> dict[str, Any]:
        """One worktree, with what git says of it now (``head``, ``dirty`` files)."""
        with self.ledger.store.read() as reader:
            row = self.worktrees.row(reader, call, worktree_id)
        return await self._git(functools.partial(self.worktrees.record, row, live=True))

    async def create_worktree(
        self,
        call: CallInfo,
        session_id: str,
        *,
        branch: str | None = None,
        base: str | None = None,
    ) -> dict[str, Any]:
        """Give a session without one a worktree: its own branch checked out again when it
        had one (a worktree removed, a session unarchived), else a new branch from ``base``.
        Its agent must not be running (it would keep working in the old directory)."""
        with self.ledger.store.read() as reader:
            _, state = self.ledger.load(reader, call, session_id, read_only=True)
            current = reader.worktree(state.worktree_id) if state.worktree_id else None
            workspace = reader.workspace(state.workspace_id)
        require_open(call, state)
        if current is not None and current.state == "active":
            raise ToolConflict(
                call.tool_id,
                f'session "{session_id}" has worktree "{current.id}" already ({current.path})',
                reason=Reason.WORKTREE_EXISTS,
            )
        if state.runtime.status not in ("unbound", "failed"):
            raise ToolConflict(
                call.tool_id,
                f'session "{session_id}" has an agent running; clear its runtime '
                "(compozy__session_runtime_clear) before giving it a worktree",
                reason=Reason.RUNTIME_BOUND,
            )
        if workspace is None:
            raise ResourceNotFound(call.tool_id, "workspace", state.workspace_id)
        again = branch is None and state.branch is not None
        plan = functools.partial(
            self.worktrees.plan,
            call,
            workspace,
            session_id,
            name=state.name,
            branch=state.branch if again else branch,
            base=base,
            reuse_branch=again,
        )
        planned = await self._git(plan)
        if again and current is not None and current.branch == planned.branch:
            # the same branch checked out again: its diff keeps the base it had, and the
            # board what was merged of it
            planned = replace(
                planned,
                base_ref=current.base_ref,
                base_commit=current.base_commit,
                merged_into=current.merged_into,
                merge_commit=current.merge_commit,
                merged_at=current.merged_at,
            )

        def change(writer: StoreWriter, _: SessionRow, changed: SessionState) -> bool:
            self.ledger.attach_worktree(writer, call, changed, planned)
            return True

        try:
            await self._offload(self.ledger.mutate, call, session_id, change)
        except BaseException:
            await self._discard_worktree(planned)
            raise
        return self.worktrees.record(planned)

    async def remove_worktree(
        self, call: CallInfo, worktree_id: str, *, force: bool = False
    ) -> dict[str, Any]:
        """Remove a worktree's directory; its branch stays. Uncommitted changes refuse it
        (``worktree_dirty``) unless ``force``, which commits them to the branch first."""
        with self.ledger.store.read() as reader:
            row = self.worktrees.row(reader, call, worktree_id)
            owner = reader.session(row.session_id)
            state = self.ledger.read_state(owner) if owner is not None else None
        if row.state == "removed":
            return self.worktrees.record(row)
        if state is not None and state.runtime.status not in ("unbound", "failed"):
            raise ToolConflict(
                call.tool_id,
                f'the agent of session "{row.session_id}" works in worktree "{worktree_id}"; '
                "clear its runtime (compozy__session_runtime_clear) or stop the session first",
                reason=Reason.WORKTREE_IN_USE,
            )
        retire = functools.partial(self.worktrees.retire, call, row, refuse_dirty=not force)
        removed, saved = await self._git(retire)
        await self._offload(self._save_worktree, removed)
        out = self.worktrees.record(removed)
        if saved is not None:
            out["work_in_progress_commit"] = saved
        return out

    async def turn_ended(self, session_id: str) -> None:
        """After a turn: note what the session's worktree holds (the board shows a session
        with changes to review). Never fails: a worktree git cannot read stays as it was."""
        with self.ledger.store.read() as reader:
            row = reader.session(session_id)
            state = self.ledger.read_state(row) if row is not None else None
            tree = reader.worktree(state.worktree_id) if state and state.worktree_id else None
        if tree is None or tree.state != "active":
            return
        checked = await self._git(self.worktrees.changes, tree)
        if checked is not tree:
            await self._offload(self._save_worktree, checked)

    async def _retire_worktrees(self, call: CallInfo, session_ids: list[str]) -> int:
        """Remove the active worktrees of these sessions, committing what is uncommitted."""
        with self.ledger.store.read() as reader:
            rows = reader.worktrees(WorktreeQuery(session_ids=session_ids))
        for row in rows:
            removed, _ = await self._git(
                functools.partial(self.worktrees.retire, call, row, refuse_dirty=False)
            )
            await self._offload(self._save_worktree, removed)
        return len(rows)

    async def recover_worktrees(self) -> int:
        """At start: active worktrees whose directory vanished are marked ``missing`` (and
        pruned from git); returns how many. Only those under this process's worktrees
        directory: another daemon of the store (another home, maybe another host) checks its
        own."""
        with self.ledger.store.read() as reader:
            rows = reader.worktrees(WorktreeQuery(limit=100_000))
        root = self.worktrees.directory
        rows = [row for row in rows if Path(row.path).is_relative_to(root)]
        gone = await self._git(self.worktrees.check_present, rows)
        for row in gone:
            await self._offload(self._save_worktree, row)
        return len(gone)

    async def archive(self, call: CallInfo, session_id: str) -> Record:
        """Archive a session: its agent ends, and its worktree's directory goes (what was not
        committed is committed to its branch first; the branch stays)."""
        record = await self._offload(self.lifecycle.archive, call, session_id)
        await self.driver.reconcile()
        if await self._retire_worktrees(call, [session_id]):
            record = await self.status(call, session_id)
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
        with self.ledger.store.read() as reader:
            _, state = self.ledger.load(reader, call, session_id, read_only=True)
            subtree = reader.subtree(session_id) if state.archived_at is not None else []
        await self._retire_worktrees(call, subtree)
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
        with self.ledger.store.read() as reader:
            _, source = self.ledger.load(reader, call, session_id, read_only=True)
            tree = reader.worktree(source.worktree_id) if source.worktree_id else None
        fork_id = new_id("sess")
        planned = None
        if tree is not None:
            named = name or (f"{source.name} (fork)" if source.name else None)
            planned = await self._git(self.worktrees.plan_fork, call, tree, fork_id, named)
        work = functools.partial(
            self.spawner.fork,
            call,
            session_id,
            fences=fences,
            at_turn=at_turn,
            name=name,
            fork_id=fork_id,
            worktree=planned,
        )
        try:
            return await self._write(work)
        except BaseException:
            await self._discard_worktree(planned)
            raise

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
        parent = request.parent_session_id or call.scope.session_id
        if not request.worktree or self._spawned_already(parent, request.idempotency_key):
            return await self._offload(self.spawner.spawn, call, request)
        ident = new_id("sess")
        planned = await self._plan_worktree(
            call,
            self._session_workspace(parent),
            ident,
            name=request.name,
            branch=request.branch,
            base=request.base,
        )
        try:
            result = await self._offload(
                self.spawner.spawn,
                call,
                replace(request, session_id=ident, planned_worktree=planned),
            )
        except BaseException:
            await self._discard_worktree(planned)
            raise
        if result["session_id"] != ident:  # an idempotent retry: the first child came back
            await self._discard_worktree(planned)
        return result

    # --- workspaces and profiles -----------------------------------------------------------

    async def add_workspace(self, path: Path, name: str | None = None) -> WorkspaceRow:
        return await self._offload(self.workspaces.add_workspace, path, name)

    async def set_workspace_trust(self, workspace_id: str, trusted: bool) -> WorkspaceRow:
        return await self._offload(self.workspaces.set_trust, workspace_id, trusted)

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
