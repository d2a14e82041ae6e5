"""What one Host API operation is: the declaration every surface derives its part from.

An :class:`Operation` names the operation, the native tool it calls as the operator (if it is
one), its HTTP method and path, its query parameters and body, the status of a success, the
schemas the OpenAPI document names and the CLI command with its help. The routes
(:mod:`compozy_mcp.api.routes`), the OpenAPI paths (:mod:`compozy_mcp.api.openapi`), the remote
client (:mod:`.remote`), the in-process client (:mod:`.local`) and the CLI's parsers read it, so
adding an operation is one declaration in :mod:`.operations` plus its handler.

Nothing here imports more than the standard library: the CLI reads these at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

#: what the operation answers (the JSON payload of its HTTP route, typed)
R = TypeVar("R", bound=Mapping[str, Any])
R_co = TypeVar("R_co", bound=Mapping[str, Any], covariant=True)

_PATH_FIELD = re.compile(r"\{([a-z_]+)\}")


class Kind(Enum):
    """How a query parameter's text becomes the input field's value."""

    TEXT = "text"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    #: comma-separated, a list of strings
    LIST = "list"


class Body(Enum):
    NONE = "none"
    #: a JSON object is required
    OBJECT = "object"
    #: a JSON object, or nothing (``{}``)
    OPTIONAL = "optional"


@dataclass(frozen=True, slots=True)
class Param:
    """One query parameter: ``name`` on the wire fills the input field ``field``."""

    name: str
    kind: Kind = Kind.TEXT
    description: str = ""
    field: str = ""
    #: the parameter's JSON schema in the OpenAPI document; ``None``: the tool's input field's
    schema: Mapping[str, Any] | None = None
    required: bool = False
    #: only a stream reads it (``GET .../events?until=turn_end``): never a tool input
    stream_only: bool = False

    @property
    def input_field(self) -> str:
        return self.field or self.name


@dataclass(frozen=True, slots=True)
class Cli:
    """The command that runs the operation: ``compozy <words>``, with its help."""

    words: str
    help: str


@dataclass(frozen=True, slots=True)
class Operation(Generic[R_co]):
    """One Host API operation; ``R_co`` types what :meth:`HostClient.call` answers for it."""

    #: the operation's name (snake case), unique
    name: str
    #: ``GET``, ``POST``, ``PATCH``, ``DELETE``
    method: str
    #: the path under ``/api``; ``{field}`` segments are input fields (ids)
    path: str
    operation_id: str
    summary: str
    #: the native tool it calls as the operator; ``None``: the host answers it itself
    tool_id: str | None = None
    #: the tool whose input checks an operation the host answers itself (its errors name it)
    input_of: str | None = None
    #: the tool has result views: the host asks its full view (routes answer full records)
    views: bool = True
    #: the run records' node errors are redacted as every CLI and HTTP error is (Loops)
    redact: bool = False
    query: tuple[Param, ...] = ()
    #: the words that end an error for a query parameter the operation does not take; ``None``:
    #: unknown parameters are ignored
    unknown_query: str | None = None
    body: Body = Body.NONE
    #: the body's fields; ``None``: whatever the tool (or the host) checks
    body_fields: tuple[str, ...] | None = None
    #: the body field the host drops before the tool sees it (a view the route answers in full)
    body_drops: tuple[str, ...] = ()
    #: takes the ``X-Compozy-Session`` header: the call is made as that managed session
    as_session: bool = False
    status: int = 200
    #: OpenAPI component names of the request body and the response
    request: str | None = None
    response: str = ""
    #: error statuses the operation may answer besides the guard's
    errors: tuple[int, ...] = ()
    cli: Cli | None = None

    @property
    def checked_as(self) -> str:
        """The tool id errors in this operation's input name."""
        return self.tool_id or self.input_of or self.operation_id

    @property
    def path_fields(self) -> tuple[str, ...]:
        return tuple(_PATH_FIELD.findall(self.path))

    def http_path(self, args: Mapping[str, Any], quote: Any) -> tuple[str, dict[str, Any]]:
        """The path with its ids filled from ``args`` (each through ``quote``), and the rest of
        ``args``."""
        rest = dict(args)
        path = self.path
        for field in self.path_fields:
            path = path.replace("{" + field + "}", quote(str(rest.pop(field))))
        return path, rest

    def query_of(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` as this operation's query parameters (a list joined with commas)."""
        by_field = {param.input_field: param for param in self.query}
        out: dict[str, Any] = {}
        for field, value in args.items():
            param = by_field.get(field)
            name = field if param is None else param.name
            listed = param is not None and param.kind is Kind.LIST and isinstance(value, list)
            out[name] = ",".join(str(item) for item in value) if listed else value
        return out
