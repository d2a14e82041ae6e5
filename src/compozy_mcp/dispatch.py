"""The one invocation path. Every surface (CLI, MCP proxy, HTTP API, Loops) calls
:meth:`Dispatcher.call`; none re-implements a step.

Steps, in order; any failure ends the call before the tool runs (except the last two):

1. resolve the tool (:class:`~compozy_mcp.errors.ToolNotFound`);
2. authorize the caller: a managed session that has ended makes no call, and calls only what
   its permission policy allows;
3. check the selector first (spec, Errors rows 1-3), then the rest of the input schema;
4. ``tool.pre_call`` hooks, which may patch the input (re-checked from step 3) or deny; a
   patch that changes a pinned view fails with ``result_view_pinned``
   (:mod:`compozy_mcp.hooks._engine` has the rules);
5. the sessions a call acts on: a managed session names only itself or a descendant
   (``session_not_in_scope``); a scope field it leaves out is filled with the caller;
5a. approval (:mod:`compozy_mcp.approvals._service`): a call by a managed session that needs
   the operator's approval and has none ends in ``tool_approval_required`` with a prompt on
   the session (or uses the one-shot token sent with it);
6. run the handler, which returns the full record;
7. project the selected view;
8. envelope ``{structured, preview}``, and the budget: a result over it is stored whole as an
   artifact and replaced by a continuation that ``compozy__tool_artifact_read`` follows;
9. ``tool.post_call`` hooks, which may replace the title or the result (the budget applies to
   a replaced result too), or ``tool.post_error`` hooks, which may replace the message.

A call of an upstream MCP server's tool (``<server>__<tool>``) is forwarded by the surface that
holds the connection, through :meth:`Dispatcher.call_external`: the same three hook events, on
the input and the result as the server takes and sends them (no selector, no view, no schema
check: the server checks its own input).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

from compozy_mcp import jsonutil
from compozy_mcp.approvals import Approvals
from compozy_mcp.artifacts import MAX_PAGE_BYTES, OPERATOR_OWNER, ArtifactRef
from compozy_mcp.calls import OPERATOR, RESULT_CEILING, CallInfo, CallScope
from compozy_mcp.errors import (
    CompozyError,
    SessionEnded,
    ToolBackendFailed,
    ToolDenied,
    ToolError,
    ToolInvalidInput,
)
from compozy_mcp.hooks import (
    POST_CALL,
    POST_ERROR,
    PRE_CALL,
    CallSubject,
    HookEngine,
    Patch,
    ToolHook,
    ToolReference,
    patched_input,
)
from compozy_mcp.native.context import Services, ToolCall
from compozy_mcp.native.registry import RegisteredTool, Risk, ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.policy import allows
from compozy_mcp.validation import unrepresentable_at
from compozy_mcp.views import ResultView, project
from compozy_mcp.views.selector import without_selector

log = logging.getLogger(__name__)

ARTIFACT_READ_TOOL = "compozy__tool_artifact_read"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one successful call returns, before any surface shapes it."""

    tool_id: str
    structured: dict[str, Any]
    preview: str
    #: the view the call selected; ``None`` for single-result tools
    view: ResultView | None
    #: ``structured`` serialized once, so that surfaces do not serialize it again
    structured_json: bytes
    duration_ms: float
    truncated: bool = False
    artifacts: tuple[ArtifactRef, ...] = field(default_factory=tuple)
    #: a title a ``tool.post_call`` hook gave the result (upstream's ToolResultPatch.title)
    title: str | None = None

    def envelope(self) -> dict[str, Any]:
        """``{"structured", "preview"}``, plus ``truncated`` and ``artifacts`` when truncated,
        and ``title`` when a hook set one."""
        out: dict[str, Any] = {"structured": self.structured, "preview": self.preview}
        if self.truncated:
            out["truncated"] = True
            out["artifacts"] = [ref.payload() for ref in self.artifacts]
        if self.title is not None:
            out["title"] = self.title
        return out


def continuation(ref: ArtifactRef) -> dict[str, Any]:
    return {"artifact_uri": ref.uri, "offset": 0, "limit": MAX_PAGE_BYTES}


