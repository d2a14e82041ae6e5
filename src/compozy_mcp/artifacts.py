"""Tool artifacts: results too large for the budget, stored whole and read back in pages."""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from typing import Any

from compozy_mcp.blocking import Offload
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import ResourceNotFound, StoreBusy, ToolResultPersistenceFailed
from compozy_mcp.jsonutil import sha256_hex
from compozy_mcp.store.base import ArtifactRow, Store

log = logging.getLogger(__name__)

ARTIFACT_SCHEME = "compozy://tool-artifacts/"
MAX_PAGE_BYTES = 65_536


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    uri: str
    mime_type: str
    bytes: int
    sha256: str

    def payload(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "mime_type": self.mime_type,
            "bytes": self.bytes,
            "sha256": self.sha256,
        }


def _char_length(lead: int) -> int:
    """Bytes in the UTF-8 sequence that ``lead`` starts (1 for anything unexpected)."""
    if lead >> 5 == 0b110:
        return 2
    if lead >> 4 == 0b1110:
        return 3
    if lead >> 3 == 0b11110:
        return 4
    return 1


def _text_page(data: bytes, limit: int) -> bytes:
    """At most ``limit`` bytes of ``data`` that end on a character boundary; at least one
    whole character, so that a reader always advances."""
    end = min(limit, len(data))
    start = end
    # Find the lead byte of the last character that starts before ``end``.
    while start > 0 and (data[start - 1] & 0xC0) == 0x80 and end - start < 3:
        start -= 1
    if start > 0:
        last = start - 1
        if last + _char_length(data[last]) > end:
            end = last
    if end == 0 and data:
        end = min(len(data), _char_length(data[0]))
    return data[:end]


class ArtifactService:
    """Stores results too large for the budget (a write, run off the event loop) and reads
    them back in pages (on the loop)."""

    def __init__(self, store: Store, clock: Clock, offload: Offload) -> None:
        self._store = store
        self._clock = clock
        self._offload = offload

    async def put(
        self, tool_id: str, data: bytes, *, mime_type: str, meta: dict[str, Any]
    ) -> ArtifactRef:
        return await self._offload(self._put, tool_id, data, mime_type, meta)

    def _put(self, tool_id: str, data: bytes, mime_type: str, meta: dict[str, Any]) -> ArtifactRef:
        digest = sha256_hex(data)
        ref = ArtifactRef(f"{ARTIFACT_SCHEME}art_{digest}", mime_type, len(data), digest)
        row = ArtifactRow(
            ref.uri, digest, mime_type, len(data), tool_id, timestamp(self._clock.now()), meta
        )
        try:
            with self._store.write() as writer:
                writer.put_artifact(row, data)
        except StoreBusy:
            raise
        except Exception as exc:
            log.exception("storing an artifact of %s failed", tool_id)
            raise ToolResultPersistenceFailed(
                tool_id, f'tool "{tool_id}" result could not be stored as an artifact'
            ) from exc
        return ref

    def read(
        self, tool_id: str, uri: str, *, offset: int, limit: int, encoding: str = "base64"
    ) -> dict[str, Any]:
        """One page of an artifact. ``text`` pages never split a UTF-8 character."""
        with self._store.read() as reader:
            row = reader.artifact(uri)
            if row is None:
                raise ResourceNotFound(tool_id, "artifact", uri)
            # Text pages read a few bytes more, to finish a character cut by the limit.
            extra = 3 if encoding == "text" else 0
            data = reader.artifact_bytes(uri, offset, limit + extra) if offset < row.bytes else b""
        if encoding == "text":
            data = _text_page(data, limit)
        next_offset = offset + len(data)
        eof = next_offset >= row.bytes
        page: dict[str, Any] = {
            "artifact": ArtifactRef(row.uri, row.mime_type, row.bytes, row.sha256).payload(),
            "offset": offset,
            "bytes": len(data),
            "total_bytes": row.bytes,
        }
        if encoding == "text":
            page["data"] = data.decode("utf-8", errors="replace")
        else:
            page["data_base64"] = base64.b64encode(data).decode()
        page["next_offset"] = None if eof else next_offset
        page["eof"] = eof
        return page
