"""Storage: one interface (:mod:`.base`), the embedded SQLite engine by default."""

from compozy_mcp.store.base import Store, StoreReader, StoreWriter
from compozy_mcp.store.sqlite import SQLiteStore

__all__ = ["SQLiteStore", "Store", "StoreReader", "StoreWriter"]
