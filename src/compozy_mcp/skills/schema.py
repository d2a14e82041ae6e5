"""JSON Schemas (draft 2020-12) of the records the skill service returns.

The schemas carry no ``$schema`` key, so that they can be embedded in a tool's output schema
as they are (a nested ``$schema`` is only allowed at a resource root).
"""

from __future__ import annotations

from typing import Any

from compozy_mcp.skills._fsguard import MAX_LISTED_FILES

DIAGNOSTICS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "valid": {"type": "boolean"},
        "verified": {"type": "boolean"},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "failures": {"type": "array", "items": {"type": "string"}},
        "activation_reason": {"type": "string"},
    },
    "required": ["valid", "verified", "warnings", "failures"],
    "additionalProperties": False,
}

_SUMMARY_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1},
    "description": {"type": "string"},
    "scope": {"type": "string", "enum": ["user", "workspace"]},
    "path": {"type": "string", "minLength": 1},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "version": {"type": "string"},
    "diagnostics": DIAGNOSTICS_SCHEMA,
}
_SUMMARY_REQUIRED = ["name", "description", "scope", "path", "diagnostics"]

SKILL_SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": _SUMMARY_PROPERTIES,
    "required": _SUMMARY_REQUIRED,
    "additionalProperties": False,
}

SKILL_SEARCH_ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {**_SUMMARY_PROPERTIES, "score": {"type": "integer", "minimum": 1}},
    "required": [*_SUMMARY_REQUIRED, "score"],
    "additionalProperties": False,
}

SKILL_VIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{key: value for key, value in _SUMMARY_PROPERTIES.items() if key != "diagnostics"},
        "front_matter": {"type": "object"},
        "body": {"type": "string"},
        "files": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "maxItems": MAX_LISTED_FILES,
        },
        "diagnostics": DIAGNOSTICS_SCHEMA,
    },
    "required": [*_SUMMARY_REQUIRED[:-1], "front_matter", "body", "files", "diagnostics"],
    "additionalProperties": False,
}
