"""A bounded cache of parsed SKILL.md files, keyed by what ``stat`` says about them."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from compozy_mcp.skills._metadata import ParsedSkill

CacheKey = tuple[str, int, int, int, int, int]

MAX_ENTRIES = 512
#: bodies are kept, so the cache is bounded by the bytes of the files it holds too
MAX_BYTES = 32 * 1024 * 1024


def cache_key(real_path: str, info: os.stat_result) -> CacheKey:
    """Path, identity, size and both change times: a rewrite changes at least one of them."""
    return (
        real_path,
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


class ParseCache:
    """Least-recently-used, thread-safe."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._entries: OrderedDict[CacheKey, ParsedSkill] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def fit(self, count: int) -> None:
        """Make room for ``count`` files of one root, with room to spare for another: with
        a fixed number of entries, one skill more than it holds made every listing parse
        every file again (least-recently-used, read in order). Still bounded by bytes."""
        with self._lock:
            self._max_entries = max(self._max_entries, 2 * count)

    def get(self, key: CacheKey) -> ParsedSkill | None:
        with self._lock:
            parsed = self._entries.get(key)
            if parsed is not None:
                self._entries.move_to_end(key)
            return parsed

    def put(self, key: CacheKey, parsed: ParsedSkill) -> None:
        size = key[3]
        if size > self._max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= size
            self._entries[key] = parsed
            self._bytes += size
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                evicted, _ = self._entries.popitem(last=False)
                self._bytes -= evicted[3]
