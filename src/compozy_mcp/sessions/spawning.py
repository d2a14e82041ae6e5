"""Lineage: spawning children within a parent's budget and policy, forking a session, and the
permission policy every call by a session is checked against.

A child never holds more than its parent: its policy is the parent's narrowed to what it asked
for, its TTL ends before its parent's, its depth and count stay within the parent's budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import parse_timestamp, timestamp
from compozy_mcp.errors import SpawnRefused, ToolConflict, ToolInvalidInput
from compozy_mcp.jsonutil import canonical_json, sha256_hex
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.ledger import (
    Fences,
    Record,
    SessionLedger,
    check_fences,
    new_id,
    session_row,
)
from compozy_mcp.sessions.model import (
    Lineage,
    Selection,
    SessionState,
    SpawnBudget,
    Supervision,
)
from compozy_mcp.sessions.policy import narrow
from compozy_mcp.store.base import StoreWriter, TranscriptTurn
from compozy_mcp.store.worktrees import WorktreeRow


def request_digest(arguments: dict[str, Any]) -> str:
    """Digest of a spawn's arguments, to tell a retry from a different call with the same key."""
    return sha256_hex(canonical_json(arguments))


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    """What a spawn asks for (the ``compozy__session_spawn`` input, checked)."""

    agent_name: str
    ttl_seconds: int
    parent_session_id: str | None = None
    name: str | None = None
    spawn_role: str = "worker"
    selection: Selection | None = None
    prompt: str | None = None
    worktree: bool = False
    branch: str | None = None
    #: the commit or branch a worktree starts from (default: the workspace's HEAD)
    base: str | None = None
    tools: Sequence[str] | None = None
    skills: Sequence[str] | None = None
    mcp_servers: Sequence[str] | None = None
    workspace_paths: Sequence[str] | None = None
    auto_stop_on_parent: bool = True
    notify_creator: bool = False
    idempotency_key: str | None = None
    #: :func:`request_digest` of the arguments (without the idempotency key)
    digest: str = ""
    #: the child's id (generated when ``None``) and type (a session a managed session
    #: creates with ``session_create`` is its child too: see :meth:`Spawner.create_child`)
    session_id: str | None = None
    session_type: Literal["user", "subagent", "automation"] = "subagent"
    #: the worktree made for the child beforehand (``worktree`` asked for one)
    planned_worktree: WorktreeRow | None = None


def forked_turn(turn: TranscriptTurn, session_id: str) -> TranscriptTurn:
    """A copy of a turn for a fork: its own turn id; a turn still open in the source is
    cancelled in the copy (the fork's agent never ran it)."""
    open_turn = turn.status in ("queued", "running")
    return replace(
        turn,
        session_id=session_id,
        epoch=0,
        turn_id=new_id("turn") if turn.turn_id else None,
        status="cancelled" if open_turn else turn.status,
        stop_reason="forked" if open_turn else turn.stop_reason,
    )


