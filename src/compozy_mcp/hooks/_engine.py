"""The hook engine: runs the hooks of one event of one call, in order, and says what they decided.

For each matching enabled hook, in run order:

- an **async** hook is started in the background with the payload as it is, and only observes;
- a **sync** hook runs to its end (or its timeout), then:

  - it *failed* (error exit, timeout, output that is not a patch): the run is recorded; on
    ``tool.pre_call`` a hook whose ``on_error`` is ``deny`` refuses the call
    (:class:`~compozy_mcp.errors.HookFailed`), one whose ``on_error`` is ``allow`` (the
    default) lets it go on unpatched;
  - it *denied* (exit code 2, ``{"deny": true}``): on ``tool.pre_call`` the call is refused
    (:class:`~compozy_mcp.errors.HookDenied`); on the post events the later hooks do not run
    and the result stands;
  - it *patched*: the caller's ``apply`` applies the patch, and the next hook sees the result.
    A patch that breaks a rule ends a ``tool.pre_call`` in the error the rule names; on the post
    events it is not applied.

Every run of a configured hook is recorded (:mod:`.runlog`), whatever happened. A hook never
costs a call more than its timeout; nothing it does raises anything but the errors above.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import HookDenied, HookFailed, ToolError
from compozy_mcp.hooks._context import read_caller
from compozy_mcp.hooks._events import EVENTS, PRE_CALL, Caller, CallSubject, payload
from compozy_mcp.hooks._execution import Execution, RunContext
from compozy_mcp.hooks._model import Hook
from compozy_mcp.hooks._patches import DENIED, PATCH_REFUSED, Patch, Verdict, interpret
from compozy_mcp.hooks.registry import HookRegistry
from compozy_mcp.hooks.runlog import RunLog
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import HookRunRow

log = logging.getLogger(__name__)

#: the largest patch a run record keeps whole
RECORDED_PATCH_BYTES = 16 * 1024
#: no hook runs on the hook tools themselves: a broken hook (one that denies every call, say)
#: must never lock the operator out of the tools that fix it
EXEMPT_PREFIX = "compozy__hooks_"

Fields = Callable[[], Mapping[str, Any]]
Apply = Callable[[Patch], Awaitable[None]]


class HookEngine:
    def __init__(
        self, registry: HookRegistry, runlog: RunLog, sessions: Sessions, clock: Clock
    ) -> None:
        self.registry = registry
        self.runlog = runlog
        self._sessions = sessions
        self._clock = clock
        self._observers: set[asyncio.Task[None]] = set()
        self._last: tuple[object, str] = (None, "")

    # --- what a call asks first -------------------------------------------------------------

    def wants(self, tool_id: str) -> bool:
        """Whether any enabled hook may run on a call of ``tool_id`` (cheap: no store read)."""
        current = self.registry.current()
        if not current.active or tool_id.startswith(EXEMPT_PREFIX):
            return False
        return any(
            hook.matcher.matches_tool(tool_id)
            for event in EVENTS
            for hook in current.enabled(event)
        )

    def caller(self, session_id: str | None) -> Caller | None:
        return read_caller(self._sessions, session_id)

    def now(self) -> str:
        moment = self._clock.now()
        if moment != self._last[0]:  # formatting costs more than comparing: once a second
            self._last = (moment, timestamp(moment))
        return self._last[1]

    # --- one event ------------------------------------------------------------------------------

    async def fire(self, event: str, subject: CallSubject, fields: Fields, apply: Apply) -> None:
        """Run ``event``'s hooks on ``subject``; ``fields`` gives the event's own payload fields
        as they are now (after earlier patches); ``apply`` applies a patch or raises the tool
        error it breaks."""
        hooks = [
            hook
            for hook in self.registry.current().enabled(event)
            if hook.matcher.matches(subject.tool_id, subject.caller)
        ]
        for hook in hooks:
            body = payload(event, subject, fields(), self.now())
            if not hook.sync:
                self._observe(hook, event, subject, body)
            elif not await self._run(hook, event, subject, body, apply):
                return

    async def execute(self, hook: Hook, event: str, body: dict[str, Any]) -> Execution:
        """Run ``hook`` once on ``body``; never raises (except when cancelled)."""
        return await hook.runner(body, hook.timeout, RunContext(hook.id, event, hook.cwd))

    async def _run(
        self, hook: Hook, event: str, subject: CallSubject, body: dict[str, Any], apply: Apply
    ) -> bool:
        """One sync hook; whether later hooks run."""
        started_at, started = body["timestamp"], time.perf_counter()
        execution = await self.execute(hook, event, body)
        verdict = interpret(event, hook.id, body, execution)
        pre = event == PRE_CALL
        decision = "allow" if pre else "none"
        applied = False
        try:
            if verdict.failed:
                if pre and hook.on_error == "deny":
                    decision = "deny"
                    raise HookFailed(subject.tool_id, hook.id, str(verdict.detail))
                return True
            if verdict.outcome == DENIED:
                decision = "deny"
                if pre:
                    raise HookDenied(subject.tool_id, hook.id, str(verdict.deny_reason))
                return False
            if verdict.refusal is not None:
                if pre:
                    decision = "deny"
                    raise verdict.refusal
                return True
            if verdict.patch is not None and verdict.patch.changes:
                try:
                    await apply(verdict.patch)
                except ToolError as refused:
                    verdict = Verdict(
                        PATCH_REFUSED, patch=verdict.patch, detail=refused.message, refusal=refused
                    )
                    if pre:
                        decision = "deny"
                        raise
                    return True
                applied = True
            return True
        finally:
            duration = (time.perf_counter() - started) * 1000
            self._record(
                hook, event, subject, started_at, duration, execution, verdict, decision, applied
            )

    # --- async hooks --------------------------------------------------------------------------

    def _observe(self, hook: Hook, event: str, subject: CallSubject, body: dict[str, Any]) -> None:
        task = asyncio.get_running_loop().create_task(self._watch(hook, event, subject, body))
        self._observers.add(task)
        task.add_done_callback(self._observers.discard)

    async def _watch(
        self, hook: Hook, event: str, subject: CallSubject, body: dict[str, Any]
    ) -> None:
        started_at, started = body["timestamp"], time.perf_counter()
        execution = await self.execute(hook, event, body)
        verdict = interpret(event, hook.id, body, execution)
        duration = (time.perf_counter() - started) * 1000
        self._record(hook, event, subject, started_at, duration, execution, verdict, "none", False)

    async def drain(self) -> None:
        """Wait for this event loop's async hooks and run records (before a process ends)."""
        loop = asyncio.get_running_loop()
        mine = [task for task in self._observers if task.get_loop() is loop]
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)
        await self.runlog.settle()

    # --- the run log ----------------------------------------------------------------------------

    def _record(
        self,
        hook: Hook,
        event: str,
        subject: CallSubject,
        started_at: str,
        duration_ms: float,
        execution: Execution,
        verdict: Verdict,
        decision: str,
        applied: bool,
    ) -> None:
        if verdict.failed:
            # a line of the daemon's log (MCP clients that follow it receive it), as the
            # calling session's when a session made the call
            caller = subject.caller.session_id if subject.caller else None
            kind = "hook" if hook.recorded else "in-process hook"
            log.warning(
                "%s %s %s on %s of %s",
                kind,
                hook.id,
                verdict.detail,
                event,
                subject.tool_id,
                extra={"session_id": caller},
            )
        if not hook.recorded:
            return
        self.runlog.record(
            HookRunRow(
                hook_id=hook.id,
                event=event,
                tool_id=subject.tool_id,
                tool_call_id=subject.ref.tool_call_id,
                session_id=subject.caller.session_id if subject.caller else None,
                started_at=started_at,
                duration_ms=duration_ms,
                outcome=verdict.outcome,
                decision=decision,
                patch_applied=applied,
                detail=verdict.detail,
                exit_code=execution.exit_code,
                stderr_tail=execution.stderr_tail,
                patch=recorded_patch(verdict.patch),
            )
        )


def recorded_patch(patch: Patch | None) -> dict[str, Any] | None:
    """The patch as a run record keeps it: whole, or its size when it is large."""
    if patch is None:
        return None
    size = len(jsonutil.dumps(dict(patch.fields)))
    if size > RECORDED_PATCH_BYTES:
        return {"omitted_bytes": size}
    return dict(patch.fields)
