"""JSON Schema building blocks: the records, inputs and bodies of compozy-mcp are written with
these, closed wherever compozy-mcp owns their shape, so that every contract derived from them
(a compact view, an OpenAPI body) is exact too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
COUNT: Schema = {"type": "integer", "minimum": 0}
BOOLEAN: Schema = {"type": "boolean"}
TIMESTAMP: Schema = {"type": "string", "format": "date-time"}
OPEN_OBJECT: Schema = {"type": "object"}


def described(schema: Schema, description: str) -> Schema:
    return {**schema, "description": description}


def nullable(schema: Schema) -> Schema:
    kind = schema["type"]
    return {**schema, "type": [*(kind if isinstance(kind, list) else [kind]), "null"]}


def array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


def strings(**extra: Any) -> Schema:
    return array(STRING, **extra)


def enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}


def obj(
    required: Mapping[str, Schema] | None = None,
    optional: Mapping[str, Schema] | None = None,
    *,
    order: tuple[str, ...] = (),
    closed: bool = True,
) -> Schema:
    """An object schema; ``order`` lists property names in record order when they interleave."""
    required = dict(required or {})
    optional = dict(optional or {})
    merged = {**required, **optional}
    names = list(order) + [name for name in merged if name not in order]
    schema: Schema = {"type": "object", "properties": {name: merged[name] for name in names}}
    if required:
        schema["required"] = [name for name in names if name in required]
    schema["additionalProperties"] = not closed
    return schema


def tool_input(
    required: Mapping[str, Schema] | None = None,
    optional: Mapping[str, Schema] | None = None,
    **extra: Any,
) -> Schema:
    """A closed input schema."""
    return {**obj(required, optional), **extra}
