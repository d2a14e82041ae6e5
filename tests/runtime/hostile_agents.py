"""Agents that misbehave the ways real ones have, run as processes by the runtime's tests:
``python -m tests.runtime.hostile_agents MODE [PIDFILE]``.

- ``no-newline``: writes stdout without ever a newline, as fast as it can (it never answers);
- ``garbage-lines``: writes lines that are not JSON, as fast as it can (it never answers);
- ``ignore-term``: ignores SIGTERM, starts a detached child (a session of its own) that holds
  its stdout and stderr, and never answers ``initialize``; the child's pid goes to PIDFILE;
- ``background-child``: the echo agent, after starting a child in its own process group that
  runs in the background (its pid goes to PIDFILE);
- ``stream-crash``: the echo agent, except that "stream-crash" streams six chunks, then exits
  with status 3;
- ``auth-error``: the echo agent, except that every prompt fails with ACP's "Authentication
  required";
- ``flood-mid-turn``: the echo agent, except that "flood" writes stdout without a newline
  until it is stopped;
- ``needs-child``: the echo agent with a helper child it needs (its pid goes to PIDFILE): once
  the helper is gone, every prompt fails at once (as an adapter whose Claude Code died does).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from compozy_mcp import acp_sdk
from compozy_mcp.echo_agent import EchoAgent

with acp_sdk.importing():
    from acp import RequestError, run_agent

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]
STREAMED = 6


def _note(path: str | None, pid: int) -> None:
    if path:
        Path(path).write_text(str(pid))


def _flood(data: bytes) -> None:
    out = sys.stdout.buffer
    while True:
        out.write(data)
        out.flush()


def _ignore_term(pidfile: str | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(SLEEPER, start_new_session=True)  # inherits stdout and stderr
    _note(pidfile, child.pid)
    while True:
        time.sleep(60)


class StreamCrash(EchoAgent):
    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> Any:
        text = "".join(getattr(block, "text", "") for block in prompt)
        if "stream-crash" not in text:
            return await super().prompt(session_id, prompt, **kw)
        for number in range(1, STREAMED + 1):
            await self._say(session_id, f"part {number} ")
        await asyncio.sleep(0.3)  # the parts reach compozy before the end
        os._exit(3)


class FloodMidTurn(EchoAgent):
    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> Any:
        text = "".join(getattr(block, "text", "") for block in prompt)
        if "flood" in text:
            chunk = b"y" * 65536
            os.set_blocking(1, True)  # asyncio made it non-blocking
            while True:  # blocking: nothing else of this agent runs any more
                os.write(1, chunk)
        return await super().prompt(session_id, prompt, **kw)


class AuthError(EchoAgent):
    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> Any:
        raise RequestError.auth_required()


class NeedsChild(EchoAgent):
    def __init__(self, helper: subprocess.Popen[bytes]) -> None:
        super().__init__()
        self._helper = helper

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> Any:
        if self._helper.poll() is not None:
            raise RequestError.internal_error({"details": "Query closed before response received"})
        return await super().prompt(session_id, prompt, **kw)


def main() -> None:
    mode = sys.argv[1]
    pidfile = sys.argv[2] if len(sys.argv) > 2 else None
    agent: Any
    if mode == "no-newline":
        _flood(b"x" * 65536)
    elif mode == "garbage-lines":
        _flood(b"this is not json\n" * 4096)
    elif mode == "ignore-term":
        _ignore_term(pidfile)
    elif mode == "background-child":
        child = subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        _note(pidfile, child.pid)
        agent = EchoAgent()
    elif mode == "stream-crash":
        agent = StreamCrash()
    elif mode == "flood-mid-turn":
        agent = FloodMidTurn()
    elif mode == "auth-error":
        agent = AuthError()
    elif mode == "needs-child":
        helper = subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        _note(pidfile, helper.pid)
        agent = NeedsChild(helper)
    else:
        raise SystemExit(f"unknown mode {mode}")
    asyncio.run(run_agent(agent))


if __name__ == "__main__":
    main()
