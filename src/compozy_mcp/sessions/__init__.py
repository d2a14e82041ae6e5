"""The session domain: stored state, the complete record, operations, runtime binding."""

__all__ = [
    "access",
    "heartbeats",
    "interactions",
    "ledger",
    "lifecycle",
    "model",
    "policy",
    "record_schema",
    "runtime",
    "service",
    "spawning",
    "tasks",
    "turn_record",
    "worktrees",
]
