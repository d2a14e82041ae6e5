"""A hook as the engine runs it: which calls it matches, how it runs, and what it does when it
fails; and its record, as the hook tools show it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from compozy_mcp.hooks._command import CommandRunner
from compozy_mcp.hooks._events import Caller
from compozy_mcp.hooks._execution import Runner
from compozy_mcp.hooks._webhook import WebhookRunner
from compozy_mcp.native.hook_schema import REDACTED, normalized

#: where a hook comes from: code (in-process, never listed), the tools, or a hooks.yaml
CODE = "code"
STORE = "store"
HOME = "home"
WORKSPACE = "workspace"


@dataclass(frozen=True, slots=True)
class Matcher:
    """Which calls a hook runs on. Every field set must match; session fields never match a
    call the operator makes (it has no session)."""

    tool: str | None = None
    agent_name: str | None = None
    workspace: str | None = None
    session_type: str | None = None
    #: a workspace's own hooks run for calls of that workspace's sessions only
    workspace_id: str | None = None

    @classmethod
    def of(cls, fields: Mapping[str, Any], workspace_id: str | None = None) -> Matcher:
        return cls(
            tool=fields.get("tool"),
            agent_name=fields.get("agent_name"),
            workspace=fields.get("workspace"),
            session_type=fields.get("session_type"),
            workspace_id=workspace_id,
        )

    def matches_tool(self, tool_id: str) -> bool:
        return self.tool is None or fnmatchcase(tool_id, self.tool)

    def matches(self, tool_id: str, caller: Caller | None) -> bool:
        if not self.matches_tool(tool_id):
            return False
        if self.agent_name is None and self.workspace is None and self.session_type is None:
            return self.workspace_id is None or (
                caller is not None and caller.workspace_id == self.workspace_id
            )
        if caller is None:
            return False
        return (
            (self.workspace_id is None or caller.workspace_id == self.workspace_id)
            and (self.agent_name is None or fnmatchcase(caller.agent_name, self.agent_name))
            and (self.session_type is None or caller.session_type == self.session_type)
            and (
                self.workspace is None
                or fnmatchcase(caller.workspace_id, self.workspace)
                or (
                    caller.workspace_name is not None
                    and fnmatchcase(caller.workspace_name, self.workspace)
                )
            )
        )


@dataclass(frozen=True, slots=True)
class Hook:
    id: str
    event: str
    matcher: Matcher
    runner: Runner
    timeout: float
    sync: bool
    enabled: bool
    #: a failing sync tool.pre_call hook: "allow" lets the call run, "deny" refuses it
    on_error: str
    source: str
    #: the definition, normalized (defaults filled in); empty for in-process hooks
    definition: Mapping[str, Any]
    workspace_id: str | None = None
    #: the hooks.yaml it is defined in
    file: str | None = None
    #: where its command runs: its workspace for a workspace's hooks, else $COMPOZY_HOME
    cwd: str | None = None
    created_at: str | None = None
    updated_at: str | None = None

    @property
    def recorded(self) -> bool:
        """Runs of configured hooks are logged; in-process ones (code) are not."""
        return self.source != CODE

    @classmethod
    def configured(
        cls,
        hook_id: str,
        definition: Mapping[str, Any],
        *,
        source: str,
        cwd: str | None,
        workspace_id: str | None = None,
        file: str | None = None,
        created_at: str | None = None,
        updated_at: str | None = None,
    ) -> Hook:
        """A hook from a checked definition (a stored one, or one from a hooks.yaml)."""
        spec = normalized(definition)
        runner: Runner = (
            CommandRunner(spec["command"])
            if "command" in spec
            else WebhookRunner(spec["url"], spec.get("headers"))
        )
        return cls(
            id=hook_id,
            event=spec["event"],
            matcher=Matcher.of(spec["matcher"], workspace_id),
            runner=runner,
            timeout=spec["timeout"],
            sync=spec["mode"] == "sync",
            enabled=spec["enabled"],
            on_error=spec["on_error"],
            source=source,
            definition=spec,
            workspace_id=workspace_id,
            file=file,
            cwd=cwd,
            created_at=created_at,
            updated_at=updated_at,
        )

    def record(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        """The hook as the hook tools show it (header values redacted)."""
        spec = dict(self.definition)
        spec.pop("id", None)
        if "headers" in spec:
            spec["headers"] = dict.fromkeys(spec["headers"], REDACTED)
        out: dict[str, Any] = {
            "id": self.id,
            "event": spec.pop("event"),
            "enabled": spec.pop("enabled"),
            "source": self.source,
        }
        if self.workspace_id is not None:
            out["workspace_id"] = self.workspace_id
        out.update(spec)
        if self.file is not None:
            out["file"] = self.file
        if self.created_at is not None:
            out["created_at"] = self.created_at
        if self.updated_at is not None:
            out["updated_at"] = self.updated_at
        out["stats"] = dict(stats)
        return out
