"""Agent definitions: which program answers a session's prompts, through the Agent Client
Protocol (ACP), and what it offers (models, reasoning efforts).

A session's runtime ``provider`` names a definition. Four are built in (``claude``, ``codex``,
``gemini`` and ``echo``, the deterministic agent that ships with compozy-mcp); more come from
``$COMPOZY_HOME/agents.yaml`` and a workspace's ``.compozy/agents.yaml``, and a definition
there with a built-in's name replaces it::

    agents:
      reviewer:
        command: npx
        args: [-y, "@zed-industries/claude-code-acp"]
        env: {ANTHROPIC_MODEL: claude-sonnet-5}
        provider: claude
        default_model: claude-sonnet-5
        models: [claude-sonnet-5]
        description: Reviews diffs

``like: NAME`` starts a definition from one already loaded (a built-in, or one defined earlier),
its own fields replacing that one's; ``agents: {general: {like: claude}}`` is a one-line file
that gives Claude Code a second name (the agent the spec's Loop example runs).

A file that cannot be read or parsed, or a definition that breaks the schema, is a *problem*
(``compozy agent list`` shows it); it never stops the other definitions from loading.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compozy_mcp.validation import InputCheck, describe

FILE_NAME = "agents.yaml"
WORKSPACE_DIR = ".compozy"
MAX_FILE_BYTES = 256 * 1024
NAME_PATTERN = "^[a-z][a-z0-9_-]{0,31}$"
BUILTIN = "builtin"
HOME = "home"
WORKSPACE = "workspace"


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    #: who makes the agent (a label: claude, codex, gemini, compozy, ...)
    provider: str = ""
    description: str = ""
    models: tuple[str, ...] = ()
    default_model: str | None = None
    reasoning_efforts: tuple[str, ...] = ()
    default_effort: str | None = None
    #: where it was defined: builtin, home or workspace
    source: str = BUILTIN

    def record(self) -> dict[str, Any]:
        """The public record (``compozy__agent_list``)."""
        out: dict[str, Any] = {
            "name": self.name,
            "provider": self.provider or self.name,
            "description": self.description,
            "command": [self.command, *self.args],
            "models": list(self.models),
            "reasoning_efforts": list(self.reasoning_efforts),
            "source": self.source,
            "env_keys": sorted(self.env),
        }
        if self.default_model is not None:
            out["default_model"] = self.default_model
        if self.default_effort is not None:
            out["default_reasoning_effort"] = self.default_effort
        return out


BUILTINS: dict[str, AgentDefinition] = {
    "claude": AgentDefinition(
        name="claude",
        command="npx",
        args=("-y", "@zed-industries/claude-code-acp"),
        provider="claude",
        description="Claude Code through its ACP adapter (needs Node and an Anthropic login)",
        models=("claude-opus-5-5", "claude-sonnet-5", "claude-haiku-5"),
        default_model="claude-opus-5-5",
        reasoning_efforts=("low", "medium", "high"),
        default_effort="medium",
    ),
    "codex": AgentDefinition(
        name="codex",
        command="npx",
        args=("-y", "@zed-industries/codex-acp"),
        provider="codex",
        description="OpenAI Codex through its ACP adapter (needs Node and an OpenAI login)",
        models=("gpt-5.5-codex", "gpt-5.5-codex-mini"),
        default_model="gpt-5.5-codex",
        reasoning_efforts=("minimal", "low", "medium", "high"),
        default_effort="medium",
    ),
    "gemini": AgentDefinition(
        name="gemini",
        command="gemini",
        args=("--experimental-acp",),
        provider="gemini",
        description="Gemini CLI in ACP mode (needs the gemini CLI and a Google login)",
        models=("gemini-3-pro", "gemini-3-flash"),
        default_model="gemini-3-pro",
    ),
    "echo": AgentDefinition(
        name="echo",
        command=sys.executable,
        args=("-m", "compozy_mcp.agents.echo"),
        provider="compozy",
        description="A deterministic agent that ships with compozy-mcp: echoes prompts, asks "
        "permission for 'write', shows a plan for 'plan'; no credentials",
        models=("echo-1",),
        default_model="echo-1",
        reasoning_efforts=("low", "high"),
        default_effort="low",
    ),
}

_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 64}
DEFINITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "like": {"type": "string", "minLength": 1},
        "command": {"type": "string", "minLength": 1},
        "args": {"type": "array", "items": {"type": "string"}, "maxItems": 256},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "provider": {"type": "string", "minLength": 1, "maxLength": 64},
        "description": {"type": "string", "maxLength": 500},
        "models": _STRINGS,
        "default_model": {"type": "string", "minLength": 1},
        "reasoning_efforts": _STRINGS,
        "default_reasoning_effort": {"type": "string", "minLength": 1},
    },
    "additionalProperties": False,
}
FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agents": {
            "type": "object",
            "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {"type": "object"},
        }
    },
    "required": ["agents"],
    "additionalProperties": False,
}
_FILE_CHECK = InputCheck(FILE_SCHEMA)
_DEFINITION_CHECK = InputCheck(DEFINITION_SCHEMA)


@dataclass(frozen=True, slots=True)
class AgentFile:
    path: Path
    shown_as: str
    source: str
    #: relative commands resolve against it
    base: Path

    @classmethod
    def home(cls, home: Path) -> AgentFile:
        return cls(home / FILE_NAME, f"$COMPOZY_HOME/{FILE_NAME}", HOME, home)

    def stamp(self) -> tuple[int, int] | None:
        """What tells a change: modification time and size, or ``None`` when absent."""
        try:
            found = self.path.stat()
        except OSError:
            return None
        return (found.st_mtime_ns, found.st_size)

    @classmethod
    def workspace(cls, root: Path) -> AgentFile:
        return cls(
            root / WORKSPACE_DIR / FILE_NAME,
            f"{WORKSPACE_DIR}/{FILE_NAME} of workspace {root}",
            WORKSPACE,
            root,
        )


@dataclass(slots=True)
class AgentCatalog:
    """The definitions in effect, and what could not be loaded."""

    agents: dict[str, AgentDefinition]
    problems: list[dict[str, str]]

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def known(self) -> str:
        return ", ".join(sorted(self.agents))


def _definition(
    name: str, raw: dict[str, Any], file: AgentFile, base: AgentDefinition | None = None
) -> AgentDefinition:
    """A definition from its file entry; ``base`` (``like``) gives the fields it leaves out."""
    command = raw.get("command")
    if command is None:
        if base is None:
            raise ValueError('field "command" is required')
        command = base.command
    elif "/" in command and not Path(command).is_absolute():
        command = str(file.base / command)
    inherited = base if base is not None and "command" not in raw else None
    models = tuple(raw.get("models", base.models if base else ()))
    default_model = raw.get("default_model") or (
        base.default_model if base and "models" not in raw else None
    )
    default_model = default_model or (models[0] if models else None)
    if default_model is not None and models and default_model not in models:
        raise ValueError(f'default_model "{default_model}" is not one of its models')
    efforts = tuple(raw.get("reasoning_efforts", base.reasoning_efforts if base else ()))
    default_effort = raw.get("default_reasoning_effort") or (
        base.default_effort if base and "reasoning_efforts" not in raw else None
    )
    if default_effort is not None and default_effort not in efforts:
        raise ValueError(f'default_reasoning_effort "{default_effort}" is not one of its efforts')
    return AgentDefinition(
        name=name,
        command=command,
        args=tuple(raw.get("args", inherited.args if inherited else ())),
        env={**(base.env if base else {}), **raw.get("env", {})},
        provider=raw.get("provider", (base.provider or base.name) if base else name),
        description=raw.get("description", base.description if base else ""),
        models=models or ((default_model,) if default_model else ()),
        default_model=default_model,
        reasoning_efforts=efforts,
        default_effort=default_effort,
        source=file.source,
    )


def read_file(file: AgentFile, into: AgentCatalog) -> None:
    """Add the definitions of one file to a catalog; report what cannot be used."""
    try:
        if not file.path.exists():
            return
        if file.path.stat().st_size > MAX_FILE_BYTES:
            into.problems.append(
                {"source": file.shown_as, "message": f"larger than {MAX_FILE_BYTES} bytes"}
            )
            return
        loaded = yaml.safe_load(file.path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        into.problems.append({"source": file.shown_as, "message": f"cannot read: {first_line}"})
        return
    if loaded is None:
        return
    if not _FILE_CHECK.is_valid(loaded):
        into.problems.append(
            {
                "source": file.shown_as,
                "message": 'must be a mapping with an "agents" mapping of names '
                "(lowercase letters, digits, _ and -) to definitions",
            }
        )
        return
    for name, raw in loaded["agents"].items():
        problem = None
        if not _DEFINITION_CHECK.is_valid(raw):
            where, what = describe(
                _DEFINITION_CHECK.validator.iter_errors(raw), unknown="is not a field of an agent"
            )
            problem = what if where == "$" else f'field "{where}" {what}'
        else:
            base = into.agents.get(raw["like"]) if "like" in raw else None
            if "like" in raw and base is None:
                problem = f'like "{raw["like"]}" names no agent (known: {into.known()})'
            else:
                try:
                    into.agents[name] = _definition(name, raw, file, base)
                except ValueError as exc:
                    problem = str(exc)
        if problem is not None:
            into.problems.append({"source": file.shown_as, "agent": name, "message": problem})


def agent_files(home: Path, workspace_root: Path | None = None) -> list[AgentFile]:
    """The files a catalog is read from, in the order they apply (later wins)."""
    files = [AgentFile.home(home)]
    if workspace_root is not None:
        files.append(AgentFile.workspace(workspace_root))
    return files


def load_catalog(home: Path, workspace_root: Path | None = None) -> AgentCatalog:
    """Built-ins, then ``$COMPOZY_HOME/agents.yaml``, then the workspace's file (later wins)."""
    catalog = AgentCatalog(dict(BUILTINS), [])
    for file in agent_files(home, workspace_root):
        read_file(file, catalog)
    return catalog


class CatalogCache:
    """Catalogs by workspace, read again only when one of their files changed (a stat per
    file, instead of parsing YAML on every session created or bound)."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._read: dict[str | None, tuple[tuple[object, ...], AgentCatalog]] = {}

    def get(self, workspace_path: str | None) -> AgentCatalog:
        root = Path(workspace_path) if workspace_path else None
        stamps = tuple(file.stamp() for file in agent_files(self._home, root))
        cached = self._read.get(workspace_path)
        if cached is not None and cached[0] == stamps:
            return cached[1]
        catalog = load_catalog(self._home, root)
        self._read[workspace_path] = (stamps, catalog)
        return catalog
