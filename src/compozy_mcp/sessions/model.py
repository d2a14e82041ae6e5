"""The stored state of a session. The public record is built from it by :mod:`.record`.

State holds what was decided or observed; anything that can be derived (badge, board column,
attention, children summaries, profile presentation) is derived when the record is built, so
it can never disagree with the state it comes from.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SessionStateName = Literal["starting", "active", "stopping", "stopped"]
RuntimeStatus = Literal[
    "unbound", "binding", "ready", "running", "reconfiguring", "recovering", "failed"
]
RuntimeTransition = Literal[
    "initial_bind", "live_configuration", "process_replacement", "automatic_recovery"
]
LineageKind = Literal["root", "spawn", "fork"]
SessionType = Literal["user", "subagent", "automation"]
StopCause = Literal["operator", "parent", "ttl", "failure"]


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Selection(_State):
    """A provider/model/reasoning-effort choice: what was selected, or what is in effect."""

    provider: str
    model: str | None = None
    reasoning_effort: str | None = None


class Failure(_State):
    kind: str
    summary: str
    crash_bundle_path: str | None = None


class AcpConfigOption(_State):
    id: str
    name: str
    values: list[str]


class AcpCaps(_State):
    """What the bound agent process supports (the ACP capabilities)."""

    supports_load_session: bool
    prompt_image: bool
    prompt_audio: bool
    prompt_embedded_context: bool
    supported_modes: list[str] = Field(default_factory=list)
    config_options: list[AcpConfigOption] = Field(default_factory=list)


class RuntimeState(_State):
    status: RuntimeStatus = "unbound"
    transition: RuntimeTransition | None = None
    failure: Failure | None = None
    generation: int = 0
    selection_revision: int = 0
    selected: Selection | None = None
    effective: Selection | None = None
    acp_session_id: str | None = None
    acp_caps: AcpCaps | None = None
    #: the ACP session of the last agent that ran this session, while the transcript it saw
    #: is unchanged: a new process loads (or resumes) it instead of starting afresh
    previous_acp_session_id: str | None = None
    previous_provider: str | None = None


class SpawnBudget(_State):
    max_children: int
    max_depth: int
    ttl_seconds: int


class PermissionPolicy(_State):
    """What a session may use. Entries are exact names or prefixes ending in ``*``."""

    tools: list[str]
    skills: list[str]
    mcp_servers: list[str]
    workspace_paths: list[str]


class Lineage(_State):
    kind: LineageKind
    parent_session_id: str | None = None
    root_session_id: str
    spawn_depth: int = 0
    spawn_role: str | None = None
    ttl_expires_at: str | None = None
    spawn_budget: SpawnBudget
    permission_policy: PermissionPolicy
    auto_stop_on_parent: bool = False
    notify_creator: bool = False
    #: the key a spawn was made with, so that a retried spawn returns the same child
    idempotency_key: str | None = None


class Interaction(_State):
    interaction_id: str
    kind: Literal["permission", "question", "plan"]
    provider_request_id: str
    #: the options the agent offered (``option_id``, ``name``, ``kind``), for permissions
    options: list[dict[str, str]] = Field(default_factory=list)
    turn_id: str | None = None
    title: str | None = None
    choices: list[str] | None = None
    status: Literal["pending"] = "pending"
    created_at: str


class TurnActivity(_State):
    turn_id: str
    started_at: str
    last_activity_at: str
    current_tool: str | None = None


class Supervision(_State):
    """How the session is watched: by the operator, or by its parent session."""

    mode: Literal["operator", "parent"]
    supervisor_session_id: str | None = None
    heartbeat_interval_seconds: int = 60
    idle_timeout_seconds: int = 1800
    iterations: int = 0
    turn: TurnActivity | None = None


class CommandInput(_State):
    hint: str


class AvailableCommand(_State):
    name: str
    description: str
    input: CommandInput | None = None


class Diagnostic(_State):
    code: str
    severity: Literal["info", "warning", "error"]
    message: str
    at: str


class PullRequest(_State):
    number: int
    url: str
    state: Literal["open", "draft", "merged", "closed"]
    title: str | None = None


class QueuedPrompt(_State):
    prompt_id: str
    turn: int
    preview: str
    queued_at: str


class Later(_State):
    set_at: str
    until: str | None = None
    note: str | None = None


class SessionState(_State):
    """Everything stored about one session."""

    id: str
    name: str | None = None
    agent_name: str
    profile_id: str
    workspace_id: str
    type: SessionType = "user"
    worktree_id: str | None = None
    branch: str | None = None
    state: SessionStateName = "active"
    runtime: RuntimeState = Field(default_factory=RuntimeState)
    transcript_epoch: int = 0
    transcript_turns: int = 0
    #: the first turn the agent's context holds (``compozy__session_clear`` moves it)
    context_from_turn: int = 1
    lineage: Lineage
    pending_interactions: list[Interaction] = Field(default_factory=list)
    supervision: Supervision
    available_commands: list[AvailableCommand] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    stop_reason: str | None = None
    stop_detail: str | None = None
    stop_cause: StopCause | None = None
    failure: Failure | None = None
    permission_mode_degraded: bool = False
    pull_request: PullRequest | None = None
    queue: list[QueuedPrompt] = Field(default_factory=list)
    later: Later | None = None
    #: what a spawn returned, so that a retry with the same idempotency key returns it again
    spawn_receipt: dict[str, Any] | None = None
    archived_at: str | None = None
    created_at: str
    updated_at: str
