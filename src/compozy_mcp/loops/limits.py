"""The budgets a Loop is held to, from its source text to its run record: each a documented
setting (:data:`compozy_mcp.config.LIMITS`), and going past one is a
:class:`~compozy_mcp.errors.LimitExceeded` that names it. Nothing grows past a budget before
it is checked: sizes are counted with early exits, never by serializing what may be huge."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from compozy_mcp.config import LIMITS, Settings
from compozy_mcp.errors import LimitExceeded
from compozy_mcp.reasons import Reason


@dataclass(frozen=True, slots=True)
class LoopLimits:
    source_bytes: int = LIMITS["loop_source_bytes"].default
    source_values: int = LIMITS["loop_source_values"].default
    max_nodes: int = LIMITS["loop_max_nodes"].default
    node_output_bytes: int = LIMITS["loop_node_output_bytes"].default
    run_bytes: int = LIMITS["loop_run_bytes"].default

    @classmethod
    def of(cls, settings: Settings) -> LoopLimits:
        return cls(
            source_bytes=settings.loop_source_bytes,
            source_values=settings.loop_source_values,
            max_nodes=settings.loop_max_nodes,
            node_output_bytes=settings.loop_node_output_bytes,
            run_bytes=settings.loop_run_bytes,
        )

    @property
    def max_edges(self) -> int:
        return self.max_nodes * 4


def exceeded(what: str, name: str, value: int, reason: Reason) -> LimitExceeded:
    """The error for going past the limit of :data:`LIMITS` named ``name`` (its field)."""
    return LimitExceeded(what, limit=name, value=value, setting=LIMITS[name].env, reason=reason)


#: the bytes a JSON value's punctuation adds beyond its contents, roughly: enough to count
#: a value of many small items as large as it is
_ITEM = 2
_SCALAR = 8
_END = object()


def json_size_within(value: Any, limit: int) -> int | None:
    """About how many bytes ``value`` takes as JSON (strings count their characters), or
    ``None`` once that passes ``limit``. Costs at most about ``limit`` steps however large
    the value, or however often one part of it is shared."""
    total = 0
    pending: list[Iterator[Any]] = [iter((value,))]
    while pending:
        item = next(pending[-1], _END)
        if item is _END:
            pending.pop()
            continue
        if isinstance(item, str):
            total += len(item) + _ITEM
        elif isinstance(item, dict):
            total += _ITEM + sum(
                len(k) + _ITEM + 1 if isinstance(k, str) else _SCALAR for k in item
            )
            pending.append(iter(item.values()))
        elif isinstance(item, (list, tuple)):
            total += _ITEM
            pending.append(iter(item))
        else:
            total += _SCALAR
        if total > limit:
            return None
    return total
