"""Agent definitions and the agents that ship with compozy-mcp (the ``echo`` agent)."""

__all__ = ["definitions"]
