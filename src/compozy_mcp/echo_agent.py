"""``echo``: a small, deterministic ACP agent that ships with compozy-mcp, so that the tour and
the tests run without credentials. Run it as ``python -m compozy_mcp.echo_agent``.

What it does with a prompt (words are matched case-insensitively in the prompt's own text, its
last text block, since a block before it is context; first match wins):

- ``crash``: sends one message chunk, then exits with status 3 (an agent dying mid-turn);
- ``slow N``: streams one chunk a second for N seconds (default 30), stopping with
  ``cancelled`` when the turn is cancelled;
- ``write FILE TEXT`` (FILE has a dot or a slash: ``notes.txt``, ``docs/a.md``): starts an
  ``edit`` tool call "Write FILE" and asks permission (allow once, allow always, reject once,
  reject always); allowed, it writes TEXT to FILE in the session's directory (never outside
  it) and completes the tool call, else fails it. Any other prompt with ``write`` writes
  ``notes.txt`` the same way;
- ``plan``: sends a three-entry plan and marks the entries done as it goes;
- ``refuse``: stops with ``refusal``;
- ``fail WHY``: fails the prompt request with a JSON-RPC internal error whose details are WHY
  (an agent whose model backend refused the turn, as "Authentication required");
- ``call TOOL {json}``: calls TOOL with that input on the first MCP server the client gave the
  session (compozy gives its own, for the session) and says what came back;
- anything else: one thought, then the reply ``echo: <prompt>`` in two chunks.

Every turn reports token usage (words in and out). The agent announces ``load_session``, a
``model`` and a ``thought_level`` option, two modes, and three commands.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from compozy_mcp import acp_sdk
from compozy_mcp.blocking import watchable

with acp_sdk.importing():
    from acp import (
        PROTOCOL_VERSION,
        Client,
        plan_entry,
        run_agent,
        start_tool_call,
        update_agent_message_text,
        update_agent_thought_text,
        update_plan,
        update_tool_call,
    )
    from acp.schema import (
        AgentCapabilities,
        AllowedOutcome,
        AvailableCommand,
        AvailableCommandInput,
        AvailableCommandsUpdate,
        Implementation,
        InitializeResponse,
        LoadSessionResponse,
        NewSessionResponse,
        PermissionOption,
        PromptCapabilities,
        PromptResponse,
        SessionConfigOptionSelect,
        SessionConfigSelectOption,
        SessionMode,
        SessionModeState,
        SetSessionConfigOptionResponse,
        SetSessionModeResponse,
        ToolCallUpdate,
        UnstructuredCommandInput,
        Usage,
    )

MODELS = ("echo-1",)
#: what a prompt that says "write" but names no file writes
NOTES = "notes.txt"
NOTES_TEXT = "Notes written by the echo agent."
EFFORTS = ("low", "high")
COMMANDS = (
    AvailableCommand(name="plan", description="Show a three-step plan"),
    AvailableCommand(
        name="write",
        description="Write FILE TEXT, or notes.txt (asks permission first)",
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint="FILE TEXT")),
    ),
    AvailableCommand(
        name="slow",
        description="Stream slowly until cancelled",
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint="seconds")),
    ),
)
PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="reject-once", name="Reject once", kind="reject_once"),
    PermissionOption(option_id="reject-always", name="Reject always", kind="reject_always"),
]


@dataclass
class _Session:
    model: str
    effort: str | None
    mode: str = "default"
    turns: int = 0
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    mcp_servers: list[Any] = field(default_factory=list)
    #: the session's working directory (``new_session``/``load_session``): files go there
    cwd: str = "."


def _text_of(prompt: list[Any]) -> str:
    return "".join(getattr(block, "text", "") for block in prompt)


def _asked(prompt: list[Any]) -> str:
    """The prompt's own words: its last text block (a block before it is context, such as the
    conversation so far, and asks for nothing)."""
    texts = [text for block in prompt if isinstance(text := getattr(block, "text", None), str)]
    return texts[-1] if texts else ""


def _words(text: str) -> int:
    return len(text.split())


def _exit_process() -> None:
    sys.stdout.flush()
    os._exit(3)


class EchoAgent:
    """``models`` and ``efforts`` are what it offers (a definition that runs echo in place of
    another agent names that agent's); ``crash`` is how it dies (run in a test's own process,
    it must not take the process with it)."""

    def __init__(
        self,
        models: tuple[str, ...] = MODELS,
        efforts: tuple[str, ...] = EFFORTS,
        crash: Callable[[], None] = _exit_process,
    ) -> None:
        self._client: Client | None = None
        self._sessions: dict[str, _Session] = {}
        self._next = 0
        self.models = models or MODELS
        self.efforts = efforts
        self._crash = crash

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None, "on_connect was not called"
        return self._client

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
            ),
            agent_info=Implementation(name="compozy-echo", title="Echo", version="1"),
        )

    def _new(self) -> _Session:
        return _Session(model=self.models[0], effort=self.efforts[0] if self.efforts else None)

    def _options(self, session: _Session) -> list[Any]:
        options = [
            SessionConfigOptionSelect(
                id="model",
                name="Model",
                category="model",
                type="select",
                current_value=session.model,
                options=[SessionConfigSelectOption(value=m, name=m) for m in self.models],
            )
        ]
        if session.effort is not None:
            options.append(
                SessionConfigOptionSelect(
                    id="thought_level",
                    name="Reasoning effort",
                    category="thought_level",
                    type="select",
                    current_value=session.effort,
                    options=[SessionConfigSelectOption(value=e, name=e) for e in self.efforts],
                )
            )
        return options

    @staticmethod
    def _modes(session: _Session) -> SessionModeState:
        return SessionModeState(
            current_mode_id=session.mode,
            available_modes=[
                SessionMode(id="default", name="Default"),
                SessionMode(id="plan", name="Plan only"),
            ],
        )

    async def _announce_commands(self, session_id: str) -> None:
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=list(COMMANDS)
        )
        await self.client.session_update(session_id=session_id, update=update)

    async def new_session(
        self, cwd: str, additional_directories: Any = None, mcp_servers: Any = None, **kw: Any
    ) -> NewSessionResponse:
        self._next += 1
        session_id = f"echo-{secrets.token_hex(4)}-{self._next}"
        session = self._sessions[session_id] = self._new()
        session.mcp_servers = list(mcp_servers or [])
        session.cwd = cwd
        asyncio.get_running_loop().call_soon(
            lambda: asyncio.ensure_future(self._announce_commands(session_id))
        )
        return NewSessionResponse(
            session_id=session_id, modes=self._modes(session), config_options=self._options(session)
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        **kw: Any,
    ) -> LoadSessionResponse:
        session = self._sessions.setdefault(session_id, self._new())
        session.mcp_servers = list(mcp_servers or [])
        session.cwd = cwd
        await self._announce_commands(session_id)
        return LoadSessionResponse(
            modes=self._modes(session), config_options=self._options(session)
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kw: Any
    ) -> SetSessionModeResponse:
        self._session(session_id).mode = mode_id
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kw: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == "model" and value in self.models:
            session.model = str(value)
        elif config_id == "thought_level" and value in self.efforts:
            session.effort = str(value)
        else:
            from acp import RequestError

            raise RequestError.invalid_params({"config_id": config_id, "value": value})
        return SetSessionConfigOptionResponse(config_options=self._options(session))

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            from acp import RequestError

            raise RequestError.invalid_params({"session_id": f"unknown session {session_id}"})
        return session

    async def cancel(self, session_id: str, **kw: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.cancelled.set()

    async def _say(self, session_id: str, text: str) -> None:
        await self.client.session_update(
            session_id=session_id, update=update_agent_message_text(text)
        )

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
        session = self._session(session_id)
        session.cancelled = asyncio.Event()
        session.turns += 1
        text, asked = _text_of(prompt), _asked(prompt)
        lowered = asked.lower()
        said: list[str] = []

        async def say(part: str) -> None:
            said.append(part)
            await self._say(session_id, part)

        stop: Any = "end_turn"
        if match := re.match(r"\s*fail\s+(.+)$", asked, re.S | re.I):
            from acp import RequestError

            # a turn the agent cannot take (its model backend refused it)
            raise RequestError.internal_error({"details": match.group(1).strip()})
        if "crash" in lowered:
            await say("about to crash")
            self._crash()
        elif match := re.search(r"\bslow(?:\s+(\d+))?", lowered):
            seconds = int(match.group(1) or 30)
            for second in range(seconds):
                await say(f"tick {second + 1} ")
                try:
                    await asyncio.wait_for(session.cancelled.wait(), timeout=1.0)
                except TimeoutError:
                    continue
                stop = "cancelled"
                break
        elif match := re.match(r"\s*call\s+(\S+)\s*(\{.*\})?\s*$", asked, re.S):
            await say(await self._call_tool(session_id, session, match.group(1), match.group(2)))
        elif match := re.match(r"\s*write\s+(\S*[./]\S*)\s+(.+)$", asked, re.S | re.I):
            stop = await self._write(session_id, session, say, match.group(1), match.group(2))
        elif "write" in lowered:
            stop = await self._write(session_id, session, say, NOTES, NOTES_TEXT)
        elif "plan" in lowered:
            await self._plan(session_id, say)
        elif "refuse" in lowered:
            await say("I will not do that.")
            stop = "refusal"
        else:
            await self.client.session_update(
                session_id=session_id,
                update=update_agent_thought_text(f"The user said {_words(text)} words."),
            )
            await say("echo: ")
            await say(text)
        usage = Usage(
            input_tokens=_words(text),
            output_tokens=_words("".join(said)),
            total_tokens=_words(text) + _words("".join(said)),
        )
        return PromptResponse(stop_reason=stop, usage=usage)

    async def _write(
        self, session_id: str, session: _Session, say: Any, name: str, content: str
    ) -> str:
        client = self.client
        title = f"Write {name}"
        await client.session_update(
            session_id=session_id,
            update=start_tool_call(
                "write-1", title, kind="edit", status="pending", raw_input={"path": name}
            ),
        )
        answer = await client.request_permission(
            options=PERMISSION_OPTIONS,
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="write-1", title=title, kind="edit"),
        )
        outcome = answer.outcome
        allowed = isinstance(outcome, AllowedOutcome) and outcome.option_id.startswith("allow")
        problem = _write_file(session.cwd, name, content) if allowed else None
        await client.session_update(
            session_id=session_id,
            update=update_tool_call(
                "write-1",
                status="completed" if allowed and problem is None else "failed",
                raw_output={"written": allowed and problem is None},
            ),
        )
        if not isinstance(outcome, AllowedOutcome):
            await say("The permission request was cancelled.")
            return "cancelled"
        if not allowed:
            await say(f"did not write {name} ({outcome.option_id})")
        elif problem is not None:
            await say(f"could not write {name}: {problem}")
        else:
            await say(f"wrote {name}")
        return "end_turn"

    async def _call_tool(
        self, session_id: str, session: _Session, tool: str, arguments: str | None
    ) -> str:
        """One MCP tool call, shown as a tool call of the turn; the reply says its outcome."""
        import json

        if not session.mcp_servers:
            return "no MCP server was given to this session"
        server = session.mcp_servers[0]
        update = start_tool_call(
            "mcp-1", f"{server.name}: {tool}", kind="other", status="in_progress"
        )
        await self.client.session_update(session_id=session_id, update=update)
        status: Literal["completed", "failed"]
        try:
            args = json.loads(arguments) if arguments else {}
            result = await _mcp_call(server, tool, args)
        except Exception as exc:  # the reply says what failed; the turn goes on
            outcome, status = f"tool call failed: {exc}", "failed"
        else:
            text = "".join(getattr(block, "text", "") for block in result.content)
            if result.is_error:
                outcome, status = f"tool error: {text}", "failed"
            else:
                outcome, status = f"tool result: {text}", "completed"
        done = update_tool_call("mcp-1", status=status, raw_output={"text": outcome})
        await self.client.session_update(session_id=session_id, update=done)
        return outcome

    async def _plan(self, session_id: str, say: Any) -> None:
        steps = ["Read the request", "Do the work", "Report back"]
        for done in range(len(steps) + 1):
            entries = [
                plan_entry(step, priority="medium", status="completed" if i < done else "pending")
                for i, step in enumerate(steps)
            ]
            await self.client.session_update(session_id=session_id, update=update_plan(entries))
        await say("Plan done: 3 steps.")


def _write_file(cwd: str, name: str, content: str) -> str | None:
    """Write ``content`` to ``name`` under ``cwd``; what went wrong, if anything."""
    root = os.path.realpath(cwd)
    path = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, path]) != root:
        return "it is outside the session's directory"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            out.write(content if content.endswith("\n") else content + "\n")
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


async def _mcp_call(server: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """Start the stdio MCP server the client described, call one tool, close it."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, **{item.name: item.value for item in server.env}}
    params = StdioServerParameters(command=server.command, args=list(server.args), env=env)
    with open(os.devnull, "w") as quiet:
        async with Client(stdio_client(params, errlog=quiet), cache=None) as client:
            return await client.call_tool(tool, arguments)


