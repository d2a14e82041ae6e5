"""Agent processes a test run leaves behind (issue 12: "after the test suite ... no agent
process is left running"): the agents (echo, the fake model servers, and the real agents'
adapters and what they run) started since the run began that still run.

Only this checkout's count (their command is this virtualenv's interpreter, or a program
installed in this checkout): another checkout's test run on the same machine is not this
run's doing."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

#: what this virtualenv's interpreter runs for a test: the echo agent, the fake model APIs
PYTHON_MARKS = (b"compozy_mcp.echo_agent", b"tests.fakes.fake_")
#: the interpreter of this checkout's virtualenv, which every Python agent it starts runs on
INTERPRETER_MARK = os.fsencode(Path(sys.prefix) / "bin") + b"/"
#: the real agents' adapters and what they run, installed under this checkout by node-deps
NODE_MARKS = (b"claude-agent-acp", b"@anthropic-ai/claude", b"codex-acp", b"gemini-cli")
CHECKOUT_MARK = os.fsencode(Path(__file__).resolve().parents[1]) + b"/"
_TICKS = os.sysconf("SC_CLK_TCK")


def _boot_time() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return 0.0


def _started_at(pid: str) -> float | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None  # ended, not yet reaped: not running
    return _boot_time() + int(fields[19]) / _TICKS


def running(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists and has not ended (a zombie, ended but not yet
    reaped by its parent, has left nothing running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def running_agents(since: float) -> list[str]:
    """``pid: command`` of every agent started after ``since`` (epoch seconds)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if not _ours(command):
            continue
        started = _started_at(entry.name)
        if started is not None and started >= since - 1:
            shown = command.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name}: {shown}")
    return found


def wait_for_none(since: float, seconds: float = 10.0) -> list[str]:
    """The agents still running after up to ``seconds`` (an agent ends shortly after its
    stdin closes)."""
    deadline = time.monotonic() + seconds
    while True:
        left = running_agents(since)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def _ours(command: bytes) -> bool:
    if command.startswith(INTERPRETER_MARK):
        return any(mark in command for mark in PYTHON_MARKS)
    return CHECKOUT_MARK in command and any(mark in command for mark in NODE_MARKS)
