"""Where CLI commands send their calls: in-process on the embedded store by default, or to a
daemon (``compozy serve``) when one is named.

The daemon is named by ``COMPOZY_URL`` (set by the global ``--url URL`` / ``--socket PATH``):

- ``http://HOST:PORT`` (or ``https://``): the daemon's TCP address; the API is under ``/api``;
- ``unix:PATH``, ``unix://PATH`` or an absolute ``PATH``: its Unix socket.

``COMPOZY_TOKEN``, when set, is sent as the bearer token. Both ways give the same output and
exit codes: the daemon runs the same operations and its errors come back as the same payloads.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from compozy_mcp.api.operations import HostAPI, HostClient
from compozy_mcp.errors import ConfigError

ENV_URL = "COMPOZY_URL"
ENV_TOKEN = "COMPOZY_TOKEN"
#: the Host header and base URL of requests sent over a Unix socket
SOCKET_BASE_URL = "http://localhost"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Target:
    """A daemon's address: a base URL, and the Unix socket to reach it through (if any)."""

    base_url: str
    socket: Path | None = None

    def __str__(self) -> str:
        return f"unix:{self.socket}" if self.socket is not None else self.base_url


def parse_target(text: str) -> Target:
    """``http(s)://HOST:PORT[/PREFIX]``, ``unix:PATH``, ``unix://PATH`` or an absolute path."""
    text = text.strip()
    if text.startswith(("http://", "https://")):
        return Target(text.rstrip("/"))
    if text.startswith("unix:"):
        path = text.removeprefix("unix:")
        path = path.removeprefix("//")  # unix:///abs/path
        if path:
            return Target(SOCKET_BASE_URL, Path(path).expanduser())
    elif text.startswith(("/", "~")):
        return Target(SOCKET_BASE_URL, Path(text).expanduser())
    raise ConfigError(
        f"{ENV_URL} (--url) must be http://HOST:PORT, https://..., unix:PATH or an absolute "
        f"socket path, got {text!r}"
    )


def target_from_env() -> Target | None:
    text = os.environ.get(ENV_URL, "").strip()
    return parse_target(text) if text else None


class LocalHost(HostAPI):
    """The Host API on this process's own app, on ``$COMPOZY_HOME/compozy.db``."""

    def __init__(self) -> None:
        from compozy_mcp.app import open_app

        super().__init__(open_app())

    async def aclose(self) -> None:
        self.app.close()


def open_host() -> HostClient:
    """The Host API the environment selects: a daemon's, or this process's."""
    target = target_from_env()
    if target is None:
        return LocalHost()
    from compozy_mcp.cli.remote import RemoteHost

    return RemoteHost(target, token=os.environ.get(ENV_TOKEN) or None)


class ToolClient(Protocol):
    def invoke(
        self, tool_id: str, tool_input: Any, *, session: str | None = None
    ) -> dict[str, Any]:
        """Run a tool; return the envelope ``{"structured", "preview", ...}`` or raise."""
        ...

    def close(self) -> None: ...


class BlockingClient:
    """A :class:`HostClient` for synchronous callers (the CLI): one event loop for all calls."""

    def __init__(self, host: HostClient) -> None:
        self.host = host
        self._runner = asyncio.Runner()

    def run(self, operation: Callable[[HostClient], Awaitable[T]]) -> T:
        """Run one Host API operation, e.g. ``client.run(lambda h: h.session_status(i))``."""

        async def call() -> T:
            return await operation(self.host)

        return self._runner.run(call())

    def invoke(
        self, tool_id: str, tool_input: Any, *, session: str | None = None
    ) -> dict[str, Any]:
        payload = self.run(lambda host: host.invoke(tool_id, tool_input, session=session))
        envelope: dict[str, Any] = payload["result"]
        return envelope

    def close(self) -> None:
        try:
            self._runner.run(self.host.aclose())
        finally:
            self._runner.close()


class LocalClient(BlockingClient):
    """Runs calls through this process's own dispatcher, on ``$COMPOZY_HOME/compozy.db``."""

    def __init__(self) -> None:
        super().__init__(LocalHost())


def open_client() -> BlockingClient:
    """A client on the daemon ``COMPOZY_URL`` names, or in-process when it is not set."""
    return BlockingClient(open_host())


def call(operation: Callable[[HostClient], Awaitable[T]]) -> T:
    """Open a client, run one operation on it, close it."""
    client = open_client()
    try:
        return client.run(operation)
    finally:
        client.close()
