"""The session domain: stored state, the complete record, operations, runtime binding."""
