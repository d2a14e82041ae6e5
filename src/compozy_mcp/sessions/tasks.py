"""Tasks: work queued for agents in a workspace, claimed by sessions in runs, and reviewed.

A task moves ``todo`` -> ``in_progress`` (a session claimed it: a run) -> ``in_review`` (the run
completed with a summary: a delivery) -> ``done`` (a review accepted it). A run that fails, is
released or whose claim expires puts the task back to ``todo``; a review that requests changes
puts it back to ``in_progress`` in a new run of the same session, whose agent gets the comments
as its next prompt (``todo`` when that session has ended). ``cancelled`` ends it anywhere.

Who may act (the operator, a call that names no session, may do everything):

- a managed session sees, creates, updates and cancels the tasks of **its own workspace** only
  (another workspace's task is ``not_found`` to it);
- it claims for itself or a descendant (``session_id`` is checked by dispatch: ``acts_on``);
- it heartbeats, completes, fails and releases only the runs of itself or its descendants;
- it reviews any run of its workspace except one it (or a descendant) worked on.

Which of these tools a session may call at all is its permission policy's business.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any, NoReturn, TypeVar

import orjson

from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import ResourceNotFound, ToolConflict, ToolDenied, ToolInvalidInput
from compozy_mcp.sessions._workspaces import DEFAULT_WORKSPACE_ID
from compozy_mcp.sessions.ledger import new_id
from compozy_mcp.store import Store
from compozy_mcp.store.base import StoreReader, StoreWriter
from compozy_mcp.store.tasks import (
    TaskQuery,
    TaskReviewRow,
    TaskRow,
    TaskRunRow,
    TaskStateName,
)

T = TypeVar("T")
DEFAULT_LEASE_SECONDS = 900
#: what may change in a task by ``update``
EDITABLE = ("title", "description", "acceptance_criteria", "labels", "priority")
#: a prompt for a session (its id, the text), sent as the system (requested changes)
Prompter = Callable[[str, str], Awaitable[object]]


def _json_list(text: str) -> list[str]:
    value = orjson.loads(text)
    return [str(item) for item in value]


def _within(reader: StoreReader, ancestor: str, target: str) -> bool:
    """Whether ``target`` is ``ancestor`` or one of its descendants (read in the caller's
    transaction, which may be the write that acts on it)."""
    return target == ancestor or ancestor in reader.ancestry(target)


def _working(reader: StoreReader, session_id: str, now: str) -> bool:
    """Whether the session may still work: it exists and has not stopped, been archived or
    expired."""
    row = reader.session(session_id)
    if row is None or row.archived_at is not None or row.state == "stopped":
        return False
    return row.ttl_expires_at is None or row.ttl_expires_at > now


def run_record(row: TaskRunRow) -> dict[str, Any]:
    record: dict[str, Any] = {
        "run_id": row.id,
        "task_id": row.task_id,
        "session_id": row.session_id,
        "state": row.state,
        "claimed_at": row.claimed_at,
        "claim_expires_at": row.claim_expires_at,
        "updated_at": row.updated_at,
    }
    optional = {
        "ended_at": row.ended_at,
        "summary": row.summary,
        "failure": row.failure,
        "delivery_id": row.delivery_id,
        "branch": row.branch,
        "commit": row.commit_sha,
    }
    record.update({key: value for key, value in optional.items() if value is not None})
    if row.diff_stat is not None:
        record["diff_stat"] = orjson.loads(row.diff_stat)
    return record


def review_record(row: TaskReviewRow) -> dict[str, Any]:
    record: dict[str, Any] = {
        "review_id": row.id,
        "task_id": row.task_id,
        "run_id": row.run_id,
        "delivery_id": row.delivery_id,
        "decision": row.decision,
        "comments": row.comments,
        "created_at": row.created_at,
    }
    if row.reviewer is not None:
        record["reviewer"] = row.reviewer
    return record


def task_record(reader: StoreReader, row: TaskRow, *, history: bool = False) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task_id": row.id,
        "workspace_id": row.workspace_id,
        "title": row.title,
        "state": row.state,
        "priority": row.priority,
        "labels": _json_list(row.labels),
        "description": row.description,
        "acceptance_criteria": _json_list(row.acceptance_criteria),
        "version": row.version,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
    if row.created_by is not None:
        record["created_by"] = row.created_by
    if row.current_run_id is not None:
        run = reader.task_run(row.current_run_id)
        if run is not None:
            record["current_run"] = run_record(run)
    if row.review_notes is not None:
        record["review_notes"] = row.review_notes
    if history:
        record["runs"] = [run_record(run) for run in reader.task_runs(row.id)]
        record["reviews"] = [review_record(review) for review in reader.task_reviews(row.id)]
    return record


class Tasks:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        offload: Offload,
    ) -> None:
        self._store = store
        self._clock = clock
        self._offload = offload
        #: how requested changes reach a working session's agent (set where agents run)
        self.prompter: Prompter | None = None
        #: notes what a session's worktree holds now (set where worktrees are kept), so that a
        #: delivery made mid-turn carries the changes made so far, not the last turn's
        self.note_worktree: Callable[[str], Awaitable[None]] | None = None

    # --- plumbing ---------------------------------------------------------------------------

    def _now(self) -> str:
        return timestamp(self._clock.now())

    def _later(self, seconds: int) -> str:
        return timestamp(self._clock.now() + timedelta(seconds=seconds))

    async def _write(self, body: Callable[[StoreWriter], T]) -> T:
        def work() -> T:
            with self._store.write() as writer:
                return body(writer)

        return await self._offload(work)

    def _caller_workspace(self, reader: StoreReader, call: CallInfo) -> str | None:
        """The workspace a managed caller is held to; ``None`` for the operator."""
        session_id = call.scope.session_id
        if session_id is None:
            return None
        row = reader.session(session_id)
        if row is None:
            raise ToolDenied(call.tool_id, f'session "{session_id}" does not exist')
        return row.workspace_id

    def _visible_task(self, reader: StoreReader, call: CallInfo, task_id: str) -> TaskRow:
        row = reader.task(task_id)
        held_to = self._caller_workspace(reader, call)
        if row is None or (held_to is not None and row.workspace_id != held_to):
            raise ResourceNotFound(call.tool_id, "task", task_id)
        return row

    def _own_run(self, reader: StoreReader, call: CallInfo, run_id: str) -> TaskRunRow:
        """An active run the caller may act on: its own or a descendant's."""
        run = reader.task_run(run_id)
        if run is None:
            raise ResourceNotFound(call.tool_id, "task_run", run_id)
        self._visible_task(reader, call, run.task_id)
        caller = call.scope.session_id
        if caller is not None and not _within(reader, caller, run.session_id):
            raise ToolDenied(
                call.tool_id,
                f'session "{caller}" may act only on runs of itself and its descendants; '
                f'run "{run_id}" is session "{run.session_id}"\'s',
            )
        if run.state != "active":
            raise ToolConflict(
                call.tool_id, f'run "{run_id}" has ended ({run.state}); claim the task again'
            )
        return run

    # --- tasks ------------------------------------------------------------------------------

    async def create(self, call: CallInfo, args: dict[str, Any]) -> dict[str, Any]:
        def body(writer: StoreWriter) -> dict[str, Any]:
            held_to = self._caller_workspace(writer, call)
            workspace_id = args.get("workspace_id") or held_to or DEFAULT_WORKSPACE_ID
            if held_to is not None and workspace_id != held_to:
                raise ToolDenied(
                    call.tool_id,
                    f'a session creates tasks in its own workspace "{held_to}" only',
                )
            if writer.workspace(workspace_id) is None:
                raise ResourceNotFound(call.tool_id, "workspace", workspace_id)
            now = self._now()
            row = TaskRow(
                id=new_id("task"),
                workspace_id=workspace_id,
                title=args["title"],
                description=args.get("description", ""),
                acceptance_criteria=orjson.dumps(args.get("acceptance_criteria", [])).decode(),
                labels=orjson.dumps(args.get("labels", [])).decode(),
                priority=args.get("priority", 0),
                state="todo",
                created_at=now,
                updated_at=now,
                created_by=call.scope.session_id,
            )
            writer.put_task(row)
            return task_record(writer, row)

        return await self._write(body)

    async def list(
        self,
        call: CallInfo,
        *,
        workspace_id: str | None,
        states: Sequence[TaskStateName] | None,
        label: str | None,
        limit: int,
    ) -> list[dict[str, Any]]:
        with self._store.read() as reader:
            held_to = self._caller_workspace(reader, call)
            if held_to is not None:
                if workspace_id is not None and workspace_id != held_to:
                    return []
                workspace_id = held_to
            rows = reader.tasks(TaskQuery(workspace_id, states, label, limit))
            return [task_record(reader, row) for row in rows]

    async def status(self, call: CallInfo, task_id: str) -> dict[str, Any]:
        with self._store.read() as reader:
            return task_record(reader, self._visible_task(reader, call, task_id), history=True)

    async def update(self, call: CallInfo, task_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        def body(writer: StoreWriter) -> dict[str, Any]:
            row = self._visible_task(writer, call, task_id)
            if row.state in ("done", "cancelled"):
                raise ToolConflict(call.tool_id, f'task "{task_id}" is {row.state}')
            values: dict[str, Any] = {}
            for key in EDITABLE:
                if key in changes:
                    value = changes[key]
                    if key in ("acceptance_criteria", "labels"):
                        value = orjson.dumps(value).decode()
                    values[key] = value
            row = replace(row, **values, updated_at=self._now(), version=row.version + 1)
            writer.put_task(row)
            return task_record(writer, row)

        return await self._write(body)

    async def cancel(self, call: CallInfo, task_id: str) -> dict[str, Any]:
        def body(writer: StoreWriter) -> dict[str, Any]:
            row = self._visible_task(writer, call, task_id)
            if row.state == "cancelled":
                return task_record(writer, row)
            if row.state == "done":
                raise ToolConflict(call.tool_id, f'task "{task_id}" is done')
            now = self._now()
            self._end_current_run(writer, row, "cancelled", now)
            row = replace(row, state="cancelled", updated_at=now, version=row.version + 1)
            writer.put_task(row)
            return task_record(writer, row)

        return await self._write(body)

    def _end_current_run(
        self, writer: StoreWriter, row: TaskRow, state: Any, now: str, **extra: Any
    ) -> None:
        if row.current_run_id is None:
            return
        run = writer.task_run(row.current_run_id)
        if run is not None and run.state == "active":
            writer.put_task_run(replace(run, state=state, ended_at=now, updated_at=now, **extra))

    # --- runs -------------------------------------------------------------------------------

    async def claim_next(
        self, call: CallInfo, session_id: str, *, lease_seconds: int, task_id: str | None = None
    ) -> dict[str, Any]:
        """The session takes its workspace's highest-priority ``todo`` task (``claimed``
        false when there is none); with ``task_id``, that task, which must be ``todo`` in the
        session's workspace."""

        def body(writer: StoreWriter) -> dict[str, Any]:
            session = writer.session(session_id)
            if session is None:
                raise ResourceNotFound(call.tool_id, "session", session_id)
            now = self._now()
            run_id = new_id("trun")
            claimed = writer.claim_next(session.workspace_id, run_id, now, task_id=task_id)
            if claimed is None and task_id is not None:
                self._refuse_claim(writer, call, task_id, session.workspace_id)
            if claimed is None:
                return {"claimed": False, "session_id": session_id}
            writer.put_task_run(
                TaskRunRow(
                    id=run_id,
                    task_id=claimed,
                    session_id=session_id,
                    state="active",
                    claimed_at=now,
                    claim_expires_at=self._later(lease_seconds),
                    updated_at=now,
                )
            )
            task = writer.task(claimed)
            assert task is not None
            return {"claimed": True, "session_id": session_id, "task": task_record(writer, task)}

        return await self._write(body)

    def _refuse_claim(
        self, reader: StoreReader, call: CallInfo, task_id: str, workspace_id: str
    ) -> NoReturn:
        """Why the named task could not be claimed (another claimer may just have won it)."""
        row = self._visible_task(reader, call, task_id)
        if row.workspace_id != workspace_id:
            raise ToolConflict(
                call.tool_id,
                f'task "{task_id}" is in workspace "{row.workspace_id}"; the session works in '
                f'"{workspace_id}"',
            )
        raise ToolConflict(
            call.tool_id, f'task "{task_id}" is {row.state}; only a todo task can be claimed'
        )

    async def heartbeat(self, call: CallInfo, run_id: str, *, lease_seconds: int) -> dict[str, Any]:
        def body(writer: StoreWriter) -> dict[str, Any]:
            run = self._own_run(writer, call, run_id)
            run = replace(run, claim_expires_at=self._later(lease_seconds), updated_at=self._now())
            writer.put_task_run(run)
            return {"run": run_record(run)}

        return await self._write(body)

    async def complete(
        self,
        call: CallInfo,
        run_id: str,
        *,
        summary: str,
        commit: str | None,
    ) -> dict[str, Any]:
        """The run delivers its work for review: the task goes ``in_review``; when the session
        has a worktree, its branch and what it changed are part of the delivery."""
        if self.note_worktree is not None:

            def worker() -> str:  # and whether the caller may complete the run at all
                with self._store.read() as reader:
                    return self._own_run(reader, call, run_id).session_id

            await self.note_worktree(await self._offload(worker))

        def body(writer: StoreWriter) -> dict[str, Any]:
            run = self._own_run(writer, call, run_id)
            now = self._now()
            branch, diff_stat = self._worktree_of(writer, run.session_id)
            run = replace(
                run,
                state="completed",
                ended_at=now,
                updated_at=now,
                summary=summary,
                delivery_id=new_id("dlv"),
                branch=branch,
                commit_sha=commit,
                diff_stat=diff_stat,
            )
            writer.put_task_run(run)
            task = writer.task(run.task_id)
            assert task is not None
            task = replace(task, state="in_review", updated_at=now, version=task.version + 1)
            writer.put_task(task)
            return {"task": task_record(writer, task)}

        return await self._write(body)

    @staticmethod
    def _worktree_of(reader: StoreReader, session_id: str) -> tuple[str | None, str | None]:
        from compozy_mcp.store.worktrees import WorktreeQuery

        trees = reader.worktrees(WorktreeQuery(session_ids=[session_id], limit=1))
        if not trees:
            return None, None
        tree = trees[0]
        if tree.changed_files is None:
            return tree.branch, None
        stat = {
            "files": tree.changed_files,
            "added": tree.lines_added or 0,
            "removed": tree.lines_removed or 0,
        }
        return tree.branch, orjson.dumps(stat).decode()

    async def fail(self, call: CallInfo, run_id: str, reason: str) -> dict[str, Any]:
        return await self._give_back(call, run_id, "failed", failure=reason)

    async def release(self, call: CallInfo, run_id: str) -> dict[str, Any]:
        return await self._give_back(call, run_id, "released")

    async def _give_back(
        self, call: CallInfo, run_id: str, state: Any, **extra: Any
    ) -> dict[str, Any]:
        """End an active run and put its task back to ``todo`` for the next claimer."""

        def body(writer: StoreWriter) -> dict[str, Any]:
            run = self._own_run(writer, call, run_id)
            now = self._now()
            writer.put_task_run(replace(run, state=state, ended_at=now, updated_at=now, **extra))
            task = writer.task(run.task_id)
            assert task is not None
            task = replace(
                task, state="todo", current_run_id=None, updated_at=now, version=task.version + 1
            )
            writer.put_task(task)
            return {"task": task_record(writer, task)}

        return await self._write(body)

    def expire_claims(self) -> int:
        """Put the tasks of runs whose claim expired back to ``todo`` (the run records
        ``expired``); how many. Upkeep calls it."""
        with self._store.write() as writer:
            now = self._now()
            expired = writer.expired_task_runs(now)
            for run in expired:
                writer.put_task_run(
                    replace(
                        run,
                        state="expired",
                        ended_at=now,
                        updated_at=now,
                        failure=f"claim expired at {run.claim_expires_at}",
                    )
                )
                task = writer.task(run.task_id)
                if task is not None and task.current_run_id == run.id:
                    writer.put_task(
                        replace(
                            task,
                            state="todo",
                            current_run_id=None,
                            updated_at=now,
                            version=task.version + 1,
                        )
                    )
            return len(expired)

    # --- reviews ----------------------------------------------------------------------------

    async def review_submit(
        self,
        call: CallInfo,
        task_id: str,
        *,
        decision: str,
        comments: str,
        lease_seconds: int = DEFAULT_LEASE_SECONDS,
    ) -> dict[str, Any]:
        def body(writer: StoreWriter) -> tuple[dict[str, Any], str | None]:
            task = self._visible_task(writer, call, task_id)
            if task.state != "in_review" or task.current_run_id is None:
                raise ToolConflict(call.tool_id, f'task "{task_id}" is {task.state}, not in_review')
            run = writer.task_run(task.current_run_id)
            assert run is not None
            assert run.delivery_id is not None
            caller = call.scope.session_id
            if caller is not None and _within(writer, caller, run.session_id):
                raise ToolDenied(
                    call.tool_id,
                    f'session "{caller}" worked on run "{run.id}" and may not review it',
                )
            if decision == "request_changes" and not comments.strip():
                raise ToolInvalidInput.for_field(
                    call.tool_id, "comments", "must say what to change"
                )
            now = self._now()
            review = TaskReviewRow(
                id=new_id("rev"),
                task_id=task.id,
                run_id=run.id,
                delivery_id=run.delivery_id,
                decision="accept" if decision == "accept" else "request_changes",
                comments=comments,
                created_at=now,
                reviewer=caller,
            )
            writer.put_task_review(review)
            prompt_to: str | None = None
            if decision == "accept":
                task = replace(task, state="done", updated_at=now, version=task.version + 1)
            elif _working(writer, run.session_id, now):
                # the same session works on the changes, in a new run
                again = TaskRunRow(
                    id=new_id("trun"),
                    task_id=task.id,
                    session_id=run.session_id,
                    state="active",
                    claimed_at=now,
                    claim_expires_at=self._later(lease_seconds),
                    updated_at=now,
                )
                writer.put_task_run(again)
                task = replace(
                    task,
                    state="in_progress",
                    current_run_id=again.id,
                    review_notes=comments,
                    updated_at=now,
                    version=task.version + 1,
                )
                prompt_to = run.session_id
            else:
                task = replace(
                    task,
                    state="todo",
                    current_run_id=None,
                    review_notes=comments,
                    updated_at=now,
                    version=task.version + 1,
                )
            writer.put_task(task)
            result = {"review": review_record(review), "task": task_record(writer, task)}
            return result, prompt_to

        result, prompt_to = await self._write(body)
        if prompt_to is not None and self.prompter is not None:
            task = result["task"]
            await self.prompter(
                prompt_to,
                f"Review of task {task['task_id']} ({task['title']}) requested changes "
                f"(run {task['current_run']['run_id']}):\n\n{comments}",
            )
        return result
