"""Listening sockets and serving an ASGI app on them: shared by ``compozy proxy`` and
``compozy serve``. uvicorn is imported only when something is served."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import os
import signal
import socket
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from compozy_mcp.errors import ConfigError

if TYPE_CHECKING:
    import uvicorn

    from compozy_mcp.http_limits import HttpDeadlines


#: seconds open connections get to finish once a stop is requested
GRACEFUL_SHUTDOWN_SECONDS = 5
#: uvicorn's tick: how often the server updates its Date header and looks at its own state
TICK_SECONDS = 0.1


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0 picks a free one; read it from ``getsockname()``).

    The socket is made with ``IPPROTO_TCP``: asyncio turns Nagle's algorithm off only on
    connections whose protocol says TCP, and with it on, every response on a kept-alive
    connection waits for the client's delayed ACK (about 40 ms).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def socket_served(path: Path) -> bool:
    """Whether a process accepts connections on the Unix socket at ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError as exc:
        raise ConfigError(f"cannot check the socket {path}: {exc.strerror or exc}") from None
    finally:
        probe.close()
    return True


def bind_uds(path: Path) -> socket.socket:
    """A listening Unix socket, mode 0600 before anyone can connect to it.

    Only a stale socket (one nobody listens on) is replaced; a socket another process serves,
    or any other file at ``path``, is a :class:`ConfigError`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ConfigError(f"{path} exists and is not a socket")
        if socket_served(path):
            raise ConfigError(f"another process is serving on {path}")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        os.chmod(path, 0o600)  # before listen(): no connection can come in earlier
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {path}: {exc.strerror or exc}") from None
    return sock


class EventStreams:
    """ASGI middleware that can end every open event stream (``text/event-stream`` responses:
    an MCP client's notification stream, a live session feed) at once.

    A stop request calls :meth:`close_all`: each stream gets its final, empty body and the
    request ends normally, so the server stops without waiting out its graceful timeout for
    streams that never end by themselves (and without a cancelled task's traceback).
    Ordinary requests in flight are left to finish.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self._open: set[anyio.CancelScope] = set()
        self.closing = False

    def close_all(self) -> None:
        self.closing = True
        for scope in list(self._open):
            scope.cancel()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = {"started": False, "complete": False}
        cancel = anyio.CancelScope()

        async def watched_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                state["started"] = True
                headers = dict(message.get("headers") or [])
                if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
                    self._open.add(cancel)
                    if self.closing:
                        cancel.cancel()
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                state["complete"] = True
            await send(message)

        try:
            with cancel:
                await self.app(scope, receive, watched_send)
        finally:
            self._open.discard(cancel)
        if cancel.cancel_called and state["started"] and not state["complete"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class StoppableServer(Protocol):
    """What :func:`stoppable_server` makes: a uvicorn server with :meth:`stop`."""

    force_exit: bool

    async def serve(self, sockets: list[socket.socket] | None = None) -> None: ...

    def stop(self) -> None:
        """Stop; a second call stops without waiting for open connections to finish."""


def stoppable_server(config: uvicorn.Config) -> StoppableServer:
    """A uvicorn server for ``config`` whose :meth:`~StoppableServer.stop` ends it at once."""
    return _stoppable_class()(config)


@functools.cache
def _stoppable_class() -> Callable[[uvicorn.Config], StoppableServer]:
    import uvicorn

    class Stoppable(uvicorn.Server):
        """uvicorn's server, but its main loop ends as soon as :meth:`stop` is called (uvicorn's
        slept its 0.1 s tick between looks at ``should_exit``: each stop waited up to that), its
        shutdown pauses for open connections only when one is open (uvicorn's paused 0.1 s
        always), and it installs no signal handlers of its own: whoever runs it handles signals
        on its loop and calls :meth:`stop`, so a stop ends in a normal return (and the caller's
        clean-up), never in uvicorn raising the signal again once it is done."""

        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self._stopping = asyncio.Event()

        def stop(self) -> None:
            """Stop; a second call stops without waiting for open connections to finish."""
            if self.should_exit:
                self.force_exit = True
            self.should_exit = True
            self._stopping.set()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def main_loop(self) -> None:
            counter = 0
            while not await self.on_tick(counter):
                counter = (counter + 1) % 864_000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), TICK_SECONDS)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if self.server_state.connections:
                await super().shutdown(sockets)  # open connections get their time to finish
                return
            # None is open (no request runs either: each runs on a connection): uvicorn's own
            # shutdown would pause 0.1 s for connections to finish all the same.
            for server in self.servers:
                server.close()
            for sock in sockets or []:
                sock.close()
            for server in self.servers:
                await server.wait_closed()
            if not self.force_exit:
                await self.lifespan.shutdown()

    return Stoppable


async def serve_sockets(
    app: Any,
    sockets: Sequence[socket.socket],
    *,
    stop_on_signals: bool = False,
    deadlines: HttpDeadlines | None = None,
    announce: Callable[[], None] | None = None,
) -> None:
    """Serve an ASGI app with uvicorn on bound sockets until cancelled, or, with
    ``stop_on_signals``, until SIGINT or SIGTERM. ``announce`` runs once the signals are
    handled, so that a Ctrl-C typed as soon as the announcement shows stops the server
    cleanly.

    A second signal stops without waiting for open connections to finish, but the app's own
    shutdown (its lifespan: the relay's daemon connection, the MCP session manager, agent
    processes) still runs, for at most :data:`GRACEFUL_SHUTDOWN_SECONDS`: uvicorn skips it on
    a forced exit, which would leave those behind and the lifespan task to be cancelled (with a
    traceback) when the event loop closes.
    """
    import uvicorn
    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string
    from uvicorn.lifespan.on import LifespanOn

    from compozy_mcp.http_limits import HttpDeadlines as Deadlines
    from compozy_mcp.http_limits import guarded_protocol

    streams = EventStreams(app)
    config = uvicorn.Config(
        streams,
        # uvicorn's h11 protocol, as `--http h11` names it, inside the deadlines' wrapper
        http=guarded_protocol(deadlines or Deadlines(), import_from_string(HTTP_PROTOCOLS["h11"])),
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )
    server = stoppable_server(config)

    def stop() -> None:
        server.stop()
        streams.close_all()

    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM) if stop_on_signals else ()
    for sig in signals:
        loop.add_signal_handler(sig, stop)
    if announce is not None:
        announce()
    try:
        await server.serve(sockets=list(sockets))
        lifespan = getattr(server, "lifespan", None)
        if server.force_exit and isinstance(lifespan, LifespanOn):
            with anyio.move_on_after(GRACEFUL_SHUTDOWN_SECONDS):
                await lifespan.shutdown()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def serve(
    app: Any,
    sockets: Sequence[socket.socket],
    *,
    socket_files: Sequence[Path] = (),
    deadlines: HttpDeadlines | None = None,
    announce: Callable[[], None] | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM, then close the sockets and remove ``socket_files``;
    ``announce`` says where, once a signal would stop it cleanly."""
    from compozy_mcp.interpreter import start_serving

    start_serving()  # from here Ctrl-C stops the server cleanly (removing socket_files)
    try:
        asyncio.run(
            serve_sockets(
                app, sockets, stop_on_signals=True, deadlines=deadlines, announce=announce
            )
        )
    finally:
        for sock in sockets:
            sock.close()
        for path in socket_files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
