"""Digests: lowercase hex sha256 of canonical JSON (keys sorted, no whitespace, UTF-8 unescaped)."""

from __future__ import annotations

import pytest

from compozy_mcp.jsonutil import canonical_json, schema_digest


def test_digest_test_vector_from_the_issue() -> None:
    schema = {"required": ["query"], "properties": {"query": {"type": "string"}}, "type": "object"}
    assert schema_digest(schema) == (
        "1dc63095e8672403bbe40fa26719d175e695c0167f6daad6b9655f6506491f01"
    )


def test_placeholder_schema_digest_matches_upstream_catalog() -> None:
    # 181 upstream tools carry sha256('{"type":"object"}') as their output digest.
    assert schema_digest({"type": "object"}) == (
        "a2c799262a3ce3c19ef5cdd983bf3d12b43ab3c426227091b909dcb7054738c0"
    )


def test_canonical_json_sorts_keys_and_keeps_utf8_unescaped() -> None:
    assert canonical_json({"b": [2, 1], "a": "é<>&"}) == '{"a":"é<>&","b":[2,1]}'.encode()


@pytest.mark.parametrize(
    ("value", "text"),
    [(1200.0, "1200"), (0.5, "0.5"), (1e6, "1e06"), (1e-5, "1e-05"), (-0.0, "0"), (10, "10")],
)
def test_canonical_numbers_follow_upstream(value: float, text: str) -> None:
    assert canonical_json([value]) == f"[{text}]".encode()


def test_canonical_json_escapes_line_separators_as_go_does() -> None:
    assert canonical_json({"a": "x\u2028y"}) == b'{"a":"x\\u2028y"}'


def test_digest_refuses_non_objects() -> None:
    with pytest.raises(TypeError):
        schema_digest([1])  # type: ignore[arg-type]


def test_integral_floats_become_integers_and_nothing_else_is_copied() -> None:
    from compozy_mcp.jsonutil import integral

    schema = {"a": {"maximum": 600.0, "minimum": 0.5}, "b": [1.0, "x"], "c": {"d": 1}}
    out = integral(schema)
    assert out == {"a": {"maximum": 600, "minimum": 0.5}, "b": [1, "x"], "c": {"d": 1}}
    assert type(out["a"]["maximum"]) is int
    assert out["c"] is schema["c"]  # unchanged parts are shared
    untouched = {"a": [1, 2], "b": 0.25}
    assert integral(untouched) is untouched
    assert type(integral(1e300)) is float  # past what every reader holds exactly