class Spawner:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    def fork(
        self,
        call: CallInfo,
        session_id: str,
        *,
        fences: Fences,
        at_turn: int | None = None,
        name: str | None = None,
        fork_id: str | None = None,
        worktree: WorktreeRow | None = None,
    ) -> Record:
        """Fork ``session_id`` into a new session (``fork_id`` when given), with the
        ``worktree`` made for it beforehand from the source's, if any."""
        now = self._ledger.now()
        with self._ledger.store.write() as writer:
            self._ledger.stop_expired(writer)
            _, source = self._ledger.load(writer, call, session_id)
            check_fences(call, source, fences)
            managed = call.scope.session_id is not None
            if managed:  # a managed session's forks count against the budget, like children
                children = [self._ledger.state(r) for r in writer.children([source.id])]
                remaining = self._remaining_ttl(source, self._ledger.clock.now())
                self._check_spawn(call, source, children, remaining, self._ledger.clock.now())
            keep = source.transcript_turns if at_turn is None else at_turn
            if keep > source.transcript_turns:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{source.id}" has {source.transcript_turns} turns; '
                    f"cannot fork at turn {keep}",
                    reason=Reason.TURN_OUT_OF_RANGE,
                )
            ident = fork_id or new_id("sess")
            lineage = source.lineage.model_copy(
                update={
                    "kind": "fork",
                    "parent_session_id": source.id,
                    "idempotency_key": None,
                    "spawn_depth": source.lineage.spawn_depth + (1 if managed else 0),
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
            if worktree is not None:
                self._ledger.attach_worktree(writer, call, fork, worktree)
            writer.insert_session(session_row(fork))
            writer.append_turns(
                [forked_turn(t, ident) for t in writer.transcript(source.id) if t.turn <= keep]
            )
            return self._ledger.record(writer, fork)

    def spawn(self, call: CallInfo, request: SpawnRequest) -> Record:
        """Spawn a child of ``parent_session_id``; returns the spawn facts and the child policy."""
        parent_id = (
            request.parent_session_id
            if request.parent_session_id is not None
            else call.scope.session_id
        )
        if parent_id is None:
            raise ToolInvalidInput.for_field(
                call.tool_id,
                "parent_session_id",
                "is required when the call is not made by a session",
            )
        now_dt = self._ledger.clock.now()
        with self._ledger.store.write() as writer:
            self._ledger.stop_expired(writer)
            _, parent = self._ledger.load(writer, call, parent_id)
            siblings = [self._ledger.state(r) for r in writer.children([parent.id])]
            if request.idempotency_key is not None:
                for sibling in siblings:
                    if sibling.lineage.idempotency_key == request.idempotency_key:
                        return self._replay_spawn(call, sibling, request.digest)
            self._check_spawn(call, parent, siblings, request.ttl_seconds, now_dt)
            child, receipt = self._new_child(writer, call, parent, request, now_dt)
            return self._spawn_result(child, receipt)

    def create_child(self, call: CallInfo, request: SpawnRequest) -> Record:
        """``session_create`` called by a managed session: the new session is the caller's
        child (so the caller may act on it, and it on nothing above), within the caller's
        budget, with the caller's policy and a TTL that ends no later than the caller's."""
        caller = call.scope.session_id
        assert caller is not None
        now_dt = self._ledger.clock.now()
        with self._ledger.store.write() as writer:
            self._ledger.stop_expired(writer)
            _, parent = self._ledger.load(writer, call, caller)
            if request.session_id is not None and writer.session(request.session_id):
                raise ToolConflict(
                    call.tool_id,
                    f'session "{request.session_id}" already exists',
                    reason=Reason.SESSION_EXISTS,
                )
            siblings = [self._ledger.state(r) for r in writer.children([parent.id])]
            ttl = self._remaining_ttl(parent, now_dt)
            self._check_spawn(call, parent, siblings, ttl, now_dt)
            child, _ = self._new_child(
                writer, call, parent, replace(request, ttl_seconds=ttl), now_dt
            )
            return self._ledger.record(writer, child)

    @staticmethod
    def _remaining_ttl(parent: SessionState, now: datetime) -> int:
        """The longest TTL a child of ``parent`` may have from ``now`` (at least 1 s)."""
        ttl = parent.lineage.spawn_budget.ttl_seconds
        if parent.lineage.ttl_expires_at is not None:
            left = int((parse_timestamp(parent.lineage.ttl_expires_at) - now).total_seconds())
            ttl = min(ttl, left)
        return max(1, ttl)

    def _new_child(
        self,
        writer: StoreWriter,
        call: CallInfo,
        parent: SessionState,
        request: SpawnRequest,
        now_dt: datetime,
    ) -> tuple[SessionState, dict[str, Any]]:
        """Insert a child of ``parent`` (budget already checked); its policy is the parent's,
        narrowed to what the request asks for."""
        now = timestamp(now_dt)
        workspace = writer.workspace(parent.workspace_id)
        narrowed = narrow(
            parent.lineage.permission_policy,
            base_path=workspace.path if workspace else "/",
            tools=request.tools,
            skills=request.skills,
            mcp_servers=request.mcp_servers,
            workspace_paths=request.workspace_paths,
        )
        if narrowed.exceeding:
            listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in narrowed.exceeding.items())
            raise SpawnRefused(
                call.tool_id,
                f'the child asks for more than parent session "{parent.id}" allows ({listed})',
                reason=Reason.PERMISSION_EXCEEDS_PARENT,
                details={"exceeding": narrowed.exceeding},
            )
        ident = request.session_id or new_id("sess")
        expires = timestamp(now_dt + timedelta(seconds=request.ttl_seconds))
        budget = parent.lineage.spawn_budget
        child = SessionState(
            id=ident,
            name=request.name,
            agent_name=request.agent_name,
            profile_id=parent.profile_id,
            workspace_id=parent.workspace_id,
            type=request.session_type,
            branch=request.branch if request.worktree else (request.branch or parent.branch),
            lineage=Lineage(
                kind="spawn",
                parent_session_id=parent.id,
                root_session_id=parent.lineage.root_session_id,
                spawn_depth=parent.lineage.spawn_depth + 1,
                spawn_role=request.spawn_role,
                ttl_expires_at=expires,
                spawn_budget=SpawnBudget(
                    max_children=budget.max_children,
                    max_depth=budget.max_depth,
                    ttl_seconds=request.ttl_seconds,
                ),
                permission_policy=narrowed.policy,
                auto_stop_on_parent=request.auto_stop_on_parent,
                notify_creator=request.notify_creator,
                idempotency_key=request.idempotency_key,
            ),
            supervision=Supervision(mode="parent", supervisor_session_id=parent.id),
            created_at=now,
            updated_at=now,
        )
        chosen = request.selection or parent.runtime.selected
        if chosen is not None:
            child.runtime.selected = chosen
            child.runtime.selection_revision = 1
        receipt: dict[str, Any] = {}
        if request.planned_worktree is not None:
            self._ledger.attach_worktree(writer, call, child, request.planned_worktree)
            receipt["worktree"] = {"worktree_id": child.worktree_id, "branch": child.branch}
        turns: list[TranscriptTurn] = []
        if request.prompt is not None:
            queued, turn = self._ledger.new_prompt(child, request.prompt)
            turns.append(turn)
            receipt["prompt"] = {
                "prompt_id": queued.prompt_id,
                "turn": queued.turn,
                "status": "queued",
            }
        child.spawn_receipt = {"digest": request.digest, **receipt}
        writer.insert_session(session_row(child))
        writer.append_turns(turns)
        return child, receipt

    @staticmethod
    def _spawn_result(child: SessionState, receipt: dict[str, Any]) -> Record:
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

    def _replay_spawn(self, call: CallInfo, child: SessionState, digest: str) -> Record:
        receipt = dict(child.spawn_receipt or {})
        if receipt.pop("digest", digest) != digest:
            raise ToolConflict(
                call.tool_id,
                f'idempotency key "{child.lineage.idempotency_key}" was used for a different spawn',
                reason=Reason.IDEMPOTENCY_KEY_REUSED,
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
                reason=Reason.PARENT_NOT_ACTIVE,
            )
        depth = lineage.spawn_depth + 1
        if depth > budget.max_depth:
            raise SpawnRefused(
                call.tool_id,
                f'a child of session "{parent.id}" would be at depth {depth}; '
                f"the budget allows {budget.max_depth}",
                reason=Reason.SPAWN_DEPTH_EXCEEDED,
            )
        # an operator's forks are free; everything a managed session makes counts
        counted = ("spawn",) if call.scope.session_id is None else ("spawn", "fork")
        spawned = sum(1 for s in siblings if s.lineage.kind in counted)
        if spawned >= budget.max_children:
            raise SpawnRefused(
                call.tool_id,
                f'session "{parent.id}" has spawned {spawned} of {budget.max_children} children',
                reason=Reason.SPAWN_BUDGET_EXHAUSTED,
            )
        if ttl_seconds > budget.ttl_seconds:
            raise SpawnRefused(
                call.tool_id,
                f'ttl_seconds {ttl_seconds} exceeds the budget of session "{parent.id}" '
                f"({budget.ttl_seconds} s)",
                reason=Reason.SPAWN_TTL_EXCEEDED,
            )
        if lineage.ttl_expires_at is not None:
            remaining = (parent_ttl := parse_timestamp(lineage.ttl_expires_at)) - now
            if timedelta(seconds=ttl_seconds) > remaining:
                raise SpawnRefused(
                    call.tool_id,
                    f'a child cannot outlive its parent: session "{parent.id}" expires at '
                    f"{timestamp(parent_ttl)}, in {max(0, int(remaining.total_seconds()))} s",
                    reason=Reason.SPAWN_TTL_EXCEEDED,
                )
