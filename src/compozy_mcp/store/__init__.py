"""Storage: one interface (:mod:`.base`), the embedded SQLite engine by default."""

from compozy_mcp.store._sqlite import SQLiteStore
from compozy_mcp.store.base import Store, StoreReader, StoreWriter

__all__ = ["SQLiteStore", "Store", "StoreReader", "StoreWriter"]
