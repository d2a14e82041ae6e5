"""Session operations. Each public method is one store transaction: it succeeds whole or
changes nothing. Methods return complete records; views are applied above this layer.
"""

from __future__ import annotations

import base64
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, parse_timestamp, timestamp
from compozy_mcp.cursors import decode_cursor, encode_cursor
from compozy_mcp.errors import (
    ModelNotFound,
    ReasoningEffortUnsupported,
    ResourceNotFound,
    SpawnRefused,
    StaleFence,
    ToolConflict,
    ToolInvalidInput,
)
from compozy_mcp.jsonutil import canonical_json, sha256_hex
from compozy_mcp.sessions.model import (
    Diagnostic,
    Failure,
    Interaction,
    Later,
    Lineage,
    PermissionPolicy,
    PullRequest,
    QueuedPrompt,
    Selection,
    SessionState,
    SpawnBudget,
    StopCause,
    Supervision,
    TurnActivity,
)
from compozy_mcp.sessions.policy import narrow
from compozy_mcp.sessions.record import RecordContext, session_record
from compozy_mcp.sessions.runtime import (
    BindFailed,
    RuntimeDriver,
    SelectionRejected,
    check_selection,
)
from compozy_mcp.store.base import (
    ChildSummary,
    ProfileRow,
    SessionQuery,
    SessionRow,
    StaleWrite,
    Store,
    StoreReader,
    StoreWriter,
    TranscriptTurn,
    WorkspaceRow,
)

DEFAULT_PROFILE = ProfileRow(
    id="prof_default", name="Default", color="#64748b", icon="sparkles", created_at=""
)
DEFAULT_WORKSPACE_ID = "ws_default"
#: the spawn budget of a root session; a child inherits its parent's limits
ROOT_SPAWN_BUDGET = SpawnBudget(max_children=16, max_depth=3, ttl_seconds=86_400)
ROOT_TOOLS = ["*"]
PREVIEW_CHARS = 80
#: validated states kept for reads, by (session id, row version)
STATE_CACHE_SIZE = 2048

Fences = dict[str, int]
FENCE_NAMES = ("transcript_epoch", "generation", "selection_revision")


def new_id(prefix: str) -> str:
    """A time-ordered id: ``<prefix>-<base32 millis><random>``, lowercase."""
    millis = int(time.time() * 1000).to_bytes(6, "big")
    raw = base64.b32encode(millis + secrets.token_bytes(5)).decode().rstrip("=").lower()
    return f"{prefix}-{raw}"


SESSION_CURSOR = "s"


def _checked(
    call: CallInfo, provider: str | None, model: str | None, reasoning_effort: str | None
) -> Selection | None:
    """The selection a call asks for (``None`` without a provider), checked against the catalog."""
    if provider is None:
        return None
    selection = Selection(provider=provider, model=model, reasoning_effort=reasoning_effort)
    try:
        check_selection(selection)
    except SelectionRejected as exc:
        if exc.kind == "reasoning_effort":
            raise ReasoningEffortUnsupported(call.tool_id, str(exc)) from None
        raise ModelNotFound(call.tool_id, str(exc), reason=f"{exc.kind}_unknown") from None
    return selection


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


@dataclass(frozen=True, slots=True)
class SessionPage:
    records: list[dict[str, Any]]
    next_cursor: str | None


