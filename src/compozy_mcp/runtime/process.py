"""Agent processes: started in a process group of their own, with the tail of their stderr
kept, and ended with the whole group (an agent's own children, such as ``npx``'s node, go too).

Not ``acp.spawn_stdio_transport``: it trims the environment an agent needs (``PATH`` with the
user's tools, credentials) and leaves no group to end, so a killed adapter would orphan its
agent.

The pipes are this process's own, not ``asyncio.subprocess``'s: a child that outlives the
agent while holding its stdout or stderr (a detached helper, an agent that ignores SIGTERM)
would otherwise keep ``Process.wait()`` from returning after the agent exited, and whatever
waited for it (a bind holding its session's lock) with it. Ending an agent closes the pipes
here whatever holds their other ends.

Each group started is noted in ``$COMPOZY_HOME/run/agents`` until it ended
(:mod:`compozy_mcp.runtime._orphans`), so that a process killed before it could end its agents
leaves nothing the next one does not end.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import signal
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from compozy_mcp.agents.definitions import AgentDefinition
from compozy_mcp.background import Job, TaskOwner
from compozy_mcp.childenv import child_environment
from compozy_mcp.runtime import _orphans as orphans

#: the logger of agents' stderr lines
agent_log = logging.getLogger("compozy_mcp.agent")
#: the longest stderr line logged whole
STDERR_LINE_BYTES = 4096
#: bytes of stderr a failure report quotes
STDERR_TAIL_BYTES = 2048
#: what the stdout reader buffers at most beyond one frame (the frame limit is the channel's:
#: :mod:`compozy_mcp.runtime._framing`)
READ_BUFFER_BYTES = 64 * 1024
#: how long a killed agent may take to be reaped (SIGKILL cannot be ignored; this bounds a
#: process stuck in the kernel)
REAP_SECONDS = 5.0


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
        """End the agent (and everything it started); idempotent, and bounded in time
        whatever the agent does."""
        ...


class Launcher(Protocol):
    async def launch(
        self, agent: AgentDefinition, cwd: str, env: Mapping[str, str], tasks: TaskOwner
    ) -> AgentTransport:
        """Start an agent (its environment: this process's, its definition's, then ``env``);
        ``OSError`` when it cannot be started (not installed, refusing root, ...). What reads
        its output beside the caller runs in ``tasks``."""
        ...


@dataclass(eq=False)
class ProcessTransport:
    process: asyncio.subprocess.Process
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    _pipes: list[asyncio.BaseTransport] = field(default_factory=list)
    _tail: deque[bytes] = field(default_factory=lambda: deque(maxlen=64))
    _drain: Job | None = None
    _note: Path | None = None
    #: the session whose agent this is: its stderr lines are logged as that session's
    session_id: str | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def exited(self) -> int | None:
        return self.process.returncode

    async def wait(self) -> int:
        return await self.process.wait()

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        partial = b""
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await stream.read(4096):
                self._tail.append(chunk)
                while sum(len(part) for part in self._tail) > 4 * STDERR_TAIL_BYTES:
                    self._tail.popleft()
                if self.session_id is not None:
                    *lines, partial = (partial + chunk).split(b"\n")
                    partial = partial[-STDERR_LINE_BYTES:]
                    for line in lines:
                        self._log_line(line)
        if partial and self.session_id is not None:
            self._log_line(partial)

    def _log_line(self, line: bytes) -> None:
        """One stderr line of the agent, as a session's log line (MCP clients that follow the
        log receive it: compozy_mcp.logfeed)."""
        text = line[:STDERR_LINE_BYTES].decode("utf-8", "replace").rstrip()
        if text:
            agent_log.info("%s", text, extra={"session_id": self.session_id})

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
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), timeout=REAP_SECONDS)
        # a detached child may still hold the other ends: stop reading them here
        await asyncio.sleep(0)  # the last stderr bytes already in the pipe's buffer
        for pipe in self._pipes:
            pipe.close()
        if self._drain is not None and not await self._drain.wait(1.0):
            self._drain.cancel()
        if self._note is not None and self.process.returncode is not None:
            orphans.forget(self._note)
            self._note = None


async def _read_pipe(fd: int, limit: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    pipe, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(fd, "rb", 0)
    )
    return reader, pipe


async def _write_pipe(fd: int) -> tuple[asyncio.StreamWriter, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
    pipe, _ = await loop.connect_write_pipe(lambda: protocol, os.fdopen(fd, "wb", 0))
    return asyncio.StreamWriter(pipe, protocol, None, loop), pipe


class AgentNotInstalled(OSError):
    """An agent's command is nowhere to be found: not on PATH, not installed for compozy, and
    no ``npx`` to fetch its package."""


class AgentRefusesRoot(OSError):
    """The agent will not start as root without some environment (it says so only in a way
    its adapter hides)."""


def check_root(agent: AgentDefinition, environment: Mapping[str, str]) -> None:
    if not agent.root_needs or os.geteuid() != 0:
        return
    missing = {k: v for k, v in agent.root_needs.items() if environment.get(k) != v}
    if missing:
        needed = " ".join(f"{k}={v}" for k, v in missing.items())
        as_yaml = ", ".join(f'{k}: "{v}"' for k, v in missing.items())
        raise AgentRefusesRoot(
            errno.EPERM,
            f"compozy runs as root, and {agent.root_reason or 'the agent refuses root'} unless "
            f"{needed} is set: on a sandboxed machine set it (export {needed}, or agents.yaml: "
            f"{agent.name}: {{env: {{{as_yaml}}}}}), else run compozy as another user",
        )


def agent_argv(
    agent: AgentDefinition, environment: Mapping[str, str], installed: Path | None
) -> list[str]:
    """The command line that starts ``agent``: its command found on PATH (or as given, with a
    path), else in ``installed`` (``$COMPOZY_HOME/agents``, where ``compozy agent install``
    puts packages), else its package through ``npx`` (which asks the registry each time)."""
    command = agent.command
    if os.sep in command:
        return [command, *agent.args]
    found = shutil.which(command, path=environment.get("PATH"))
    if found is not None:
        return [found, *agent.args]
    if installed is not None:
        local = installed / "node_modules" / ".bin" / command
        if local.exists():
            return [str(local), *agent.args]
    npx = shutil.which("npx", path=environment.get("PATH"))
    if agent.package is not None and npx is not None:
        return [npx, "--yes", agent.package, *agent.args]
    fix = (
        f"install it: compozy agent install {agent.name} (npm install -g {agent.package})"
        if agent.package is not None
        else "put it on PATH, or give its full path in agents.yaml"
    )
    raise AgentNotInstalled(
        errno.ENOENT,
        f'"{command}" is not on PATH{"" if installed is None else " nor installed"}; {fix}',
    )


class SubprocessLauncher:
    """Starts agents as child processes of this one, each in a new session and group, noted
    under ``run_dir`` while they run; ``installed`` is where ``compozy agent install`` puts
    agent packages."""

    def __init__(self, run_dir: Path | None = None, installed: Path | None = None) -> None:
        self._run_dir = run_dir
        self.installed = installed

    async def launch(
        self, agent: AgentDefinition, cwd: str, env: Mapping[str, str], tasks: TaskOwner
    ) -> ProcessTransport:
        # never the daemon's token: its own proxy gets a session credential instead
        environment = child_environment({**os.environ, **agent.env, **env})
        check_root(agent, environment)
        command = agent_argv(agent, environment, self.installed)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        ours = [stdin_w, stdout_r, stderr_r]
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=stderr_w,
                cwd=cwd if os.path.isdir(cwd) else None,
                env=environment,
                start_new_session=True,
            )
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        note = orphans.note(self._run_dir, process.pid) if self._run_dir else None
        reader, out_pipe = await _read_pipe(stdout_r, READ_BUFFER_BYTES)
        errors, err_pipe = await _read_pipe(stderr_r, READ_BUFFER_BYTES)
        writer, in_pipe = await _write_pipe(stdin_w)
        transport = ProcessTransport(
            process, reader, writer, _pipes=[in_pipe, out_pipe, err_pipe], _note=note
        )
        transport._drain = tasks.start(
            lambda: transport._read_stderr(errors), f"agent-stderr-{process.pid}"
        )
        return transport
