"""Heartbeats: a session woken with a prompt on a schedule, so that its agent looks at its
queue (tasks) without anyone asking.

A heartbeat has an interval or a 5-field cron expression (UTC), the prompt it wakes the
session with and optional quiet hours. Without a prompt of its own (stored as ``""``) a wake
reads the workspace's ``HEARTBEAT.md`` as it is then, else :data:`DEFAULT_PROMPT`: the file is
the operator's to edit between wakes. The daemon's upkeep wakes the sessions that are due
(:meth:`Heartbeats.wake_due`); ``compozy__agent_heartbeat_wake`` wakes one now.
A wake is never two at once and is skipped while a turn runs or a prompt waits to run (the
agent starting, or between two turns: a wake would queue a second prompt behind it); each
records its outcome:
``woken`` (the turn it started), ``nothing_to_do`` (the agent replied only ``HEARTBEAT_OK``:
recorded, not surfaced), ``skipped_busy``, ``skipped_quiet`` or ``failed``.

The status names the permission policy the wake runs under by its ``snapshot_id`` (a digest of
the session's policy, which never changes once the session exists).

Who may act: the tools take a ``session_id`` (default: the caller) that a managed session may
name only for itself or a descendant (``acts_on``, checked by dispatch).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import CompozyError, ResourceNotFound, ToolInvalidInput
from compozy_mcp.sessions._heartbeat_schedule import cron_problem, in_quiet_hours, next_wake
from compozy_mcp.sessions.ledger import SessionLedger
from compozy_mcp.sessions.model import PermissionPolicy
from compozy_mcp.store.heartbeats import HeartbeatRow

HEARTBEAT_OK = "HEARTBEAT_OK"
HEARTBEAT_FILE = "HEARTBEAT.md"
DEFAULT_PROMPT = (
    "Heartbeat: look at your task queue (compozy__task_list, compozy__task_run_claim_next) "
    f"and carry on with the work. If there is nothing to do, reply only {HEARTBEAT_OK}."
)
#: the wakes a heartbeat keeps (its full record's ``recent_wakes``, newest first)
RECENT_WAKES = 10
#: starts a turn in a session with a prompt; the turn's id
Waker = Callable[[str, str], Awaitable[str]]


def _wakes(row: HeartbeatRow) -> list[dict[str, Any]]:
    wakes: list[dict[str, Any]] = orjson.loads(row.recent_wakes) if row.recent_wakes else []
    return wakes


def wake_turns(row: HeartbeatRow | None) -> set[str]:
    """The turns the session's recent wakes started; one that ended with only
    ``HEARTBEAT_OK`` (:func:`replied_nothing`) is not shown as the session's last turn."""
    if row is None:
        return set()
    return {str(wake["turn_id"]) for wake in _wakes(row) if wake.get("turn_id")}


def replied_nothing(final_message: str | None) -> bool:
    return (final_message or "").strip() == HEARTBEAT_OK


