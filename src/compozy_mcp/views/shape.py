"""A record's fields, declared once: its full schema, its field order and its compact mask all
come from one :class:`Shape`, so that they cannot disagree.

Each field says whether the compact view keeps it whole (:func:`keep`), keeps the part of it
its own shape marks (:func:`nested`), or leaves it to the full view (:func:`full_only`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from compozy_mcp.schemas import Schema, obj
from compozy_mcp.views.mask import KEEP, Fields, Node

InCompact = Literal["keep", "nested", "no"]


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    schema: Schema
    required: bool
    in_compact: InCompact
    #: the nested record's own shape, for fields declared with :func:`nested`
    shape: Shape | None = None


def keep(name: str, schema: Schema | Shape, *, required: bool = False) -> Field:
    """A field the compact view keeps whole."""
    return _field(name, schema, required, "keep")


def nested(name: str, shape: Shape, *, required: bool = False) -> Field:
    """An object field the compact view keeps, cut down to what its own shape keeps."""
    return _field(name, shape, required, "nested")


def full_only(name: str, schema: Schema | Shape, *, required: bool = False) -> Field:
    """A field only the full view has."""
    return _field(name, schema, required, "no")


def _field(name: str, schema: Schema | Shape, required: bool, in_compact: InCompact) -> Field:
    if isinstance(schema, Shape):
        return Field(name, schema.schema(), required, in_compact, schema)
    return Field(name, schema, required, in_compact)


class Shape:
    """An object record, field by field, in the order the record lists them."""

    __slots__ = ("_fields", "_schema")

    def __init__(self, *fields: Field, extra: Mapping[str, Any] | None = None) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"a shape lists a field twice: {names}")
        self._fields = fields
        required = {f.name: f.schema for f in fields if f.required}
        optional = {f.name: f.schema for f in fields if not f.required}
        self._schema = {**obj(required, optional, order=tuple(names)), **(extra or {})}

    @property
    def fields(self) -> tuple[Field, ...]:
        return self._fields

    @property
    def names(self) -> tuple[str, ...]:
        """The field order of the record."""
        return tuple(f.name for f in self._fields)

    def schema(self) -> Schema:
        """The full schema: closed, properties in record order."""
        return self._schema

    def mask(self) -> Fields:
        """The compact view's mask over this record."""
        wanted: dict[str, Node] = {}
        for f in self._fields:
            if f.in_compact == "keep":
                wanted[f.name] = KEEP
            elif f.in_compact == "nested":
                assert f.shape is not None
                wanted[f.name] = f.shape.mask()
        return Fields(wanted)
