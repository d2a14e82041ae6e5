"""Upstream MCP server definitions: ``$COMPOZY_HOME/mcp.yaml`` (scope ``user``), a workspace's
``.compozy/mcp.yaml`` (scope ``workspace``, which wins over ``user`` for the same name) and the
``compozy.tools`` entry points of installed packages (scope ``extension``).

A file holds one mapping, ``servers``, from a name to a definition::

    servers:
      notes:                       # stdio: a command the proxy starts
        command: python
        args: [notes_server.py]
        env: {NOTES_DIR: /srv/notes}
      docs:                        # Streamable HTTP
        url: https://docs.example.com/mcp
        headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
        timeouts: {startup: 30, call: 300, ping_interval: 15, ping_timeout: 10}
        restart: {initial_delay: 1, max_delay: 60}

``${VAR}`` and ``${VAR:-default}`` in ``command``, ``args``, ``env``, ``url`` and ``headers`` are
read from the environment when the server is started, never written back. Tools of server
``notes`` are served as ``notes__<tool>``, so a name is letters, digits, ``-`` and ``_`` without
``__``; ``compozy`` and ``compozy_host`` belong to the native tools.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from compozy_mcp import yamltext
from compozy_mcp.errors import ConfigError
from compozy_mcp.reasons import Reason

log = logging.getLogger(__name__)

USER_FILE = "mcp.yaml"
WORKSPACE_FILE = Path(".compozy") / "mcp.yaml"
SEPARATOR = "__"
RESERVED_NAMES = frozenset({"compozy", "compozy_host"})
NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62})$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"
    #: an MCP server object of an installed package, connected in-process
    EXTENSION = "extension"


class Scope(StrEnum):
    USER = "user"
    WORKSPACE = "workspace"
    EXTENSION = "extension"


#: how each scope's file is named in messages (never an absolute path)
SHOWN = {
    Scope.USER: f"$COMPOZY_HOME/{USER_FILE}",
    Scope.WORKSPACE: str(WORKSPACE_FILE),
    Scope.EXTENSION: "the compozy.tools entry points",
}


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds. ``startup``: spawn or connect, handshake and the first listing; ``call``: one
    forwarded tool call; a ping every ``ping_interval`` must be answered within
    ``ping_timeout``, or the server is taken for hung and restarted."""

    startup: float = 30.0
    call: float = 300.0
    ping_interval: float = 15.0
    ping_timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class Restart:
    """Backoff between attempts: ``initial_delay``, doubled after each failure up to
    ``max_delay``; back to ``initial_delay`` once a connection has stayed up ``max_delay``."""

    initial_delay: float = 1.0
    max_delay: float = 60.0


@dataclass(frozen=True, slots=True)
class ServerDefinition:
    name: str
    transport: Transport
    scope: Scope
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: ``module:attribute`` of an extension's MCP server (or of a function returning one)
    entry_point: str | None = None
    timeouts: Timeouts = Timeouts()
    restart: Restart = Restart()

    @property
    def target(self) -> str:
        """What the server is, in one line: its command line, its URL or its entry point."""
        if self.transport is Transport.STDIO:
            return " ".join([self.command or "", *self.args])
        if self.transport is Transport.HTTP:
            return self.url or ""
        return self.entry_point or ""

    def row(self) -> dict[str, Any]:
        """How ``compozy mcp list`` and ``GET /api/mcp/servers`` show the definition."""
        return {
            "name": self.name,
            "scope": self.scope.value,
            "transport": self.transport.value,
            "target": self.target,
        }

    def to_yaml(self) -> dict[str, Any]:
        """The definition as a file holds it: only what differs from the defaults."""
        out: dict[str, Any] = {}
        if self.transport is Transport.STDIO:
            out["command"] = self.command
            if self.args:
                out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
        else:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        for key, value, default in (
            ("timeouts", self.timeouts, Timeouts()),
            ("restart", self.restart, Restart()),
        ):
            changed = {
                f.name: getattr(value, f.name)
                for f in fields(value)
                if getattr(value, f.name) != getattr(default, f.name)
            }
            if changed:
                out[key] = changed
        return out

    def expanded(self, env: Mapping[str, str]) -> ServerDefinition:
        """The definition with ``${VAR}`` references replaced from ``env``."""

        def sub(text: str) -> str:
            return _VARIABLE.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), text)

        return replace(
            self,
            command=sub(self.command) if self.command is not None else None,
            args=tuple(sub(a) for a in self.args),
            env={k: sub(v) for k, v in self.env.items()},
            url=sub(self.url) if self.url is not None else None,
            headers={k: sub(v) for k, v in self.headers.items()},
        )


