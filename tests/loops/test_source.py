"""Issue 15, item 1: a Loop document read with the position of every value, and the same
values ``yaml.safe_load`` gives."""

from __future__ import annotations

import gc
from typing import Any

import pytest
import yaml
from tests.loops.support import SPEC_EXAMPLE

from compozy_mcp.loops._source import SourceError, load

DOCUMENTS = [
    SPEC_EXAMPLE,
    "a: 1\nb: [true, no, null, 0x10, 012, 1.5, '3', 2019-01-01, ~, -7, 1_000]\nc: {d: e}\n",
    "x: &a {k: 1}\ny: *a\nz:\n  <<: *a\n  m: 2\n",
    '{"graph": {"nodes": [{"id": "a", "params": {"n": 2, "s": "t"}}], "edges": []}}',
    "p: |\n  line one\n  line two\nq: >\n  folded\n  text\n",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_values_are_safe_loads(text: str) -> None:
    assert load(text).data == yaml.safe_load(text)


def test_every_value_has_its_position() -> None:
    source = load(SPEC_EXAMPLE)
    mark = source.marks[("graph", "nodes", 1, "params", "prompt")]
    assert (mark.line, mark.column, mark.quoted) == (14, 17, True)
    assert mark.at(1, 17) == (14, 34)  # the text's column 17 is one past the quote
    assert source.mark(("graph", "nodes", 1, "params", "prompt", "nope")) == mark


def test_a_block_scalar_maps_lines_below_its_indicator() -> None:
    source = load("p: |\n  one\n  two\n")
    assert source.marks[("p",)].at(2, 3) == (3, 3)


def test_a_document_nested_too_deeply_is_refused() -> None:
    with pytest.raises(SourceError, match="nested more than"):
        load("a: " + "[" * 120 + "]" * 120)


def test_the_collector_is_paused_while_a_document_is_read_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large document composes as a tree of hundreds of thousands of nodes: the cyclic
    collector's passes over it were most of the lint's time. It is off while the document is
    read, and as it was once the read ends, whether it succeeded or not."""
    from compozy_mcp.loops import _yaml_read

    seen: list[bool] = []
    count = _yaml_read._count_values

    def counting(*args: Any) -> None:
        seen.append(gc.isenabled())
        count(*args)

    monkeypatch.setattr(_yaml_read, "_count_values", counting)
    assert gc.isenabled()
    assert load(SPEC_EXAMPLE).data == yaml.safe_load(SPEC_EXAMPLE)
    with pytest.raises(SourceError):
        load("a: [1, 2\n")
    assert seen == [False]
    assert gc.isenabled()
    gc.disable()
    try:
        load(SPEC_EXAMPLE)
        assert not gc.isenabled()  # it was off: a load does not turn it on
    finally:
        gc.enable()
