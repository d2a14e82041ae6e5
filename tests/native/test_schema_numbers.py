"""Issue 23: digests stay stable however schemas are serialized. Every published schema holds
integers where a number is integral (``600``, not ``600.0``), so a digest recomputed from a
served schema with an ordinary JSON library (Python's ``json``, sorted keys, no whitespace,
UTF-8) equals the digest compozy-mcp serves."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from compozy_mcp.assembly import App
from compozy_mcp.info.external import ExternalTool


def _floats(value: Any, path: str = "$") -> list[str]:
    if isinstance(value, float):
        return [path]
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in _floats(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [hit for n, item in enumerate(value) for hit in _floats(item, f"{path}[{n}]")]
    return []


def _ordinary_digest(schema: Any) -> str:
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_no_published_schema_holds_a_float(app: App) -> None:
    found = []
    for tool in app.dispatcher.registry:
        found += _floats(tool.input_schema, f"{tool.id}:input")
        found += _floats(tool.output_schema, f"{tool.id}:output")
        if tool.views is not None:
            found += _floats(tool.views.full.schema, f"{tool.id}:full")
    assert found == []


def test_hooks_timeout_maximum_is_served_as_an_integer(app: App) -> None:
    schema = app.dispatcher.registry.get("compozy__hooks_create").input_schema
    maximum = schema["properties"]["timeout"]["maximum"]
    assert (maximum, type(maximum)) == (600, int)


def test_every_digest_recomputes_with_an_ordinary_json_library(app: App) -> None:
    for tool in app.dispatcher.registry:
        assert _ordinary_digest(tool.input_schema) == tool.input_schema_digest, tool.id
        assert _ordinary_digest(tool.output_schema) == tool.output_schema_digest, tool.id
        if tool.views is not None:
            for view in (tool.views.compact, tool.views.full):
                assert _ordinary_digest(view.schema) == view.digest, tool.id


def test_an_upstream_tools_integral_floats_are_served_as_integers() -> None:
    tool = ExternalTool(
        id="weather__forecast",
        server="weather",
        description="d",
        input_schema={"type": "object", "properties": {"days": {"maximum": 14.0}}},
        output_schema={"type": "object", "properties": {"t": {"minimum": -90.0}}},
    )
    described = tool.descriptor()
    assert described["input_schema"]["properties"]["days"]["maximum"] == 14
    assert _ordinary_digest(described["input_schema"]) == described["input_schema_digest"]
    assert _ordinary_digest(described["output_schema"]) == described["output_schema_digest"]
