"""What every command runs with, resolved once from the command line and the environment:
where the data lives, which daemon (if any) commands talk to, and its token.

Commands never read ``os.environ`` themselves: :func:`compozy_mcp.cli.main.main` takes the
environment as an argument (tests pass their own) and hands the :class:`Context` on.

- ``--home`` / ``COMPOZY_HOME``: the data directory (default ``~/.compozy``);
- ``--url URL`` / ``--socket PATH`` / ``COMPOZY_URL``: a daemon's address
  (:mod:`compozy_mcp.hostapi.target`); without one, commands run in-process on the store;
- ``COMPOZY_TOKEN``, or the file ``COMPOZY_TOKEN_FILE`` names: the daemon's bearer token;
  else ``COMPOZY_SESSION_TOKEN``, the credential of one session (an agent's own proxy).

Both ways give the same output and exit codes: a daemon runs the same Host API operations and
its errors come back as the same payloads.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from compozy_mcp.errors import ConfigError
from compozy_mcp.hostapi.target import SOCKET_BASE_URL, Target, parse_target

if TYPE_CHECKING:
    from compozy_mcp.config import Settings
    from compozy_mcp.hostapi import HostClient

ENV_HOME = "COMPOZY_HOME"
ENV_URL = "COMPOZY_URL"
ENV_TOKEN = "COMPOZY_TOKEN"
ENV_TOKEN_FILE = "COMPOZY_TOKEN_FILE"
#: a session credential (:mod:`compozy_mcp.credentials`): what an agent's proxy is given
ENV_SESSION_TOKEN = "COMPOZY_SESSION_TOKEN"
ENV_WORKSPACE = "COMPOZY_WORKSPACE"
#: where ``compozy serve`` listens by default, in ``$COMPOZY_HOME``
DEFAULT_SOCKET = "compozy.sock"

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Context:
    env: Mapping[str, str]
    target: Target | None = None
    token: str | None = None
    #: ``-v``: ask a daemon for the dispatch diagnostic of an error (it answers only on its
    #: socket or from loopback)
    diagnostics: bool = False

    @classmethod
    def resolve(
        cls,
        env: Mapping[str, str],
        *,
        home: str | None = None,
        url: str | None = None,
        socket: str | None = None,
        diagnostics: bool = False,
    ) -> Context:
        """The context of a command line: flags win over the environment."""
        merged = dict(env)
        if home:
            merged[ENV_HOME] = home
        address = url or (f"unix:{socket}" if socket else None) or env.get(ENV_URL, "").strip()
        if address.lower() == "none":
            address = ""
        target = parse_target(address) if address else None
        token = env.get(ENV_TOKEN) or None
        if token is None and env.get(ENV_TOKEN_FILE):
            token = read_token_file(Path(env[ENV_TOKEN_FILE]).expanduser())
        if token is None:
            # an agent's own ``compozy proxy --session``: its session's credential
            token = env.get(ENV_SESSION_TOKEN) or None
        return cls(merged, target, token, diagnostics)

    def settings(self) -> Settings:
        from compozy_mcp.config import Settings

        return Settings.from_env(self.env)

    def workspace(self, given: str | None = None) -> Path:
        """The workspace directory a command works in: ``given`` (``--workspace``), else
        ``COMPOZY_WORKSPACE``, else the current directory."""
        chosen = given or self.env.get(ENV_WORKSPACE) or None
        return Path(chosen).expanduser().resolve() if chosen else Path.cwd()

    def daemon(self) -> Target | None:
        """The daemon commands talk to: the one named (``--url``, ``--socket``,
        ``COMPOZY_URL``), else one answering on ``$COMPOZY_HOME/compozy.sock`` (its agents and
        their sessions are its own: a command must not start a second agent for them), else
        none (commands run in-process). ``COMPOZY_URL=none`` never looks for one."""
        if self.target is not None:
            return self.target
        if self.env.get(ENV_URL, "").strip().lower() == "none":
            return None
        socket_path = self.settings().home / DEFAULT_SOCKET
        return Target(SOCKET_BASE_URL, socket_path) if _answers(socket_path) else None

    def open_host(self) -> HostClient:
        """The Host API this context selects: a daemon's, or this process's own."""
        target = self.daemon()
        if target is not None:
            from compozy_mcp.hostapi.remote import RemoteHost

            return RemoteHost(target, token=self.token, diagnostics=self.diagnostics, oneshot=True)
        from compozy_mcp.hostapi.local import LocalHost

        return LocalHost.open(self.settings())

    def call(self, operation: Callable[[HostClient], Awaitable[T]]) -> T:
        """Open the Host API, run one operation on it, close it."""
        import asyncio  # commands that call nothing (--help, completion) never load it

        from compozy_mcp.interpreter import raise_on_interrupt

        host = self.open_host()

        async def run() -> T:
            async with host:
                return await operation(host)

        raise_on_interrupt()  # an operation run in this process may run an agent: stop it
        return asyncio.run(run())

    def structured(self, tool_id: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
        """A native tool's structured result, invoked as ``compozy tool invoke`` does."""
        from compozy_mcp.hostapi import operations as ops

        args = {"tool_id": tool_id, "input": dict(tool_input)}
        payload = self.call(lambda host: host.call(ops.INVOKE, args))
        structured: dict[str, Any] = payload["result"]["structured"]
        return structured


def _answers(path: Path) -> bool:
    """Whether a daemon listens on the Unix socket ``path`` (a stale file answers nothing)."""
    import socket

    if not path.exists():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def read_token_file(path: Path) -> str:
    """The token a file holds (its first line). A file others can read is used, with a
    warning: the token is a password."""
    try:
        text = path.read_text(encoding="utf-8")
        mode = path.stat().st_mode
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not token:
        raise ConfigError(f"the token file {path} is empty")
    if mode & 0o077:
        log.warning("the token file %s can be read by other users (chmod 600 it)", path)
    return token
