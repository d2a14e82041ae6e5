"""Reading a Loop document (YAML, or JSON, which YAML reads too) with the line and column of
every value, so that each lint item can point at its source."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import yaml

from compozy_mcp.loops.limits import LoopLimits, exceeded
from compozy_mcp.reasons import Reason

#: a path into the document: keys and list indexes
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a value starts (1-based), and how its text maps to the source when it is a
    string on one line (``quoted``: the text starts one column after the mark)."""

    line: int
    column: int
    quoted: bool = False
    #: a block scalar (``|`` or ``>``): its text starts on the line after the mark
    block: bool = False

    def at(self, offset_line: int, offset_column: int) -> tuple[int, int]:
        """The source position of a position in the value's text (both 1-based). Exact on
        the first line of a plain or quoted string; on later lines the indentation of the
        source is not known, so the column is the one within the text."""
        if self.block:
            return self.line + offset_line, offset_column
        if offset_line == 1:
            return self.line, self.column + offset_column - 1 + (1 if self.quoted else 0)
        return self.line + offset_line - 1, offset_column


@dataclass(slots=True)
class Source:
    """A parsed document and where each of its values is."""

    data: Any
    marks: dict[Path, Mark] = field(default_factory=dict)

    def mark(self, path: Path) -> Mark | None:
        """The mark of ``path``, or of its nearest ancestor that has one."""
        while True:
            found = self.marks.get(path)
            if found is not None or not path:
                return found
            path = path[:-1]


class SourceError(Exception):
    def __init__(self, message: str, line: int | None, column: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def _mark(node: yaml.Node) -> Mark:
    start = node.start_mark
    style = node.style if isinstance(node, yaml.ScalarNode) else None
    quoted = style in ("'", '"')
    block = style in ("|", ">")
    return Mark(start.line + 1, start.column + 1, quoted, block)


_STR, _NULL, _BOOL, _INT = (f"tag:yaml.org,2002:{t}" for t in ("str", "null", "bool", "int"))
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)")
#: deeper than this is not a Loop (and an alias that contains itself would never end)
MAX_DEPTH = 100


def _build(node: yaml.Node, path: Path, marks: dict[Path, Mark], loader: Any) -> Any:
    """The value of ``node``, recording the mark of every value on the way: one pass over the
    composed nodes, the common scalars converted here (PyYAML's constructor, the slow part of a
    load, does the rest: the same values as a plain ``safe_load``)."""
    if len(path) > MAX_DEPTH:
        raise SourceError(f"the document is nested more than {MAX_DEPTH} levels deep", None, None)
    marks[path] = _mark(node)
    if isinstance(node, yaml.ScalarNode):
        tag, text = node.tag, node.value
        if tag == _STR:
            return text
        if tag == _NULL:
            return None
        if tag == _BOOL and text.lower() in _BOOLS:
            return _BOOLS[text.lower()]
        if tag == _INT and _DECIMAL.fullmatch(text):
            return int(text)
        return loader.construct_object(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(item, (*path, index), marks, loader) for index, item in enumerate(node.value)
        ]
    if isinstance(node, yaml.MappingNode):
        if any(key.tag == "tag:yaml.org,2002:merge" for key, _ in node.value):
            value = loader.construct_object(node, deep=True)
            _marks_only(node, path, marks)
            return value
        out: dict[Any, Any] = {}
        for key, item in node.value:
            name = key.value if key.tag == _STR else loader.construct_object(key, deep=True)
            out[name] = _build(item, (*path, str(key.value)), marks, loader)
        return out
    return loader.construct_object(node, deep=True)


def _marks_only(node: yaml.Node, path: Path, marks: dict[Path, Mark]) -> None:
    marks[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                _marks_only(value, (*path, str(key.value)), marks)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _marks_only(item, (*path, index), marks)


#: libyaml's loader when PyYAML was built with it (ten times faster on a large Loop), with the
#: same nodes and marks as the pure-Python one
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _count_values(node: yaml.Node, limits: LoopLimits) -> None:
    """Refuse a document that holds more values than the budget once its aliases are
    expanded (an alias bomb: a few hundred bytes that expand to billions of values). Stops
    counting at the budget, so a bomb costs no more than a document at the limit."""
    budget = limits.source_values
    count = 0
    pending: list[Iterator[yaml.Node]] = [iter((node,))]
    while pending:
        item = next(pending[-1], None)
        if item is None:
            pending.pop()
            continue
        count += 1
        if count > budget:
            raise exceeded(
                "the Loop document holds too many values once its YAML aliases are expanded",
                "loop_source_values",
                budget,
                Reason.SOURCE_TOO_LARGE,
            )
        if isinstance(item, yaml.MappingNode):
            pending.append(value for pair in item.value for value in pair)
        elif isinstance(item, yaml.SequenceNode):
            pending.append(iter(item.value))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a document is read. Composing a large one makes
    hundreds of thousands of nodes (a tree: no cycle among them), and every object made counts
    toward the collector's next pass: its passes over the growing tree were most of the time
    (the lint of a 10,000-node Loop: 2.3 s of CPU, 1.0 s without them). Objects are still freed
    as they are dropped; a cycle made meanwhile waits for the next pass. Another thread's load
    that ends first may turn it back on: only this load's speed depends on it."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def load(text: str, limits: LoopLimits | None = None) -> Source:
    """Parse ``text``; raises :class:`SourceError` with the position of a syntax error, and
    :class:`~compozy_mcp.errors.LimitExceeded` for a document past ``limits``."""
    limits = limits or LoopLimits()
    if len(text) > limits.source_bytes or len(text.encode()) > limits.source_bytes:
        raise exceeded(
            "the Loop document is too large",
            "loop_source_bytes",
            limits.source_bytes,
            Reason.SOURCE_TOO_LARGE,
        )
    with _collector_paused():
        return _load(text, limits)


def _load(text: str, limits: LoopLimits) -> Source:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise SourceError("the document is empty", 1, 1)
        _count_values(node, limits)
        marks: dict[Path, Mark] = {}
        data = _build(node, (), marks, loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        problem = exc.problem or "invalid YAML"
        if mark is None:
            raise SourceError(f"the document is not valid YAML: {problem}", None, None) from None
        raise SourceError(
            f"the document is not valid YAML: {problem}", mark.line + 1, mark.column + 1
        ) from None
    except yaml.YAMLError as exc:
        raise SourceError(f"the document is not valid YAML: {exc}", None, None) from None
    except (TypeError, RecursionError) as exc:  # an unhashable key, an alias in itself
        raise SourceError(f"the document is not a Loop definition: {exc}", None, None) from None
    finally:
        loader.dispose()
    return Source(data, marks)


def from_object(data: Mapping[str, Any]) -> Source:
    """A document given as an object (no source text: no positions)."""
    return Source(dict(data))
