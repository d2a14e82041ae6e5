"""Agent processes: started in a process group of their own, with the tail of their stderr
kept, and ended with the whole group (an agent's own children, such as ``npx``'s node, go too).

Not ``acp.spawn_stdio_transport``: it trims the environment an agent needs (``PATH`` with the
user's tools, credentials) and leaves no group to end, so a killed adapter would orphan its
agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from compozy_mcp.agents.definitions import AgentDefinition
from compozy_mcp.childenv import child_environment

#: bytes of stderr a failure report quotes
STDERR_TAIL_BYTES = 2048
#: a line of stdout may be this long (a large tool result): the JSON-RPC frame limit
STREAM_LIMIT = 16 * 1024 * 1024


class AgentTransport(Protocol):
    """A running agent as the ACP connection sees it."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    @property
    def pid(self) -> int | None: ...

    def exited(self) -> int | None:
        """The exit status once the agent ended, else ``None``."""
        ...

    async def wait(self) -> int: ...

    def stderr_tail(self) -> str: ...

    async def terminate(self, grace_seconds: float) -> None:
        """End the agent (and everything it started); idempotent."""
        ...


class Launcher(Protocol):
    async def launch(
        self, agent: AgentDefinition, cwd: str, env: Mapping[str, str]
    ) -> AgentTransport:
        """Start an agent; ``OSError`` when its command cannot be started."""
        ...


@dataclass(eq=False)
class ProcessTransport:
    process: asyncio.subprocess.Process
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    _tail: deque[bytes] = field(default_factory=lambda: deque(maxlen=64))
    _drain: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def exited(self) -> int | None:
        return self.process.returncode

    async def wait(self) -> int:
        return await self.process.wait()

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while chunk := await stream.read(4096):
            self._tail.append(chunk)
            while sum(len(part) for part in self._tail) > 4 * STDERR_TAIL_BYTES:
                self._tail.popleft()

    def stderr_tail(self) -> str:
        data = b"".join(self._tail)[-STDERR_TAIL_BYTES:]
        return data.decode("utf-8", "replace").strip()

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    async def terminate(self, grace_seconds: float) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), timeout=grace_seconds)
        # whatever the agent started may still run after the agent itself ended
        self._signal_group(signal.SIGKILL)
        if self.process.returncode is None:
            await self.process.wait()
        if self._drain is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._drain, timeout=1.0)


class SubprocessLauncher:
    """Starts agents as child processes of this one, each in a new session and group."""

    async def launch(
        self, agent: AgentDefinition, cwd: str, env: Mapping[str, str]
    ) -> ProcessTransport:
        process = await asyncio.create_subprocess_exec(
            agent.command,
            *agent.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd if os.path.isdir(cwd) else None,
            # never the daemon's token: its own proxy gets a session credential instead
            env=child_environment({**os.environ, **agent.env, **env}),
            start_new_session=True,
            limit=STREAM_LIMIT,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        transport = ProcessTransport(process, process.stdout, process.stdin)
        transport._drain = asyncio.create_task(transport._read_stderr())
        return transport
