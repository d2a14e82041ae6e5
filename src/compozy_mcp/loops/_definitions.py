"""Loop definitions: linting a document (in a worker thread), storing it as a new version of
a Loop the caller may act on (:mod:`.ownership`), and reading stored versions back as
definitions linted against today's tools."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import LoopInvalid, ResourceNotFound, ToolConflict, ToolInvalidInput
from compozy_mcp.loops import _ownership as ownership
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.loops._lint import KnownAgents, errors, lint
from compozy_mcp.loops._model import WARNING, Definition, LintItem
from compozy_mcp.loops._records import loop_record
from compozy_mcp.loops._source import Source, SourceError, from_object, load
from compozy_mcp.loops.limits import LoopLimits
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.store.base import Store
from compozy_mcp.store.loops import LoopRow

FORMAT = superseded.VIEWS_FORMAT


class LoopDefinitions:
    def __init__(
        self,
        store: Store,
        tools: ToolRegistry,
        sessions: Sessions,
        now: Callable[[], str],
        offload: Offload,
        limits: LoopLimits,
    ) -> None:
        self._store = store
        self._tools = tools
        self._sessions = sessions
        self._now = now
        self._offload = offload
        self._limits = limits

    def _source(self, call: CallInfo, given: Any) -> Source:
        if isinstance(given, str):
            try:
                return load(given, self._limits)
            except SourceError as exc:
                raise LoopInvalid(
                    call.tool_id,
                    [
                        LintItem(
                            "definition_invalid", exc.message, line=exc.line, column=exc.column
                        ).payload()
                    ],
                ) from exc
        if isinstance(given, Mapping):
            return from_object(given)
        raise ToolInvalidInput.for_field(
            call.tool_id, "definition", "must be the Loop document (YAML or JSON text) or an object"
        )

    def _agents(self, severity: str) -> KnownAgents | None:
        """The agents a ``run-agent`` node's new session may run (the catalog a session created
        without a workspace reads); ``None`` where this process knows none."""
        names = tuple(sorted(self._sessions.agent_catalog(None).agents))
        return KnownAgents(names, severity) if names else None

    async def lint(
        self, call: CallInfo, given: Any, agents: str = WARNING
    ) -> tuple[Definition, list[LintItem]]:
        """Lint in a worker thread: a large Loop takes a fraction of a second of CPU, which the
        event loop's other callers should not wait for. ``agents``: the severity of an unknown
        agent (an error when the run starts now)."""
        return await self._offload(self._lint_now, call, given, agents)

    def _lint_now(
        self, call: CallInfo, given: Any, agents: str
    ) -> tuple[Definition, list[LintItem]]:
        try:
            source = self._source(call, given)
        except LoopInvalid as exc:
            items = [LintItem(**_item_fields(item)) for item in exc.details["items"]]
            return Definition(None, None, {}, [], from_object({})), items
        return lint(source, self._tools, self._agents(agents), self._limits)

    async def validate(self, call: CallInfo, definition: Any) -> dict[str, Any]:
        _, items = await self.lint(call, definition)
        return {
            "valid": not errors(items),
            "items": [item.payload() for item in items],
        }

    async def checked(self, call: CallInfo, given: Any, agents: str) -> Definition:
        definition, items = await self.lint(call, given, agents)
        if errors(items):
            raise LoopInvalid(call.tool_id, [item.payload() for item in items])
        return definition

    async def create(
        self, call: CallInfo, definition: Any, loop_id: str | None, *, agents: str = WARNING
    ) -> dict[str, Any]:
        """Lint and store a version; an unknown agent is a warning (the catalog can change
        before a run), unless ``agents`` is ``error`` (a run starts now)."""
        checked = await self.checked(call, definition, agents)
        loop_id = loop_id or f"loop-{secrets.token_hex(4)}"
        caller = call.scope.session_id
        with self._store.read() as reader:
            existing = reader.loop(loop_id)
        if existing is not None:
            ownership.check_loop(self._sessions.access, call, loop_id, existing.owner)
        owner = existing.owner if existing is not None else caller
        doc = {
            "format": FORMAT,
            "document": checked.document,
            "source": definition if isinstance(definition, str) else None,
            "created_by": caller,
        }

        def insert() -> LoopRow:
            with self._store.write() as writer:
                latest = writer.loop(loop_id)
                if (latest is None) != (existing is None) or (
                    latest is not None and latest.owner != owner
                ):
                    raise ToolConflict(
                        call.tool_id,
                        f'loop "{loop_id}" was stored by another caller meanwhile; try again',
                        reason=Reason.WRITE_CONFLICT,
                    )
                row = LoopRow(
                    loop_id,
                    (latest.version + 1) if latest else 1,
                    checked.name,
                    doc,
                    self._now(),
                    owner=owner,
                    author=caller,
                )
                writer.add_loop(row)
                return row

        row = await self._offload(insert)
        return loop_record(row, checked, self._tools)

    def row(self, call: CallInfo, loop_id: str, version: int | None) -> LoopRow:
        with self._store.read() as reader:
            row = reader.loop(loop_id, version)
        if row is None:
            ident = loop_id if version is None else f"{loop_id}@{version}"
            raise ResourceNotFound(call.tool_id, "loop", ident)
        return row

    async def definition_of(self, row: LoopRow) -> Definition:
        """A stored version as a definition (read in a worker thread); a snapshot from before
        views is translated to ``full`` on load (:mod:`.superseded`)."""
        definition, _ = await self._offload(self.linted, row)
        return definition

    def linted(self, row: LoopRow, agents: str | None = None) -> tuple[Definition, list[LintItem]]:
        """A stored version, read and linted against today's tools (and, with ``agents``, the
        agent catalog, an unknown agent with that severity)."""
        doc = superseded.translate_definition(row.doc, self._tools)
        text = doc.get("source")
        source = load(text, self._limits) if isinstance(text, str) else from_object(doc["document"])
        return lint(source, self._tools, self._agents(agents) if agents else None, self._limits)

    def owned_row(self, call: CallInfo, loop_id: str, version: int | None) -> LoopRow:
        """A stored version the caller may act on (:mod:`.ownership`)."""
        row = self.row(call, loop_id, version)
        ownership.check_loop(self._sessions.access, call, loop_id, row.owner)
        return row

    async def info(self, call: CallInfo, loop_id: str, version: int | None) -> dict[str, Any]:
        row = self.owned_row(call, loop_id, version)
        with self._store.read() as reader:
            versions = reader.loop_versions(loop_id)
        result = loop_record(row, await self.definition_of(row), self._tools)
        result["loop"]["versions"] = [
            {
                "version": v.version,
                "author": ownership.author_label(v.author),
                "created_at": v.created_at,
            }
            for v in versions
        ]
        return result

    async def list_loops(self, call: CallInfo) -> dict[str, Any]:
        """The latest version of each Loop the caller may act on."""
        with self._store.read() as reader:
            everything = reader.loops()
        caller = call.scope.session_id
        rows = [
            row for row in everything if ownership.owns(self._sessions.access, caller, row.owner)
        ]
        return {
            "loops": [
                loop_record(row, await self.definition_of(row), self._tools)["loop"] for row in rows
            ]
        }


def _item_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: item[k] for k in ("code", "message", "severity", "node_id", "path", "line", "column")
    }
