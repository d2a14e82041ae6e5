"""Serving a proxy server: stdio, Streamable HTTP on TCP, Streamable HTTP on a Unix socket."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path
from typing import Any

from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

MCP_PATH = "/mcp"
#: requests larger than this are refused by the transport before they reach a tool
MAX_REQUEST_BYTES = 4 * 1024 * 1024


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1")


def uds_security() -> TransportSecuritySettings:
    """Over a Unix socket the Host header is a bare ``localhost`` (no port)."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*"],
        allowed_origins=["http://localhost", "http://localhost:*", "http://127.0.0.1:*"],
    )


def http_app(server: Server[Any], *, host: str = "127.0.0.1", uds: bool = False) -> Starlette:
    """The Streamable HTTP app at ``/mcp``, answering with JSON (not SSE) responses."""
    security = uds_security() if uds else None
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        host=host,
        transport_security=security,
        max_request_body_size=MAX_REQUEST_BYTES,
    )


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0 picks a free one; read it from ``getsockname()``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def bind_uds(path: Path) -> socket.socket:
    """A listening Unix socket, mode 0600 before anyone can connect to it.

    Only a stale socket is replaced; any other file at ``path`` is an error.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise FileExistsError(f"{path} exists and is not a socket")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    os.chmod(path, 0o600)  # before listen(): no connection can come in earlier
    sock.listen(128)
    return sock


async def serve_socket(app: Any, sock: socket.socket) -> None:
    """Serve an ASGI app on a bound socket with uvicorn until cancelled."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    await uvicorn.Server(config).serve(sockets=[sock])
