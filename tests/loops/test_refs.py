"""Issue 15, item 2: the reference parser and renderer (upstream's subset: fields, literals,
pipes, the functions json, toJson, join, default, shellQuote, len); a field missing at run time
renders empty (spec, Loops)."""

from __future__ import annotations

from typing import Any

import pytest

from compozy_mcp.loops import _refs as refs

CONTEXT: dict[str, Any] = {
    "inputs": {"name": "o'hara", "tags": ["a", "b"], "count": 3, "empty": ""},
    "nodes": {"inspect": {"output": {"session": {"id": "sess-1", "tools": ["x", "y"]}}}},
}


def _lookup(field: refs.Field) -> Any:
    value: Any = CONTEXT
    for step in field.steps:
        if step == "output" and isinstance(value, dict) and "output" in value:
            value = value["output"]
            continue
        value = value.get(step) if isinstance(value, dict) else None
    return value


def render(text: str) -> Any:
    return refs.render(refs.parse(text), _lookup)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", "plain text"),
        ("{{ .inputs.count }}", 3),
        ("n={{ .inputs.count }}", "n=3"),
        ("{{ .nodes.inspect.output.session.id }}", "sess-1"),
        ("{{ .nodes.inspect.output.session.tools }}", ["x", "y"]),
        ("tools: {{ .nodes.inspect.output.session.tools }}", 'tools: ["x","y"]'),
        ('{{ join ", " .inputs.tags }}', "a, b"),
        ('{{ .inputs.tags | join "+" }}', "a+b"),
        ('{{ default "none" .inputs.empty }}', "none"),
        ('{{ .inputs.missing | default "none" }}', "none"),
        ("{{ len .inputs.tags }}", 2),
        ("{{ json .inputs.tags }}", '["a","b"]'),
        ("{{ toJson .inputs.name }}", '"o\'hara"'),
        ("{{ shellQuote .inputs.name }}", "'o'\"'\"'hara'"),
        ("[{{ .inputs.missing }}]", "[]"),
        ("[{{ .inputs.missing.deeper }}]", "[]"),
        ("a  {{- .inputs.count -}}  b", "a3b"),
        ('{{ "lit}}eral" }}', "lit}}eral"),
        ("{{ `raw` }}", "raw"),
        ("{{ (len .inputs.tags) }}", 2),
        ("{{ true }}", True),
    ],
)
def test_render(text: str, expected: Any) -> None:
    assert render(text) == expected


def test_fields_are_listed_with_offsets() -> None:
    template = refs.parse("a {{ .inputs.x }} b {{ join .inputs.y .nodes.n.output.z }}")
    assert [(f.text, f.offset) for f in template.fields()] == [
        (".inputs.x", 5),
        (".inputs.y", 28),
        (".nodes.n.output.z", 38),
    ]


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ("{{ .a ", 'unclosed action: "{{" without "}}"', 0),
        ("x {{ }}", "empty action", 4),
        ("{{ nope .a }}", 'function "nope" not defined', 3),
        ("{{ .a .b }}", "only a function takes arguments", 6),
        ('{{ "open }}', "unterminated string literal", 3),
        ("{{ .a | .b }}", "a pipe must lead to a function", 8),
        ("{{ . }}", "a field name must follow the dot", 3),
        ("{{ (len .a }}", 'unclosed "("', 3),
        ("{{ {{ }}", 'unexpected "{{" inside an action', 3),
    ],
)
def test_syntax_errors_say_where(text: str, message: str, offset: int) -> None:
    with pytest.raises(refs.TemplateSyntaxError) as caught:
        refs.parse(text)
    assert message in caught.value.message
    assert caught.value.offset == offset


def test_position_is_line_and_column() -> None:
    assert refs.position("ab\ncd{{", 5) == (2, 3)


def test_arity_is_checked_with_the_piped_value() -> None:
    assert refs.arity_problems(refs.parse('{{ .a | join "," }}')) == []
    [(message, _)] = refs.arity_problems(refs.parse("{{ .a | len .b }}"))
    assert message == "len takes 1 argument, got 2"


def test_a_function_refusing_its_value_is_a_render_error() -> None:
    with pytest.raises(refs.RenderError, match="join takes a list"):
        render('{{ join "," .inputs.count }}')
