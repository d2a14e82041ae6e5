"""What the runtime knows of one running agent: its process, its ACP connection, the turn it
runs and the permission questions it waits on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from compozy_mcp.agents.definitions import AgentDefinition
from compozy_mcp.background import Job
from compozy_mcp.errors import LimitExceeded
from compozy_mcp.runtime._turn import TurnRecorder
from compozy_mcp.sessions.model import AcpCaps, AvailableCommand, Interaction

if TYPE_CHECKING:
    from compozy_mcp.runtime._connection import AgentConnection
    from compozy_mcp.runtime.process import AgentTransport

#: the name prefix of the runtime's background jobs (starts for prompts that did not wait, the
#: stop of an agent past the frame limit): ended at shutdown, awaited by ``settled``
BACKGROUND = "runtime-background-"


@dataclass(eq=False)
class Pending:
    """A permission request of the agent waiting for its answer."""

    interaction: Interaction
    answer: asyncio.Future[str | None]


@dataclass(eq=False)
class LiveAgent:
    """One running agent and the session it serves."""

    session_id: str
    generation: int
    agent: AgentDefinition
    transport: AgentTransport
    connection: AgentConnection
    #: earlier turns a fresh ACP session must be told about with its first prompt
    context: tuple[str, ...]
    caps: AcpCaps
    commands: tuple[AvailableCommand, ...] = ()
    #: set when it wrote a line past the frame limit
    failure: LimitExceeded | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    current: TurnRecorder | None = None
    pending: dict[str, Pending] = field(default_factory=dict)
    #: its turn runner and the watch on its exit
    tasks: list[Job] = field(default_factory=list)
    closing: bool = False
    bound: bool = False

    def drop_questions(self) -> None:
        """Its pending permission requests are answered with nothing (cancelled)."""
        for pending in self.pending.values():
            if not pending.answer.done():
                pending.answer.set_result(None)


class StartAbandoned(Exception):  # a signal between runtime parts, never shown to a user
    """A start given up because this process is stopping: nothing is recorded, the session
    stays as it was for the next process (its queued turns stay queued)."""


class AgentEnds(Protocol):
    """What ends an agent that can serve no more turns (:class:`._processes.AgentProcesses`)."""

    async def crashed(self, live: LiveAgent, status: int) -> None: ...

    async def agent_failed(
        self, live: LiveAgent, kind: str, summary: str, *, turn_detail: str | None = None
    ) -> None: ...
