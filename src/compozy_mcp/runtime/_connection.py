"""The ACP client side of one agent: the handshake (``initialize``, then ``load_session`` or
``new_session``), model and effort through ``set_config_option``, and the callbacks the agent
makes (updates and permission requests), handed to a :class:`Listener`.

Imports the ACP SDK; the supervisor imports this module only when it starts an agent, so that
commands that run none never pay for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from compozy_mcp import __version__, acp_sdk
from compozy_mcp.credentials import SESSION_TOKEN, session_credential
from compozy_mcp.errors import LimitExceeded
from compozy_mcp.runtime._framing import LineChannel
from compozy_mcp.sessions.model import (
    AcpCaps,
    AcpConfigOption,
    AvailableCommand,
    CommandInput,
    Selection,
)
from compozy_mcp.sessions.runtime import BindFailed, BindTicket

with acp_sdk.importing():
    from acp import PROTOCOL_VERSION, RequestError, text_block
    from acp.client.connection import ClientSideConnection
    from acp.schema import (
        AllowedOutcome,
        ClientCapabilities,
        DeniedOutcome,
        EnvVariable,
        Implementation,
        McpServerStdio,
        RequestPermissionResponse,
    )

#: the config option categories a selection sets (ACP ``SessionConfigOption.category``)
MODEL_CATEGORY = "model"
EFFORT_CATEGORY = "thought_level"
#: after a load, how long the agent must say nothing before its replay counts as ended, and
#: the longest wait for that (a replay goes on no longer: what comes after is the next turn's)
REPLAY_QUIET_SECONDS = 0.2
REPLAY_BOUND_SECONDS = 2.0


class Listener(Protocol):
    """Who hears what the agent says outside a request of ours."""

    async def on_update(self, update: Any) -> None: ...

    async def on_permission(self, options: list[dict[str, str]], tool_call: Any) -> str | None:
        """The option id the operator chose, or ``None`` (cancelled)."""
        ...


class _Client:
    """The ``acp.interfaces.Client`` compozy is: updates and permissions, nothing else (no
    file system or terminal capability is announced)."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        #: when the agent last sent a session update (``time.monotonic``)
        self.last_update = 0.0

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.last_update = time.monotonic()
        await self._listener.on_update(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        offered = [{"option_id": o.option_id, "name": o.name, "kind": o.kind} for o in options]
        chosen = await self._listener.on_permission(offered, tool_call)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    def __getattr__(self, name: str) -> Any:
        # read_text_file, terminals, elicitation...: not announced, so not offered
        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise RequestError.method_not_found(name)

        return refuse


def session_mcp_server(session_id: str, home: str, discovery: str = "full") -> McpServerStdio:
    """compozy's own MCP endpoint for a session, as the agent starts it: ``compozy proxy
    --session ID`` on the same home (it relays the daemon when one listens there), so the
    agent sees the tools its session's policy allows, with its approvals. It reaches a daemon
    that wants a token with the session's own credential (``COMPOZY_SESSION_TOKEN``), never
    the daemon's token."""
    args = ["-m", "compozy_mcp", "proxy", "--session", session_id]
    if discovery != "full":
        args += ["--discovery", discovery]
    return McpServerStdio(
        name="compozy",
        command=sys.executable,
        args=args,
        env=[
            EnvVariable(name="COMPOZY_HOME", value=home),
            EnvVariable(name=SESSION_TOKEN, value=session_credential(session_id)),
        ],
    )


def commands_of(update: Any) -> tuple[AvailableCommand, ...]:
    found = []
    for command in update.available_commands:
        given = getattr(command.input, "root", command.input)  # a RootModel of the variants
        hint = getattr(given, "hint", None)
        found.append(
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=CommandInput(hint=hint) if hint else None,
            )
        )
    return tuple(found)


def replay_wait(
    loaded_at: float, last_update: float, now: float, quiet: float, bound: float
) -> float:
    """Seconds left before the replay of a loaded conversation counts as ended: once the agent
    has said nothing for ``quiet`` seconds since it answered ``load_session`` (``loaded_at``; 0
    if it did not load), at most ``bound`` seconds after. ACP has an agent replay the
    conversation before it answers; Gemini CLI (0.61) answers first and replays after, so
    without this wait the replay would land in the first turn after the load."""
    if not loaded_at:
        return 0.0
    quiet_until = max(loaded_at, last_update) + quiet
    return max(0.0, min(quiet_until, loaded_at + bound) - now)


@dataclass(slots=True)
class Handshake:
    acp_session_id: str
    caps: AcpCaps
    effective: Selection
    loaded: bool
    #: config option id by category, and the values each offers
    options: dict[str, tuple[str, tuple[str, ...]]]
    session_close: bool


def _caps(init: Any, session: Any) -> AcpCaps:
    agent = init.agent_capabilities
    prompt = agent.prompt_capabilities if agent is not None else None
    modes = getattr(session, "modes", None)
    options = getattr(session, "config_options", None) or []
    return AcpCaps(
        supports_load_session=bool(agent and agent.load_session),
        prompt_image=bool(prompt and prompt.image),
        prompt_audio=bool(prompt and prompt.audio),
        prompt_embedded_context=bool(prompt and prompt.embedded_context),
        supported_modes=[m.id for m in modes.available_modes] if modes else [],
        config_options=[
            AcpConfigOption(
                id=o.id,
                name=o.name,
                values=[getattr(v, "value", "") for v in getattr(o, "options", [])],
            )
            for o in options
            if getattr(o, "type", "select") == "select"
        ],
    )


