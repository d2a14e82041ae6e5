"""Runtime binding: the driver interface and the provider catalog it resolves selections against.

No agent process runs inside compozy-mcp. Binding a runtime is a recorded state change: a
:class:`RuntimeDriver` turns a *selected* provider/model/effort into the *effective* one, with
the capabilities and commands of the agent that would run it. The default driver,
:class:`RecordedDriver`, resolves against :data:`PROVIDERS`; a driver that starts real
processes can replace it behind the same interface.

What binds a runtime, and when ``runtime.generation`` increments:

- ``compozy__session_runtime_set`` with a new provider (or on an unbound session) binds a new
  runtime process: ``generation`` + 1, transition ``initial_bind`` (first bind) or
  ``process_replacement``. Changing only model or reasoning effort on a bound runtime is a
  ``live_configuration``: ``generation`` is unchanged. Every selection change increments
  ``selection_revision``.
- ``compozy__session_continue`` binds a runtime (``generation`` + 1) when the session has a
  selection and no bound runtime, for example after a stop.
- ``compozy__session_rewind`` on a bound runtime replaces its process (``generation`` + 1).
- ``compozy__session_runtime_clear`` and ``compozy__session_stop`` unbind; ``generation`` keeps
  its value so that a later bind is still fenced against it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Protocol

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import ModelNotFound, ReasoningEffortUnsupported
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.model import (
    AcpCaps,
    AcpConfigOption,
    AvailableCommand,
    CommandInput,
    Selection,
)


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    name: str
    models: tuple[str, ...]
    default_model: str
    reasoning_efforts: tuple[str, ...]
    default_effort: str | None
    caps: AcpCaps
    commands: tuple[AvailableCommand, ...] = field(default_factory=tuple)


def _command(name: str, description: str, hint: str | None = None) -> AvailableCommand:
    return AvailableCommand(
        name=name, description=description, input=CommandInput(hint=hint) if hint else None
    )


_COMMON_COMMANDS = (
    _command("compact", "Summarize the conversation to free context", "optional focus"),
    _command("clear", "Start a new conversation in this session"),
    _command("review", "Review the current changes", "optional path or ref"),
    _command("init", "Write an agent guide for this repository"),
    _command("status", "Show the agent's status and configuration"),
)

PROVIDERS: dict[str, ProviderInfo] = {
    "claude": ProviderInfo(
        name="claude",
        models=("claude-opus-5-5", "claude-sonnet-5", "claude-haiku-5"),
        default_model="claude-opus-5-5",
        reasoning_efforts=("low", "medium", "high"),
        default_effort="medium",
        caps=AcpCaps(
            supports_load_session=True,
            prompt_image=True,
            prompt_audio=False,
            prompt_embedded_context=True,
            supported_modes=["default", "plan", "acceptEdits", "bypassPermissions"],
            config_options=[
                AcpConfigOption(
                    id="model",
                    name="Model",
                    values=["claude-opus-5-5", "claude-sonnet-5", "claude-haiku-5"],
                ),
            ],
        ),
        commands=(*_COMMON_COMMANDS, _command("agents", "Manage subagents")),
    ),
    "codex": ProviderInfo(
        name="codex",
        models=("gpt-5.5-codex", "gpt-5.5-codex-mini"),
        default_model="gpt-5.5-codex",
        reasoning_efforts=("minimal", "low", "medium", "high"),
        default_effort="medium",
        caps=AcpCaps(
            supports_load_session=True,
            prompt_image=True,
            prompt_audio=False,
            prompt_embedded_context=False,
            supported_modes=["read-only", "auto", "full-access"],
        ),
        commands=_COMMON_COMMANDS,
    ),
    "gemini": ProviderInfo(
        name="gemini",
        models=("gemini-3-pro", "gemini-3-flash"),
        default_model="gemini-3-pro",
        reasoning_efforts=(),
        default_effort=None,
        caps=AcpCaps(
            supports_load_session=False,
            prompt_image=True,
            prompt_audio=True,
            prompt_embedded_context=True,
        ),
        commands=_COMMON_COMMANDS[:3],
    ),
}


class SelectionRejected(Exception):
    """A selection names a provider, model or effort the catalog does not have."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        #: ``provider``, ``model`` or ``reasoning_effort``
        self.kind = kind


