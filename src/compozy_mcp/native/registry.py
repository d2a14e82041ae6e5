"""Native tool definitions and the registry that checks them.

A :class:`ToolDefinition` is what a tool author writes: id, description, input schema, full
output schema, an optional :class:`~compozy_mcp.views.ViewSpec`, risk class and handler. A
handler returns the *full* record and knows nothing of views or transports.

Registration turns a definition into a :class:`RegisteredTool`, deriving everything a surface
publishes (input schema with the selector, compact contract, digests) and refusing a tool that
breaks the rules, so a bad tool fails when the registry is built, never at call time.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from compozy_mcp.codes import Code
from compozy_mcp.errors import ToolInvalidInput, ToolNotFound, ToolRegistrationError
from compozy_mcp.jsonutil import integral, schema_digest
from compozy_mcp.reasons import Reason
from compozy_mcp.validation import InputCheck, unrepresentable_at
from compozy_mcp.views import SELECTOR_FIELD, CompiledViews, ResultView, ViewSpec, compile_views
from compozy_mcp.views.selector import SELECTOR_SCHEMA, select_view

if TYPE_CHECKING:
    from compozy_mcp.native.context import ToolCall

TOOL_ID = re.compile(r"^[a-z][a-z0-9]*__[a-z][a-z0-9_]*$")
VIEWS_SENTENCE = 'Returns the compact result; pass result_view "full" for the complete record.'
INPUT_ERROR_CODES = (Code.TOOL_INVALID_INPUT, Code.INVALID_REQUEST)

Handler = Callable[["ToolCall", dict[str, Any]], Awaitable[dict[str, Any]]]
Preview = Callable[[dict[str, Any]], str]


class Risk(StrEnum):
    READ = "read"
    MUTATING = "mutating"
    DESTRUCTIVE = "destructive"
    OPEN_WORLD = "open_world"


def _default_preview(record: dict[str, Any]) -> str:
    return ", ".join(sorted(record))


def count_preview(key: str, noun: str, plural: str | None = None) -> Preview:
    """``"3 skills; more with next_cursor"``: the preview of a listing under ``key``
    (``plural``: default the noun and an s)."""
    many = plural or f"{noun}s"

    def preview(result: dict[str, Any]) -> str:
        count = len(result[key])
        more = "; more with next_cursor" if "next_cursor" in result else ""
        return f"{count} {noun if count == 1 else many}{more}"

    return preview


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    id: str
    #: what the tool does; tools with views get the view sentence appended
    description: str
    input_schema: Mapping[str, Any]
    #: the schema of the complete record the handler returns
    output_schema: Mapping[str, Any]
    handler: Handler
    risk: Risk
    toolsets: tuple[str, ...]
    views: ViewSpec | None = None
    preview: Preview = _default_preview
    idempotent: bool = False
    #: a per-tool result budget; ``None`` uses the configured default
    max_result_bytes: int | None = None
    #: results are never moved to an artifact (the artifact reader itself)
    budget_exempt: bool = False
    #: tools that report input errors as ``invalid_request`` keep that code (spec, Errors)
    input_error_code: Code = Code.TOOL_INVALID_INPUT
    #: input fields that name a session the call acts on: a managed session may name only
    #: itself or a descendant (``sessions/access.py``); the operator names any
    acts_on: tuple[str, ...] = ()
    #: the one of ``acts_on`` that is filled with the calling session when absent
    scope_session_field: str | None = None
    #: only the operator may call it: dispatch refuses a managed session (``operator_only``)
    #: before anything else, approvals included
    operator_only: bool = False
    #: whether a managed session's call may be held for the operator's approval (by its
    #: risk and the session's permission mode); ``False`` only for the tool that answers
    asks_approval: bool = True
    #: what a client shows a person (MCP ``title``); default: made from the id
    title: str | None = None
    #: the handler reads (or writes) the store and the catalog and waits on nothing else: no
    #: agent, process, network, timer or person, and no progress to report. Over Streamable
    #: HTTP (2026-07-28) such a call is answered as JSON without the event stream's machinery
    #: unless it asks for progress or log lines (:mod:`compozy_mcp.proxy.http_sessions`)
    answers_at_once: bool = False


@dataclass(slots=True)
class RegisteredTool:
    """A checked tool, with everything its surfaces publish."""

    definition: ToolDefinition
    description: str
    input_schema: dict[str, Any]
    input_schema_digest: str
    #: the compact contract for tools with views, otherwise the single result's
    output_schema: Mapping[str, Any]
    output_schema_digest: str
    views: CompiledViews | None
    input_check: InputCheck = field(repr=False)

    @property
    def id(self) -> str:
        return self.definition.id

    @property
    def has_views(self) -> bool:
        return self.views is not None

    @property
    def risk(self) -> Risk:
        return self.definition.risk

    @property
    def title(self) -> str:
        """``compozy__session_runtime_set`` -> "Session runtime set", unless the definition
        gives its own."""
        if self.definition.title:
            return self.definition.title
        words = self.id.split("__", 1)[-1].replace("_", " ")
        return words[:1].upper() + words[1:]

    def check_input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """The input as handlers see it (integral floats made ints); raises
        :class:`ToolInvalidInput` naming the field, if it breaks the schema."""
        found = unrepresentable_at(tool_input)
        if found is not None:
            where, problem = found
            raise self.invalid(problem, field=where)
        checked: dict[str, Any] = self.input_check.check(
            self.id, tool_input, code=self.definition.input_error_code
        )
        return checked

    def object_input(self, raw: Any) -> dict[str, Any]:
        """``raw`` if it is an object (``None`` is ``{}``), else the input error."""
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise self.invalid("input must be a JSON object")
        return raw

    def selected_view(self, tool_input: Mapping[str, Any]) -> ResultView | None:
        """The view an input selects (``None``: a single-result tool); the selector's errors
        come first (spec, Errors rows 1-3)."""
        code = self.definition.input_error_code
        return select_view(self.id, self.has_views, tool_input, input_error_code=code)

    def checked_input(self, raw: Any) -> tuple[dict[str, Any], ResultView | None]:
        """An input as a call takes it: an object, the selector checked first, then the rest
        of the schema; with the view it selects."""
        tool_input = self.object_input(raw)
        view = self.selected_view(tool_input)
        return self.check_input(tool_input), view

    def invalid(self, message: str, *, field: str | None = None) -> ToolInvalidInput:
        code = self.definition.input_error_code
        if field is None:
            return ToolInvalidInput(self.id, f'tool "{self.id}" {message}', code=code)
        return ToolInvalidInput.for_field(self.id, field, message, code=code)


def _published_input_schema(defn: ToolDefinition) -> dict[str, Any]:
    schema = dict(defn.input_schema)
    if schema.get("type") != "object":
        raise ToolRegistrationError(
            defn.id,
            'the input schema must have "type": "object" at its root',
            reason=Reason.SCHEMA_INVALID,
        )
    properties = dict(schema.get("properties", {}))
    if SELECTOR_FIELD in properties:
        raise ToolRegistrationError(
            defn.id,
            f'the input schema declares "{SELECTOR_FIELD}" itself; the registry adds it to '
            "tools with views and no native tool may use the name otherwise",
            reason=Reason.SELECTOR_RESERVED,
        )
    if defn.views is not None:
        properties[SELECTOR_FIELD] = SELECTOR_SCHEMA
    schema["properties"] = properties
    return schema


def register(defn: ToolDefinition) -> RegisteredTool:
    """Check one definition and derive its published contracts."""
    if not TOOL_ID.match(defn.id):
        raise ToolRegistrationError(
            defn.id, "a tool id is <namespace>__<name> in lowercase", reason=Reason.TOOL_ID_INVALID
        )
    if defn.input_error_code not in INPUT_ERROR_CODES:
        raise ToolRegistrationError(
            defn.id,
            f"unknown input error code {defn.input_error_code!r}",
            reason=Reason.REGISTRATION_INVALID,
        )
    if not defn.toolsets:
        raise ToolRegistrationError(defn.id, "a tool belongs to at least one toolset")
    if defn.output_schema.get("type") != "object":
        raise ToolRegistrationError(
            defn.id,
            'the output schema must have "type": "object" at its root',
            reason=Reason.SCHEMA_INVALID,
        )
    # integers where a number is integral: served schemas print alike in every JSON library
    input_schema = integral(_published_input_schema(defn))
    full_schema: Mapping[str, Any] = integral(defn.output_schema)
    for name in defn.acts_on:
        if name not in input_schema["properties"]:
            raise ToolRegistrationError(
                defn.id,
                f'session field "{name}" is not an input',
                reason=Reason.REGISTRATION_INVALID,
            )
    if defn.scope_session_field and defn.scope_session_field not in defn.acts_on:
        raise ToolRegistrationError(
            defn.id,
            f'scope field "{defn.scope_session_field}" is not one of the fields it acts on',
            reason=Reason.REGISTRATION_INVALID,
        )
    views = compile_views(defn.id, defn.views, full_schema) if defn.views else None
    if views is not None:
        description = f"{defn.description.rstrip()} {VIEWS_SENTENCE}"
        output_schema, output_digest = views.compact.schema, views.compact.digest
    else:
        description = defn.description
        output_schema, output_digest = full_schema, schema_digest(dict(full_schema))
    return RegisteredTool(
        definition=defn,
        description=description,
        input_schema=input_schema,
        input_schema_digest=schema_digest(input_schema),
        output_schema=output_schema,
        output_schema_digest=output_digest,
        views=views,
        input_check=InputCheck(input_schema),
    )


class ToolRegistry:
    """Registered tools in a stable order (the order they were registered in)."""

    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}

    def add(self, defn: ToolDefinition) -> RegisteredTool:
        self._refuse_duplicate(defn.id)
        return self.add_registered(register(defn))

    def add_registered(self, tool: RegisteredTool) -> RegisteredTool:
        """A tool registered already (shared between registries: nothing changes one)."""
        self._refuse_duplicate(tool.id)
        self._tools[tool.id] = tool
        return tool

    def _refuse_duplicate(self, tool_id: str) -> None:
        if tool_id in self._tools:
            raise ToolRegistrationError(
                tool_id,
                "a tool with this id is already registered",
                reason=Reason.TOOL_ID_DUPLICATE,
            )

    def get(self, tool_id: str) -> RegisteredTool:
        tool = self._tools.get(tool_id)
        if tool is None:
            raise ToolNotFound(tool_id)
        return tool

    def find(self, tool_id: str) -> RegisteredTool | None:
        return self._tools.get(tool_id)

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._tools
