"""Approvals: whether a call by a managed session may run, the prompts that ask the operator,
the answers, remembered grants, one-shot tokens and permission modes.

A call is checked after authorization and before its handler (upstream's pipeline, step 7).
Only calls by a managed session are checked; read tools are never asked about. In order:

1. the session's permission mode ``plan`` refuses every tool that is not read-only
   (``tool_denied`` / ``permission_mode_plan``);
2. a remembered grant decides: the most specific one that matches (an exact input, then the
   agent's, then the tool's in the workspace); at one level a reject beats an allow;
3. the mode decides whether the call needs approval at all (:mod:`.modes`);
4. a one-shot token sent with the call is used (single use), or its failure is the answer;
5. an allow-once or reject-once answer to an earlier prompt for this same call is used;
6. otherwise the call adds an ``approval`` interaction to the session (once per distinct call)
   and ends in ``tool_approval_required`` naming it.

**After an answer the agent retries the same call** (either view, or none: digests ignore
``result_view``). allow-once lets exactly one retry run; reject-once refuses exactly one
(``tool_denied`` / ``approval_rejected``); allow-always and reject-always remember a grant that
decides every later identical call. A one-shot token is the operator's alternative to a prompt:
minted ahead of a call, sent with it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from compozy_mcp.approvals._answers import Answerers
from compozy_mcp.approvals._digest import (
    input_digest,
    is_digest,
    matching_digests,
    same_digest,
)
from compozy_mcp.approvals._modes import Need, PermissionMode, need
from compozy_mcp.approvals._tokens import (
    ANSWER_TTL_SECONDS,
    DEFAULT_TTL_SECONDS,
    answer_key,
    new_token,
    token_hash,
)
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo, CallScope
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import (
    ResourceNotFound,
    ToolApprovalRequired,
    ToolDenied,
    ToolInvalidInput,
)
from compozy_mcp.native.registry import RegisteredTool, Risk, ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.interactions import Pending
from compozy_mcp.sessions.ledger import new_id
from compozy_mcp.sessions.model import Interaction
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import ApprovalGrantRow, ApprovalTokenRow, Store, StoreReader

APPROVAL: Final = "approval"
ALLOW_ONCE, ALLOW_ALWAYS = "allow-once", "allow-always"
REJECT_ONCE, REJECT_ALWAYS = "reject-once", "reject-always"
DECISIONS = (ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS)
ALLOW, REJECT = "allow", "reject"
APPROVE_TOOL = "compozy__session_approve"


@dataclass(frozen=True, slots=True)
class Caller:
    """The calling session, as approvals key it."""

    session_id: str
    workspace_id: str
    agent_name: str
    profile_id: str


def grant_scope(row: ApprovalGrantRow) -> str:
    if row.input_digest is not None:
        return "input"
    return "agent" if row.agent_name is not None else "tool"


class Approvals:
    def __init__(
        self,
        store: Store,
        sessions: Sessions,
        clock: Clock,
        offload: Offload,
        registry: ToolRegistry,
        *,
        default_mode: PermissionMode = PermissionMode.DEFAULT,
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.clock = clock
        self.registry = registry
        self.default_mode = default_mode
        self._offload = offload
        self.answerers = Answerers()
        self.answerers.register(ApprovalAnswerer(self))

    def _now(self, later: int = 0) -> str:
        return timestamp(self.clock.now() + timedelta(seconds=later))

    # --- modes ---------------------------------------------------------------------------

    def mode_of(self, reader: StoreReader, session_id: str) -> PermissionMode:
        """The session's mode: its own, else its nearest ancestor's, else the default."""
        lineage = reader.ancestry(session_id)
        modes = reader.approval_modes(lineage)
        for ident in lineage:
            if ident in modes:
                return PermissionMode(modes[ident])
        return self.default_mode

    async def set_mode(self, call: CallInfo, session_id: str, mode: str | None) -> dict[str, Any]:
        chosen = PermissionMode(mode) if mode is not None else None

        def work() -> dict[str, Any]:
            with self.store.write() as writer:
                if writer.session(session_id) is None:
                    raise ResourceNotFound(call.tool_id, "session", session_id)
                writer.set_approval_mode(session_id, chosen, self._now())
                effective = self.mode_of(writer, session_id)
            return {"session_id": session_id, "permission_mode": effective.value}

        return await self._offload(work)

    # --- the check dispatch makes ----------------------------------------------------------

    async def check(
        self,
        tool: RegisteredTool,
        scope: CallScope,
        tool_input: Mapping[str, Any],
        *,
        approval_token: str | None = None,
    ) -> None:
        """Raise unless the call may run now (the steps of this module's docstring)."""
        session_id = scope.session_id
        if session_id is None or tool.risk is Risk.READ or not tool.definition.asks_approval:
            return
        with self.store.read() as reader:
            row = reader.session(session_id)
            if row is None:  # authorization refused it already; nothing to approve
                return
            caller = Caller(session_id, row.workspace_id, row.agent_name, row.profile_id)
            mode = self.mode_of(reader, session_id)
            if mode is PermissionMode.PLAN:
                raise ToolDenied(
                    tool.id,
                    f'tool "{tool.id}" changes things and session "{session_id}" is in '
                    'permission mode "plan", which is read-only',
                    reason=Reason.PERMISSION_MODE_PLAN,
                )
            grant = _deciding_grant(
                reader.approval_grants(caller.workspace_id),
                caller.agent_name,
                tool.id,
                matching_digests(tool_input),
            )
        if grant is not None:
            if grant.decision == REJECT:
                raise _rejected(tool.id, f'by the remembered approval "{grant.id}"')
            return
        if need(mode, tool.risk) is Need.NOTHING:
            return
        digest = input_digest(tool_input)
        if approval_token is not None:
            await self._offload(self._use_token, tool.id, caller, digest, approval_token)
            return
        answer = await self._offload(self._take_answer, caller, tool.id, digest)
        if answer is not None:
            if answer.kind == "reject_once":
                raise _rejected(tool.id, "once by the operator")
            return
        pending = await self._offload(self._ask, tool, caller, dict(tool_input), digest)
        raise _approval_required(tool.id, pending)

    def _use_token(self, tool_id: str, caller: Caller, digest: str, token: str) -> None:
        with self.store.write() as writer:
            now = self._now()
            row = writer.approval_token(token_hash(token))
            if row is None or row.kind != "token":
                raise _token_error(
                    tool_id, Reason.APPROVAL_TOKEN_MISSING, "was never minted or is gone"
                )
            if row.used_at is not None:
                raise _token_error(tool_id, Reason.APPROVAL_TOKEN_REPLAYED, "was used already")
            if row.expires_at <= now:
                raise _token_error(
                    tool_id, Reason.APPROVAL_TOKEN_EXPIRED, f"expired at {row.expires_at}"
                )
            bound = (row.tool_id, row.session_id, row.workspace_id, row.agent_name)
            here = (tool_id, caller.session_id, caller.workspace_id, caller.agent_name)
            if bound != here or not same_digest(row.input_digest, digest):
                raise _token_error(
                    tool_id,
                    Reason.APPROVAL_TOKEN_MISMATCH,
                    "was minted for another tool, session, agent or input",
                )
            if not writer.use_approval_token(row.token_hash, now):
                raise _token_error(tool_id, Reason.APPROVAL_TOKEN_REPLAYED, "was used already")

    def _take_answer(self, caller: Caller, tool_id: str, digest: str) -> ApprovalTokenRow | None:
        with self.store.write() as writer:
            return writer.take_approval_pass(caller.session_id, tool_id, digest, self._now())

    def _ask(
        self, tool: RegisteredTool, caller: Caller, tool_input: dict[str, Any], digest: str
    ) -> Pending:
        prompt = Interaction(
            interaction_id="",
            kind=APPROVAL,
            provider_request_id=f"{tool.id}@{digest}",
            title=f"Approve {tool.id} ({tool.risk.value})",
            decisions=list(DECISIONS),
            tool_id=tool.id,
            tool_input=tool_input,
            input_digest=digest,
            created_at="",
        )
        return self.sessions.interactions.ask(CallInfo(tool.id), caller.session_id, prompt)

    # --- answers -------------------------------------------------------------------------

    async def answer(
        self, call: CallInfo, session_id: str, interaction_id: str, decision: str
    ) -> dict[str, Any]:
        """Answer a pending interaction of any kind (the answerer of its kind acts)."""
        if call.scope.session_id == session_id:
            raise ToolDenied(
                call.tool_id,
                f'session "{session_id}" cannot answer its own interactions; the operator or a '
                "supervising ancestor does",
                reason=Reason.APPROVAL_SELF,
            )
        pending = self.sessions.interactions.find(call, session_id, interaction_id)
        answerer = self.answerers.checked(call, pending, decision)
        result = await answerer.answer(call, pending, decision)
        return {
            "session_id": session_id,
            "interaction_id": interaction_id,
            "kind": pending.interaction.kind,
            **result,
        }

    def _record_answer(self, call: CallInfo, pending: Pending, decision: str) -> dict[str, Any]:
        item = pending.interaction
        assert item.tool_id is not None
        assert item.input_digest is not None
        taken = self.sessions.interactions.take(call, pending.session_id, item.interaction_id)
        out: dict[str, Any] = {"decision": decision, "tool_id": item.tool_id}
        with self.store.write() as writer:
            if decision in (ALLOW_ONCE, REJECT_ONCE):
                writer.put_approval_token(
                    ApprovalTokenRow(
                        token_hash=answer_key(),
                        kind=decision.replace("-", "_"),
                        tool_id=item.tool_id,
                        session_id=taken.session_id,
                        workspace_id=taken.workspace_id,
                        agent_name=taken.agent_name,
                        input_digest=item.input_digest,
                        created_at=self._now(),
                        expires_at=self._now(ANSWER_TTL_SECONDS),
                    )
                )
            else:
                row = writer.put_approval_grant(
                    ApprovalGrantRow(
                        id=new_id("grant"),
                        workspace_id=taken.workspace_id,
                        agent_name=taken.agent_name,
                        tool_id=item.tool_id,
                        input_digest=item.input_digest,
                        decision=ALLOW if decision == ALLOW_ALWAYS else REJECT,
                        profile_id=taken.profile_id,
                        source="answer",
                        created_at=self._now(),
                        tool_input=item.tool_input,
                    )
                )
                out["grant"] = grant_record(writer, row)
        verb = "run" if decision.startswith("allow") else "be refused"
        times = "once" if decision.endswith("once") else "every time"
        out["next"] = f"the same call, retried, will {verb} ({times})"
        return out

    # --- grants --------------------------------------------------------------------------

    async def list_grants(self, call: CallInfo, filters: Mapping[str, Any]) -> dict[str, Any]:
        workspace = filters.get("workspace_id")
        caller = call.scope.session_id
        with self.store.read() as reader:
            if caller is not None:  # a managed session sees its own workspace's grants
                row = reader.session(caller)
                workspace = row.workspace_id if row is not None else "-"
            rows = reader.approval_grants(workspace)
            grants = [
                grant_record(reader, row)
                for row in rows
                if filters.get("tool_id") in (None, row.tool_id)
                and filters.get("agent_name") in (None, row.agent_name)
            ]
        return {"grants": grants}

    async def set_grant(self, call: CallInfo, args: Mapping[str, Any]) -> dict[str, Any]:
        tool_id = args["tool_id"]
        if self.registry.find(tool_id) is None:
            raise ResourceNotFound(call.tool_id, "tool", tool_id)
        digest = _digest_of(call.tool_id, args)
        workspace = args.get("workspace_id") or self.sessions.workspaces.workspaces()[0].id

        def work() -> dict[str, Any]:
            with self.store.write() as writer:
                if writer.workspace(workspace) is None:
                    raise ResourceNotFound(call.tool_id, "workspace", workspace)
                row = writer.put_approval_grant(
                    ApprovalGrantRow(
                        id=new_id("grant"),
                        workspace_id=workspace,
                        agent_name=args.get("agent_name"),
                        tool_id=tool_id,
                        input_digest=digest,
                        decision=args["decision"],
                        profile_id=args.get("profile_id"),
                        source="operator",
                        created_at=self._now(),
                        tool_input=dict(args["input"]) if "input" in args else None,
                    )
                )
                return {"grant": grant_record(writer, row)}

        return await self._offload(work)

    async def revoke(self, call: CallInfo, grant_id: str) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            with self.store.write() as writer:
                row = writer.approval_grant(grant_id)
                if row is None:
                    raise ResourceNotFound(call.tool_id, "approval grant", grant_id)
                record = grant_record(writer, row)
                writer.delete_approval_grant(grant_id)
                return {"revoked": record}

        return await self._offload(work)

    # --- one-shot tokens -----------------------------------------------------------------

    def sweep(self) -> int:
        """Delete expired tokens and answers (a write: run it off the loop); how many.
        A token swept after it expired is reported as missing, no longer as expired."""
        with self.store.write() as writer:
            return writer.delete_expired_approval_tokens(self._now())

    async def mint(
        self, call: CallInfo, tool_id: str, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A one-shot token for one call of ``tool_id`` by ``request["session_id"]`` with
        ``input`` (or the ``input_digest`` of one, computed without ``result_view``)."""
        if self.registry.find(tool_id) is None:
            raise ResourceNotFound(call.tool_id, "tool", tool_id)
        digest = _digest_of(call.tool_id, request)
        if digest is None:
            raise ToolInvalidInput(
                call.tool_id,
                f'tool "{call.tool_id}" needs "input" (the call\'s input) or "input_digest"',
            )
        session_id = request["session_id"]
        ttl = int(request.get("ttl_seconds", DEFAULT_TTL_SECONDS))
        token = new_token()

        def work() -> dict[str, Any]:
            with self.store.write() as writer:
                row = writer.session(session_id)
                if row is None:
                    raise ResourceNotFound(call.tool_id, "session", session_id)
                stored = ApprovalTokenRow(
                    token_hash=token_hash(token),
                    kind="token",
                    tool_id=tool_id,
                    session_id=session_id,
                    workspace_id=row.workspace_id,
                    agent_name=row.agent_name,
                    input_digest=digest,
                    created_at=self._now(),
                    expires_at=self._now(ttl),
                )
                writer.put_approval_token(stored)
            return {
                "approval": {
                    "token": token,
                    "tool_id": tool_id,
                    "session_id": session_id,
                    "workspace_id": stored.workspace_id,
                    "agent_name": stored.agent_name,
                    "input_digest": digest,
                    "expires_at": stored.expires_at,
                }
            }

        return await self._offload(work)


class ApprovalAnswerer:
    """Answers ``approval`` interactions: allow-once, allow-always, reject-once, reject-always."""

    kind = APPROVAL
    offered_by = "the approval prompt"

    def __init__(self, approvals: Approvals) -> None:
        self._approvals = approvals

    def decisions(self, interaction: Interaction) -> Sequence[str]:
        return DECISIONS

    async def answer(self, call: CallInfo, pending: Pending, decision: str) -> dict[str, Any]:
        work = functools.partial(self._approvals._record_answer, call, pending, decision)
        return await self._approvals._offload(work)


def grant_record(reader: StoreReader, row: ApprovalGrantRow) -> dict[str, Any]:
    """A grant as tools and the CLI show it. ``profile_archived``: the profile of the session
    whose answer made it is gone (the grant still matches: grants are keyed by workspace, agent,
    tool and input, not by profile), so the operator can tell and revoke it."""
    out: dict[str, Any] = {"id": row.id, "scope": grant_scope(row)}
    out["workspace_id"] = row.workspace_id
    if row.agent_name is not None:
        out["agent_name"] = row.agent_name
    out["tool_id"] = row.tool_id
    if row.input_digest is not None:
        out["input_digest"] = row.input_digest
    out["decision"] = row.decision
    out["profile_archived"] = row.profile_id is not None and reader.profile(row.profile_id) is None
    if row.profile_id is not None:
        out["profile_id"] = row.profile_id
    out["source"] = row.source
    if row.tool_input is not None:
        out["tool_input"] = row.tool_input
    out["created_at"] = row.created_at
    return out


def _deciding_grant(
    rows: Sequence[ApprovalGrantRow], agent: str, tool_id: str, digests: Sequence[str]
) -> ApprovalGrantRow | None:
    """The grant that decides a call: the most specific level that has one; a reject beats an
    allow at the same level."""
    levels: dict[int, list[ApprovalGrantRow]] = {}
    for row in rows:
        if row.tool_id != tool_id or row.agent_name not in (None, agent):
            continue
        if row.input_digest is not None:
            if not any(same_digest(row.input_digest, d) for d in digests):
                continue
            level = 0
        else:
            level = 1 if row.agent_name is not None else 2
        levels.setdefault(level, []).append(row)
    if not levels:
        return None
    found = levels[min(levels)]
    return next((row for row in found if row.decision == REJECT), found[0])


def _digest_of(tool_id: str, args: Mapping[str, Any]) -> str | None:
    """The digest a request names: of its ``input`` (without ``result_view``), or its
    ``input_digest``; both must agree when both are sent."""
    given = args.get("input_digest")
    if given is not None and not is_digest(given):
        raise ToolInvalidInput.for_field(
            tool_id, "input_digest", 'must be "sha256:" and 64 lowercase hex digits'
        )
    if "input" not in args:
        return given
    tool_input = args["input"]
    if not isinstance(tool_input, dict):
        raise ToolInvalidInput.for_field(tool_id, "input", "must be a JSON object")
    digest = input_digest(tool_input)
    if given is not None and not same_digest(given, digest):
        raise ToolInvalidInput.for_field(
            tool_id,
            "input_digest",
            "is not the digest of input (compute it without result_view)",
        )
    return digest


def _rejected(tool_id: str, how: str) -> ToolDenied:
    return ToolDenied(
        tool_id, f'tool "{tool_id}" call was rejected {how}', reason=Reason.APPROVAL_REJECTED
    )


def _token_error(tool_id: str, reason: Reason, what: str) -> ToolApprovalRequired:
    return ToolApprovalRequired(
        tool_id,
        f'tool "{tool_id}" needs approval: the approval token {what}',
        reason=reason,
        details={"reason_codes": [reason.value, Reason.APPROVAL_REQUIRED.value]},
    )


def _approval_required(tool_id: str, pending: Pending) -> ToolApprovalRequired:
    item = pending.interaction
    session_id = pending.session_id
    return ToolApprovalRequired(
        tool_id,
        f'tool "{tool_id}" needs approval: session "{session_id}" waits on interaction '
        f'"{item.interaction_id}". The operator answers it with {APPROVE_TOOL} (or `compozy '
        f"session approve {session_id} {item.interaction_id} allow-once`); then retry the same "
        "call.",
        details={
            "session_id": session_id,
            "interaction_id": item.interaction_id,
            "decisions": list(DECISIONS),
            "input_digest": item.input_digest,
            "answer_with": APPROVE_TOOL,
            "then": "retry the same call",
        },
    )