def snapshot_id(policy: PermissionPolicy) -> str:
    """The id of a permission policy: the digest of its canonical JSON."""
    canonical = orjson.dumps(policy.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return "pol-" + hashlib.sha256(canonical).hexdigest()[:16]


class Heartbeats:
    def __init__(self, ledger: SessionLedger, clock: Clock, offload: Offload) -> None:
        self._ledger = ledger
        self._store = ledger.store
        self._clock = clock
        self._offload = offload
        #: set where agents run (the assembly): how a wake starts a turn
        self.waker: Waker | None = None
        #: sessions being woken now (a wake is never two at once)
        self._waking: set[str] = set()

    def _now(self) -> str:
        return timestamp(self._clock.now())

    def _next_wake(self, interval_seconds: int, cron: str | None) -> str:
        return timestamp(next_wake(self._clock.now(), interval_seconds, cron))

    def _record(self, session_id: str, row: HeartbeatRow | None) -> dict[str, Any]:
        with self._store.read() as reader:
            session = reader.session(session_id)
        if session is None:
            raise ResourceNotFound("compozy__agent_heartbeat_status", "session", session_id)
        policy = self._ledger.state(session).lineage.permission_policy
        record: dict[str, Any] = {
            "session_id": session_id,
            "snapshot_id": snapshot_id(policy),
            "enabled": bool(row and row.enabled),
            "wakes": row.wakes if row else 0,
        }
        if row is None:
            return record
        prompt, source = (row.prompt, "input") if row.prompt else self._default_prompt(session_id)
        record.update(
            {
                "interval_seconds": row.interval_seconds,
                "prompt": prompt,
                "prompt_source": source,
                "next_wake_at": row.next_wake_at,
            }
        )
        if row.recent_wakes:
            record["recent_wakes"] = orjson.loads(row.recent_wakes)
        optional = {
            "cron": row.cron,
            "quiet_hours": row.quiet_hours,
            "last_wake_at": row.last_wake_at,
            "last_outcome": row.last_outcome,
            "last_turn_id": row.last_turn_id,
            "last_error": row.last_error,
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        return record

    def _settled(self, row: HeartbeatRow) -> HeartbeatRow:
        """A woken row whose turn ended with only ``HEARTBEAT_OK`` becomes ``nothing_to_do``
        (its last outcome and that wake's in the recent ones)."""
        if row.last_outcome != "woken" or row.last_turn_id is None:
            return row
        with self._store.read() as reader:
            turn = reader.turn(row.session_id, row.last_turn_id)
        if turn is None or turn.ended_at is None:
            return row
        if not replied_nothing(turn.final_message):
            return row
        with self._store.write() as writer:
            current = writer.heartbeat(row.session_id)
            if current is None or current.last_turn_id != row.last_turn_id:
                return current or row  # woken again (or removed) since it was read
            wakes = [
                {**wake, "outcome": "nothing_to_do"}
                if wake.get("turn_id") == row.last_turn_id
                else wake
                for wake in _wakes(current)
            ]
            settled = replace(
                current,
                last_outcome="nothing_to_do",
                recent_wakes=orjson.dumps(wakes).decode(),
            )
            writer.put_heartbeat(settled)
        return settled

    def _default_prompt(self, session_id: str) -> tuple[str, str]:
        """The prompt of a heartbeat without one of its own, and where it comes from: the
        workspace's ``HEARTBEAT.md`` as it is now, else the built-in one."""
        with self._store.read() as reader:
            session = reader.session(session_id)
            workspace = reader.workspace(session.workspace_id) if session else None
        if workspace is not None:
            path = Path(workspace.path) / HEARTBEAT_FILE
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace").strip()
                if text:
                    return text, HEARTBEAT_FILE
        return DEFAULT_PROMPT, "built-in"

    async def set(self, call: CallInfo, session_id: str, args: dict[str, Any]) -> dict[str, Any]:
        quiet = args.get("quiet_hours") or None  # "" clears them
        if quiet is not None:
            try:
                in_quiet_hours(quiet, self._now())
            except ValueError:
                raise ToolInvalidInput.for_field(
                    call.tool_id, "quiet_hours", "must be HH:MM-HH:MM"
                ) from None
        if "cron" in args and "interval_seconds" in args:
            raise ToolInvalidInput.for_field(
                call.tool_id, "cron", "give either cron or interval_seconds, not both"
            )
        problem = cron_problem(args["cron"]) if "cron" in args else None
        if problem is not None:
            raise ToolInvalidInput.for_field(call.tool_id, "cron", problem)

        def work() -> dict[str, Any]:
            self._record(session_id, None)  # the session exists
            now = self._now()
            with self._store.write() as writer:
                old = writer.heartbeat(session_id)
                interval = args.get("interval_seconds") or (old.interval_seconds if old else 3600)
                # quiet hours stay until others are given ("" clears them)
                quiet_hours = quiet if "quiet_hours" in args else (old.quiet_hours if old else None)
                # a prompt given stays until another is given; "" is the workspace's own
                prompt = args.get("prompt", old.prompt if old else "")
                # a new interval replaces a cron expression and a new expression an interval;
                # neither keeps the schedule there was
                cron = args.get("cron") or (
                    old.cron if old and "interval_seconds" not in args else None
                )
                row = HeartbeatRow(
                    session_id=session_id,
                    interval_seconds=interval,
                    prompt=prompt,
                    enabled=int(args.get("enabled", True)),
                    next_wake_at=self._next_wake(interval, cron),
                    created_at=old.created_at if old else now,
                    updated_at=now,
                    quiet_hours=quiet_hours,
                    last_wake_at=old.last_wake_at if old else None,
                    last_outcome=old.last_outcome if old else None,
                    last_turn_id=old.last_turn_id if old else None,
                    last_error=old.last_error if old else None,
                    wakes=old.wakes if old else 0,
                    cron=cron,
                    recent_wakes=old.recent_wakes if old else None,
                )
                writer.put_heartbeat(row)
            return self._record(session_id, row)

        return await self._offload(work)

    async def status(self, call: CallInfo, session_id: str) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            with self._store.read() as reader:
                row = reader.heartbeat(session_id)
            return self._record(session_id, self._settled(row) if row else None)

        return await self._offload(work)

    async def wake(
        self, call: CallInfo, session_id: str, *, scheduled: bool = False
    ) -> dict[str, Any]:
        """Wake the session now (``scheduled``: as the schedule, which quiet hours skip)."""
        now = self._now()
        with self._store.read() as reader:
            session = reader.session(session_id)
            row = reader.heartbeat(session_id)
        if session is None:
            raise ResourceNotFound(call.tool_id, "session", session_id)
        if row is None:
            row = HeartbeatRow(
                session_id=session_id,
                interval_seconds=3600,
                prompt="",
                enabled=0,
                next_wake_at=self._next_wake(3600, None),
                created_at=now,
                updated_at=now,
            )
        state = self._ledger.state(session)
        busy = session_id in self._waking or state.runtime.status == "running" or bool(state.queue)
        outcome, turn_id, error = "woken", None, None
        if busy:
            outcome = "skipped_busy"
        elif scheduled and in_quiet_hours(row.quiet_hours, now):
            outcome = "skipped_quiet"
        elif self.waker is None:
            outcome, error = "failed", "no agents run in this process"
        else:
            self._waking.add(session_id)
            try:
                prompt = row.prompt or (await self._offload(self._default_prompt, session_id))[0]
                turn_id = await self.waker(session_id, prompt)
            except CompozyError as failure:
                outcome, error = "failed", failure.message
            finally:
                self._waking.discard(session_id)
        wake = {"at": now, "outcome": outcome, "turn_id": turn_id, "error": error}
        this_wake = {key: value for key, value in wake.items() if value is not None}

        def save() -> dict[str, Any]:
            with self._store.write() as writer:
                # the row as it is now: a schedule set while the turn started is kept
                current = writer.heartbeat(session_id) or row
                saved = replace(
                    current,
                    updated_at=now,
                    next_wake_at=self._next_wake(current.interval_seconds, current.cron),
                    last_wake_at=now,
                    last_outcome=outcome,
                    # the turn of the last wake that started one (a skipped or failed wake
                    # starts none; two wakes at once may be saved in either order)
                    last_turn_id=turn_id if turn_id is not None else current.last_turn_id,
                    last_error=error,
                    wakes=current.wakes + (outcome == "woken"),
                    recent_wakes=orjson.dumps(
                        [this_wake, *_wakes(current)][:RECENT_WAKES]
                    ).decode(),
                )
                writer.put_heartbeat(saved)
            return self._record(session_id, saved)

        return await self._offload(save)

    def _claim_due(self, due: HeartbeatRow) -> bool:
        """Take a due wake: its next wake moves on in the transaction that finds it still due
        as read, so of several daemons sweeping one store at once exactly one wakes it."""
        with self._store.write() as writer:
            current = writer.heartbeat(due.session_id)
            if current is None or not current.enabled or current.next_wake_at != due.next_wake_at:
                return False
            writer.put_heartbeat(
                replace(
                    current, next_wake_at=self._next_wake(current.interval_seconds, current.cron)
                )
            )
        return True

    async def wake_due(self) -> int:
        """Wake every session whose heartbeat is due (the daemon's upkeep); how many woke. A
        heartbeat whose session is gone is paused, never in the way of the others."""
        with self._store.read() as reader:
            due = reader.due_heartbeats(self._now())
        woken = 0
        for row in due:
            if not await self._offload(self._claim_due, row):
                continue  # another daemon of the store took this wake first
            try:
                record = await self.wake(
                    CallInfo("compozy__agent_heartbeat_wake"), row.session_id, scheduled=True
                )
            except ResourceNotFound:
                await self._offload(self._pause, row.session_id)
                continue
            woken += record.get("last_outcome") == "woken"
        return woken

    def _pause(self, session_id: str) -> None:
        with self._store.write() as writer:
            row = writer.heartbeat(session_id)
            if row is not None:
                writer.put_heartbeat(replace(row, enabled=0, updated_at=self._now()))
