"""A runtime driver for realistic records without agent processes: binds as a real agent
would report it (Claude Code lists about thirty slash commands, with ACP capabilities that
carry option catalogs), and fails on request so that records can carry runtime failures.

The benchmarks measure records and calls, not agents: building a world of hundreds of bound
sessions must not start hundreds of processes.
"""

from __future__ import annotations

import secrets

from compozy_mcp.agents.definitions import BUILTINS, AgentCatalog
from compozy_mcp.sessions.model import (
    AcpCaps,
    AcpConfigOption,
    AvailableCommand,
    CommandInput,
)
from compozy_mcp.sessions.runtime import (
    BindFailed,
    Binding,
    BindTicket,
    check_selection,
    effective_selection,
)

_COMMANDS: tuple[tuple[str, str, str | None], ...] = (
    ("add-dir", "Add a working directory the agent may read and edit", "directory path"),
    ("agents", "Manage subagent configurations", None),
    ("bug", "Report a problem with the agent, with the conversation attached", None),
    ("clear", "Clear the conversation history and free up context", None),
    ("compact", "Summarize the conversation to free context", "optional focus instructions"),
    ("config", "Open the settings of this agent", None),
    ("context", "Show how the context window is used", None),
    ("cost", "Show token usage and cost of this session", None),
    ("doctor", "Check the health of the agent installation", None),
    ("export", "Export the conversation to a file or the clipboard", "optional file name"),
    ("help", "Show the available commands and how to use them", None),
    ("hooks", "Manage hook configurations for tool events", None),
    ("ide", "Connect to an IDE and show its integration status", None),
    ("init", "Write an agent guide (AGENTS.md) for this repository", None),
    ("install-github-app", "Set up the GitHub app for pull request reviews", None),
    ("login", "Sign in to the model provider", None),
    ("logout", "Sign out from the model provider", None),
    ("mcp", "Manage MCP server connections and their tools", None),
    ("memory", "Edit the memory files the agent loads", None),
    ("model", "Set the model for this session", "model name"),
    ("permissions", "Show and edit tool permission rules", None),
    ("pr-comments", "Fetch the comments of a pull request", "optional pull request number"),
    ("release-notes", "Show what changed in this version of the agent", None),
    ("resume", "Resume an earlier conversation", "optional conversation id"),
    ("review", "Review the current changes or a pull request", "optional path, ref or PR"),
    ("rewind", "Rewind the conversation and the code to an earlier turn", "optional turn"),
    ("security-review", "Review the pending changes for security problems", None),
    ("status", "Show the agent's status, account and configuration", None),
    ("terminal-setup", "Install the key bindings for newlines in the terminal", None),
    ("todos", "List the current to-do items", None),
)

#: the thirty commands every runtime this driver binds advertises
COMMANDS: tuple[AvailableCommand, ...] = tuple(
    AvailableCommand(name=name, description=text, input=CommandInput(hint=hint) if hint else None)
    for name, text, hint in _COMMANDS
)

_MODES = {
    "claude": ["default", "plan", "acceptEdits", "bypassPermissions"],
    "codex": ["read-only", "auto", "full-access"],
    "gemini": [],
}


def _caps(provider: str) -> AcpCaps:
    info = BUILTINS[provider]
    options = [AcpConfigOption(id="model", name="Model", values=list(info.models))]
    if info.reasoning_efforts:
        options.append(
            AcpConfigOption(
                id="thought_level", name="Thinking", values=list(info.reasoning_efforts)
            )
        )
    if _MODES[provider]:
        options.append(AcpConfigOption(id="mode", name="Session mode", values=_MODES[provider]))
    return AcpCaps(
        supports_load_session=provider != "gemini",
        prompt_image=True,
        prompt_audio=provider == "gemini",
        prompt_embedded_context=provider != "codex",
        supported_modes=list(_MODES[provider]),
        config_options=options,
    )


class RealisticDriver:
    """Binds like a real agent bridge would report it; ``fail_next`` makes a bind fail."""

    def __init__(self) -> None:
        self._failing: dict[str, tuple[str, str]] = {}

    def fail_next(self, session_id: str, kind: str, summary: str) -> None:
        self._failing[session_id] = (kind, summary)

    def agents(self, workspace_path: str | None = None) -> AgentCatalog:
        return AgentCatalog(dict(BUILTINS), [])

    async def start(self, ticket: BindTicket) -> Binding:
        failure = self._failing.pop(ticket.session_id, None)
        if failure is not None:
            raise BindFailed(*failure)
        provider = check_selection(ticket.selection, self.agents())
        caps = _caps(provider.name)
        return Binding(
            effective=effective_selection(ticket.selection, provider),
            acp_session_id=f"acp-{secrets.token_hex(6)}",
            acp_caps=caps,
            available_commands=COMMANDS,
            new_process=not ticket.reuse_live,
            permission_mode_degraded=ticket.restricted and not caps.supported_modes,
        )

    async def bound(self, session_id: str) -> None:
        return None

    async def release(self, session_id: str, generation: int | None = None) -> None:
        return None

    async def reconcile(self) -> None:
        return None
