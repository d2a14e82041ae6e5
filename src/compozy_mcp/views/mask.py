"""The declarative mask that defines a compact view, and the two things derived from it.

A mask is a tree of nodes laid over a tool's full record:

- :data:`KEEP` keeps a value whole (the same object, never copied);
- :class:`Fields` keeps the listed keys of an object, each with its own node; keys that are
  absent from the record stay absent, so optional fields appear only when set (and a nested
  ``Fields`` with ``omit_empty`` leaves its object out when it keeps none of its keys);
- :class:`Each` applies one node to every item of an array, and may drop a field from every
  item when a :class:`ListRule` holds over the whole list (the spec's skill diagnostics rule).

From one mask come both the compact record (:func:`project`) and the compact schema
(:func:`derive_schema`), so the two cannot drift apart. Derivation is also where the subset
rule is enforced: a mask that names a field the full schema does not declare, or descends into
something that is not an object or an array, fails registration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from compozy_mcp.errors import ToolRegistrationError
from compozy_mcp.reasons import Reason
from compozy_mcp.views.shared import SHARED, VIEWS_PER_RECORD


class Node:
    """A node of a view mask."""

    __slots__ = ()


class _Keep(Node):
    __slots__ = ()

    def __repr__(self) -> str:
        return "KEEP"


KEEP: Final = _Keep()


@dataclass(frozen=True, slots=True)
class Fields(Node):
    """Keep these keys of an object, each projected by its node.

    ``omit_empty``: when this object keeps none of its keys, the compact record leaves the object
    out instead of showing ``{}`` (an open payload where only a few kinds carry what compact
    keeps); its key is then optional in the compact schema.
    """

    fields: Mapping[str, Node]
    omit_empty: bool = False
    #: the keys whose node is an ``omit_empty`` object (computed once, read on every projection)
    sparse: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sparse = frozenset(
            key for key, sub in self.fields.items() if isinstance(sub, Fields) and sub.omit_empty
        )
        object.__setattr__(self, "sparse", sparse)

    @classmethod
    def of(cls, *keep: str, **nested: Node) -> Fields:
        """``Fields.of("id", runtime=Fields.of("status"))``: the usual way to write a mask."""
        mapping: dict[str, Node] = dict.fromkeys(keep, KEEP)
        mapping.update(nested)
        return cls(mapping)


@dataclass(frozen=True, slots=True)
class ListRule:
    """A condition over a whole list; when it holds, a field is dropped from every item."""

    holds: Callable[[Sequence[Any]], bool]
    #: how the release note and the docs describe the condition
    description: str


@dataclass(frozen=True, slots=True)
class Each(Node):
    """Apply ``item`` to every element of an array."""

    item: Node
    drop_when: Mapping[str, ListRule] = field(default_factory=dict)


def project(value: Any, node: Node) -> Any:
    """Project ``value`` through ``node``; the result shares every kept leaf with ``value``.

    Never copies or mutates the input. Keys keep the order they have in the record. A shared
    record's view (:mod:`.shared`) is projected once and is the same object after.
    """
    if node is KEEP or value is None:
        return value
    if type(node) is Fields:
        kept = SHARED.views(value)
        if kept is not None:
            return _kept_view(value, node, kept)
        return _project_fields(value, node)
    if type(node) is Each:
        if not isinstance(value, list):
            raise TypeError(f"a view expected an array, the record holds {type(value).__name__}")
        item_node = node.item
        dropped = [name for name, rule in node.drop_when.items() if rule.holds(value)]
        if dropped and type(item_node) is Fields:
            fields = {k: v for k, v in item_node.fields.items() if k not in dropped}
            item_node = Fields(fields, item_node.omit_empty)
        return [project(item, item_node) for item in value]
    raise TypeError(f"unknown view node {node!r}")


def _project_fields(value: Any, node: Fields) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"a view expected an object, the record holds {type(value).__name__}")
    wanted = node.fields
    out = {key: _project_kept(item, wanted[key]) for key, item in value.items() if key in wanted}
    for key in node.sparse:
        if out.get(key) == {}:
            del out[key]
    return out


def _kept_view(value: dict[str, Any], node: Fields, kept: list[tuple[object, Any]]) -> Any:
    """A shared record's view through ``node``: projected once, then the same object."""
    for seen, view in kept:
        if seen is node:
            return view
    view = _project_fields(value, node)
    if len(kept) < VIEWS_PER_RECORD:
        kept.append((node, view))
    return view


def _project_kept(value: Any, node: Node) -> Any:
    return value if node is KEEP else project(value, node)


# --- schemas -------------------------------------------------------------------------------

_OBJECT_SHAPE_KEYS = frozenset(
    {"properties", "required", "additionalProperties", "patternProperties"}
)


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {str(item) for item in declared}
    return set()