@dataclass(slots=True)
class _Hooked:
    """A call's state while its hooks may change it."""

    tool: RegisteredTool
    tool_input: dict[str, Any]
    view: ResultView | None
    pinned: ResultView | None
    result: ToolResult | None = None
    error: ToolError | None = None

    def pre_fields(self) -> dict[str, Any]:
        return {"tool_input": self.tool_input}

    async def apply_pre(self, patch: Patch) -> None:
        if patch.tool_input is not None:
            self.tool_input, self.view = patched_input(self.tool, patch.tool_input, self.pinned)

    def post_fields(self) -> dict[str, Any]:
        assert self.result is not None
        return {
            "tool_input": self.tool_input,
            "result_view": self.view.value if self.view is not None else None,
            "tool_result": self.result.envelope(),
            "title": self.result.title,
        }

    def error_fields(self) -> dict[str, Any]:
        assert self.error is not None
        return {"tool_input": self.tool_input, "error": self.error.payload(redact=False)}

    async def apply_error(self, patch: Patch) -> None:
        assert self.error is not None
        if patch.error is not None:
            # The caller gets the hook's message; code and reason stay the tool's. The error
            # was raised for this call alone, so it is changed where it is.
            self.error.message = patch.error
            self.error.args = (patch.error,)


R = TypeVar("R")


class ExternalCall(Protocol, Generic[R]):
    """What a surface that forwards a call to an upstream MCP server lends the dispatcher for
    its hooks (the core knows no MCP: these say what the server's result is as JSON)."""

    def forward(self, tool_input: dict[str, Any] | None) -> Awaitable[R]:
        """Send the call (with the input as the hooks left it) and return the server's result;
        raise the :class:`ToolError` (or the server's own error) the call ends in."""
        ...

    def result_payload(self, result: R) -> dict[str, Any]:
        """The result as the server sent it (hooks' ``tool_result``)."""
        ...

    def patched(self, result: R, tool_result: dict[str, Any]) -> R:
        """The result a ``tool.post_call`` patch replaces it with; raise a :class:`ToolError`
        when the patch is not a result the server could have sent."""
        ...

    def error_payload(self, error: Exception) -> dict[str, Any] | None:
        """A failure that is not a :class:`ToolError` (the server's own JSON-RPC error) as
        ``tool.post_error`` reports it; ``None``: not a failure of the call."""
        ...


@dataclass(slots=True)
class _Forwarded(Generic[R]):
    """An upstream call's state while its hooks may change it."""

    tool_id: str
    external: ExternalCall[R]
    tool_input: dict[str, Any] | None
    result: R | None = None
    error: Exception | None = None

    def pre_fields(self) -> dict[str, Any]:
        return {"tool_input": self.tool_input if self.tool_input is not None else {}}

    async def apply_pre(self, patch: Patch) -> None:
        if patch.tool_input is not None:
            self.tool_input = patch.tool_input  # passed on as it is: the server checks it

    def post_fields(self) -> dict[str, Any]:
        assert self.result is not None
        return {
            "tool_input": self.tool_input if self.tool_input is not None else {},
            "tool_result": self.external.result_payload(self.result),
        }

    async def apply_post(self, patch: Patch) -> None:
        assert self.result is not None
        if patch.title is not None:
            raise ToolDenied(
                self.tool_id,
                f'tool "{self.tool_id}" is an upstream MCP server\'s: its result has no title a '
                "hook could set",
                reason=Reason.PATCH_NOT_APPLICABLE,
            )
        if patch.tool_result is not None:
            self.result = self.external.patched(self.result, patch.tool_result)

    def error_fields(self) -> dict[str, Any]:
        assert self.error is not None
        error = self.error
        shown = (
            error.payload(redact=False)
            if isinstance(error, ToolError)
            else self.external.error_payload(error)
        )
        return {
            "tool_input": self.tool_input if self.tool_input is not None else {},
            "error": shown,
        }

    async def apply_error(self, patch: Patch) -> None:
        if patch.error is None:
            return
        if not isinstance(self.error, ToolError):
            raise ToolDenied(
                self.tool_id,
                f'tool "{self.tool_id}" failed with its server\'s own error, which reaches the '
                "caller as the server sent it",
                reason=Reason.PATCH_NOT_APPLICABLE,
            )
        self.error.message = patch.error
        self.error.args = (patch.error,)


