"""The session ledger: what every session job shares. Loading and saving sessions, building
their records, and the stop that cascades to children (which a TTL expiry also runs).

Everything here is synchronous and runs inside one store transaction that its caller opens;
the async boundary is :mod:`.service`.
"""

from __future__ import annotations

import base64
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import Any, Literal

from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, parse_timestamp, timestamp
from compozy_mcp.errors import ResourceNotFound, StaleFence, ToolConflict
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions._record import RecordContext, session_record
from compozy_mcp.sessions.model import Diagnostic, QueuedPrompt, SessionState, StopCause
from compozy_mcp.store.base import (
    ChildSummary,
    ProfileRow,
    SessionRow,
    StaleWrite,
    Store,
    StoreReader,
    StoreWriter,
    TranscriptTurn,
    WorkspaceRow,
)
from compozy_mcp.store.worktrees import WorktreeRow, WorktreeTaken
from compozy_mcp.views.shared import SHARED

#: characters of a queued prompt a record shows
PREVIEW_CHARS = 80
#: validated states kept for reads, by (session id, row version)
STATE_CACHE_SIZE = 2048

Fences = dict[str, int]
FENCE_NAMES = ("transcript_epoch", "generation", "selection_revision")
Record = dict[str, Any]
#: a change to one session inside a write; returns whether it changed anything
Change = Callable[[StoreWriter, SessionRow, SessionState], bool]


def new_id(prefix: str) -> str:
    """A time-ordered id: ``<prefix>-<base32 millis><random>``, lowercase."""
    millis = int(time.time() * 1000).to_bytes(6, "big")
    raw = base64.b32encode(millis + secrets.token_bytes(5)).decode().rstrip("=").lower()
    return f"{prefix}-{raw}"


def session_row(state: SessionState, *, seq: int = 0, version: int = 0) -> SessionRow:
    """The store row of a session state: indexed columns and the document (without defaults)."""
    return SessionRow(
        id=state.id,
        workspace_id=state.workspace_id,
        profile_id=state.profile_id,
        parent_session_id=state.lineage.parent_session_id,
        root_session_id=state.lineage.root_session_id,
        agent_name=state.agent_name,
        state=state.state,
        archived_at=state.archived_at,
        ttl_expires_at=state.lineage.ttl_expires_at,
        created_at=state.created_at,
        updated_at=state.updated_at,
        doc_json=state.model_dump_json(exclude_defaults=True).encode(),
        seq=seq,
        version=version,
    )


def unbind(state: SessionState) -> None:
    """Mark a session's runtime unbound (its process, if any, is the runtime's to end).

    The ACP session it held is remembered: a later bind of the same agent loads it, unless
    the transcript changes first (rewind and clear forget it)."""
    runtime = state.runtime
    if runtime.acp_session_id is not None and runtime.effective is not None:
        runtime.previous_acp_session_id = runtime.acp_session_id
        runtime.previous_provider = runtime.effective.provider
    runtime.status = "unbound"
    runtime.transition = None
    runtime.effective = None
    runtime.acp_session_id = None
    runtime.acp_caps = None
    state.available_commands = []
    state.supervision.turn = None


def check_fences(call: CallInfo, state: SessionState, fences: Fences) -> None:
    current = {
        "transcript_epoch": state.transcript_epoch,
        "generation": state.runtime.generation,
        "selection_revision": state.runtime.selection_revision,
    }
    for name in FENCE_NAMES:
        if name in fences and fences[name] != current[name]:
            raise StaleFence(call.tool_id, state.id, name, fences[name], current[name])


def require_open(call: CallInfo, state: SessionState, *, running: bool = False) -> None:
    if state.archived_at is not None:
        raise ToolConflict(
            call.tool_id,
            f'session "{state.id}" is archived; unarchive it first',
            reason=Reason.SESSION_ARCHIVED,
        )
    if running and state.state == "stopped":
        raise ToolConflict(
            call.tool_id,
            f'session "{state.id}" is stopped; continue it first',
            reason=Reason.SESSION_STOPPED,
        )