class AgentConnection:
    """The ACP connection to one running agent."""

    def __init__(
        self,
        listener: Listener,
        transport: Any,
        max_frame_bytes: int,
        on_overflow: Callable[[LimitExceeded], None] | None = None,
    ) -> None:
        self._client = _Client(listener)
        client: Any = self._client  # the acp Client Protocol, less what is not announced
        # a bound on each line the agent writes (the SDK's own reader has none)
        self.channel = LineChannel(transport.reader, transport.writer, max_frame_bytes, on_overflow)
        self.conn = ClientSideConnection(client, self.channel)
        self.acp_session_id = ""
        self.options: dict[str, tuple[str, tuple[str, ...]]] = {}
        #: the value each offered category is set to, as the agent last said
        self.current: dict[str, str] = {}
        self.session_close = False
        #: when the agent answered ``load_session`` (``time.monotonic``); 0 if it did not
        self.loaded_at = 0.0

    async def handshake(
        self, ticket: BindTicket, effective: Selection, mcp_servers: list[Any]
    ) -> Handshake:
        init = await self.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="compozy-mcp", version=__version__),
        )
        agent = init.agent_capabilities
        session: Any = None
        loaded = False
        previous = ticket.previous_acp_session_id
        if previous and agent is not None and agent.load_session:
            try:
                session = await self.conn.load_session(
                    cwd=ticket.cwd, session_id=previous, mcp_servers=mcp_servers
                )
                self.acp_session_id, loaded = previous, True
                self.loaded_at = time.monotonic()
            except RequestError:
                session = None  # the agent no longer has it: start afresh
        if not loaded:
            created = await self.conn.new_session(cwd=ticket.cwd, mcp_servers=mcp_servers)
            self.acp_session_id, session = created.session_id, created
        caps = agent.session_capabilities if agent is not None else None
        self.session_close = bool(caps is not None and caps.close is not None)
        self.options, self.current = {}, {}
        self._absorb(getattr(session, "config_options", None))
        applied = await self.configure(effective)
        return Handshake(
            acp_session_id=self.acp_session_id,
            caps=_caps(init, session),
            effective=applied,
            loaded=loaded,
            options=self.options,
            session_close=self.session_close,
        )

    async def replay_ended(self) -> None:
        """Returns once the conversation the agent replays after a load has ended (at once if
        it did not load); see :func:`replay_wait`."""
        quiet, bound = REPLAY_QUIET_SECONDS, REPLAY_BOUND_SECONDS  # read now: a test sets them
        while left := replay_wait(
            self.loaded_at, self._client.last_update, time.monotonic(), quiet, bound
        ):
            await asyncio.sleep(left)

    async def configure(self, selection: Selection) -> Selection:
        """Set model and effort where the agent offers them as config options; a value the
        agent does not offer is a bind failure naming what it offers. Returns what the agent
        confirmed (a category it offers no option for is left out: never reported as
        applied)."""
        for category, value in (
            (MODEL_CATEGORY, selection.model),
            (EFFORT_CATEGORY, selection.reasoning_effort),
        ):
            if value is None or category not in self.options:
                continue
            option_id, values = self.options[category]
            if values and value not in values:
                raise BindFailed(
                    "selection_rejected",
                    f'the agent offers no {category.replace("_", " ")} "{value}" '
                    f"(it offers: {', '.join(values)})",
                )
            answer = await self.conn.set_config_option(
                config_id=option_id, session_id=self.acp_session_id, value=value
            )
            self.current[category] = value
            self._absorb(getattr(answer, "config_options", None))
        return Selection(
            provider=selection.provider,
            model=self.current.get(MODEL_CATEGORY),
            reasoning_effort=self.current.get(EFFORT_CATEGORY),
        )

    def _absorb(self, options: Any) -> None:
        """The config options the agent reported: what each category offers and is set to."""
        for option in options or []:
            category = getattr(option, "category", None)
            if category not in (MODEL_CATEGORY, EFFORT_CATEGORY):
                continue
            values = tuple(getattr(v, "value", "") for v in getattr(option, "options", []))
            self.options[str(category)] = (option.id, values)
            current = getattr(option, "current_value", None)
            if isinstance(current, str) and current:
                self.current[str(category)] = current

    async def prompt(self, blocks: list[str]) -> Any:
        return await self.conn.prompt(
            session_id=self.acp_session_id, prompt=[text_block(text) for text in blocks]
        )

    async def cancel(self) -> None:
        await self.conn.cancel(session_id=self.acp_session_id)

    async def close(self) -> None:
        if self.session_close and self.acp_session_id:
            # the agent may already be gone; its process ends anyway
            with contextlib.suppress(Exception):
                await self.conn.close_session(session_id=self.acp_session_id)
        await self.conn.close()
