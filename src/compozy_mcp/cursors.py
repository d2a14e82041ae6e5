"""Pagination cursors: a letter naming the listing and a position, ``s1234``.

Clients must not parse them. Every string a cursor's input schema accepts
(:func:`cursor_schema`) is a cursor the tool can resume from, so a well-formed cursor is never
refused and a position can never grow past what the store can hold; anything else is an input
error naming ``cursor``.
"""

from __future__ import annotations

import re
from typing import Any

from compozy_mcp.errors import ToolInvalidInput

#: at most 18 digits: always below 2**63, the store's largest integer
MAX_DIGITS = 18


def cursor_schema(kind: str) -> dict[str, Any]:
    return {
        "type": "string",
        "pattern": f"^{kind}[0-9]{{1,{MAX_DIGITS}}}$",
        "description": "next_cursor of the previous page.",
    }


def encode_cursor(kind: str, position: int) -> str:
    return f"{kind}{position}"


def decode_cursor(tool_id: str, kind: str, cursor: str) -> int:
    """The position a cursor of ``kind`` holds; an input error naming ``cursor`` otherwise."""
    if re.fullmatch(f"{kind}[0-9]{{1,{MAX_DIGITS}}}", cursor) is None:
        raise ToolInvalidInput.for_field(tool_id, "cursor", "is not a cursor this tool returned")
    return int(cursor[len(kind) :])
