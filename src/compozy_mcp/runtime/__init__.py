"""The agent runtime: ACP agent processes for sessions, their turns and permission requests."""

__all__ = ["answers", "process", "supervisor"]
