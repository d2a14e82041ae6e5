"""Where each MCP client reads its servers, and in what shape (docs/clients/*.md has each
client's documentation). One :class:`Server` (a stdio command, or a Streamable HTTP URL) is
written in the client's own format:

- claude-code: ``<workspace>/.mcp.json``, ``{"mcpServers": {name: {"type": "stdio",
  "command", "args", "env"}}}``; HTTP ``{"type": "http", "url"}``;
- claude-desktop: ``claude_desktop_config.json`` (its place depends on the OS),
  ``{"mcpServers": {name: {"command", "args", "env"}}}``; stdio only;
- cursor: ``<workspace>/.cursor/mcp.json``, ``{"mcpServers": {name: {"command", "args",
  "env"}}}``; HTTP ``{"url"}``;
- vscode: ``<workspace>/.vscode/mcp.json``, ``{"servers": {name: {"type": "stdio", "command",
  "args", "env"}}}``; HTTP ``{"type": "http", "url"}``;
- codex: ``~/.codex/config.toml``, a ``[mcp_servers.<name>]`` table with ``command``,
  ``args``, ``env``; HTTP ``url``.

A client that takes no URL (Claude Desktop) reaches a daemon through ``compozy --url BASE
proxy``, which relays the daemon's ``/mcp`` over stdio.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil

NAME = "compozy"
CLIENTS = ("claude-code", "claude-desktop", "cursor", "codex", "vscode")


@dataclass(frozen=True, slots=True)
class Server:
    """What a client starts (``command`` and ``args``) or connects to (``url``)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None


def config_path(client: str, *, workspace: Path, home: Path, platform: str = sys.platform) -> Path:
    """The file ``client`` reads its MCP servers from."""
    if client == "claude-code":
        return workspace / ".mcp.json"
    if client == "cursor":
        return workspace / ".cursor" / "mcp.json"
    if client == "vscode":
        return workspace / ".vscode" / "mcp.json"
    if client == "codex":
        return home / ".codex" / "config.toml"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if platform.startswith("win"):
        return home / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def entry(client: str, server: Server) -> dict[str, Any]:
    """The client's JSON object for ``server`` (Codex's TOML table has the same keys)."""
    if server.url is not None:
        if client in ("cursor", "codex"):
            return {"url": server.url}
        return {"type": "http", "url": server.url}
    out: dict[str, Any] = {}
    if client in ("claude-code", "vscode"):
        out["type"] = "stdio"
    out["command"] = server.command
    out["args"] = list(server.args)
    if server.env:
        out["env"] = dict(server.env)
    return out


def _servers_key(client: str) -> str:
    return "servers" if client == "vscode" else "mcpServers"


def json_document(client: str, server: Server) -> dict[str, Any]:
    """The whole document a fresh file would hold."""
    return {_servers_key(client): {NAME: entry(client, server)}}


def merged_json(client: str, server: Server, existing: str | None) -> str:
    """``existing`` (a client's JSON file, or ``None``) with the compozy server set, every
    other key kept."""
    document: dict[str, Any] = {}
    if existing and existing.strip():
        loaded = jsonutil.loads(existing)
        if not isinstance(loaded, dict):
            raise ValueError("it does not hold a JSON object")
        document = loaded
    servers = document.setdefault(_servers_key(client), {})
    if not isinstance(servers, dict):
        raise ValueError(f'its "{_servers_key(client)}" is not an object')
    servers[NAME] = entry(client, server)
    return jsonutil.dumps_pretty(document) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return jsonutil.dumps_text(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"no TOML for {value!r}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else jsonutil.dumps_text(key)


def toml_table(server: Server) -> str:
    """Codex's ``[mcp_servers.compozy]`` table."""
    lines = [f"[mcp_servers.{NAME}]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in entry("codex", server).items()]
    return "\n".join(lines) + "\n"


_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def merged_toml(server: Server, existing: str | None) -> str:
    """``existing`` (Codex's config.toml) with its ``[mcp_servers.compozy]`` table (and any
    sub-table of it) replaced by ours; every other line kept as it was."""
    kept: list[str] = []
    skipping = False
    ours = f"mcp_servers.{NAME}"
    for line in (existing or "").splitlines():
        header = _TABLE.match(line)
        if header:
            table = header.group(1).replace('"', "")
            skipping = table == ours or table.startswith(ours + ".")
        if not skipping:
            kept.append(line)
    text = "\n".join(kept).rstrip("\n")
    return (text + "\n\n" if text else "") + toml_table(server)


def rendered(client: str, server: Server, existing: str | None = None) -> str:
    """The file's new content (``existing`` merged), or with ``existing`` ``None`` the
    snippet a fresh file would hold."""
    if client == "codex":
        return merged_toml(server, existing)
    return merged_json(client, server, existing)


def stdio_only(client: str) -> bool:
    return client == "claude-desktop"


def read_existing(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def env_for(env: Mapping[str, str], keys: tuple[str, ...]) -> dict[str, str]:
    """The variables of ``keys`` set in ``env``: what the client must pass on."""
    return {key: env[key] for key in keys if env.get(key)}
