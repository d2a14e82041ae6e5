"""Hostile calls for every native tool, and the rule every answer must keep.

A call's input is drawn from the tool's own input schema (valid: :func:`from_schema` covers
the JSON Schema subset native tools use), then often spoiled: a field replaced by a value of
another kind, an integer past 64 bits, an integral float, a lone surrogate, an unknown field,
or no object at all. Ids point at real sessions half of the time, so that calls reach the
handlers and the store.

Every call must end in a result or a typed error (:func:`typed_error`): never a protocol
failure, a traceback, an HTTP 5xx or a store that fails its integrity check.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from compozy_mcp.errors import CompozyError
from compozy_mcp.native import build_registry
from compozy_mcp.validation import bounded

REGISTRY = build_registry()
#: not fuzzed: a hook such a call makes would run a command (a process) on every later call,
#: and the unit tier starts none; tests/hooks covers their hostile inputs
NOT_FUZZED = ("compozy__hooks_create", "compozy__hooks_test")
TOOLS = [tool.id for tool in REGISTRY if tool.id not in NOT_FUZZED]
SESSION_FIELDS = ("session_id", "parent_session_id")
#: seconds a waiting call (``session_wait``, a prompt or Loop run with ``wait``) may be asked to
#: wait: a wait lasts as long as it was asked (a prompt to a session with no runtime bound stays
#: queued, by design), so a valid ``timeout_seconds`` is drawn, or set, at most this
WAIT_SECONDS = 2


def _codes() -> frozenset[str]:
    found: set[str] = set()
    pending: list[type[CompozyError]] = [CompozyError]
    while pending:
        cls = pending.pop()
        found.add(cls.code)
        pending.extend(cls.__subclasses__())
    return frozenset(found | {"invalid_request"})


KNOWN_CODES = _codes()

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\udfffb", "", " ", "\x00", "compact", "full", "s1", "t9"]),
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def from_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for ``schema``, over the subset native tool inputs are written in."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            text = st.from_regex(schema["pattern"], fullmatch=True)
        else:
            text = st.text(min_size=schema.get("minLength", 0), max_size=40)
        low, high = schema.get("minLength", 0), schema.get("maxLength", 10**9)
        return text.filter(lambda t: low <= len(t) <= high)
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = st.lists(from_schema(schema.get("items", {})), max_size=3)
        return items.map(lambda v: list(dict.fromkeys(v))) if schema.get("uniqueItems") else items
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        needs = schema.get("dependentRequired", {})
        fixed = st.fixed_dictionaries(
            {name: from_schema(sub) for name, sub in properties.items() if name in required},
            optional={n: from_schema(sub) for n, sub in properties.items() if n not in required},
        )
        return fixed.filter(
            lambda value: all(
                all(n in value for n in need) for k, need in needs.items() if k in value
            )
        )
    return JSON


def _schema_strategy(tool_id: str) -> st.SearchStrategy[dict[str, Any]]:
    drawn: st.SearchStrategy[dict[str, Any]] = from_schema(
        bounded(dict(REGISTRY.get(tool_id).input_schema))
    )
    return drawn


_VALID = {tool_id: _schema_strategy(tool_id) for tool_id in TOOLS}


@dataclass(frozen=True, slots=True)
class KnownSession:
    """Stands for the ``index``-th session the target knows, chosen when the call is made (a
    strategy must not depend on what earlier calls created)."""

    index: int


def resolve(value: Any, sessions: list[str]) -> Any:
    """``value`` with each :class:`KnownSession` replaced by a real session id."""
    if isinstance(value, KnownSession):
        return sessions[value.index % len(sessions)] if sessions else "sess-none"
    if isinstance(value, dict):
        return {key: resolve(item, sessions) for key, item in value.items()}
    return value


@st.composite
def hostile_input(draw: st.DrawFn, tool_id: str) -> Any:
    """One input for ``tool_id``: valid, spoiled, or not an object at all."""
    shape = draw(st.sampled_from(["valid", "spoiled", "spoiled", "anything"]))
    if shape == "anything":
        return draw(JSON)
    value: dict[str, Any] = dict(draw(_VALID[tool_id]))
    if "timeout_seconds" in REGISTRY.get(tool_id).input_schema.get("properties", {}):
        value["timeout_seconds"] = min(value.get("timeout_seconds", WAIT_SECONDS), WAIT_SECONDS)
    for name in SESSION_FIELDS:
        if name in value and draw(st.booleans()):
            value[name] = KnownSession(draw(st.integers(0, 49)))
    if shape == "spoiled":
        field = draw(st.sampled_from([*value, "unknown_field"]) if value else st.just("x"))
        value[field] = draw(
            st.one_of(
                JSON,
                st.integers(min_value=2**63, max_value=2**80),
                st.just(20.0),
                st.text(alphabet=string.printable + "\ud800", max_size=20),
            )
        )
    return value


def typed_error(error: Any) -> bool:
    """Whether an ``{"code", "reason", "message", ...}`` object is one of ours."""
    return (
        isinstance(error, dict)
        and error.get("code") in KNOWN_CODES
        and isinstance(error.get("reason"), str)
        and isinstance(error.get("message"), str)
    )
