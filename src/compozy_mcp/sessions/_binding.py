"""Runtime binding and the transcript fences: runtime_set, runtime_clear, rewind, clear,
continue, and the second half of every bind.

Each operation checks the fences the caller read (``selection_revision``, ``generation``,
``transcript_epoch``) inside the same transaction that changes the session, so a stale caller
changes nothing. An operation that needs an agent started returns a :class:`BindTicket`; the
driver starts the agent with no transaction open, and :meth:`RuntimeBinding.complete` records
the outcome. :mod:`.runtime` says when ``generation`` increments.
"""

from __future__ import annotations

import os

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ToolConflict, WorktreeUnavailable
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions._record import session_directory
from compozy_mcp.sessions.ledger import (
    Fences,
    Record,
    SessionLedger,
    check_fences,
    require_open,
    unbind,
)
from compozy_mcp.sessions.lifecycle import ROOT_TOOLS
from compozy_mcp.sessions.model import Failure, Selection, SessionState
from compozy_mcp.sessions.runtime import BindFailed, Binding, BindTicket
from compozy_mcp.store.base import SessionRow, StoreReader, StoreWriter

#: characters of each kept turn a new agent context is seeded with
CONTEXT_CHARS = 4000
LIVE = ("binding", "ready", "running")


def context_of(reader: StoreReader, state: SessionState) -> tuple[str, ...]:
    """The kept turns a fresh agent context starts from: each turn's prompt and final message
    (after a rewind or a clear, only what is still in the transcript's current context)."""
    lines: list[str] = []
    for turn in reader.transcript(state.id, after_turn=state.context_from_turn - 1):
        if turn.status in ("queued", "running"):
            continue  # the agent is about to get these as prompts
        lines.append(f"User: {turn.text[:CONTEXT_CHARS]}")
        if turn.final_message:
            lines.append(f"Agent: {turn.final_message[:CONTEXT_CHARS]}")
    return tuple(lines)


