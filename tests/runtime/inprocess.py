"""Agents run inside the test's own process, over a socket pair: the unit tier drives the real
runtime (ACP connection, turns, permissions, crashes) without starting a process.

Every definition runs the shipped ``echo`` agent offering that definition's models and efforts,
except ``silent`` (an agent that never answers ``initialize``), ``late-replay`` (one that replays
a loaded session after answering, as Gemini CLI does) and the command ``/nonexistent/agent``
(one that cannot start).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Mapping
from typing import Any

from compozy_mcp import acp_sdk
from compozy_mcp.agents.definitions import AgentDefinition
from compozy_mcp.background import TaskOwner
from compozy_mcp.echo_agent import EchoAgent

# as the product imports it: without the docstring read (compozy_mcp.acp_sdk)
with acp_sdk.importing():
    from acp import run_agent, update_agent_message_text, update_user_message_text

#: how long after its answer to ``load_session`` the late-replaying agent starts its replay
REPLAY_AFTER_SECONDS = 0.05


class SilentAgent(EchoAgent):
    async def initialize(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.Event().wait()


class LateReplayAgent(EchoAgent):
    """Loads a session as Gemini CLI 0.61 does: it answers ``load_session`` first and replays
    the conversation after (its ``streamHistory`` is not awaited), and a prompt it takes
    meanwhile waits for the replay to end (as Gemini's waits for its MCP servers). The
    conversations outlive the agent in ``said`` (kept by the launcher, as Gemini keeps them on
    disk)."""

    def __init__(self, said: dict[str, list[str]], *args: Any) -> None:
        super().__init__(*args)
        self._said = said
        self._replays: list[asyncio.Task[None]] = []

    async def load_session(self, cwd: str, session_id: str, *args: Any, **kwargs: Any) -> Any:
        loaded = await super().load_session(cwd, session_id, *args, **kwargs)
        self._replays.append(asyncio.create_task(self._replay(session_id)))
        return loaded

    async def _replay(self, session_id: str) -> None:
        await asyncio.sleep(REPLAY_AFTER_SECONDS)
        for asked in list(self._said.get(session_id, [])):
            await self.client.session_update(session_id, update_user_message_text(asked))
            await self.client.session_update(
                session_id, update_agent_message_text(f"echo: {asked}")
            )

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        await asyncio.gather(*self._replays)
        answer = await super().prompt(session_id, prompt, **kwargs)
        self._said.setdefault(session_id, []).append(prompt[-1].text)
        return answer


class InProcessTransport:
    def __init__(self, agent: object, stderr: str = "") -> None:
        self._agent = agent
        self._stderr = stderr
        self._status: int | None = None
        self._done = asyncio.Event()
        self.terminated = False

    async def open(self) -> None:
        ours, theirs = socket.socketpair()
        self.reader, self.writer = await asyncio.open_connection(sock=ours)
        agent_reader, agent_writer = await asyncio.open_connection(sock=theirs)
        self._agent_writer = agent_writer
        self._task = asyncio.create_task(self._serve(agent_reader, agent_writer))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            served: Any = self._agent  # an acp.Agent by structure
            await run_agent(served, writer, reader)
        except (asyncio.CancelledError, Exception):
            pass
        finally:
            self._end(-15 if self._status is None else self._status)

    def _end(self, status: int) -> None:
        if self._status is None or not self._done.is_set():
            self._status = status
            with contextlib.suppress(Exception):
                self._agent_writer.close()
            self._done.set()

    def crash(self) -> None:
        """Die as a process would: the connection drops, the exit status is 3."""
        self._stderr = "echo: crashed on request"
        self._end(3)
        self._task.cancel()

    @property
    def pid(self) -> int | None:
        return None

    def exited(self) -> int | None:
        return self._status

    async def wait(self) -> int:
        await self._done.wait()
        assert self._status is not None
        return self._status

    def stderr_tail(self) -> str:
        return self._stderr

    async def terminate(self, grace_seconds: float) -> None:
        self.terminated = True
        with contextlib.suppress(Exception):
            self.writer.close()
        if not self._task.done():
            self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task


class InProcessLauncher:
    """What the unit tier launches agents with; ``launched`` keeps every transport."""

    def __init__(self) -> None:
        self.launched: list[InProcessTransport] = []
        #: what the late-replaying agents were asked, by ACP session
        self.said: dict[str, list[str]] = {}

    async def launch(
        self, agent: AgentDefinition, cwd: str, env: Mapping[str, str], tasks: TaskOwner
    ) -> InProcessTransport:
        if agent.command == "/nonexistent/agent":
            raise FileNotFoundError(2, "No such file or directory")
        transport: InProcessTransport
        if agent.name == "silent":
            transport = InProcessTransport(SilentAgent(), stderr="silent: waiting forever")
        elif agent.name == "late-replay":
            models = (agent.models, agent.reasoning_efforts)
            transport = InProcessTransport(LateReplayAgent(self.said, *models))
        else:
            # the transport is made after the agent it carries, so crash looks it up late
            crash = lambda: transport.crash()  # noqa: E731, PLW0108
            transport = InProcessTransport(EchoAgent(agent.models, agent.reasoning_efforts, crash))
        await transport.open()
        self.launched.append(transport)
        return transport

    def running(self) -> list[InProcessTransport]:
        return [t for t in self.launched if t.exited() is None]
