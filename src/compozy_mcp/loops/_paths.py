"""Proving a path against an output schema.

The walk follows ``properties`` (a declared key), then array ``items`` (a numeric step), and
stops where the schema leaves a part open (an object without ``additionalProperties: false``):
a path that goes on from there *cannot be proven*, since the record may or may not carry it.
A path that leaves a closed part is *not declared*; the result says how deep it got and which
fields were available there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PROVEN, OPEN, MISSING = "proven", "open", "missing"


@dataclass(frozen=True, slots=True)
class Resolution:
    status: str
    #: the steps that resolved (for ``open``: where the open part is)
    deepest: tuple[str, ...]
    #: fields declared where the walk stopped (``missing`` only)
    available: tuple[str, ...] = ()

    @property
    def proven(self) -> bool:
        return self.status == PROVEN


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    return set()


def _branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, Mapping):
                found.append(branch)
    return found


def _properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    merged: dict[str, Mapping[str, Any]] = {}
    props = schema.get("properties")
    if isinstance(props, Mapping):
        merged.update({k: v for k, v in props.items() if isinstance(v, Mapping)})
    for branch in _branches(schema):
        for name, sub in _properties(branch).items():
            merged.setdefault(name, sub)
    return merged


def _closed(schema: Mapping[str, Any]) -> bool:
    """An object part no key outside its properties can appear in."""
    if schema.get("additionalProperties") is False:
        return True
    branches = _branches(schema)
    return bool(branches) and all(_closed(b) for b in branches) and "properties" not in schema


def _items(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    items = schema.get("items")
    if isinstance(items, Mapping):
        return items
    for branch in _branches(schema):
        found = _items(branch)
        if found is not None:
            return found
    return None


def _is_scalar(schema: Mapping[str, Any]) -> bool:
    kinds = _types(schema) - {"null"}
    return bool(kinds) and kinds <= {"string", "integer", "number", "boolean"}


def resolve(schema: Mapping[str, Any], steps: Sequence[str]) -> Resolution:
    node: Mapping[str, Any] = schema
    for index, step in enumerate(steps):
        done = tuple(steps[:index])
        props = _properties(node)
        if step in props:
            node = props[step]
            continue
        items = _items(node)
        if items is not None and step.isdigit():
            node = items
            continue
        if not _is_scalar(node) and items is None and not _closed(node):
            return Resolution(OPEN, done)
        return Resolution(MISSING, done, tuple(sorted(props)))
    return Resolution(PROVEN, tuple(steps))


def leaf_paths(schema: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The paths a ``produces`` schema declares, each down to a leaf (array items are
    walked as ``0``)."""
    props = _properties(schema)
    items = _items(schema)
    if props:
        found: list[tuple[str, ...]] = []
        for name, sub in props.items():
            found.extend(leaf_paths(sub, (*prefix, name)))
        return found
    if items is not None and prefix:
        nested = leaf_paths(items, (*prefix, "0"))
        return nested if nested != [(*prefix, "0")] else [prefix]
    return [prefix] if prefix else []


def text(steps: Sequence[str]) -> str:
    return ".".join(steps)
