"""Opaque pagination cursors. Clients must not parse them; tools refuse ones they did not issue."""

from __future__ import annotations

import base64
import binascii

from compozy_mcp.errors import ToolInvalidInput


def encode_cursor(kind: str, position: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{position}".encode()).decode().rstrip("=")


def decode_cursor(tool_id: str, kind: str, cursor: str) -> int:
    """The position a cursor of ``kind`` holds; an input error naming ``cursor`` otherwise."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        found, _, value = text.partition(":")
        position = int(value)
        if found != kind or position < 0:
            raise ValueError(cursor)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise ToolInvalidInput.for_field(
            tool_id, "cursor", "is not a cursor this tool returned"
        ) from None
    return position