def check_selection(selection: Selection) -> ProviderInfo:
    """Resolve the provider of a selection; raise :class:`SelectionRejected` for unknown parts."""
    provider = PROVIDERS.get(selection.provider)
    if provider is None:
        known = ", ".join(sorted(PROVIDERS))
        raise SelectionRejected(
            "provider", f'provider "{selection.provider}" is not known (known: {known})'
        )
    if selection.model is not None and selection.model not in provider.models:
        raise SelectionRejected(
            "model",
            f'provider "{provider.name}" has no model "{selection.model}" '
            f"(models: {', '.join(provider.models)})",
        )
    effort = selection.reasoning_effort
    if effort is not None and effort not in provider.reasoning_efforts:
        supported = ", ".join(provider.reasoning_efforts) or "none"
        raise SelectionRejected(
            "reasoning_effort",
            f'provider "{provider.name}" does not support reasoning effort "{effort}" '
            f"(supported: {supported})",
        )
    return provider


_REJECTED_REASON = {"provider": Reason.PROVIDER_UNKNOWN, "model": Reason.MODEL_UNKNOWN}


def checked_selection(
    call: CallInfo, provider: str | None, model: str | None, reasoning_effort: str | None
) -> Selection | None:
    """The selection a call asks for (``None`` without a provider), checked against the catalog;
    an unknown provider or model is :class:`ModelNotFound`, an effort the provider does not
    have :class:`ReasoningEffortUnsupported`."""
    if provider is None:
        return None
    selection = Selection(provider=provider, model=model, reasoning_effort=reasoning_effort)
    try:
        check_selection(selection)
    except SelectionRejected as exc:
        if exc.kind == "reasoning_effort":
            raise ReasoningEffortUnsupported(call.tool_id, str(exc)) from None
        raise ModelNotFound(call.tool_id, str(exc), reason=_REJECTED_REASON[exc.kind]) from None
    return selection


@dataclass(frozen=True, slots=True)
class Binding:
    """The outcome of binding a runtime."""

    effective: Selection
    acp_session_id: str
    acp_caps: AcpCaps
    available_commands: tuple[AvailableCommand, ...]
    #: the runtime could not apply the session's permission mode as asked
    permission_mode_degraded: bool = False


class BindFailed(Exception):
    def __init__(self, kind: str, summary: str) -> None:
        super().__init__(summary)
        self.kind = kind
        self.summary = summary


class RuntimeDriver(Protocol):
    def bind(self, session_id: str, selection: Selection, *, restricted: bool) -> Binding:
        """Bind (or re-bind) a runtime for a session; raise :class:`BindFailed` when it cannot.

        ``restricted`` says the session's permission policy narrows tools, which a runtime
        without permission modes can only approximate.
        """
        ...


class RecordedDriver:
    """Binds by recording the resolved selection; no process is started."""

    def bind(self, session_id: str, selection: Selection, *, restricted: bool) -> Binding:
        try:
            provider = check_selection(selection)
        except SelectionRejected as exc:
            raise BindFailed("selection_rejected", str(exc)) from exc
        effective = Selection(
            provider=provider.name,
            model=selection.model or provider.default_model,
            reasoning_effort=selection.reasoning_effort or provider.default_effort,
        )
        return Binding(
            effective=effective,
            acp_session_id=f"acp-{secrets.token_hex(6)}",
            acp_caps=provider.caps,
            available_commands=provider.commands,
            permission_mode_degraded=restricted and not provider.caps.supported_modes,
        )
