"""Hooks in files: ``$COMPOZY_HOME/hooks.yaml`` (every call) and a workspace's
``.compozy/hooks.yaml`` (calls of that workspace's sessions).

::

    hooks:
      - id: full-status
        event: tool.pre_call
        matcher: {tool: compozy__session_status}
        command: ./hooks/full-status.sh

A file that cannot be read or parsed loads no hook; a hook that breaks the schema is skipped.
Either is reported as a *problem* (``compozy hooks list`` shows them) and never fails a call:
a broken file must not stop every tool, including the ones that fix it. A workspace's hooks
are named ``<workspace_id>.<id>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compozy_mcp import yamltext
from compozy_mcp.hooks._model import HOME, WORKSPACE, Hook
from compozy_mcp.native.hook_schema import FILE_HOOK, HOOKS_FILE, definition_problem
from compozy_mcp.validation import InputCheck, describe

FILE_NAME = "hooks.yaml"
WORKSPACE_DIR = ".compozy"
#: the largest hooks.yaml read
MAX_FILE_BYTES = 1024 * 1024

_FILE_CHECK = InputCheck(HOOKS_FILE)
_HOOK_CHECK = InputCheck(FILE_HOOK)


@dataclass(frozen=True, slots=True)
class HookFile:
    """Where one hooks.yaml is, and how it is named in messages (never an absolute path)."""

    path: Path
    shown_as: str
    source: str
    #: the directory its commands run in
    cwd: str
    workspace_id: str | None = None

    @classmethod
    def home(cls, home: Path) -> HookFile:
        return cls(home / FILE_NAME, f"$COMPOZY_HOME/{FILE_NAME}", HOME, str(home))

    @classmethod
    def workspace(cls, workspace_id: str, root: Path) -> HookFile:
        return cls(
            root / WORKSPACE_DIR / FILE_NAME,
            f"{WORKSPACE_DIR}/{FILE_NAME} of workspace {workspace_id}",
            WORKSPACE,
            str(root),
            workspace_id,
        )

    def stamp(self) -> tuple[int, int] | None:
        """What tells a change: modification time and size, or ``None`` when absent."""
        try:
            found = self.path.stat()
        except OSError:
            return None
        return (found.st_mtime_ns, found.st_size)

    def problem(self, message: str, hook_id: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.shown_as, "message": message}
        if self.workspace_id is not None:
            out["workspace_id"] = self.workspace_id
        if hook_id is not None:
            out["hook_id"] = hook_id
        return out


@dataclass(slots=True)
class Loaded:
    hooks: list[Hook] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)


def _document(source: HookFile) -> Any:
    with source.path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"it is larger than {MAX_FILE_BYTES} bytes")
    return yamltext.load(data) or {}


def _entries(source: HookFile, into: Loaded) -> Iterator[dict[str, Any]]:
    try:
        document = _document(source)
    except FileNotFoundError:
        return
    except OSError as exc:
        into.problems.append(source.problem(f"cannot be read ({exc.strerror})"))
        return
    except yamltext.YamlError as exc:
        line = f" at line {exc.line}" if exc.line is not None else ""
        into.problems.append(source.problem(f"is not valid YAML{line}"))
        return
    except ValueError as exc:
        into.problems.append(source.problem(str(exc)))
        return
    if not _FILE_CHECK.is_valid(document):
        into.problems.append(source.problem('must be a mapping with a "hooks" list'))
        return
    yield from document.get("hooks") or []


def load(source: HookFile) -> Loaded:
    """Every valid hook of one file, and the problems of the rest."""
    loaded = Loaded()
    seen: set[str] = set()
    for index, entry in enumerate(_entries(source, loaded)):
        local_id = entry.get("id") if isinstance(entry.get("id"), str) else None
        named = f'hook "{local_id}"' if local_id else f"hook #{index + 1}"
        if not _HOOK_CHECK.is_valid(entry):
            name, problem = describe(
                _HOOK_CHECK.validator.iter_errors(entry), unknown="is not a field of a hook"
            )
            where = "" if name == "$" else f' field "{name}"'
            loaded.problems.append(source.problem(f"{named}{where} {problem}", local_id))
            continue
        rule = definition_problem(entry)
        if rule is not None:
            field_name, rule_text = rule
            where = "" if field_name is None else f' field "{field_name}"'
            loaded.problems.append(source.problem(f"{named}{where} {rule_text}", local_id))
            continue
        assert local_id is not None  # the schema requires it
        if local_id in seen:
            loaded.problems.append(source.problem(f"{named} is defined twice", local_id))
            continue
        seen.add(local_id)
        hook_id = local_id if source.workspace_id is None else f"{source.workspace_id}.{local_id}"
        loaded.hooks.append(
            Hook.configured(
                hook_id,
                entry,
                source=source.source,
                cwd=source.cwd,
                workspace_id=source.workspace_id,
                file=str(source.path),
            )
        )
    return loaded