def check_name(name: str, where: str) -> str:
    if not isinstance(name, str) or not NAME.match(name) or SEPARATOR in name:
        raise ConfigError(
            f"{where}: {name!r} is not a server name (letters, digits, '-' and '_', at most 63, "
            f"no {SEPARATOR!r}: its tools are served as <name>{SEPARATOR}<tool>)",
            reason=Reason.MCP_CONFIG_INVALID,
        )
    if name in RESERVED_NAMES:
        raise ConfigError(
            f"{where}: the server name {name!r} is reserved for compozy's own tools",
            reason=Reason.MCP_CONFIG_INVALID,
        )
    return name


def _invalid(where: str, problem: str) -> ConfigError:
    return ConfigError(f"{where}: {problem}", reason=Reason.MCP_CONFIG_INVALID)


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(where, f"{key} must be a list of strings")
    return tuple(value)


def _string_map(value: Any, where: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
        for k, v in value.items()
    ):
        raise _invalid(where, f"{key} must map names to strings")
    return {k: str(v) for k, v in value.items()}


def _seconds(value: Any, where: str, cls: type[Timeouts] | type[Restart]) -> dict[str, float]:
    names = {f.name for f in fields(cls)}
    if not isinstance(value, dict) or not set(value) <= names:
        raise _invalid(where, f"takes only {', '.join(sorted(names))}")
    out: dict[str, float] = {}
    for key, seconds in value.items():
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise _invalid(where, f"{key} must be a positive number of seconds")
        out[key] = float(seconds)
    return out


STDIO_KEYS = {"command", "args", "env"}
HTTP_KEYS = {"url", "headers"}
COMMON_KEYS = {"transport", "timeouts", "restart"}