def derive_schema(
    tool_id: str, full: Mapping[str, Any], node: Node, path: str = "$"
) -> dict[str, Any]:
    """The compact schema: the full schema cut down by the mask.

    Kept subtrees are the full schema's own objects (shared, not copied). Objects the mask
    selects fields of become closed, because projection drops every other key.
    """
    if node is KEEP:
        return full  # type: ignore[return-value]
    if isinstance(node, Fields):
        return _derive_object(tool_id, full, node, path, optional=frozenset())
    if isinstance(node, Each):
        if "array" not in _types(full) or not isinstance(full.get("items"), Mapping):
            raise ToolRegistrationError(
                tool_id,
                f"the view projects the items of {path}, which the full output schema "
                "does not declare as an array with items",
                reason=Reason.VIEW_NOT_ARRAY,
            )
        items: Mapping[str, Any] = full["items"]
        if isinstance(node.item, Fields):
            item_schema = _derive_object(
                tool_id, items, node.item, f"{path}[]", optional=frozenset(node.drop_when)
            )
        elif node.drop_when:
            raise ToolRegistrationError(
                tool_id,
                f"a conditional drop at {path}[] needs an object mask",
                reason=Reason.VIEW_INVALID,
            )
        else:
            item_schema = derive_schema(tool_id, items, node.item, f"{path}[]")
        for name in node.drop_when:
            if name not in _object_properties(items):
                raise ToolRegistrationError(
                    tool_id,
                    f'the view drops "{path}[].{name}", which the full output schema '
                    "does not declare",
                    reason=Reason.VIEW_FIELD_UNKNOWN,
                )
        return {**full, "items": item_schema}
    raise ToolRegistrationError(tool_id, f"unknown view node at {path}", reason=Reason.VIEW_INVALID)


def _object_properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def _derive_object(
    tool_id: str,
    full: Mapping[str, Any],
    node: Fields,
    path: str,
    *,
    optional: frozenset[str],
) -> dict[str, Any]:
    if "object" not in _types(full) or not isinstance(full.get("properties"), Mapping):
        raise ToolRegistrationError(
            tool_id,
            f"the view selects fields of {path}, which the full output schema does not declare "
            "as an object with properties",
            reason=Reason.VIEW_NOT_OBJECT,
        )
    props: Mapping[str, Any] = full["properties"]
    for key in node.fields:
        if key not in props:
            raise ToolRegistrationError(
                tool_id,
                f'the view keeps "{_join(path, key)}", which the full output schema does not '
                "declare; every compact field must be in the full result at the same path",
                reason=Reason.VIEW_FIELD_UNKNOWN,
            )
    derived: dict[str, Any] = {k: v for k, v in full.items() if k not in _OBJECT_SHAPE_KEYS}
    derived["properties"] = {
        key: derive_schema(tool_id, sub, node.fields[key], _join(path, key))
        for key, sub in props.items()
        if key in node.fields
    }
    required = [
        key
        for key in full.get("required", ())
        if key in node.fields and key not in optional and key not in node.sparse
    ]
    if required:
        derived["required"] = required
    derived["additionalProperties"] = False
    return derived


def _join(path: str, key: str) -> str:
    return key if path == "$" else f"{path}.{key}"


@dataclass(frozen=True, slots=True)
class MovedField:
    """A field of the full result that the compact view leaves out."""

    path: str
    #: when compact leaves it out (a :class:`ListRule`'s description); ``None`` means always
    condition: str | None = None


def moved_to_full(full: Mapping[str, Any], node: Node, path: str = "$") -> list[MovedField]:
    """Paths the full schema declares that the compact view leaves out (for release notes).

    An object the mask selects from that the full schema leaves open also loses every
    undeclared key; that is reported as ``<path>.*``. Conditional drops carry their condition.
    """
    if node is KEEP:
        return []
    if isinstance(node, Each):
        items = full.get("items")
        if not isinstance(items, Mapping):
            return []
        in_items = moved_to_full(items, node.item, f"{path}[]")
        return in_items + [
            MovedField(f"{path}[].{name}", f"omitted {rule.description}")
            for name, rule in node.drop_when.items()
        ]
    assert isinstance(node, Fields)
    moved: list[MovedField] = []
    for key, sub in _object_properties(full).items():
        if key not in node.fields:
            moved.append(MovedField(_join(path, key)))
        else:
            moved.extend(moved_to_full(sub, node.fields[key], _join(path, key)))
    if full.get("additionalProperties", True) is not False:
        moved.append(MovedField(_join(path, "*")))
    return moved


def keeps_path(node: Node, path: Sequence[str]) -> bool:
    """Whether the mask keeps a dotted path (``[]`` steps into array items)."""
    for step in path:
        if node is KEEP:
            return True
        if isinstance(node, Each):
            if step != "[]":
                return False
            node = node.item
        elif isinstance(node, Fields):
            if step not in node.fields:
                return False
            node = node.fields[step]
        else:
            return False
    return True