class RuntimeBinding:
    def __init__(self, ledger: SessionLedger) -> None:
        self._ledger = ledger

    def ticket(
        self,
        reader: StoreReader,
        state: SessionState,
        workspace_path: str,
        *,
        reuse_live: bool = False,
    ) -> BindTicket | None:
        """Begin a bind to the session's selection: status ``binding``, and the ticket the
        driver starts the agent from (``None`` without a selection)."""
        runtime = state.runtime
        selection = runtime.selected
        if selection is None:
            return None
        runtime.status = "binding"
        previous = runtime.previous_acp_session_id
        if runtime.previous_provider != selection.provider:
            previous = None
        return BindTicket(
            session_id=state.id,
            selection=selection,
            selection_revision=runtime.selection_revision,
            generation=runtime.generation,
            cwd=workspace_path,
            restricted=state.lineage.permission_policy.tools != ROOT_TOOLS,
            previous_acp_session_id=None if reuse_live else previous,
            reuse_live=reuse_live,
            context=() if previous else context_of(reader, state),
        )

    def _workspace_path(self, call: CallInfo, reader: StoreReader, state: SessionState) -> str:
        """The directory the session's agent works in: its worktree's, when it has one (an
        agent never falls back to the shared workspace: a vanished worktree fails the bind)."""
        if state.worktree_id is not None:
            row = reader.worktree(state.worktree_id)
            if row is not None and row.state != "removed":
                if row.state == "active" and os.path.isdir(row.path):
                    return session_directory(row)
                raise WorktreeUnavailable(
                    call.tool_id,
                    f'the worktree of session "{state.id}" ({row.path}) is gone; its branch '
                    f'"{row.branch}" is kept: compozy worktree create --session {state.id} '
                    "checks it out again",
                    reason=Reason.WORKTREE_MISSING,
                )
        workspace = reader.workspace(state.workspace_id)
        return workspace.path if workspace is not None else "."

    def begin(
        self, call: CallInfo, session_id: str, stale_binding: bool = False
    ) -> tuple[Record, BindTicket | None]:
        """Bind a session that has a selection and no agent here (a prompt's automatic bind).
        ``stale_binding``: the caller knows no bind of the session is under way, so a
        ``binding`` status is a leftover (a process that ended while it bound)."""
        tickets: list[BindTicket] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            require_open(call, state, running=True)
            if state.runtime.status == "binding" and not stale_binding:
                return False
            if state.runtime.status in LIVE:
                # no agent of it runs here, and the process the record names is gone (its
                # daemon ended or lost its lease): the ACP session it had is loaded again
                unbind(state)
            found = self.ticket(writer, state, self._workspace_path(call, writer, state))
            if found is not None:
                tickets.append(found)
            return found is not None

        record = self._ledger.mutate(call, session_id, change)
        return record, tickets[0] if tickets else None

    def complete(
        self, call: CallInfo, ticket: BindTicket, outcome: Binding | BindFailed
    ) -> tuple[Record, bool]:
        """Record a bind's outcome; ``False`` when the ticket was superseded (a later selection,
        a stop or an unbind came first) and its agent must be released."""
        accepted: list[bool] = []

        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            runtime = state.runtime
            current = (
                runtime.selection_revision == ticket.selection_revision
                and runtime.status == "binding"
                and state.state != "stopped"
                and state.archived_at is None
            )
            accepted.append(current)
            if not current:
                return False
            if isinstance(outcome, BindFailed):
                self._failed(state, outcome)
            else:
                self._bound(state, ticket, outcome)
            return True

        record = self._ledger.mutate(call, ticket.session_id, change)
        return record, accepted[0]

    def _failed(self, state: SessionState, exc: BindFailed) -> None:
        runtime = state.runtime
        runtime.status = "failed"
        runtime.failure = Failure(kind=exc.kind, summary=exc.summary)
        runtime.effective = None
        runtime.acp_session_id = None
        runtime.acp_caps = None
        state.available_commands = []
        self._ledger.diagnose(state, "runtime.bind_failed", "error", exc.summary)

    def _bound(self, state: SessionState, ticket: BindTicket, binding: Binding) -> None:
        runtime = state.runtime
        first = runtime.generation == 0
        if binding.new_process:
            runtime.generation += 1
            runtime.transition = "initial_bind" if first else "process_replacement"
        else:
            runtime.transition = "live_configuration"
        runtime.acp_session_id = binding.acp_session_id
        runtime.previous_acp_session_id = None
        runtime.previous_provider = None
        runtime.status = "ready"
        runtime.failure = None
        runtime.effective = binding.effective
        runtime.acp_caps = binding.acp_caps
        if binding.available_commands or binding.new_process:
            state.available_commands = list(binding.available_commands)
        if state.stop_cause == "failure" and state.state != "stopped":
            # a crashed agent's marks go once a new one runs
            state.stop_cause = state.stop_reason = state.stop_detail = None
            state.failure = None
        state.permission_mode_degraded = binding.permission_mode_degraded
        if binding.permission_mode_degraded:
            self._ledger.diagnose(
                state,
                "runtime.permission_mode_degraded",
                "warning",
                f'agent "{ticket.selection.provider}" has no permission modes; the policy is '
                "enforced by tool filtering only",
            )

    def runtime_set(
        self, call: CallInfo, session_id: str, selection: Selection, fences: Fences
    ) -> tuple[Record, BindTicket | None]:
        tickets: list[BindTicket] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            require_open(call, state, running=True)
            check_fences(call, state, fences)
            runtime = state.runtime
            previous = runtime.selected
            live = runtime.status in ("ready", "running")
            runtime.selected = selection
            runtime.selection_revision += 1
            same_agent = live and previous is not None and previous.provider == selection.provider
            ticket = self.ticket(
                writer, state, self._workspace_path(call, writer, state), reuse_live=same_agent
            )
            assert ticket is not None
            tickets.append(ticket)
            return True

        record = self._ledger.mutate(call, session_id, change)
        return record, tickets[0]

    def runtime_clear(self, call: CallInfo, session_id: str) -> Record:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            require_open(call, state)
            runtime = state.runtime
            if runtime.selected is None and runtime.status == "unbound":
                return False
            unbind(state)
            runtime.selected = None
            runtime.failure = None
            runtime.selection_revision += 1
            runtime.previous_acp_session_id = runtime.previous_provider = None
            return True

        return self._ledger.mutate(call, session_id, change)

    def _restart_context(
        self, call: CallInfo, writer: StoreWriter, state: SessionState
    ) -> BindTicket | None:
        """After the transcript changed: forget the old ACP session; a live agent is replaced
        by one whose context holds only the kept turns."""
        state.transcript_epoch += 1
        state.pending_interactions = []
        live = state.runtime.status in LIVE
        unbind(state)
        state.runtime.previous_acp_session_id = state.runtime.previous_provider = None
        if not live:
            return None
        return self.ticket(writer, state, self._workspace_path(call, writer, state))

    def rewind(
        self, call: CallInfo, session_id: str, to_turn: int, fences: Fences
    ) -> tuple[Record, BindTicket | None]:
        tickets: list[BindTicket] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            require_open(call, state)
            check_fences(call, state, fences)
            if to_turn > state.transcript_turns:
                raise ToolConflict(
                    call.tool_id,
                    f'session "{state.id}" has {state.transcript_turns} turns; '
                    f"cannot rewind to turn {to_turn}",
                    reason=Reason.TURN_OUT_OF_RANGE,
                )
            writer.truncate_transcript(state.id, to_turn)
            state.transcript_turns = to_turn
            state.context_from_turn = min(state.context_from_turn, to_turn + 1)
            state.queue = [p for p in state.queue if p.turn <= to_turn]
            ticket = self._restart_context(call, writer, state)
            if ticket is not None:
                tickets.append(ticket)
            return True

        record = self._ledger.mutate(call, session_id, change)
        return record, tickets[0] if tickets else None

    def clear(
        self, call: CallInfo, session_id: str, fences: Fences
    ) -> tuple[Record, BindTicket | None]:
        """Start a new conversation: turns stay in the history, the agent's next context
        starts after them."""
        tickets: list[BindTicket] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            require_open(call, state)
            check_fences(call, state, fences)
            if state.runtime.status == "running":
                raise ToolConflict(
                    call.tool_id,
                    f'session "{state.id}" is running a turn; cancel it first '
                    "(compozy__session_prompt_cancel)",
                    reason=Reason.TURN_RUNNING,
                )
            state.context_from_turn = state.transcript_turns + 1
            ticket = self._restart_context(call, writer, state)
            if ticket is not None:
                tickets.append(ticket)
            return True

        record = self._ledger.mutate(call, session_id, change)
        return record, tickets[0] if tickets else None

    def continue_(
        self, call: CallInfo, session_id: str, prompt: str | None, fences: Fences
    ) -> tuple[Record, BindTicket | None]:
        ledger = self._ledger
        tickets: list[BindTicket] = []

        def change(writer: StoreWriter, _: SessionRow, state: SessionState) -> bool:
            require_open(call, state)
            check_fences(call, state, fences)
            expires = state.lineage.ttl_expires_at
            if expires is not None and expires <= ledger.now():
                raise ToolConflict(
                    call.tool_id,
                    f'session "{state.id}" reached its time to live at {expires}',
                    reason=Reason.TTL_EXPIRED,
                )
            changed = False
            if state.state == "stopped":
                state.state = "active"
                state.stop_reason = state.stop_detail = state.stop_cause = None
                state.failure = None
                changed = True
            if prompt is not None:
                writer.append_turns([ledger.new_prompt(state, prompt)[1]])
                changed = True
            if state.runtime.selected is not None and state.runtime.status not in LIVE:
                ticket = self.ticket(writer, state, self._workspace_path(call, writer, state))
                if ticket is not None:
                    tickets.append(ticket)
                    changed = True
            return changed

        record = ledger.mutate(call, session_id, change)
        return record, tickets[0] if tickets else None
