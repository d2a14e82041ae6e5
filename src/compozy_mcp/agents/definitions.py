"""Agent definitions: which program answers a session's prompts, through the Agent Client
Protocol (ACP), and what it offers (models, reasoning efforts).

A session's runtime ``provider`` names a definition. Four are built in (``claude``, ``codex``,
``gemini``: the real agents' adapters, pinned; and ``echo``, the deterministic agent that ships
with compozy-mcp); more come from ``$COMPOZY_HOME/agents.yaml`` and a workspace's
``.compozy/agents.yaml``, and a definition there with a built-in's name replaces it::

    agents:
      reviewer:
        command: claude-agent-acp
        package: "@zed-industries/claude-agent-acp@0.23.1"
        env: {ANTHROPIC_BASE_URL: "https://gateway.example"}
        provider: claude
        description: Reviews diffs

A definition that lists no models takes those the agent announces when it starts (ACP config
options, remembered in ``$COMPOZY_HOME/run/agents.json``).

``like: NAME`` starts a definition from one already loaded (a built-in, or one defined earlier),
its own fields replacing that one's; ``agents: {general: {like: claude}}`` is a one-line file
that gives Claude Code a second name (the agent the spec's Loop example runs).

A file that cannot be read or parsed, or a definition that breaks the schema, is a *problem*
(``compozy agent list`` shows it); it never stops the other definitions from loading.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compozy_mcp import yamltext
from compozy_mcp.agents._announced import Announcements
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
    #: the npm package (``name@version``) that provides ``command``: run from an installed
    #: copy when there is one (on PATH, or in ``$COMPOZY_HOME/agents``), else through ``npx``
    package: str | None = None
    #: the models and efforts were announced by the agent when it last started (not listed
    #: by its definition)
    announced: bool = False
    #: whether the agent is given compozy's MCP server for its session (its tools, under the
    #: session's policy and approvals)
    compozy_tools: bool = True
    #: how compozy's MCP server lists its tools to the agent: ``full`` (every tool) or
    #: ``search`` (three discovery tools that find and call the rest: a smaller prompt)
    discovery: str = "full"
    #: environment the agent refuses to start as root without, and why (checked before it
    #: starts, so that the user reads the cause, not the adapter's "Query closed")
    root_needs: Mapping[str, str] = field(default_factory=dict)
    root_reason: str = ""

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
        if self.package is not None:
            out["package"] = self.package
        if self.announced:
            out["models_from"] = "agent"
        if self.default_model is not None:
            out["default_model"] = self.default_model
        if self.default_effort is not None:
            out["default_reasoning_effort"] = self.default_effort
        return out


#: the real agents' adapters, pinned: their models and efforts are what each announces when it
#: starts (ACP config options), never a list written here that goes stale
CLAUDE_PACKAGE = "@zed-industries/claude-agent-acp@0.23.1"
CODEX_PACKAGE = "@zed-industries/codex-acp@0.16.0"
GEMINI_PACKAGE = "@google/gemini-cli@0.61.0"

BUILTINS: dict[str, AgentDefinition] = {
    "claude": AgentDefinition(
        name="claude",
        command="claude-agent-acp",
        package=CLAUDE_PACKAGE,
        root_needs={"IS_SANDBOX": "1"},
        root_reason="Claude Code refuses to skip its permission prompts as root",
        provider="claude",
        description="Claude Code through its ACP adapter (needs an Anthropic login or "
        "ANTHROPIC_API_KEY; docs/agents.md)",
    ),
    "codex": AgentDefinition(
        name="codex",
        command="codex-acp",
        package=CODEX_PACKAGE,
        provider="codex",
        description="OpenAI Codex through its ACP adapter (needs an OpenAI login or "
        "OPENAI_API_KEY; docs/agents.md)",
    ),
    "gemini": AgentDefinition(
        name="gemini",
        command="gemini",
        args=("--acp",),
        package=GEMINI_PACKAGE,
        # Gemini CLI drops the MCP servers a client hands it in an untrusted folder: the
        # workspaces compozy runs it in are the operator's own
        env={"GEMINI_CLI_TRUST_WORKSPACE": "true"},
        provider="gemini",
        description="Gemini CLI in ACP mode (needs a Google login or GEMINI_API_KEY; "
        "docs/agents.md)",
    ),
    "echo": AgentDefinition(
        name="echo",
        command=sys.executable,
        args=("-m", "compozy_mcp.echo_agent"),
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
        "package": {"type": "string", "minLength": 1, "maxLength": 214},
        "compozy_tools": {"type": "boolean"},
        "discovery": {"enum": ["full", "search"]},
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
        package=raw.get("package", inherited.package if inherited else None),
        compozy_tools=raw.get("compozy_tools", base.compozy_tools if base else True),
        discovery=raw.get("discovery", base.discovery if base else "full"),
        root_needs=inherited.root_needs if inherited else {},
        root_reason=inherited.root_reason if inherited else "",
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
        loaded = yamltext.load(file.path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yamltext.YamlError) as exc:
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


def with_announcements(
    catalog: AgentCatalog, announced: Mapping[str, Mapping[str, list[str]]]
) -> AgentCatalog:
    """The catalog with what agents announced given to the definitions that list nothing."""
    agents = dict(catalog.agents)
    for name, definition in catalog.agents.items():
        offered = announced.get(name)
        if offered is None or definition.models or definition.reasoning_efforts:
            continue
        agents[name] = replace(
            definition,
            models=tuple(offered.get("models", ())),
            reasoning_efforts=tuple(offered.get("reasoning_efforts", ())),
            announced=True,
        )
    return AgentCatalog(agents, catalog.problems)


class CatalogCache:
    """Catalogs by workspace, read again only when one of their files changed (a stat per
    file, instead of parsing YAML on every session created or bound)."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self.announcements = Announcements(home)
        self._read: dict[str | None, tuple[tuple[object, ...], AgentCatalog]] = {}

    def get(self, workspace_path: str | None) -> AgentCatalog:
        root = Path(workspace_path) if workspace_path else None
        stamps = (
            *(file.stamp() for file in agent_files(self._home, root)),
            self.announcements.stamp(),
        )
        cached = self._read.get(workspace_path)
        if cached is not None and cached[0] == stamps:
            return cached[1]
        catalog = with_announcements(load_catalog(self._home, root), self.announcements.read())
        self._read[workspace_path] = (stamps, catalog)
        return catalog
