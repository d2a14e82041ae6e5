"""The YAML side of reading a Loop document: composing its nodes with libyaml and building
its value with the mark of every value (:func:`compozy_mcp.loops._source.load` calls it)."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from compozy_mcp.loops._marks import Mark, Path, SourceError
from compozy_mcp.loops.limits import LoopLimits, exceeded
from compozy_mcp.reasons import Reason


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


def read(text: str, limits: LoopLimits) -> tuple[Any, dict[Path, Mark]]:
    """The value of ``text`` (already checked against the size limit) and the mark of each
    of its values."""
    with _collector_paused():
        return _load(text, limits)


def _load(text: str, limits: LoopLimits) -> tuple[Any, dict[Path, Mark]]:
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
    return data, marks
