"""Git, as sessions use it: worktrees made and removed, snapshots of working trees, diffs,
merges computed without touching a checkout, and pull requests opened with ``gh``. No store,
no tool: the session layer (``sessions/worktrees.py``) decides what to do with them."""

__all__ = ["diff", "git", "github", "repo"]
