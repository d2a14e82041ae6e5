"""Runtime binding: the driver interface that runs agents, and the check of a selection
against the agent definitions (:mod:`compozy_mcp.agents.definitions`).

A session's runtime ``provider`` names an agent definition; binding starts that agent through
the Agent Client Protocol (the driver, :mod:`compozy_mcp.runtime`, does it). Binding has two
store transactions around the start, so that no write lock is held while an agent starts:
the first records the selection and ``runtime.status = "binding"`` and hands out a
:class:`BindTicket`; the second records the outcome, unless the selection changed meanwhile
(the ticket is superseded and its agent is closed).

What binds a runtime, and when ``runtime.generation`` increments:

- ``compozy__session_runtime_set`` with a new provider (or on an unbound session) starts a new
  agent process: ``generation`` + 1, transition ``initial_bind`` (first bind) or
  ``process_replacement``. Changing only model or reasoning effort on a live agent is a
  ``live_configuration`` (ACP ``set_config_option``): ``generation`` is unchanged. Every
  selection change increments ``selection_revision``.
- ``compozy__session_continue``, and a prompt to a session whose agent is not running in
  this process, bind a runtime (``generation`` + 1) when the session has a selection.
- ``compozy__session_rewind`` and ``compozy__session_clear`` on a bound runtime replace its
  process (``generation`` + 1): the new ACP session sees only the kept turns.
- ``compozy__session_runtime_clear`` and ``compozy__session_stop`` unbind and end the agent;
  ``generation`` keeps its value so that a later bind is still fenced against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from compozy_mcp.agents.definitions import AgentCatalog, AgentDefinition
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ModelNotFound, ReasoningEffortUnsupported
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.model import AcpCaps, AvailableCommand, Selection


class SelectionRejected(Exception):
    """A selection names a provider, model or effort the catalog does not have."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        #: ``provider``, ``model`` or ``reasoning_effort``
        self.kind = kind


def check_selection(selection: Selection, catalog: AgentCatalog) -> AgentDefinition:
    """Resolve the agent of a selection; raise :class:`SelectionRejected` for unknown parts."""
    provider = catalog.get(selection.provider)
    if provider is None:
        raise SelectionRejected(
            "provider",
            f'provider "{selection.provider}" is not known (known: {catalog.known()}; '
            "compozy__agent_list lists them)",
        )
    # an agent whose models are not known yet (it never started here) is asked when it starts
    model = selection.model
    if model is not None and provider.models and model not in provider.models:
        raise SelectionRejected(
            "model",
            f'provider "{provider.name}" has no model "{model}" '
            f"(models: {', '.join(provider.models)})",
        )
    effort = selection.reasoning_effort
    unknown = not provider.reasoning_efforts and provider.announced is False and not provider.models
    if effort is not None and not unknown and effort not in provider.reasoning_efforts:
        supported = ", ".join(provider.reasoning_efforts) or "none"
        raise SelectionRejected(
            "reasoning_effort",
            f'provider "{provider.name}" does not support reasoning effort "{effort}" '
            f"(supported: {supported})",
        )
    return provider


_REJECTED_REASON = {"provider": Reason.PROVIDER_UNKNOWN, "model": Reason.MODEL_UNKNOWN}


def checked_selection(
    call: CallInfo,
    catalog: AgentCatalog,
    provider: str | None,
    model: str | None,
    reasoning_effort: str | None,
) -> Selection | None:
    """The selection a call asks for (``None`` without a provider), checked against the catalog;
    an unknown provider or model is :class:`ModelNotFound`, an effort the provider does not
    have :class:`ReasoningEffortUnsupported`."""
    if provider is None:
        return None
    selection = Selection(provider=provider, model=model, reasoning_effort=reasoning_effort)
    try:
        check_selection(selection, catalog)
    except SelectionRejected as exc:
        if exc.kind == "reasoning_effort":
            raise ReasoningEffortUnsupported(call.tool_id, str(exc)) from None
        raise ModelNotFound(call.tool_id, str(exc), reason=_REJECTED_REASON[exc.kind]) from None
    return selection


def effective_selection(selection: Selection, agent: AgentDefinition) -> Selection:
    """The selection with the agent's defaults filled in."""
    return Selection(
        provider=agent.name,
        model=selection.model or agent.default_model,
        reasoning_effort=selection.reasoning_effort or agent.default_effort,
    )


@dataclass(frozen=True, slots=True)
class BindTicket:
    """What the first transaction of a bind hands to the driver."""

    session_id: str
    selection: Selection
    #: the revision this bind is for; a later selection supersedes it
    selection_revision: int
    #: the generation when the bind began (a new process makes it + 1)
    generation: int
    #: where the agent runs (the session's workspace)
    cwd: str
    #: the session's policy narrows tools (an agent without modes can only approximate it)
    restricted: bool
    #: an ACP session to load or resume (same agent, transcript unchanged), if any
    previous_acp_session_id: str | None = None
    #: keep the live process when there is one (a change of model or effort only)
    reuse_live: bool = False
    #: turns the agent's new context starts from (the kept turns: after rewind or clear)
    context: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Binding:
    """The outcome of binding a runtime."""

    effective: Selection
    acp_session_id: str
    acp_caps: AcpCaps
    available_commands: tuple[AvailableCommand, ...]
    #: a new agent process was started (``generation`` + 1)
    new_process: bool = True
    #: the runtime could not apply the session's permission mode as asked
    permission_mode_degraded: bool = False


class BindFailed(Exception):
    def __init__(self, kind: str, summary: str) -> None:
        super().__init__(summary)
        self.kind = kind
        self.summary = summary


class RuntimeDriver(Protocol):
    """Runs the agents of sessions (implemented above this layer, in ``runtime``)."""

    def agents(self, workspace_path: str | None = None) -> AgentCatalog:
        """The agent definitions in effect (for a workspace, with its own file)."""
        ...

    async def start(self, ticket: BindTicket) -> Binding:
        """Start (or reconfigure) the agent of a ticket; raise :class:`BindFailed`."""
        ...

    async def bound(self, session_id: str) -> None:
        """The store recorded the bind :meth:`start` made: the agent may take turns."""
        ...

    async def release(self, session_id: str, generation: int | None = None) -> None:
        """End a session's agent (only the one of ``generation``, when given)."""
        ...

    async def reconcile(self) -> None:
        """End the agents of sessions that no longer hold them (stopped, unbound, deleted)."""
        ...
