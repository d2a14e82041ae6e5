"""Where each MCP client reads its servers, and in what shape (docs/clients/*.md has each
client's documentation). One :class:`Server` (a stdio command, or a Streamable HTTP URL) is
written in the client's own format, for one of two scopes:

============== ================================================ ================================
client         user scope (yours)                               project scope (shared)
============== ================================================ ================================
claude-code    ``~/.claude.json`` ``mcpServers``                ``<workspace>/.mcp.json``
claude-desktop ``claude_desktop_config.json`` ``mcpServers``    (none)
cursor         ``~/.cursor/mcp.json`` ``mcpServers``            ``<workspace>/.cursor/mcp.json``
vscode         the user profile's ``mcp.json`` ``servers``      ``<workspace>/.vscode/mcp.json``
codex          ``$CODEX_HOME/config.toml`` ``[mcp_servers]``    ``<workspace>/.codex/config.toml``
============== ================================================ ================================

An entry is ``{"type": "stdio", "command", "args", "env"}`` (Claude Code and VS Code say
``type``; Cursor, Claude Desktop and Codex do not), or for HTTP ``{"type": "http", "url"}``
(Cursor and Codex: ``{"url"}``). A client that takes no URL (Claude Desktop) reaches a daemon
through ``compozy --url BASE proxy``, which relays the daemon's ``/mcp``.

Files are edited with parsers, never with patterns: JSON with the standard library, TOML with
``tomlkit`` (comments, layout and key order kept). Only the ``compozy`` entry's own keys
(:data:`OWN_KEYS`) change: anything else in the file, and any other key a user added to the
entry (Codex's ``startup_timeout_sec``, say), stays. A file that does not parse is refused with
its line and column, and never written.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from compozy_mcp.errors import ConfigError

NAME = "compozy"
CLIENTS = ("claude-code", "claude-desktop", "cursor", "codex", "vscode")
SCOPES = ("user", "project")
#: the keys of an entry that compozy writes; every other key of the entry is the user's
OWN_KEYS = ("type", "command", "args", "env", "url")

Scope = Literal["user", "project"]
Format = Literal["json", "toml"]


@dataclass(frozen=True, slots=True)
class Server:
    """What a client starts (``command`` and ``args``) or connects to (``url``)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None


@dataclass(frozen=True, slots=True)
class ClientFile:
    """A client's configuration file: where, in which format, under which key."""

    path: Path
    format: Format
    servers_key: str


def _vscode_user_dir(home: Path, env: Mapping[str, str], platform: str) -> Path:
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if platform.startswith("win"):
        appdata = env.get("APPDATA")
        return (Path(appdata) if appdata else home / "AppData" / "Roaming") / "Code" / "User"
    config = env.get("XDG_CONFIG_HOME")
    return (Path(config) if config else home / ".config") / "Code" / "User"


def _claude_desktop(home: Path, env: Mapping[str, str], platform: str) -> Path:
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if platform.startswith("win"):
        appdata = env.get("APPDATA")
        base = Path(appdata) if appdata else home / "AppData" / "Roaming"
        return base / "Claude" / "claude_desktop_config.json"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def has_scope(client: str, scope: Scope) -> bool:
    return not (client == "claude-desktop" and scope == "project")


def client_file(
    client: str,
    scope: Scope,
    *,
    workspace: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
    platform: str = sys.platform,
) -> ClientFile:
    """The file ``client`` reads its ``scope``'s MCP servers from."""
    env = env or {}
    project = scope == "project"
    if client == "claude-code":
        where = workspace / ".mcp.json" if project else home / ".claude.json"
        return ClientFile(where, "json", "mcpServers")
    if client == "cursor":
        return ClientFile(
            (workspace if project else home) / ".cursor" / "mcp.json", "json", "mcpServers"
        )
    if client == "vscode":
        base = workspace / ".vscode" if project else _vscode_user_dir(home, env, platform)
        return ClientFile(base / "mcp.json", "json", "servers")
    if client == "codex":
        codex_home = env.get("CODEX_HOME")
        base = (
            workspace / ".codex" if project else Path(codex_home) if codex_home else home / ".codex"
        )
        return ClientFile(base / "config.toml", "toml", "mcp_servers")
    if project:
        raise ValueError(f"{client} has no project scope")
    return ClientFile(_claude_desktop(home, env, platform), "json", "mcpServers")


def entry(client: str, server: Server) -> dict[str, Any]:
    """The client's object for ``server`` (Codex's TOML table has the same keys)."""
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