class SessionLedger:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        #: the caches below are shared by the reads a server-backed store runs in worker
        #: threads: a look-up and its move to the end (or an eviction) must not interleave
        self._kept_lock = threading.Lock()
        self._states: OrderedDict[tuple[str, int], SessionState] = OrderedDict()
        self._records: OrderedDict[tuple[str, int], tuple[RecordContext, Record]] = OrderedDict()
        #: the last record read of a session, with the store revision it was read at
        self._latest: OrderedDict[str, tuple[Hashable, Record]] = OrderedDict()
        #: the earliest TTL of a session not stopped, at a store revision
        self._expiry: tuple[Hashable, datetime | None] | None = None

    def now(self) -> str:
        return timestamp(self.clock.now())

    @staticmethod
    def state(row: SessionRow) -> SessionState:
        """A fresh, mutable state of a row."""
        # orjson + validate_python is faster here than pydantic's own JSON parsing.
        return SessionState.model_validate(row.doc)

    def read_state(self, row: SessionRow) -> SessionState:
        """The state of a row, for reading only: never mutate what this returns.

        A row's ``version`` changes with every write, so (id, version) names one content for
        good, and a state validated once is kept (sessions are read far more than written).
        """
        key = (row.id, row.version)
        with self._kept_lock:
            cached = self._states.get(key)
            if cached is not None:
                self._states.move_to_end(key)
                return cached
        cached = self.state(row)
        with self._kept_lock:
            self._states[key] = cached
            if len(self._states) > STATE_CACHE_SIZE:
                self._states.popitem(last=False)
        return cached

    def load(
        self, reader: StoreReader, call: CallInfo, session_id: str, *, read_only: bool = False
    ) -> tuple[SessionRow, SessionState]:
        row = reader.session(session_id)
        if row is None:
            raise ResourceNotFound(call.tool_id, "session", session_id)
        return row, self.read_state(row) if read_only else self.state(row)

    def save(
        self, writer: StoreWriter, call: CallInfo, row: SessionRow, state: SessionState
    ) -> None:
        state.updated_at = self.now()
        try:
            writer.update_session(session_row(state, seq=row.seq, version=row.version))
        except StaleWrite:  # pragma: no cover - the write lock makes this unreachable in SQLite
            raise ToolConflict(
                call.tool_id,
                f'session "{row.id}" changed during the call; retry',
                reason=Reason.WRITE_CONFLICT,
            ) from None

    def record(self, reader: StoreReader, state: SessionState) -> Record:
        return self.records(reader, [state])[0]

    def records(self, reader: StoreReader, states: Sequence[SessionState]) -> list[Record]:
        """The records of states (built afresh: a write's states are its own to change)."""
        contexts = self._contexts(reader, states)
        return [
            session_record(state, context) for state, context in zip(states, contexts, strict=True)
        ]

    def read_record(self, reader: StoreReader, call: CallInfo, session_id: str) -> Record:
        """One session's record as stored, for reading only: never mutate what this returns.

        While the store's revision stays the same (nothing committed anywhere), the record
        read last is the answer without reading the store again."""
        revision = reader.revision()
        latest = self._latest
        if revision is not None:
            with self._kept_lock:
                found = latest.get(session_id)
                if found is not None and found[0] == revision:
                    latest.move_to_end(session_id)
                    return found[1]
        row = reader.session(session_id)
        if row is None:
            raise ResourceNotFound(call.tool_id, "session", session_id)
        record = self.read_records(reader, [row])[0]
        if revision is not None:
            with self._kept_lock:
                latest[session_id] = (revision, record)
                latest.move_to_end(session_id)
                if len(latest) > STATE_CACHE_SIZE:
                    latest.popitem(last=False)
        return record

    def read_records(self, reader: StoreReader, rows: Sequence[SessionRow]) -> list[Record]:
        """The records of rows as stored, for reading only: never mutate what this returns.

        A record is kept by (id, row version) with the context it was built from (profile,
        workspace, children, worktree), and built again only when that context changed:
        building one dumps tens of models (a bound runtime advertises tens of commands), which
        was most of the cost of reading a session.
        """
        states = [self.read_state(row) for row in rows]
        kept = self._records
        out: list[Record] = []
        for row, state, context in zip(rows, states, self._contexts(reader, states), strict=True):
            key = (row.id, row.version)
            with self._kept_lock:
                found = kept.get(key)
                if found is not None and found[0] == context:
                    kept.move_to_end(key)
                    out.append(found[1])
                    continue
            record = session_record(state, context)
            SHARED.share(record)  # read-only from here: its compact view is projected once
            with self._kept_lock:
                kept[key] = (context, record)
                if len(kept) > STATE_CACHE_SIZE:
                    kept.popitem(last=False)
            out.append(record)
        return out

    @staticmethod
    def _contexts(reader: StoreReader, states: Sequence[SessionState]) -> list[RecordContext]:
        # A page holds few distinct profiles and workspaces: look each up once.
        profiles: dict[str, ProfileRow | None] = {}
        workspaces: dict[str, WorkspaceRow | None] = {}
        for state in states:
            if state.profile_id not in profiles:
                profiles[state.profile_id] = reader.profile(state.profile_id)
            if state.workspace_id not in workspaces:
                workspaces[state.workspace_id] = reader.workspace(state.workspace_id)
        children: dict[str, list[ChildSummary]] = {}
        for child in reader.child_summaries([s.id for s in states]):
            children.setdefault(child.parent_session_id, []).append(child)
        return [
            RecordContext(
                profile=profiles[state.profile_id],
                workspace=workspaces[state.workspace_id],
                children=tuple(children.get(state.id, ())),
                worktree=reader.worktree(state.worktree_id) if state.worktree_id else None,
            )
            for state in states
        ]

    @staticmethod
    def attach_worktree(
        writer: StoreWriter, call: CallInfo, state: SessionState, row: WorktreeRow
    ) -> None:
        """Give a session (about to be saved) its worktree, recorded in the same transaction;
        a worktree another active row holds is refused (two sessions never share one)."""
        try:
            writer.put_worktree(row)
        except WorktreeTaken:
            raise ToolConflict(
                call.tool_id,
                f'session "{state.id}" has a worktree already, or {row.path} is another\'s',
                reason=Reason.WORKTREE_EXISTS,
            ) from None
        state.worktree_id = row.id
        state.branch = row.branch

    def diagnose(
        self,
        state: SessionState,
        code: str,
        severity: Literal["info", "warning", "error"],
        message: str,
    ) -> None:
        state.diagnostics.append(
            Diagnostic(code=code, severity=severity, message=message, at=self.now())
        )

    def new_prompt(self, state: SessionState, text: str) -> tuple[QueuedPrompt, TranscriptTurn]:
        """Add a user turn to the state; queued until a bound runtime receives it."""
        now = self.now()
        state.transcript_turns += 1
        turn = TranscriptTurn(
            session_id=state.id,
            turn=state.transcript_turns,
            epoch=state.transcript_epoch,
            role="user",
            text=text,
            created_at=now,
            turn_id=new_id("turn"),
        )
        prompt = QueuedPrompt(
            prompt_id=turn.turn_id or "",
            turn=state.transcript_turns,
            preview=text[:PREVIEW_CHARS],
            queued_at=now,
        )
        # queued until the agent takes it (the runtime removes it when the turn starts)
        state.queue.append(prompt)
        return prompt, turn

    def stop(
        self,
        writer: StoreWriter,
        row: SessionRow,
        state: SessionState,
        *,
        cause: StopCause,
        reason: str,
        detail: str | None,
    ) -> None:
        """Stop a session and, in the same transaction, its children that stop with it."""
        state.state = "stopped"
        state.stop_reason = reason
        state.stop_detail = detail
        state.stop_cause = cause
        state.pending_interactions = []
        unbind(state)
        state.updated_at = self.now()
        writer.update_session(session_row(state, seq=row.seq, version=row.version))
        for child_row in writer.children([state.id]):
            child = self.state(child_row)
            if child.state != "stopped" and child.lineage.auto_stop_on_parent:
                self.stop(
                    writer,
                    child_row,
                    child,
                    cause="parent",
                    reason=Reason.PARENT_STOPPED,
                    detail=f'parent session "{state.id}" stopped',
                )

    def stop_expired(self, writer: StoreWriter) -> int:
        """Stop sessions whose TTL has passed: every write does this first, a read that finds
        one hands over to a write, and upkeep sweeps them; returns how many it stopped."""
        stopped = 0
        for expired in writer.expired_sessions(self.now()):
            # Stopping one may already have stopped another (its child): read it again.
            row = writer.session(expired.id)
            if row is None or row.state == "stopped":
                continue
            state = self.state(row)
            self.stop(
                writer,
                row,
                state,
                cause="ttl",
                reason=Reason.TTL_EXPIRED,
                detail=f"time to live ended at {state.lineage.ttl_expires_at}",
            )
            stopped += 1
        return stopped

    def has_expired(self, reader: StoreReader) -> bool:
        revision = reader.revision()
        if revision is None:
            return reader.any_expired(self.now())
        kept = self._expiry
        if kept is None or kept[0] != revision:
            earliest = reader.earliest_expiry()
            # kept as a moment: comparing it with the clock's needs no timestamp formatted
            kept = self._expiry = (revision, parse_timestamp(earliest) if earliest else None)
        moment = kept[1]
        return moment is not None and moment <= self.clock.now()

    def mutate(self, call: CallInfo, session_id: str, change: Change) -> Record:
        """Load, change and save one session in one transaction; returns its record.

        ``change`` returns whether it changed anything; an unchanged session is not rewritten.
        """
        with self.store.write() as writer:
            self.stop_expired(writer)
            row, state = self.load(writer, call, session_id)
            if change(writer, row, state):
                self.save(writer, call, row, state)
            return self.record(writer, state)
