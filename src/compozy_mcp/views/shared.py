"""Records their maker keeps and hands to every reader, unchanged (a session's record, kept
until the session or what surrounds it changes): each view of one is projected once and kept
with it, instead of on every call that reads it.

A shared record is read-only to everyone, and so is every projection of it; a record nobody
shared is projected afresh each time, as before. Only the records shared last are kept (the
maker's own cache is the bound that matters: what it evicts is never asked for again).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

#: records kept with their views; the session ledger keeps 2,048 records
SHARED_RECORDS = 4096
#: views kept per record (a record has its compact view, perhaps one per list it appears in)
VIEWS_PER_RECORD = 4


class SharedRecords:
    def __init__(self, size: int = SHARED_RECORDS) -> None:
        self._size = size
        # keyed by id(): the entry holds the record, so its id cannot be reused while kept
        self._kept: OrderedDict[int, tuple[dict[str, Any], list[tuple[object, Any]]]] = (
            OrderedDict()
        )

    def share(self, record: dict[str, Any]) -> None:
        """Declare ``record`` read-only from now on: its views may be kept."""
        key = id(record)
        if key not in self._kept:
            self._kept[key] = (record, [])
            if len(self._kept) > self._size:
                self._kept.popitem(last=False)

    def views(self, value: Any) -> list[tuple[object, Any]] | None:
        """The views kept of ``value`` (by node), when it is a shared record; else ``None``."""
        found = self._kept.get(id(value))
        if found is None or found[0] is not value:
            return None
        return found[1]


SHARED = SharedRecords()