def _set_entry(
    servers: MutableMapping[str, Any],
    new: Mapping[str, Any],
    convert: Callable[[Any, Any], Any] = lambda value, _old: value,
) -> None:
    """``servers["compozy"]`` made ``new``: compozy's own keys replaced (or removed when
    ``new`` has none), the user's other keys of the entry kept in their place. ``convert``
    makes a new value fit the file (given the value it replaces)."""
    current = servers.get(NAME)
    if not isinstance(current, MutableMapping):
        servers[NAME] = dict(new)
        return
    for key in OWN_KEYS:
        if key in new:
            current[key] = convert(new[key], current.get(key))
        elif key in current:
            del current[key]


def _refused(path: Path, what: str, line: int, column: int, problem: str) -> ConfigError:
    return ConfigError(
        f"cannot update {path}: it is not valid {what} (line {line}, column {column}: "
        f"{problem}); fix or move it first, nothing was written"
    )


def parse_json(path: Path, text: str) -> dict[str, Any]:
    """A client's JSON file (an empty one is an empty object)."""
    if not text.strip():
        return {}
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _refused(path, "JSON", exc.lineno, exc.colno, exc.msg) from None
    if not isinstance(loaded, dict):
        raise ConfigError(
            f"cannot update {path}: it does not hold a JSON object; nothing was written"
        )
    return loaded


def parse_toml(path: Path, text: str) -> Any:
    """A TOML file as a ``tomlkit`` document (which keeps comments and layout)."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        problem = str(exc).rsplit(" at line ", 1)[0]
        raise _refused(path, "TOML", exc.line, exc.col + 1, problem) from None  # 0-based


def check_parses(target: ClientFile, text: str | None) -> None:
    """Refuse a file that exists and does not parse (before a client's own CLI touches it)."""
    if text is None:
        return
    if target.format == "toml":
        parse_toml(target.path, text)
    else:
        parse_json(target.path, text)


def merged_json(target: ClientFile, new: Mapping[str, Any], existing: str | None) -> str:
    document = parse_json(target.path, existing or "")
    servers = document.setdefault(target.servers_key, {})
    if not isinstance(servers, dict):
        raise ConfigError(
            f'cannot update {target.path}: its "{target.servers_key}" is not an object; '
            "nothing was written"
        )
    _set_entry(servers, new)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def merged_toml(target: ClientFile, new: Mapping[str, Any], existing: str | None) -> str:
    """``existing`` with the ``compozy`` server set, however it was written before: a
    ``[mcp_servers.compozy]`` table, an inline table under ``[mcp_servers]``, or dotted keys."""
    import tomlkit

    document = parse_toml(target.path, existing or "")
    servers = document.get(target.servers_key)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document[target.servers_key] = servers
    elif not isinstance(servers, MutableMapping):
        raise ConfigError(
            f"cannot update {target.path}: its {target.servers_key} is not a table; "
            "nothing was written"
        )
    current = servers.get(NAME)
    if current is None:  # Codex's own layout: [mcp_servers.compozy], [mcp_servers.compozy.env]
        table = tomlkit.table()
        for key, value in new.items():
            table[key] = value
        servers[NAME] = table
    else:
        # An inline table (`compozy = { ... }`) or dotted keys (`mcp_servers.compozy.x = ...`)
        # stay as they were written; a table of its own in one is written inline.
        _set_entry(servers, new, _toml_like)
    return tomlkit.dumps(document)


def _toml_like(value: Any, old: Any) -> Any:
    """``value`` for TOML: a mapping is a table where one was, else an inline table."""
    import tomlkit
    from tomlkit.items import Table

    if not isinstance(value, Mapping) or isinstance(old, Table):
        return value
    inline = tomlkit.inline_table()
    inline.update(value)
    return inline


def rendered(client: str, server: Server, target: ClientFile, existing: str | None = None) -> str:
    """The file's new content (``existing`` merged), or with ``existing`` ``None`` what a
    fresh file would hold."""
    new = entry(client, server)
    if target.format == "toml":
        return merged_toml(target, new, existing)
    return merged_json(target, new, existing)


def read_existing(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def write_atomically(path: Path, content: str, *, private: bool) -> None:
    """Replace ``path`` whole (a reader never sees half a file), keeping its mode. A new file
    is ``private`` (0600: a user's own file may name a token file or a data directory) or
    made as the umask says (a project's file, shared)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        if private:
            mode = 0o600
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(content)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stdio_only(client: str) -> bool:
    return client == "claude-desktop"


def env_for(env: Mapping[str, str], keys: tuple[str, ...]) -> dict[str, str]:
    """The variables of ``keys`` set in ``env``: what the client must pass on."""
    return {key: env[key] for key in keys if env.get(key)}
