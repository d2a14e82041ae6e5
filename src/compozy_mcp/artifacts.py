"""Tool artifacts: results too large for the budget, stored whole and read back in pages."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
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


#: whose artifact an operator call stores
OPERATOR_OWNER = ""
#: decides whether a caller may read an artifact, given the sessions that stored it
MayRead = Callable[[list[str]], bool]


class ArtifactService:
    """Stores results too large for the budget (a write, run off the event loop) and reads
    them back in pages (on the loop).

    An artifact lives ``ttl_seconds`` after it was last stored (the same content stored again
    is kept once and lives on), then :meth:`sweep` deletes it; it is gone with the sessions that
    stored it when they are deleted.
    """

    def __init__(self, store: Store, clock: Clock, offload: Offload, *, ttl_seconds: int) -> None:
        self._store = store
        self._clock = clock
        self._offload = offload
        self._ttl = timedelta(seconds=ttl_seconds)

    async def put(
        self,
        tool_id: str,
        data: bytes,
        *,
        mime_type: str,
        meta: dict[str, Any],
        owner: str = OPERATOR_OWNER,
    ) -> ArtifactRef:
        return await self._offload(self._put, tool_id, data, mime_type, meta, owner)

    def _put(
        self, tool_id: str, data: bytes, mime_type: str, meta: dict[str, Any], owner: str
    ) -> ArtifactRef:
        digest = sha256_hex(data)
        ref = ArtifactRef(f"{ARTIFACT_SCHEME}art_{digest}", mime_type, len(data), digest)
        now = self._clock.now()
        row = ArtifactRow(
            ref.uri,
            digest,
            mime_type,
            len(data),
            tool_id,
            timestamp(now),
            meta,
            expires_at=timestamp(now + self._ttl),
        )
        try:
            with self._store.write() as writer:
                writer.delete_expired_artifacts(timestamp(now))
                writer.put_artifact(row, data, owner=owner)
        except StoreBusy:
            raise
        except Exception as exc:
            log.exception("storing an artifact of %s failed", tool_id)
            raise ToolResultPersistenceFailed(
                tool_id, f'tool "{tool_id}" result could not be stored as an artifact'
            ) from exc
        return ref

    def sweep(self) -> int:
        """Delete expired artifacts (a write: run it off the event loop); returns how many."""
        with self._store.write() as writer:
            return writer.delete_expired_artifacts(timestamp(self._clock.now()))

    def read(
        self,
        tool_id: str,
        uri: str,
        *,
        offset: int,
        limit: int,
        encoding: str = "base64",
        may_read: MayRead | None = None,
    ) -> dict[str, Any]:
        """One page of an artifact. ``text`` pages never split a UTF-8 character. An expired
        artifact, or one ``may_read`` refuses, does not exist for the caller."""
        with self._store.read() as reader:
            row = reader.artifact(uri)
            owners = reader.artifact_owners(uri) if row is not None and may_read else []
            # Text pages read a few bytes more, to finish a character cut by the limit.
            extra = 3 if encoding == "text" else 0
            data = (
                reader.artifact_bytes(uri, offset, limit + extra)
                if row is not None and offset < row.bytes
                else b""
            )
        now = timestamp(self._clock.now())
        if (
            row is None
            or (row.expires_at is not None and row.expires_at <= now)
            or (may_read is not None and not may_read(owners))
        ):
            raise ResourceNotFound(tool_id, "artifact", uri)
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