def parse_server(name: str, raw: Any, scope: Scope) -> ServerDefinition:
    """One definition from a file; raises :class:`ConfigError` naming the file and server."""
    where = f"{SHOWN[scope]}: server {name!r}"
    check_name(name, SHOWN[scope])
    if not isinstance(raw, dict):
        raise _invalid(where, "a definition is a mapping (command and args, or url)")
    unknown = set(raw) - STDIO_KEYS - HTTP_KEYS - COMMON_KEYS
    if unknown:
        raise _invalid(where, f"unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    transport = raw.get("transport") or (Transport.HTTP if "url" in raw else Transport.STDIO)
    if transport not in (Transport.STDIO, Transport.HTTP):
        raise _invalid(where, "transport is stdio or http")
    transport = Transport(transport)
    keys, other = (STDIO_KEYS, HTTP_KEYS)
    if transport is Transport.HTTP:
        keys, other = other, keys
    if set(raw) & other:
        wrong = ", ".join(sorted(set(raw) & other))
        raise _invalid(where, f"{transport} servers take {', '.join(sorted(keys))}, not {wrong}")
    timeouts = Timeouts(**_seconds(raw.get("timeouts", {}), f"{where}: timeouts", Timeouts))
    restart = Restart(**_seconds(raw.get("restart", {}), f"{where}: restart", Restart))
    if restart.initial_delay > restart.max_delay:
        raise _invalid(where, "restart.initial_delay must not exceed restart.max_delay")
    if transport is Transport.STDIO:
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise _invalid(where, "command is required (the program that serves MCP on stdio)")
        return ServerDefinition(
            name,
            transport,
            scope,
            command=command,
            args=_strings(raw.get("args", []), where, "args"),
            env=_string_map(raw.get("env", {}), where, "env"),
            timeouts=timeouts,
            restart=restart,
        )
    url = raw.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://", url):
        raise _invalid(where, "url must be an http:// or https:// URL")
    return ServerDefinition(
        name,
        transport,
        scope,
        url=url,
        headers=_string_map(raw.get("headers", {}), where, "headers"),
        timeouts=timeouts,
        restart=restart,
    )


class ConfigFile:
    """One ``mcp.yaml``: read whole, changed, and replaced atomically (mode 0600: headers and
    environments may hold secrets). A file that does not exist is empty."""

    def __init__(self, path: Path, scope: Scope) -> None:
        self.path = path
        self.scope = scope

    @property
    def shown(self) -> str:
        return SHOWN[self.scope]

    def read_raw(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(
                f"cannot read {self.shown}: {exc.strerror or type(exc).__name__}",
                reason=Reason.MCP_CONFIG_INVALID,
            ) from None
        try:
            data = yamltext.load(text)
        except yamltext.YamlError as exc:
            at = f" (line {exc.line})" if exc.line is not None else ""
            raise ConfigError(
                f"{self.shown} is not valid YAML{at}", reason=Reason.MCP_CONFIG_INVALID
            ) from None
        if data is None:
            return {}
        if not isinstance(data, dict) or not set(data) <= {"servers"}:
            raise ConfigError(
                f"{self.shown} holds one mapping, servers", reason=Reason.MCP_CONFIG_INVALID
            )
        servers = data.get("servers") or {}
        if not isinstance(servers, dict):
            raise ConfigError(
                f"{self.shown}: servers maps names to definitions",
                reason=Reason.MCP_CONFIG_INVALID,
            )
        return {"servers": servers}

    def servers(self, *, skip_invalid: bool = False) -> dict[str, ServerDefinition]:
        """The file's definitions. ``skip_invalid``: a definition that is not one (a reserved
        or malformed name, a bad key) is left out with a warning naming it, so that one bad
        entry never keeps the others, or the daemon, from starting; a file that cannot be read
        as a whole still raises."""
        raw = self.read_raw().get("servers", {})
        found: dict[str, ServerDefinition] = {}
        for name, spec in raw.items():
            try:
                found[str(name)] = parse_server(str(name), spec, self.scope)
            except ConfigError as error:
                if not skip_invalid:
                    raise
                log.warning("skipped an MCP server: %s", error.message)
        return found

    def write_raw(self, data: Mapping[str, Any]) -> None:
        text = yamltext.dump(dict(data))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mcp-", suffix=".yaml", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def add(self, definition: ServerDefinition, *, replace_existing: bool = False) -> None:
        data = self.read_raw()
        servers = dict(data.get("servers", {}))
        self.servers()  # a file that is already broken is not rewritten
        if definition.name in servers and not replace_existing:
            raise ConfigError(
                f"{self.shown} already defines server {definition.name!r}; remove it first",
                reason=Reason.MCP_SERVER_EXISTS,
            )
        servers[definition.name] = definition.to_yaml()
        self.write_raw({"servers": servers})

    def remove(self, name: str) -> bool:
        """Remove ``name``; whether the file defined it."""
        data = self.read_raw()
        servers = dict(data.get("servers", {}))
        if name not in servers:
            return False
        del servers[name]
        self.write_raw({"servers": servers})
        return True


def user_file(home: Path) -> ConfigFile:
    return ConfigFile(home / USER_FILE, Scope.USER)


def workspace_file(workspace: Path) -> ConfigFile:
    return ConfigFile(workspace / WORKSPACE_FILE, Scope.WORKSPACE)
