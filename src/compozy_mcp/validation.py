"""Input validation: compiled JSON Schema validators and error messages that name the field.

jsonschema is imported when the first validator is compiled, not at start-up: a CLI command
that validates nothing does not pay for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from compozy_mcp.errors import ToolInvalidInput

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

#: the pattern of a string that must hold something other than whitespace
NOT_BLANK = r"\S"

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def compile_validator(schema: Mapping[str, Any]) -> Validator:
    """Check a schema and compile it (draft 2020-12); raises ``SchemaError`` if it is not valid."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _quote(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _field(path: Sequence[str | int], extra: str | None = None) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    if extra is not None:
        text = f"{text}.{extra}" if text else extra
    return text or "$"


def _problem(error: ValidationError) -> tuple[str, str]:
    """The field an error is about and what is wrong with it, in words."""
    path = list(error.absolute_path)
    kind = error.validator
    value: Any = error.validator_value
    instance = error.instance
    if kind == "required" and isinstance(instance, Mapping):
        missing = next(name for name in value if name not in instance)
        return _field(path, missing), "is required"
    if kind == "additionalProperties" and isinstance(instance, Mapping):
        schema = error.schema
        declared = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        extra = next((key for key in instance if key not in declared), None)
        if extra is not None:
            return _field(path, str(extra)), "is not an input of this tool"
    if kind == "dependentRequired" and isinstance(instance, Mapping):
        for trigger, needed in value.items():
            if trigger in instance:
                for name in needed:
                    if name not in instance:
                        return _field(path, name), f'is required when "{trigger}" is given'
    where = _field(path)
    if kind == "type":
        types = [value] if isinstance(value, str) else list(value)
        return where, "must be " + " or ".join(_TYPE_NAMES.get(t, t) for t in types)
    if kind == "enum":
        return where, "must be one of " + ", ".join(_quote(v) for v in value)
    if kind == "const":
        return where, f"must be {_quote(value)}"
    if kind == "minLength":
        return where, f"must be at least {value} characters long"
    if kind == "maxLength":
        return where, f"must be at most {value} characters long"
    if kind == "minimum":
        return where, f"must be at least {value}"
    if kind == "maximum":
        return where, f"must be at most {value}"
    if kind == "pattern" and value == NOT_BLANK:
        return where, "must not be blank"
    if kind == "pattern":
        return where, f"must match the pattern {value}"
    if kind == "minItems":
        return where, f"must have at least {value} items"
    if kind == "maxItems":
        return where, f"must have at most {value} items"
    if kind == "uniqueItems":
        return where, "must not contain duplicates"
    if kind == "minProperties":
        return where, f"must have at least {value} fields"
    return where, f"is invalid ({error.message})"


def input_error(tool_id: str, errors: Any, *, code: str | None = None) -> ToolInvalidInput:
    """The error to report for a failed validation: the most relevant one, by field."""
    from jsonschema.exceptions import best_match

    error = best_match(errors)
    assert error is not None
    field, problem = _problem(error)
    if field == "$":
        return ToolInvalidInput(tool_id, f'tool "{tool_id}" input {problem}', code=code)
    return ToolInvalidInput.for_field(tool_id, field, problem, code=code)