class Dispatcher:
    def __init__(
        self,
        registry: ToolRegistry,
        services: Services,
        *,
        hooks: HookEngine | None = None,
        approvals: Approvals | None = None,
    ) -> None:
        self.registry = registry
        self.services = services
        self.hooks = hooks
        self.approvals = approvals

    def add_hook(self, hook: ToolHook) -> None:
        """An in-process hook on every event of every tool (tests, embedders)."""
        if self.hooks is None:
            raise RuntimeError("this dispatcher was built without a hook engine")
        self.hooks.registry.add_code_hook(hook)

    # --- authorization -------------------------------------------------------------------

    def _authorize(self, tool: RegisteredTool, scope: CallScope) -> None:
        """A managed session that has ended makes no call; a live one calls only the tools its
        permission policy allows (``sessions/access.py`` has the rules)."""
        if scope.session_id is None:
            return
        if tool.definition.operator_only:
            raise ToolDenied(
                tool.id,
                f'tool "{tool.id}" is for the operator only (called by session '
                f'"{scope.session_id}")',
                reason=Reason.OPERATOR_ONLY,
            )
        access = self.services.sessions.access
        policy = access.policy(scope.session_id)
        if policy is None:
            raise ToolDenied(
                tool.id,
                f'the calling session "{scope.session_id}" does not exist',
                reason=Reason.SCOPE_SESSION_UNKNOWN,
            )
        ended = access.ended(scope.session_id)
        if ended is not None:
            raise SessionEnded(tool.id, scope.session_id, ended.how, ended.at)
        if not allows(policy.tools, tool.id):
            raise ToolDenied(
                tool.id,
                f'tool "{tool.id}" is not allowed by the permission policy of session '
                f'"{scope.session_id}"',
                reason=Reason.PERMISSION_DENIED,
            )

    def _bind_scope(
        self, tool: RegisteredTool, scope: CallScope, tool_input: dict[str, Any]
    ) -> dict[str, Any]:
        caller = scope.session_id
        if caller is None:
            return tool_input
        defn = tool.definition
        for name in defn.acts_on:
            sent = tool_input.get(name)
            if sent is None:
                if name == defn.scope_session_field:
                    tool_input = {**tool_input, name: caller}
                continue
            if not self.services.sessions.access.within(caller, sent):
                raise ToolDenied(
                    tool.id,
                    f'tool "{tool.id}" input "{name}" names session "{sent}", but session '
                    f'"{caller}" may act only on itself and its descendants',
                    reason=Reason.SESSION_NOT_IN_SCOPE,
                )
        return tool_input

    # --- a call forwarded to an upstream MCP server -------------------------------------------

    async def call_external(
        self,
        tool_id: str,
        tool_input: dict[str, Any] | None,
        external: ExternalCall[R],
        *,
        scope: CallScope = OPERATOR,
        read_only: bool = False,
    ) -> R:
        """Forward one call of an upstream server's tool with its hooks around it: a
        ``tool.pre_call`` deny refuses it and a ``tool_input`` patch is what the server gets;
        ``tool.post_call`` sees the result as the server sent it (a ``tool_result`` patch
        replaces it), ``tool.post_error`` the failure. ``has_result_views`` is absent and
        ``result_view`` never inspected: the tool is the server's. The caller has already
        checked that ``scope`` may call it. A value no UTF-8 JSON peer can receive (a lone
        surrogate, a number beyond range) is refused naming its field, never sent altered."""
        found = unrepresentable_at(tool_input) if tool_input else None
        if found is not None:
            raise ToolInvalidInput.for_field(tool_id, *found)
        hooks = self.hooks
        if hooks is None or not hooks.wants(tool_id):
            return await external.forward(tool_input)
        call = _Forwarded(tool_id, external, tool_input)
        subject = CallSubject(
            ToolReference(
                tool_call_id=f"call-{secrets.token_hex(6)}",
                tool_id=tool_id,
                read_only=read_only,
                has_result_views=False,
            ),
            hooks.caller(scope.session_id),
        )
        await hooks.fire(PRE_CALL, subject, call.pre_fields, call.apply_pre)
        try:
            call.result = await external.forward(call.tool_input)
        except Exception as error:
            if not isinstance(error, ToolError) and external.error_payload(error) is None:
                raise
            call.error = error
            await hooks.fire(POST_ERROR, subject, call.error_fields, call.apply_error)
            raise
        await hooks.fire(POST_CALL, subject, call.post_fields, call.apply_post)
        return call.result

    # --- the call --------------------------------------------------------------------------

    async def call(
        self,
        tool_id: str,
        tool_input: Any,
        *,
        scope: CallScope = OPERATOR,
        pin_view: bool = False,
        approval_token: str | None = None,
        whole: bool = False,
    ) -> ToolResult:
        """Run one tool call through every step; raises :class:`ToolError` on failure (any
        other failure, whatever step it comes from, becomes one: :func:`_as_tool_error`).

        ``pin_view`` fixes the view to the one the original input selects (Loop nodes).
        ``approval_token`` is a one-shot approval token minted for this call.
        ``whole``: the result is never cut to the budget (the Host API's operations, whose
        records the HTTP and CLI surfaces return complete, as they always did).
        """
        try:
            return await self._call(tool_id, tool_input, scope, pin_view, approval_token, whole)
        except ToolError:
            raise
        except Exception as exc:
            raise _as_tool_error(tool_id, exc) from exc

    async def _call(
        self,
        tool_id: str,
        tool_input: Any,
        scope: CallScope,
        pin_view: bool,
        token: str | None = None,
        whole: bool = False,
    ) -> ToolResult:
        started = time.perf_counter()
        tool = self.registry.get(tool_id)
        self._authorize(tool, scope)
        checked, view = tool.checked_input(tool_input)
        hooks = self.hooks
        if hooks is None or not hooks.wants(tool.id):
            return await self._run(tool, scope, checked, view, started, token, whole)
        call = _Hooked(tool, checked, view, view if (pin_view and view is not None) else None)
        subject = CallSubject(
            ToolReference(
                tool_call_id=f"call-{secrets.token_hex(6)}",
                tool_id=tool.id,
                read_only=tool.risk is Risk.READ,
                has_result_views=tool.has_views,
                pinned_result_view=call.pinned,
            ),
            hooks.caller(scope.session_id),
        )
        await hooks.fire(PRE_CALL, subject, call.pre_fields, call.apply_pre)
        try:
            call.result = await self._run(
                tool, scope, call.tool_input, call.view, started, token, whole
            )
        except ToolError as error:
            call.error = error
            await hooks.fire(POST_ERROR, subject, call.error_fields, call.apply_error)
            raise

        async def apply_post(patch: Patch) -> None:
            assert call.result is not None
            result = call.result
            if patch.tool_result is not None:
                structured = patch.tool_result["structured"]
                preview = patch.tool_result.get("preview") or _preview(tool, structured)
                result = await self._package(
                    tool, scope, structured, call.view, started, preview, whole=whole
                )
            if patch.title is not None:
                result = replace(result, title=patch.title)
            call.result = result

        await hooks.fire(POST_CALL, subject, call.post_fields, apply_post)
        return call.result

    async def _run(
        self,
        tool: RegisteredTool,
        scope: CallScope,
        checked: dict[str, Any],
        view: ResultView | None,
        started: float,
        token: str | None = None,
        whole: bool = False,
    ) -> ToolResult:
        """Steps 5 to 8: scope binding, approval, the handler, projection, envelope and
        budget."""
        bound = self._bind_scope(tool, scope, checked)
        if self.approvals is not None:
            # the input as sent (selector included: the prompt shows it; digests drop it)
            await self.approvals.check(tool, scope, checked, approval_token=token)
        try:
            record = await tool.definition.handler(
                ToolCall(CallInfo(tool.id, scope), self.services), without_selector(bound)
            )
            structured = (
                project(record, tool.views.mask)
                if tool.views is not None and view is ResultView.COMPACT
                else record
            )
            return await self._package(tool, scope, structured, view, started, whole=whole)
        except Exception as exc:
            error = _as_tool_error(tool.id, exc)
            if error is exc:
                raise
            raise error from exc

    async def _package(
        self,
        tool: RegisteredTool,
        scope: CallScope,
        structured: dict[str, Any],
        view: ResultView | None,
        started: float,
        preview: str | None = None,
        *,
        whole: bool = False,
    ) -> ToolResult:
        """The envelope of ``structured``, within the result budget (unless ``whole``)."""
        defn = tool.definition
        data = jsonutil.dumps(structured)
        budget = defn.max_result_bytes or self.services.settings.max_result_bytes
        ceiling = RESULT_CEILING.get()
        if ceiling is not None:
            budget = min(budget, ceiling)
        if whole or defn.budget_exempt or len(data) <= budget:
            return ToolResult(
                tool_id=tool.id,
                structured=structured,
                preview=preview if preview is not None else defn.preview(structured),
                view=view,
                structured_json=data,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        return await self.stored_whole(tool.id, scope, view, data, budget, started)

    async def stored_whole(
        self,
        tool_id: str,
        scope: CallScope,
        view: ResultView | None,
        data: bytes,
        budget: int,
        started: float,
    ) -> ToolResult:
        """A result of ``data`` bytes over ``budget``: stored whole as an artifact, and
        replaced by the continuation that reads it (the proxy uses it too, for an upstream
        server's result that would not fit the one event a streamed answer carries)."""
        ref = await self.services.artifacts.put(
            tool_id,
            data,
            mime_type="application/json",
            meta={"tool_id": tool_id, "result_view": view.value if view else None},
            owner=scope.session_id or OPERATOR_OWNER,
        )
        read_input = continuation(ref)
        preview = (
            f"result truncated: {len(data)} bytes exceed the {budget}-byte budget. The whole "
            f"result is stored as {ref.uri}; read it with {ARTIFACT_READ_TOOL} "
            f"{jsonutil.dumps_text(read_input)}, then with each page's next_offset until eof "
            "is true, and join the pages."
        )
        structured: dict[str, Any] = {
            "truncated": True,
            "message": preview,
            "bytes": len(data),
            "budget_bytes": budget,
            "artifacts": [ref.payload()],
            "read_tool": ARTIFACT_READ_TOOL,
            "read_input": read_input,
        }
        if view is not None:
            structured["result_view"] = view.value
        return ToolResult(
            tool_id=tool_id,
            structured=structured,
            preview=preview,
            view=view,
            structured_json=jsonutil.dumps(structured),
            duration_ms=(time.perf_counter() - started) * 1000,
            truncated=True,
            artifacts=(ref,),
        )


def _preview(tool: RegisteredTool, structured: dict[str, Any]) -> str:
    """The tool's preview of a result; a result a hook replaced may not have the shape the
    tool's preview reads, and then gets the generic one."""
    try:
        return tool.definition.preview(structured)
    except (KeyError, TypeError, IndexError, AttributeError):
        return ", ".join(sorted(structured))


def _as_tool_error(tool_id: str, exc: Exception) -> ToolError:
    """A failure of the handler as the tool error the call ends in. A non-tool error keeps its
    code and reason (a busy store stays ``store_busy``, retryable); anything unexpected is
    logged with an error id and reported without its text, which may hold paths or internals."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, CompozyError):
        # what the error reports beyond its code, reason and message (a limit's name, value
        # and setting) stays with it, as details
        extra = {
            key: value
            for key, value in exc.payload(redact=False).items()
            if key not in ("code", "reason", "message")
        }
        return ToolBackendFailed(
            tool_id,
            f'tool "{tool_id}" failed: {exc.message}',
            reason=exc.reason,
            code=exc.code,
            details=extra or None,
        )
    error_id = f"err-{secrets.token_hex(4)}"
    log.exception("tool %s failed unexpectedly (error id %s)", tool_id, error_id)
    return ToolBackendFailed(
        tool_id,
        f'tool "{tool_id}" failed unexpectedly; the server log has the details (error id '
        f"{error_id})",
        details={"error_id": error_id},
    )
