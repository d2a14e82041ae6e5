"""Runtime binding and the transcript fences: runtime_set, runtime_clear, rewind, continue.

Each operation checks the fences the caller read (``selection_revision``, ``generation``,
``transcript_epoch``) inside the same transaction that changes the session, so a stale caller
changes nothing. :mod:`.runtime` says when ``generation`` increments.
"""

from __future__ import annotations

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ToolConflict
from compozy_mcp.reasons import Reason
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
from compozy_mcp.sessions.runtime import BindFailed, RuntimeDriver
from compozy_mcp.store.base import SessionRow, StoreWriter


class RuntimeBinding:
    def __init__(self, ledger: SessionLedger, driver: RuntimeDriver) -> None:
        self._ledger = ledger
        self._driver = driver

    def bind(self, state: SessionState, *, new_process: bool) -> None:
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
            self._ledger.diagnose(state, "runtime.bind_failed", "error", exc.summary)
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
            self._ledger.diagnose(
                state,
                "runtime.permission_mode_degraded",
                "warning",
                f'provider "{selection.provider}" has no permission modes; the policy is '
                "enforced by tool filtering only",
            )
        # A bound runtime receives whatever was queued for it.
        state.queue = []

    def runtime_set(
        self, call: CallInfo, session_id: str, selection: Selection, fences: Fences
    ) -> Record:
        def change(_: StoreWriter, __: SessionRow, state: SessionState) -> bool:
            require_open(call, state, running=True)
            check_fences(call, state, fences)
            runtime = state.runtime
            previous = runtime.selected
            bound = runtime.status == "ready"
            runtime.selected = selection
            runtime.selection_revision += 1
            same_process = (
                bound and previous is not None and previous.provider == selection.provider
            )
            self.bind(state, new_process=not same_process)
            return True

        return self._ledger.mutate(call, session_id, change)

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
            return True

        return self._ledger.mutate(call, session_id, change)

    def rewind(self, call: CallInfo, session_id: str, to_turn: int, fences: Fences) -> Record:
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
            state.transcript_epoch += 1
            state.queue = [p for p in state.queue if p.turn <= to_turn]
            state.pending_interactions = []
            if state.runtime.status == "ready":
                self.bind(state, new_process=True)
            return True

        return self._ledger.mutate(call, session_id, change)

    def continue_(
        self, call: CallInfo, session_id: str, prompt: str | None, fences: Fences
    ) -> Record:
        ledger = self._ledger

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
            if state.runtime.selected is not None and state.runtime.status != "ready":
                self.bind(state, new_process=True)
                changed = True
            if prompt is not None:
                writer.append_turns([ledger.new_prompt(state, prompt)[1]])
                changed = True
            return changed

        return ledger.mutate(call, session_id, change)
