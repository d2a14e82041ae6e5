"""Input validation: a fast check for the common case, compiled JSON Schema validators for the
rest, and error messages that name the field.

Most tool inputs are flat objects of strings, numbers, booleans and string lists. For those
:func:`fast_checker` compiles a plain-Python predicate that says *yes* only when jsonschema
would accept the input too (it says *no* for anything it is unsure of); a *no* hands the input
to jsonschema, which decides and words the error. jsonschema itself is imported only then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
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


Check = Callable[[Any], bool]

_OBJECT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "dependentRequired", "description"}
)
_VALUE_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "items",
        "uniqueItems",
        "minItems",
        "maxItems",
        "description",
        "format",
    }
)


def fast_checker(schema: Mapping[str, Any]) -> Check | None:
    """A predicate over inputs for a flat object schema, or ``None`` if the schema uses more
    than this subset. ``True`` is always jsonschema's verdict too; ``False`` means "ask it"."""
    if schema.get("type") != "object" or not set(schema) <= _OBJECT_KEYWORDS:
        return None
    closed = schema.get("additionalProperties", True)
    if closed not in (True, False):
        return None
    properties: dict[str, Check] = {}
    for name, sub in schema.get("properties", {}).items():
        check = _value_checker(sub)
        if check is None:
            return None
        properties[name] = check
    required = tuple(schema.get("required", ()))
    dependent = tuple((k, tuple(v)) for k, v in schema.get("dependentRequired", {}).items())
    open_object = closed is True

    def check_object(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            check = properties.get(name)
            if check is None:
                if not open_object:
                    return False
            elif not check(item):
                return False
        return all(
            all(need in value for need in needs) for trigger, needs in dependent if trigger in value
        )

    return check_object


def _value_checker(schema: Any) -> Check | None:
    if not isinstance(schema, Mapping) or not set(schema) <= _VALUE_KEYWORDS:
        return None
    kind = schema.get("type")
    if kind == "string":
        return _string_checker(schema)
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if set(schema) - {"type", "minimum", "maximum", "description"}:
            return None
        # A float that jsonschema would call an integer (1.0) is left to jsonschema.
        return lambda v: (
            type(v) is int and (low is None or v >= low) and (high is None or v <= high)
        )
    if kind == "boolean" and set(schema) <= {"type", "description"}:
        return lambda v: type(v) is bool
    if kind == "array":
        return _array_checker(schema)
    return None


def _string_checker(schema: Mapping[str, Any]) -> Check | None:
    enum = schema.get("enum")
    if enum is not None and not all(isinstance(e, str) for e in enum):
        return None
    allowed = frozenset(enum) if enum is not None else None
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None

    def check_string(v: Any) -> bool:
        if type(v) is not str:
            return False
        if allowed is not None and v not in allowed:
            return False
        if (shortest is not None or longest is not None) and not _length_ok(v, shortest, longest):
            return False
        return pattern is None or pattern.search(v) is not None

    return check_string


def _length_ok(v: str, shortest: int | None, longest: int | None) -> bool:
    return (shortest is None or len(v) >= shortest) and (longest is None or len(v) <= longest)


def _array_checker(schema: Mapping[str, Any]) -> Check | None:
    items = schema.get("items")
    item_check = _value_checker(items) if items is not None else None
    # Only arrays of strings: their equality (uniqueItems) is plain Python equality.
    if item_check is None or not isinstance(items, Mapping) or items.get("type") != "string":
        return None
    unique = bool(schema.get("uniqueItems"))
    fewest, most = schema.get("minItems"), schema.get("maxItems")

    def check_array(v: Any) -> bool:
        if type(v) is not list:
            return False
        if (fewest is not None and len(v) < fewest) or (most is not None and len(v) > most):
            return False
        if unique and len(set(v)) != len(v):
            return False
        return all(item_check(item) for item in v)

    return check_array


class InputCheck:
    """Validates inputs against one schema: the fast check first, jsonschema when it says no
    (and to word the error). The validator is compiled on first need, then kept."""

    __slots__ = ("_validator", "fast", "schema")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.fast = fast_checker(schema)
        self._validator: Validator | None = None

    @property
    def validator(self) -> Validator:
        if self._validator is None:
            self._validator = compile_validator(self.schema)
        return self._validator

    def is_valid(self, value: Any) -> bool:
        return (self.fast is not None and self.fast(value)) or self.validator.is_valid(value)

    def check(self, tool_id: str, value: Any, *, code: str | None = None) -> None:
        """Raise :class:`ToolInvalidInput` naming the field, if ``value`` breaks the schema."""
        if not self.is_valid(value):
            raise input_error(tool_id, self.validator.iter_errors(value), code=code)


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


def _problem(error: ValidationError, unknown: str) -> tuple[str, str]:
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
            return _field(path, str(extra)), unknown
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
    if kind == "exclusiveMinimum":
        return where, f"must be greater than {value}"
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


def describe(errors: Any, *, unknown: str = "is not an input of this tool") -> tuple[str, str]:
    """The most relevant of a validation's errors: the field (``$`` for the value itself) and
    what is wrong with it, in words; ``unknown`` is said of a field the schema does not have."""
    from jsonschema.exceptions import best_match

    error = best_match(errors)
    assert error is not None
    return _problem(error, unknown)


def input_error(tool_id: str, errors: Any, *, code: str | None = None) -> ToolInvalidInput:
    """The error to report for a failed validation: the most relevant one, by field."""
    field, problem = describe(errors)
    if field == "$":
        return ToolInvalidInput(tool_id, f'tool "{tool_id}" input {problem}', code=code)
    return ToolInvalidInput.for_field(tool_id, field, problem, code=code)
