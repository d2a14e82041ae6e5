"""A daemon's address: ``http(s)://HOST:PORT``, ``unix:PATH``, ``unix://PATH`` or an absolute
socket path. A trailing ``/`` or ``/api`` (the API's own prefix) is tolerated."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compozy_mcp.errors import ConfigError
from compozy_mcp.hostapi.wire import API_PREFIX

#: the Host header and base URL of requests sent over a Unix socket
SOCKET_BASE_URL = "http://localhost"


@dataclass(frozen=True, slots=True)
class Target:
    """A daemon's address: a base URL, and the Unix socket to reach it through (if any)."""

    base_url: str
    socket: Path | None = None

    def __str__(self) -> str:
        return f"unix:{self.socket}" if self.socket is not None else self.base_url

    @property
    def plain(self) -> bool:
        """Reached without TLS: through its socket, or over ``http://``."""
        return self.socket is not None or self.base_url.startswith("http://")


def parse_target(text: str, *, name: str = "COMPOZY_URL (--url)") -> Target:
    text = text.strip()
    if text.startswith(("http://", "https://")):
        base = text.rstrip("/")
        base = base.removesuffix(API_PREFIX).rstrip("/")
        return Target(base)
    if text.startswith("unix:"):
        path = text.removeprefix("unix:")
        path = path.removeprefix("//")  # unix:///abs/path
        if path:
            return Target(SOCKET_BASE_URL, Path(path).expanduser())
    elif text.startswith(("/", "~")):
        return Target(SOCKET_BASE_URL, Path(text).expanduser())
    raise ConfigError(
        f"{name} must be http://HOST:PORT, https://..., unix:PATH or an absolute socket path, "
        f"got {text!r}"
    )