def unusable_stdio() -> str | None:
    """Why stdin or stdout cannot carry ACP, if one cannot: the SDK reads and writes them as
    pipes or sockets (a terminal works too). On a file it fails with a traceback, and on
    ``/dev/null``, which cannot be watched for input, it waits forever."""
    for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)):
        try:
            descriptor = stream.fileno()
            if watchable(descriptor):
                continue
            regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
        except (AttributeError, OSError, ValueError):
            return f"{name} is closed"
        return f"{name} is {'a file' if regular else 'neither a pipe nor a terminal'}"
    return None


def main(argv: list[str] | None = None) -> None:
    """``--models a,b`` and ``--efforts x,y`` set what it offers (first is the default)."""
    parser = argparse.ArgumentParser(prog="python -m compozy_mcp.echo_agent")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--efforts", default=",".join(EFFORTS))
    args = parser.parse_args(argv)
    problem = unusable_stdio()
    if problem is not None:
        parser.exit(
            2,
            f"{parser.prog}: {problem}: the agent speaks ACP (JSON-RPC lines) with its client "
            "over pipes; start it from an ACP client (compozy does, for a session of provider "
            "echo)\n",
        )
    models = tuple(m for m in args.models.split(",") if m)
    efforts = tuple(e for e in args.efforts.split(",") if e)
    # structurally an acp.Agent: the methods echo does not implement answer "method not found"
    agent: Any = EchoAgent(models, efforts)
    asyncio.run(run_agent(agent))


if __name__ == "__main__":
    from compozy_mcp.interpreter import exit_now

    main()
    exit_now(0)  # its client closed stdin: no teardown of the ACP schema's models to pay for