class SessionService:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        driver: RuntimeDriver,
        *,
        default_workspace_path: Path | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._driver = driver
        self._policies: dict[str, PermissionPolicy] = {}
        self._states: OrderedDict[tuple[str, int], SessionState] = OrderedDict()
        self._ensure_defaults(default_workspace_path or Path(os.getcwd()))

    # --- helpers ------------------------------------------------------------------------

    def _now(self) -> str:
        return timestamp(self._clock.now())

    def _ensure_defaults(self, workspace_path: Path) -> None:
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
            writer.insert_workspace(row)
        return row

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
            writer.insert_profile(row)
        return row

    def workspaces(self) -> list[WorkspaceRow]:
        with self._store.read() as reader:
            return reader.workspaces()

    def profiles(self) -> list[ProfileRow]:
        with self._store.read() as reader:
            return reader.all_profiles()

    def workspace_of(self, call: CallInfo, session_id: str) -> WorkspaceRow | None:
        """The workspace a session belongs to."""
        with self._store.read() as reader:
            _, state = self._load(reader, call, session_id, read_only=True)
            return reader.workspace(state.workspace_id)

    def workspace(self, workspace_id: str | None) -> WorkspaceRow | None:
        with self._store.read() as reader:
            return reader.workspace(workspace_id or DEFAULT_WORKSPACE_ID)

    @staticmethod
    def _state(row: SessionRow) -> SessionState:
        # orjson + validate_python is faster here than pydantic's own JSON parsing.
        return SessionState.model_validate(row.doc)

    def _read_state(self, row: SessionRow) -> SessionState:
        """The state of a row, for reading only: never mutate what this returns.

        A row's ``version`` changes with every write, so (id, version) names one content for
        good, and a state validated once is kept (sessions are read far more than written).
        """
        key = (row.id, row.version)
        cached = self._states.get(key)
        if cached is None:
            cached = self._states[key] = self._state(row)
            if len(self._states) > STATE_CACHE_SIZE:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(key)
        return cached

    def _load(
        self, reader: StoreReader, call: CallInfo, session_id: str, *, read_only: bool = False
    ) -> tuple[SessionRow, SessionState]:
        row = reader.session(session_id)
        if row is None:
            raise ResourceNotFound(call.tool_id, "session", session_id)
        return row, self._read_state(row) if read_only else self._state(row)

    def _save(
        self, writer: StoreWriter, call: CallInfo, row: SessionRow, state: SessionState
    ) -> None:
        state.updated_at = self._now()
        try:
            writer.update_session(session_row(state, seq=row.seq, version=row.version))
        except StaleWrite:  # pragma: no cover - the write lock makes this unreachable in SQLite
            raise ToolConflict(
                call.tool_id,
                f'session "{row.id}" changed during the call; retry',
                reason="write_conflict",
            ) from None

    def _record(self, reader: StoreReader, state: SessionState) -> dict[str, Any]:
        return self._records(reader, [state])[0]

    def _records(self, reader: StoreReader, states: Sequence[SessionState]) -> list[dict[str, Any]]:
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
            session_record(
                state,
                RecordContext(
                    profile=profiles[state.profile_id],
                    workspace=workspaces[state.workspace_id],
                    children=children.get(state.id, ()),
                ),
            )
            for state in states
        ]

    def _stop_expired(self, writer: StoreWriter) -> None:
        """Stop sessions whose TTL has passed. Expiry is applied lazily, by the next call that
        looks at sessions, so no background process is needed."""
        for expired in writer.expired_sessions(self._now()):
            # Stopping one may already have stopped another (its child): read it again.
            row = writer.session(expired.id)
            if row is None or row.state == "stopped":
                continue
            state = self._state(row)
            self._stop(
                writer,
                row,
                state,
                cause="ttl",
                reason="ttl_expired",
                detail=f"time to live ended at {state.lineage.ttl_expires_at}",
            )

    def _read(self, body: Callable[[StoreReader], Any]) -> Any:
        with self._store.read() as reader:
            if not reader.expired_sessions(self._now()):
                return body(reader)
        with self._store.write() as writer:
            self._stop_expired(writer)
            return body(writer)

    def _mutate(
        self,
        call: CallInfo,
        session_id: str,
        change: Callable[[StoreWriter, SessionRow, SessionState], bool],
    ) -> dict[str, Any]:
        """Load, change and save one session in one transaction; returns its record.

        ``change`` returns whether it changed anything; an unchanged session is not rewritten.
        """
        with self._store.write() as writer:
            self._stop_expired(writer)
            row, state = self._load(writer, call, session_id)
            if change(writer, row, state):
                self._save(writer, call, row, state)
            return self._record(writer, state)

    @staticmethod
    def _check_fences(call: CallInfo, state: SessionState, fences: Fences) -> None:
        current = {
            "transcript_epoch": state.transcript_epoch,
            "generation": state.runtime.generation,
            "selection_revision": state.runtime.selection_revision,
        }
        for name in FENCE_NAMES:
            if name in fences and fences[name] != current[name]:
                raise StaleFence(call.tool_id, state.id, name, fences[name], current[name])

    @staticmethod
    def _require_open(call: CallInfo, state: SessionState, *, running: bool = False) -> None:
        if state.archived_at is not None:
            raise ToolConflict(
                call.tool_id,
                f'session "{state.id}" is archived; unarchive it first',
                reason="session_archived",
            )
        if running and state.state == "stopped":
            raise ToolConflict(
                call.tool_id,
                f'session "{state.id}" is stopped; continue it first',
                reason="session_stopped",
            )

    def _diagnose(
        self,
        state: SessionState,
        code: str,
        severity: Literal["info", "warning", "error"],
        message: str,
    ) -> None:
        state.diagnostics.append(
            Diagnostic(code=code, severity=severity, message=message, at=self._now())
        )

    def _bind(self, state: SessionState, *, new_process: bool) -> None:
        """Bind the runtime to the session's selection through the driver (see runtime.py)."""
        runtime = state.runtime
        selection = runtime.selected
        if selection is None:
            return
        first = runtime.generation == 0
        restricted = state.lineage.permission_policy.tools != ROOT_TOOLS
        try:
            binding = self._driver.bind(state.id, selection, restricted=restricted)
        except BindFailed as exc:
            runtime.status = "failed"
            runtime.failure = Failure(kind=exc.kind, summary=exc.summary)
            runtime.effective = None
            runtime.acp_session_id = None
            runtime.acp_caps = None
            self._diagnose(state, "runtime.bind_failed", "error", exc.summary)
            return
        if new_process or first:
            runtime.generation += 1
            runtime.transition = "initial_bind" if first else "process_replacement"
            runtime.acp_session_id = binding.acp_session_id
        else:
            runtime.transition = "live_configuration"
        runtime.status = "ready"
        runtime.failure = None
        runtime.effective = binding.effective
        runtime.acp_caps = binding.acp_caps
        state.available_commands = list(binding.available_commands)
        state.permission_mode_degraded = binding.permission_mode_degraded
        if binding.permission_mode_degraded:
            self._diagnose(
                state,
                "runtime.permission_mode_degraded",
                "warning",
                f'provider "{selection.provider}" has no permission modes; the policy is '
                "enforced by tool filtering only",
            )
        # A bound runtime receives whatever was queued for it.
        state.queue = []

    def _unbind(self, state: SessionState) -> None:
        runtime = state.runtime
        runtime.status = "unbound"
        runtime.transition = None
        runtime.effective = None
        runtime.acp_session_id = None
        runtime.acp_caps = None
        state.available_commands = []
        state.supervision.turn = None

    def _new_prompt(self, state: SessionState, text: str) -> tuple[QueuedPrompt, TranscriptTurn]:
        """Add a user turn to the state; queued until a bound runtime receives it."""
        now = self._now()
        state.transcript_turns += 1
        turn = TranscriptTurn(
            session_id=state.id,
            turn=state.transcript_turns,
            epoch=state.transcript_epoch,
            role="user",
            text=text,
            created_at=now,
        )
        prompt = QueuedPrompt(
            prompt_id=new_id("prompt"),
            turn=state.transcript_turns,
            preview=text[:PREVIEW_CHARS],
            queued_at=now,
        )
        if state.runtime.status != "ready":
            state.queue.append(prompt)
        return prompt, turn

    def _stop(
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
        self._unbind(state)
        state.updated_at = self._now()
        writer.update_session(session_row(state, seq=row.seq, version=row.version))
        for child_row in writer.children([state.id]):
            child = self._state(child_row)
            if child.state != "stopped" and child.lineage.auto_stop_on_parent:
                self._stop(
                    writer,
                    child_row,
                    child,
                    cause="parent",
                    reason="parent_stopped",
                    detail=f'parent session "{state.id}" stopped',
                )

    # --- reads --------------------------------------------------------------------------

    def status(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        def body(reader: StoreReader) -> dict[str, Any]:
            _, state = self._load(reader, call, session_id, read_only=True)
            return self._record(reader, state)

        record: dict[str, Any] = self._read(body)
        return record

    def list_sessions(
        self,
        call: CallInfo,
        *,
        workspace_id: str | None = None,
        state: str | None = None,
        archived: bool = False,
        parent_session_id: str | None = None,
        agent_name: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> SessionPage:
        before = decode_cursor(call.tool_id, SESSION_CURSOR, cursor) if cursor else None
        query = SessionQuery(
            workspace_id=workspace_id,
            state=state,
            archived=archived,
            parent_session_id=parent_session_id,
            agent_name=agent_name,
            before_seq=before,
            limit=limit + 1,
        )

        def body(reader: StoreReader) -> SessionPage:
            rows = reader.sessions(query)
            more = len(rows) > limit
            rows = rows[:limit]
            records = self._records(reader, [self._read_state(r) for r in rows])
            return SessionPage(
                records, encode_cursor(SESSION_CURSOR, rows[-1].seq) if more else None
            )

        page: SessionPage = self._read(body)
        return page

    def policy(self, session_id: str) -> PermissionPolicy | None:
        """A session's permission policy. Policies never change once a session exists, so
        each is read once per process (a session-bound proxy asks on every call)."""
        cached = self._policies.get(session_id)
        if cached is not None:
            return cached
        with self._store.read() as reader:
            row = reader.session(session_id)
        if row is None:
            return None
        policy = self._policies[session_id] = self._state(row).lineage.permission_policy
        return policy

    def transcript(self, call: CallInfo, session_id: str) -> list[TranscriptTurn]:
        with self._store.read() as reader:
            self._load(reader, call, session_id)
            return reader.transcript(session_id)

    # --- writes -------------------------------------------------------------------------

    def create(
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
    ) -> dict[str, Any]:
        selection = _checked(call, provider, model, reasoning_effort)
        now = self._now()
        with self._store.write() as writer:
            workspace = writer.workspace(workspace_id or DEFAULT_WORKSPACE_ID)
            if workspace is None:
                raise ResourceNotFound(
                    call.tool_id, "workspace", workspace_id or DEFAULT_WORKSPACE_ID
                )
            profile = writer.profile(profile_id or DEFAULT_PROFILE.id)
            if profile is None:
                raise ResourceNotFound(call.tool_id, "profile", profile_id or DEFAULT_PROFILE.id)
            ident = session_id or new_id("sess")
            if writer.session(ident) is not None:
                raise ToolConflict(
                    call.tool_id, f'session "{ident}" already exists', reason="session_exists"
                )
            state = SessionState(
                id=ident,
                name=name,
                agent_name=agent_name,
                profile_id=profile.id,
                workspace_id=workspace.id,
                type=session_type,
                branch=branch,
                lineage=Lineage(
                    kind="root",
                    root_session_id=ident,
                    spawn_budget=ROOT_SPAWN_BUDGET,
                    permission_policy=PermissionPolicy(
                        tools=list(ROOT_TOOLS),
                        skills=["*"],
                        mcp_servers=["*"],
                        workspace_paths=[workspace.path],
                    ),
                ),
                supervision=Supervision(mode="operator"),
                created_at=now,
                updated_at=now,
            )
            if selection is not None:
                state.runtime.selected = selection
                state.runtime.selection_revision = 1
            writer.insert_session(session_row(state))
            return self._record(writer, state)

    def archive(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if state.archived_at is not None:
                return False
            state.archived_at = self._now()
            return True

        return self._mutate(call, session_id, change)

    def unarchive(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if state.archived_at is None:
                return False
            state.archived_at = None
            return True

        return self._mutate(call, session_id, change)

    def rename(self, call: CallInfo, session_id: str, name: str) -> dict[str, Any]:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            if state.name == name:
                return False
            state.name = name
            return True

        return self._mutate(call, session_id, change)

    def stop(self, call: CallInfo, session_id: str, reason: str | None = None) -> dict[str, Any]:
        with self._store.write() as writer:
            self._stop_expired(writer)
            row, state = self._load(writer, call, session_id)
            if state.state != "stopped":
                self._stop(
                    writer,
                    row,
                    state,
                    cause="operator",
                    reason="stopped_by_operator",
                    detail=reason,
                )
            return self._record(writer, state)

    def runtime_set(
        self,
        call: CallInfo,
        session_id: str,
        selection: Selection,
        fences: Fences,
    ) -> dict[str, Any]:
        _checked(call, selection.provider, selection.model, selection.reasoning_effort)

        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            self._require_open(call, state, running=True)
            self._check_fences(call, state, fences)
            runtime = state.runtime
            previous = runtime.selected
            bound = runtime.status == "ready"
            runtime.selected = selection
            runtime.selection_revision += 1
            same_process = (
                bound and previous is not None and previous.provider == selection.provider
            )
            self._bind(state, new_process=not same_process)
            return True

        return self._mutate(call, session_id, change)

    def runtime_clear(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            self._require_open(call, state)
            runtime = state.runtime
            if runtime.selected is None and runtime.status == "unbound":
                return False
            self._unbind(state)
            runtime.selected = None
            runtime.failure = None
            runtime.selection_revision += 1
            return True

        return self._mutate(call, session_id, change)

    def rewind(
        self, call: CallInfo, session_id: str, to_turn: int, fences: Fences
    ) -> dict[str, Any]:
        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            self._require_open(call, state)
            self._check_fences(call, state, fences)
            if to_turn > state.transcript_turns:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{state.id}" has {state.transcript_turns} turns; '
                    f"cannot rewind to turn {to_turn}",
                    reason="turn_out_of_range",
                )
            writer.truncate_transcript(state.id, to_turn)
            state.transcript_turns = to_turn
            state.transcript_epoch += 1
            state.queue = [p for p in state.queue if p.turn <= to_turn]
            state.pending_interactions = []
            if state.runtime.status == "ready":
                self._bind(state, new_process=True)
            return True

        return self._mutate(call, session_id, change)

    def continue_(
        self, call: CallInfo, session_id: str, prompt: str | None, fences: Fences
    ) -> dict[str, Any]:
        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            self._require_open(call, state)
            self._check_fences(call, state, fences)
            expires = state.lineage.ttl_expires_at
            if expires is not None and expires <= self._now():
                raise ToolConflict(
                    call.tool_id,
                    f'session "{state.id}" reached its time to live at {expires}',
                    reason="ttl_expired",
                )
            changed = False
            if state.state == "stopped":
                state.state = "active"
                state.stop_reason = state.stop_detail = state.stop_cause = None
                state.failure = None
                changed = True
            if state.runtime.selected is not None and state.runtime.status != "ready":
                self._bind(state, new_process=True)
                changed = True
            if prompt is not None:
                writer.append_turns([self._new_prompt(state, prompt)[1]])
                changed = True
            return changed

        return self._mutate(call, session_id, change)

    def fork(
        self,
        call: CallInfo,
        session_id: str,
        *,
        fences: Fences,
        at_turn: int | None = None,
        name: str | None = None,
    ) -> dict[str, Any]:
        now = self._now()
        with self._store.write() as writer:
            self._stop_expired(writer)
            _, source = self._load(writer, call, session_id)
            self._check_fences(call, source, fences)
            keep = source.transcript_turns if at_turn is None else at_turn
            if keep > source.transcript_turns:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{source.id}" has {source.transcript_turns} turns; '
                    f"cannot fork at turn {keep}",
                    reason="turn_out_of_range",
                )
            ident = new_id("sess")
            lineage = source.lineage.model_copy(
                update={
                    "kind": "fork",
                    "parent_session_id": source.id,
                    "idempotency_key": None,
                },
                deep=True,
            )
            fork = SessionState(
                id=ident,
                name=name or (f"{source.name} (fork)" if source.name else None),
                agent_name=source.agent_name,
                profile_id=source.profile_id,
                workspace_id=source.workspace_id,
                type=source.type,
                branch=source.branch,
                transcript_turns=keep,
                lineage=lineage,
                supervision=source.supervision.model_copy(update={"iterations": 0, "turn": None}),
                created_at=now,
                updated_at=now,
            )
            if source.runtime.selected is not None:
                fork.runtime.selected = source.runtime.selected
                fork.runtime.selection_revision = 1
            writer.insert_session(session_row(fork))
            writer.append_turns(
                [
                    TranscriptTurn(ident, t.turn, 0, t.role, t.text, t.created_at)
                    for t in writer.transcript(source.id)
                    if t.turn <= keep
                ]
            )
            return self._record(writer, fork)

    def spawn(
        self,
        call: CallInfo,
        *,
        parent_session_id: str | None,
        agent_name: str,
        ttl_seconds: int,
        name: str | None = None,
        spawn_role: str = "worker",
        provider: str | None = None,
        model: str | None = None,
        reasoning_effort: str | None = None,
        prompt: str | None = None,
        worktree: bool = False,
        branch: str | None = None,
        tools: Sequence[str] | None = None,
        skills: Sequence[str] | None = None,
        mcp_servers: Sequence[str] | None = None,
        workspace_paths: Sequence[str] | None = None,
        auto_stop_on_parent: bool = True,
        notify_creator: bool = False,
        idempotency_key: str | None = None,
        request_digest: str = "",
    ) -> dict[str, Any]:
        """Spawn a child of ``parent_session_id``; returns the spawn facts and the child policy."""
        parent_id = parent_session_id or call.scope.session_id
        if parent_id is None:
            raise ToolInvalidInput.for_field(
                call.tool_id,
                "parent_session_id",
                "is required when the call is not made by a session",
            )
        selection = _checked(call, provider, model, reasoning_effort)
        now_dt = self._clock.now()
        now = timestamp(now_dt)
        with self._store.write() as writer:
            self._stop_expired(writer)
            _, parent = self._load(writer, call, parent_id)
            siblings = [self._state(r) for r in writer.children([parent.id])]
            if idempotency_key is not None:
                for sibling in siblings:
                    if sibling.lineage.idempotency_key == idempotency_key:
                        return self._replay_spawn(call, sibling, request_digest)
            self._check_spawn(call, parent, siblings, ttl_seconds, now_dt)
            workspace = writer.workspace(parent.workspace_id)
            narrowed = narrow(
                parent.lineage.permission_policy,
                base_path=workspace.path if workspace else "/",
                tools=tools,
                skills=skills,
                mcp_servers=mcp_servers,
                workspace_paths=workspace_paths,
            )
            if narrowed.exceeding:
                listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in narrowed.exceeding.items())
                raise SpawnRefused(
                    call.tool_id,
                    f'the child asks for more than parent session "{parent.id}" allows ({listed})',
                    reason="permission_exceeds_parent",
                    details={"exceeding": narrowed.exceeding},
                )
            ident = new_id("sess")
            expires = timestamp(now_dt + timedelta(seconds=ttl_seconds))
            budget = parent.lineage.spawn_budget
            child = SessionState(
                id=ident,
                name=name,
                agent_name=agent_name,
                profile_id=parent.profile_id,
                workspace_id=parent.workspace_id,
                type="subagent",
                branch=branch if worktree else (branch or parent.branch),
                lineage=Lineage(
                    kind="spawn",
                    parent_session_id=parent.id,
                    root_session_id=parent.lineage.root_session_id,
                    spawn_depth=parent.lineage.spawn_depth + 1,
                    spawn_role=spawn_role,
                    ttl_expires_at=expires,
                    spawn_budget=SpawnBudget(
                        max_children=budget.max_children,
                        max_depth=budget.max_depth,
                        ttl_seconds=ttl_seconds,
                    ),
                    permission_policy=narrowed.policy,
                    auto_stop_on_parent=auto_stop_on_parent,
                    notify_creator=notify_creator,
                    idempotency_key=idempotency_key,
                ),
                supervision=Supervision(mode="parent", supervisor_session_id=parent.id),
                created_at=now,
                updated_at=now,
            )
            chosen = selection or parent.runtime.selected
            if chosen is not None:
                child.runtime.selected = chosen
                child.runtime.selection_revision = 1
            receipt: dict[str, Any] = {}
            if worktree:
                child.worktree_id = new_id("wt")
                child.branch = branch or f"compozy/{ident}"
                receipt["worktree"] = {"worktree_id": child.worktree_id, "branch": child.branch}
            turns: list[TranscriptTurn] = []
            if prompt is not None:
                queued, turn = self._new_prompt(child, prompt)
                turns.append(turn)
                receipt["prompt"] = {
                    "prompt_id": queued.prompt_id,
                    "turn": queued.turn,
                    "status": "queued",
                }
            child.spawn_receipt = {"digest": request_digest, **receipt}
            writer.insert_session(session_row(child))
            writer.append_turns(turns)
            return self._spawn_result(child, receipt)

    @staticmethod
    def _spawn_result(child: SessionState, receipt: dict[str, Any]) -> dict[str, Any]:
        lineage = child.lineage
        policy = lineage.permission_policy
        result: dict[str, Any] = {
            "session_id": child.id,
            "spawn_role": lineage.spawn_role,
            "spawn_depth": lineage.spawn_depth,
            "ttl_expires_at": lineage.ttl_expires_at,
            "permissions": {
                "tools": policy.tools,
                "skills": policy.skills,
                "mcp_servers": policy.mcp_servers,
                "workspace_paths": policy.workspace_paths,
            },
        }
        for key in ("prompt", "worktree"):
            if key in receipt:
                result[key] = receipt[key]
        return result

    def _replay_spawn(self, call: CallInfo, child: SessionState, digest: str) -> dict[str, Any]:
        receipt = dict(child.spawn_receipt or {})
        if receipt.pop("digest", digest) != digest:
            raise ToolConflict(
                call.tool_id,
                f'idempotency key "{child.lineage.idempotency_key}" was used for a different spawn',
                reason="idempotency_key_reused",
            )
        return self._spawn_result(child, receipt)

    def _check_spawn(
        self,
        call: CallInfo,
        parent: SessionState,
        siblings: Sequence[SessionState],
        ttl_seconds: int,
        now: datetime,
    ) -> None:
        lineage = parent.lineage
        budget = lineage.spawn_budget
        if parent.archived_at is not None or parent.state == "stopped":
            condition = "archived" if parent.archived_at else "stopped"
            raise ToolConflict(
                call.tool_id,
                f'parent session "{parent.id}" is {condition}',
                reason="parent_not_active",
            )
        depth = lineage.spawn_depth + 1
        if depth > budget.max_depth:
            raise SpawnRefused(
                call.tool_id,
                f'a child of session "{parent.id}" would be at depth {depth}; '
                f"the budget allows {budget.max_depth}",
                reason="spawn_depth_exceeded",
            )
        spawned = sum(1 for s in siblings if s.lineage.kind == "spawn")
        if spawned >= budget.max_children:
            raise SpawnRefused(
                call.tool_id,
                f'session "{parent.id}" has spawned {spawned} of {budget.max_children} children',
                reason="spawn_budget_exhausted",
            )
        if ttl_seconds > budget.ttl_seconds:
            raise SpawnRefused(
                call.tool_id,
                f'ttl_seconds {ttl_seconds} exceeds the budget of session "{parent.id}" '
                f"({budget.ttl_seconds} s)",
                reason="spawn_ttl_exceeded",
            )
        if lineage.ttl_expires_at is not None:
            remaining = (parent_ttl := parse_timestamp(lineage.ttl_expires_at)) - now
            if timedelta(seconds=ttl_seconds) > remaining:
                raise SpawnRefused(
                    call.tool_id,
                    f'a child cannot outlive its parent: session "{parent.id}" expires at '
                    f"{timestamp(parent_ttl)}, in {max(0, int(remaining.total_seconds()))} s",
                    reason="spawn_ttl_exceeded",
                )

    # --- runtime events (reported by a driver or the agent bridge) ----------------------

    def _event(self, session_id: str, change: Callable[[SessionState], None]) -> dict[str, Any]:
        call = CallInfo(tool_id="compozy.events")

        def apply(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            change(state)
            return True

        return self._mutate(call, session_id, apply)

    def request_interaction(
        self,
        session_id: str,
        *,
        kind: Literal["permission", "question", "plan"],
        title: str | None = None,
        choices: list[str] | None = None,
        turn_id: str | None = None,
    ) -> Interaction:
        interaction = Interaction(
            interaction_id=f"int-{secrets.token_hex(3)}",
            kind=kind,
            provider_request_id=f"req-{secrets.token_hex(3)}",
            turn_id=turn_id,
            title=title,
            choices=choices,
            created_at=self._now(),
        )
        self._event(session_id, lambda s: s.pending_interactions.append(interaction))
        return interaction

    def record_failure(
        self, session_id: str, kind: str, summary: str, crash_bundle_path: str | None = None
    ) -> dict[str, Any]:
        def change(state: SessionState) -> None:
            state.failure = Failure(kind=kind, summary=summary, crash_bundle_path=crash_bundle_path)
            state.state = "stopped"
            state.stop_reason = "failed"
            state.stop_cause = "failure"
            state.stop_detail = summary
            self._unbind(state)
            self._diagnose(state, f"session.{kind}", "error", summary)

        return self._event(session_id, change)

    def record_turn(
        self, session_id: str, turn_id: str, current_tool: str | None = None
    ) -> dict[str, Any]:
        def change(state: SessionState) -> None:
            now = self._now()
            turn = state.supervision.turn
            started = turn.started_at if turn and turn.turn_id == turn_id else now
            if turn is None or turn.turn_id != turn_id:
                state.supervision.iterations += 1
            state.supervision.turn = TurnActivity(
                turn_id=turn_id, started_at=started, last_activity_at=now, current_tool=current_tool
            )

        return self._event(session_id, change)

    def link_pull_request(
        self, session_id: str, pull_request: PullRequest | None
    ) -> dict[str, Any]:
        return self._event(session_id, lambda s: setattr(s, "pull_request", pull_request))

    def set_later(
        self, session_id: str, *, until: str | None = None, note: str | None = None
    ) -> dict[str, Any]:
        later = Later(set_at=self._now(), until=until, note=note)
        return self._event(session_id, lambda s: setattr(s, "later", later))


def request_digest(arguments: dict[str, Any]) -> str:
    """Digest of a spawn's arguments, to tell a retry from a different call with the same key."""
    return sha256_hex(canonical_json(arguments))


__all__ = ["SessionPage", "SessionService", "request_digest"]
