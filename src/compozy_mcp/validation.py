"""Input validation: a fast check for the common case, compiled JSON Schema validators for the
rest, and error messages that name the field.

Most tool inputs are flat objects of strings, numbers, booleans and string lists. For those
:func:`fast_checker` compiles a plain-Python predicate that says *yes* only when jsonschema
would accept the input too (it says *no* for anything it is unsure of); a *no* hands the input
to jsonschema, which decides and words the error. jsonschema itself is imported only then.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from compozy_mcp.codes import Code
from compozy_mcp.errors import ToolInvalidInput

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

#: the pattern of a string that must hold something other than whitespace
NOT_BLANK = r"\S"
#: an absolute POSIX path
ABSOLUTE_PATH = "^/"
#: a display name: one line of text, not blank, without control characters
#: (leading blanks, then a character that is not one: the two classes never overlap, so the
#: match is linear in the length, whatever the input)
LINE_OF_TEXT = r"^[^\S\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
#: the pattern of a pagination cursor (``compozy_mcp.cursors.cursor_schema``)
_CURSOR_PATTERN = re.compile(r"\^[a-z]\[0-9\]\{1,\d+\}\$")
#: integers an input may hold: the signed 64-bit range (the store's, and JSON peers')
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: schema keywords whose values are subschemas, or lists of them
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def bounded(schema: Any) -> Any:
    """``schema`` with every integer kept within the signed 64-bit range: a copy in which each
    ``integer`` that states no bound gets the range's. The published schema stays as written;
    inputs are checked against this one."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = dict(schema)
    kinds = schema.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        out.setdefault("minimum", INT64_MIN)
        out.setdefault("maximum", INT64_MAX)
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), Mapping):
            out[key] = {name: bounded(sub) for name, sub in schema[key].items()}
    for key in _SUBSCHEMAS:
        if key in schema:
            out[key] = bounded(schema[key])
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            out[key] = [bounded(sub) for sub in schema[key]]
    return out


#: what the input check says of a value no tool can take (:func:`unrepresentable_at`)
LONE_SURROGATE = "must be Unicode text without lone surrogates"
HUGE_NUMBER = "must be a number of at most 4300 digits, within a double's range (±1.8e308)"


def unrepresentable_at(value: Any, path: str = "$") -> tuple[str, str] | None:
    """Where ``value`` holds what no UTF-8 JSON peer can receive, and the problem: a string
    (or key) with a lone UTF-16 surrogate, or a number beyond range as
    :func:`compozy_mcp.jsonutil.loads_request` parses it (a ``HugeNumber``, ±inf); ``None``
    when it holds none. Checked in one pass by orjson first (it refuses both); only a failure
    is walked to name the field."""
    try:
        orjson.dumps(value)
    except TypeError:
        pass
    else:
        return None
    return _find_unrepresentable(value, path)


def lone_surrogate_at(value: Any, path: str = "$") -> str | None:
    """Where ``value`` holds a string (or key) with a lone UTF-16 surrogate, if it does."""
    found = unrepresentable_at(value, path)
    return found[0] if found is not None and found[1] == LONE_SURROGATE else None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _find_unrepresentable(value: Any, path: str) -> tuple[str, str] | None:
    if isinstance(value, str):
        return (path, LONE_SURROGATE) if _has_surrogate(value) else None
    if isinstance(value, float) and not math.isfinite(value):
        return path, HUGE_NUMBER
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path != "$" else str(key)
            if isinstance(key, str) and _has_surrogate(key):
                return path, LONE_SURROGATE
            found = _find_unrepresentable(item, where)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_unrepresentable(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


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
        if set(schema) - {"type", "minimum", "maximum", "description"}:
            return None
        low = max(schema.get("minimum", INT64_MIN), INT64_MIN)
        high = min(schema.get("maximum", INT64_MAX), INT64_MAX)
        # An integral float (1.0) is an integer, as JSON Schema says; it is made an int after
        # the check (:func:`integers`), so a handler never sees a float.
        return lambda v: (
            (type(v) is int or (type(v) is float and v.is_integer())) and low <= v <= high
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
        if not all(item_check(item) for item in v):
            return False
        # only strings here (checked above), so they hash and compare as JSON does
        return not unique or len(set(v)) == len(v)

    return check_array


class InputCheck:
    """Validates inputs against one schema: the fast check first, jsonschema when it says no
    (and to word the error). The validator is compiled on first need, then kept."""

    __slots__ = ("_validator", "fast", "schema")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = bounded(schema)
        self.fast = fast_checker(self.schema)
        self._validator: Validator | None = None

    @property
    def validator(self) -> Validator:
        if self._validator is None:
            self._validator = compile_validator(self.schema)
        return self._validator

    def is_valid(self, value: Any) -> bool:
        return (self.fast is not None and self.fast(value)) or self.validator.is_valid(value)

    def check(self, tool_id: str, value: Any, *, code: Code | None = None) -> Any:
        """``value`` with its integral floats made ints; :class:`ToolInvalidInput` naming the
        field if it breaks the schema."""
        if not self.is_valid(value):
            raise input_error(tool_id, self.validator.iter_errors(value), code=code)
        return integers(self.schema, value)


def _has_float(value: Any) -> bool:
    if type(value) is float:
        return True
    if type(value) is dict:
        return any(_has_float(item) for item in value.values())
    if type(value) is list:
        return any(_has_float(item) for item in value)
    return False


def integers(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` (valid for ``schema``) with every integral float where the schema wants an
    integer made an ``int``: one rule on every surface, the JSON Schema one (``1.0`` is an
    integer), and handlers see ints only. Returns ``value`` itself when it holds no float."""
    if not _has_float(value):
        return value
    return _integers(schema, value)


def _integers(schema: Any, value: Any) -> Any:
    if type(value) is float:
        kinds = schema.get("type") if isinstance(schema, Mapping) else None
        wants_int = kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds)
        return int(value) if wants_int and value.is_integer() else value
    if type(value) is dict and isinstance(schema, Mapping):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        return {
            key: _integers(properties.get(key, extra if isinstance(extra, Mapping) else {}), item)
            for key, item in value.items()
        }
    if type(value) is list and isinstance(schema, Mapping):
        items = schema.get("items", {})
        return [_integers(items, item) for item in value]
    return value


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
    if kind == "pattern" and value == ABSOLUTE_PATH:
        return where, "must be an absolute path"
    if kind == "pattern" and value == LINE_OF_TEXT:
        return where, "must be one line of text, not blank, without control characters"
    if kind == "pattern" and _CURSOR_PATTERN.fullmatch(str(value)):
        return where, "is not a cursor this tool returned"
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


def input_error(tool_id: str, errors: Any, *, code: Code | None = None) -> ToolInvalidInput:
    """The error to report for a failed validation: the most relevant one, by field."""
    field, problem = describe(errors)
    if field == "$":
        return ToolInvalidInput(tool_id, f'tool "{tool_id}" input {problem}', code=code)
    return ToolInvalidInput.for_field(tool_id, field, problem, code=code)
