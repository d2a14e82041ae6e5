"""Keeping upstream MCP servers connected, and serving their tools.

Each :class:`Upstream` runs one loop for one server: connect (start the process, or reach the
URL, or load the extension) and read its listing within ``timeouts.startup``; then watch it:
re-read the listing when it says its tools changed, and ping it every ``timeouts.ping_interval``
(a ping unanswered within ``timeouts.ping_timeout`` is a hung server). When anything fails the
connection is dropped (a stdio server's process tree is stopped), its tools disappear, and the
next attempt waits for the backoff (``restart``), doubling up to its maximum.

A failing server never takes anything else down: every wait is bounded, every failure is caught
inside its own loop and recorded as its ``last_error``, and a call to a server that is not
connected is a tool error naming it (:class:`~compozy_mcp.errors.McpServerUnavailable`).

:class:`Upstreams` holds a process's servers: it is the catalog's
:class:`~compozy_mcp.info.external.ExternalTools`, tells listeners (the proxy, which tells its
clients ``tools/list_changed``) when tools change, and publishes each server's state for
``compozy mcp list`` (:mod:`.status`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from compozy_mcp.errors import McpServerUnavailable, ToolBackendFailed, ToolNotFound
from compozy_mcp.info.external import ExternalTool
from compozy_mcp.reasons import Reason
from compozy_mcp.upstream.asking import EVERY_CAPABILITY, NO_CAPABILITY, Asker, Askers, Declared
from compozy_mcp.upstream.config import SEPARATOR, Scope, ServerDefinition
from compozy_mcp.upstream.connection import Connection, Progress, connect, describe_failure
from compozy_mcp.upstream.http import UNREACHABLE
from compozy_mcp.upstream.status import Report, ServerStatus, State, StatusBoard

log = logging.getLogger(__name__)

Listener = Callable[[], Awaitable[None]]
#: how long a proxy waits, at most, for its servers' first attempts before it serves (a slower
#: server's tools are announced with tools/list_changed when it is ready)
SETTLE_SECONDS = 10.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def external_tool(server: str, tool: types.Tool) -> ExternalTool:
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    )
    return ExternalTool(
        id=f"{server}{SEPARATOR}{tool.name}",
        server=server,
        description=tool.description or "",
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=annotations or None,
        title=tool.title,
    )


def carried(tool: types.Tool) -> types.Tool | None:
    """``tool`` as compozy can serve it: MCP tasks are not carried, so a tool that may run as
    a task (``taskSupport: optional``) is advertised as one that does not, and one that must
    (``required``) is not served at all (``None``)."""
    support = tool.execution.task_support if tool.execution is not None else None
    if support == "required":
        return None
    if support == "optional":
        return tool.model_copy(update={"execution": types.ToolExecution(task_support="forbidden")})
    return tool


#: the tool names clients take (several reject a whole listing when one name breaks it)
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
#: how much of a withheld name a log line shows
SHOWN_NAME_CHARS = 60


def unservable_name(server: str, tool: str) -> str | None:
    """Why ``<server>__<tool>`` cannot be served (``None`` when it can): a name such as
    ``../../x`` or one of 310 characters would make clients refuse the whole listing."""
    served = f"{server}{SEPARATOR}{tool}"
    if TOOL_NAME.fullmatch(served):
        return None
    if len(served) > 128:
        return f"its name {served[:SHOWN_NAME_CHARS]!r}… has {len(served)} characters (at most 128)"
    return f"its name {served[:SHOWN_NAME_CHARS]!r} has characters other than a-z A-Z 0-9 _ -"


class Upstream:
    """One server, kept connected."""

    def __init__(
        self,
        definition: ServerDefinition,
        *,
        home: Path,
        env: dict[str, str],
        cwd: Path | None,
        changed: Callable[[bool], None],
        roots: Sequence[Path] = (),
    ) -> None:
        self.definition = definition
        self.name = definition.name
        self._home = home
        self._env = env
        self._cwd = cwd
        self._changed = changed
        #: the calls waiting on the server, and the answers to what it asks them
        self.askers = Askers(definition.name, roots)
        #: the client capabilities declared to it; ``None`` until they are known
        self.declared: Declared | None = None
        self.declared_known = anyio.Event()
        self.state = State.STARTING
        self.since = _now()
        self.last_error: str | None = None
        self.restarts = 0
        #: the server's own tools, as compozy serves them (:func:`carried`)
        self.tools: tuple[types.Tool, ...] = ()
        #: tools it listed that need MCP tasks, which compozy does not carry
        self.needs_tasks: frozenset[str] = frozenset()
        #: tools it listed whose names clients cannot take (:func:`unservable_name`)
        self.misnamed: frozenset[str] = frozenset()
        self._connection: Connection | None = None
        self._retry_at: float | None = None
        #: set once the first attempt has ended, either way
        self.settled = anyio.Event()

    def _enter(self, state: State, *, tools: Sequence[types.Tool] | None = None) -> None:
        if state is not self.state:
            self.since = _now()
        self.state = state
        served = None
        if tools is not None:
            self._withhold_misnamed(tools)
            served = tuple(
                found
                for found in map(carried, tools)
                if found is not None and found.name not in self.misnamed
            )
            self.needs_tasks = frozenset(t.name for t in tools if carried(t) is None)
        tools_changed = served is not None and served != self.tools
        if served is not None:
            self.tools = served
        self._changed(tools_changed)

    def _withhold_misnamed(self, tools: Sequence[types.Tool]) -> None:
        """Leave out the tools whose names clients cannot take, each logged once with why."""
        misnamed: set[str] = set()
        for tool in tools:
            why = unservable_name(self.name, tool.name)
            if why is None:
                continue
            misnamed.add(tool.name)
            if tool.name not in self.misnamed:
                log.warning('MCP server "%s": a tool is not served: %s', self.name, why)
        self.misnamed = frozenset(misnamed)

    def status(self) -> ServerStatus:
        retry_in = None
        if self.state is State.DOWN and self._retry_at is not None:
            retry_in = round(max(0.0, self._retry_at - anyio.current_time()), 1)
        return ServerStatus(
            name=self.name,
            state=self.state,
            tools=len(self.tools),
            last_error=self.last_error,
            restarts=self.restarts,
            since=self.since,
            retry_in=retry_in,
        )

    # --- the loop ------------------------------------------------------------------------

    def declare(self, declared: Declared) -> None:
        if self.declared is None:
            self.declared = declared
            self.declared_known.set()

    async def run(self) -> None:
        """Keep the server connected until cancelled (from once the capabilities to declare
        are known)."""
        await self.declared_known.wait()
        restart = self.definition.restart
        delay = restart.initial_delay
        while True:
            began = anyio.current_time()
            self.last_error = await self._attempt()
            if anyio.current_time() - began >= restart.max_delay:
                delay = restart.initial_delay  # it stayed up: a new failure starts over
            self._retry_at = anyio.current_time() + delay
            self._enter(State.DOWN, tools=())
            self.settled.set()
            log.warning(
                'MCP server "%s" is down: %s; next try in %.1f s', self.name, self.last_error, delay
            )
            await anyio.sleep(delay)
            delay = min(delay * 2, restart.max_delay)
            self.restarts += 1
            self._retry_at = None
            self._enter(State.STARTING)

    async def _attempt(self) -> str:
        """Connect and serve until the connection fails; returns why it ended."""
        timeouts = self.definition.timeouts
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeouts.startup) as startup:
                async with connect(
                    self.definition,
                    home=self._home,
                    env=self._env,
                    cwd=self._cwd,
                    askers=self.askers,
                    declared=self.declared or NO_CAPABILITY,
                ) as connection:
                    tools = await connection.list_tools()
                    startup.deadline = math.inf
                    self._connection = connection
                    self._enter(State.READY, tools=tools)
                    self.settled.set()
                    if self.restarts:
                        log.info(
                            'MCP server "%s" reconnected (restart %d), %d tools',
                            self.name,
                            self.restarts,
                            len(tools),
                        )
                    try:
                        return await self._watch(connection)
                    finally:
                        self._connection = None
            return f"did not start within {timeouts.startup:g} s"
        except Exception as exc:  # whatever it was, it ends this connection only
            return describe_failure(exc, self.definition)

    async def _watch(self, connection: Connection) -> str:
        """Re-read the listing when it changes, ping on schedule; returns on a failure (a
        closed connection raises from the ping instead)."""
        timeouts = self.definition.timeouts
        while True:
            with anyio.move_on_after(timeouts.ping_interval):
                await connection.wake.wait()
            connection.wake = anyio.Event()
            if connection.listing_changed:
                connection.listing_changed = False
                with anyio.move_on_after(timeouts.startup) as listing:
                    tools = await connection.list_tools()
                if listing.cancelled_caught:
                    return f"did not list its tools within {timeouts.startup:g} s"
                log.info('MCP server "%s" changed its tools', self.name)
                self._enter(State.READY, tools=tools)
            with anyio.move_on_after(timeouts.ping_timeout) as ping:
                await connection.ping()
            if ping.cancelled_caught:
                return f"did not answer a ping within {timeouts.ping_timeout:g} s (hung?)"

    # --- calls -----------------------------------------------------------------------------

    def _not_connected(self, tool_id: str) -> McpServerUnavailable:
        if self.state is State.STARTING:
            problem = "is starting"
            if self.last_error:
                problem += f" again after a failure ({self.last_error})"
            problem += "; try again in a moment"
        elif self.state is State.DOWN:
            problem = f"is down ({self.last_error})"
            status = self.status()
            if status.retry_in is not None:
                problem += f"; next try in {status.retry_in:g} s"
        else:
            problem = "is stopped"
        return McpServerUnavailable(tool_id, self.name, problem)

    async def call(
        self,
        tool_id: str,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        progress: Progress | None = None,
        meta: dict[str, Any] | None = None,
        asker: Asker | None = None,
    ) -> types.CallToolResult:
        """Forward a call, ``asker`` waiting on it (what the server asks meanwhile goes to it:
        :mod:`.asking`); the result (``isError`` included) and the server's own JSON-RPC
        errors come back as sent. Raises :class:`ToolNotFound` (naming ``tool_id``) for a tool
        the server did not list, :class:`McpServerUnavailable` when the server is not
        connected, does not answer within ``timeouts.call`` or goes away mid-call."""
        connection = self._connection
        if connection is None or self.state is not State.READY:
            raise self._not_connected(tool_id)
        if name in self.needs_tasks:
            raise ToolBackendFailed(
                tool_id,
                f'tool "{tool_id}" must run as an MCP task (taskSupport "required"), which '
                "compozy does not carry",
                reason=Reason.MCP_TASKS_UNSUPPORTED,
            )
        if not any(tool.name == name for tool in self.tools):
            # the caller hears of the name it used (<server>__<tool>), not of the server's own
            raise ToolNotFound(tool_id)
        limit = self.definition.timeouts.call
        try:
            with anyio.fail_after(limit), self.askers.waiting(asker):
                return await connection.call(name, arguments, progress=progress, meta=meta)
        except TimeoutError:
            connection.wake.set()  # a server that hangs on a call may hang on everything
            raise McpServerUnavailable(
                tool_id,
                self.name,
                f"did not answer within {limit:g} s; the call was cancelled",
                reason=Reason.MCP_SERVER_TIMEOUT,
            ) from None
        except MCPError as exc:
            if exc.error.code not in (types.CONNECTION_CLOSED, UNREACHABLE):
                raise  # the server's own answer, passed on as it came
            connection.wake.set()
            raise McpServerUnavailable(
                tool_id,
                self.name,
                "went away during the call (it may have run); it is being restarted",
                reason=Reason.MCP_SERVER_LOST,
            ) from None
        except ValidationError:
            raise ToolBackendFailed(
                tool_id,
                f'tool "{tool_id}" failed: MCP server "{self.name}" answered with something that '
                "is not an MCP tool result",
            ) from None


class Upstreams:
    """The upstream servers one process serves (a proxy's or the daemon's)."""

    def __init__(
        self,
        definitions: Iterable[ServerDefinition],
        *,
        home: Path,
        env: dict[str, str],
        workspace: Path | None = None,
        kind: str = "proxy",
        publish_status: bool = True,
        withheld: Iterable[str] = (),
        declared: Declared | None = EVERY_CAPABILITY,
    ) -> None:
        """``declared``: the client capabilities declared to every server; ``None`` when they
        are those of the one client still to come (:meth:`declare`; the servers start then)."""
        self.home = home
        #: servers defined but not connected here, because the caller's policy does not allow
        #: them: a call to one is refused as any call the policy does not allow
        self.withheld = frozenset(withheld)
        self.kind = kind
        self._publish = publish_status
        self._board = StatusBoard(home)
        self._version = 0
        self._listeners: list[Listener] = []
        self._dirty: anyio.Event | None = None
        self._tools_changed = False
        self._cache: tuple[int, tuple[ExternalTool, ...]] | None = None
        #: when waiting for the servers' first attempts stops (set by :meth:`running`)
        self._settle_deadline: float | None = None
        self.servers: dict[str, Upstream] = {}
        roots = (workspace,) if workspace is not None else ()
        for definition in sorted(definitions, key=lambda d: d.name):
            cwd = workspace if definition.scope is Scope.WORKSPACE else None
            self.servers[definition.name] = Upstream(
                definition, home=home, env=env, cwd=cwd, changed=self._on_change, roots=roots
            )
        self._declared = declared

    def __bool__(self) -> bool:
        return bool(self.servers)

    # --- ExternalTools ---------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    def tools(self) -> tuple[ExternalTool, ...]:
        if self._cache is None or self._cache[0] != self._version:
            found = tuple(
                external_tool(server.name, tool)
                for server in self.servers.values()
                for tool in server.tools
            )
            self._cache = (self._version, found)
        return self._cache[1]

    # --- serving ---------------------------------------------------------------------------

    def advertised(self, server: str) -> list[types.Tool]:
        """``server``'s tools as clients see them: renamed ``<server>__<tool>``, nothing else
        changed (their input schema, their output schema, their annotations)."""
        upstream = self.servers.get(server)
        if upstream is None:
            return []
        return [
            tool.model_copy(update={"name": f"{server}{SEPARATOR}{tool.name}"})
            for tool in upstream.tools
        ]

    def route(self, tool_id: str) -> tuple[Upstream, str] | None:
        """The server a ``<server>__<tool>`` name belongs to, and the server's own name for it
        (whether or not the tool exists: :meth:`Upstream.call` says)."""
        server, found, name = tool_id.partition(SEPARATOR)
        upstream = self.servers.get(server) if found and name else None
        return (upstream, name) if upstream is not None else None

    def withheld_server(self, tool_id: str) -> str | None:
        """The withheld server a ``<server>__<tool>`` name belongs to, if any."""
        server, found, name = tool_id.partition(SEPARATOR)
        return server if found and name and server in self.withheld else None

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` whenever the tools change (a server's tools come, go or change;
        a server that keeps failing to start changes nothing)."""
        self._listeners.append(listener)

    def statuses(self) -> list[ServerStatus]:
        return [server.status() for server in self.servers.values()]

    def listing(self) -> dict[str, Any]:
        """``{"servers": [...]}``: each server and this process's connection to it, as
        ``compozy mcp list`` shows them (the Host API's ``list_mcp_servers``)."""
        pid = os.getpid()
        rows = []
        for server in self.servers.values():
            status = server.status().payload()
            del status["name"]
            connection = {"pid": pid, "kind": self.kind, **status}
            rows.append({**server.definition.row(), "connections": [connection]})
        return {"servers": rows}

    def _on_change(self, tools_changed: bool) -> None:
        if tools_changed:
            self._version += 1
            self._tools_changed = True
        if self._dirty is not None:
            self._dirty.set()

    async def _announce(self) -> None:
        """Publish each change of state; tell the listeners of each change of tools."""
        while True:
            assert self._dirty is not None
            await self._dirty.wait()
            self._dirty = anyio.Event()
            if self._publish:
                await self._publish_status()
            if not self._tools_changed:
                continue
            self._tools_changed = False
            for listener in list(self._listeners):
                try:
                    await listener()
                except Exception:  # a listener must not stop the announcements
                    log.exception("a tools-changed listener failed")

    async def _publish_status(self) -> None:
        report = Report(os.getpid(), self.kind, tuple(self.statuses()))
        try:
            await anyio.to_thread.run_sync(self._board.publish, report)
        except OSError as exc:
            log.warning("cannot record MCP server states (%s)", exc.strerror or type(exc).__name__)

    def declare(self, declared: Declared) -> None:
        """The capabilities to declare, once known (the first request of the one client): the
        servers start now. Later calls change nothing."""
        if self._declared is not None:
            return
        self._declared = declared
        self._start_settling()
        for server in self.servers.values():
            server.declare(declared)

    def _start_settling(self) -> None:
        if self.servers:
            longest = max(s.definition.timeouts.startup for s in self.servers.values())
            self._settle_deadline = anyio.current_time() + min(longest, SETTLE_SECONDS)

    async def settled(self) -> None:
        """Wait until each server's first attempt has ended, at most until ``SETTLE_SECONDS``
        (or the longest start-up timeout) after :meth:`running` began; at once after that. A
        listing read after this has the servers that start."""
        if self._settle_deadline is None:
            return
        remaining = self._settle_deadline - anyio.current_time()
        if remaining > 0:
            with anyio.move_on_after(remaining):
                for server in self.servers.values():
                    await server.settled.wait()
        if all(server.settled.is_set() for server in self.servers.values()) or remaining <= 0:
            self._settle_deadline = None  # nobody waits again

    @contextlib.asynccontextmanager
    async def running(self, *, settle: bool = True) -> AsyncIterator[Upstreams]:
        """Connect every server for as long as the block runs; with ``settle``, wait here for
        :meth:`settled` (a server that serves listings calls it instead: it reads its client's
        requests meanwhile, so that a client that goes away is noticed at once)."""
        self._dirty = anyio.Event()
        if self._declared is not None:
            self._start_settling()
            for server in self.servers.values():
                server.declare(self._declared)
        if self._publish:
            await anyio.to_thread.run_sync(self._board.sweep)
        try:
            async with anyio.create_task_group() as tasks:
                for server in self.servers.values():
                    tasks.start_soon(server.run, name=f"mcp-server-{server.name}")
                tasks.start_soon(self._announce, name="mcp-server-announcements")
                if settle:
                    await self.settled()
                try:
                    yield self
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            for server in self.servers.values():
                server.state, server.tools = State.STOPPED, ()
            if self._publish:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self._board.withdraw, os.getpid())
