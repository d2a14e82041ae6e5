"""Settings read from the environment: where the data lives, and the limits that keep one
process (and its store) bounded. Every number has a documented default and a range; a value
out of range is a :class:`~compozy_mcp.errors.ConfigError` naming the variable."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from compozy_mcp.errors import ConfigError

DAY = 86_400
ENV_PERMISSION_MODE = "COMPOZY_PERMISSION_MODE"
ENV_STORE = "COMPOZY_STORE"
#: the SQLite store's file, in the home
DATABASE_FILE = "compozy.db"
#: as in compozy_mcp.approvals._modes (this module sits below it)
PERMISSION_MODES = ("default", "accept_edits", "bypass", "plan")


@dataclass(frozen=True, slots=True)
class Limit:
    """One integer setting: its environment variable, default and range."""

    env: str
    default: int
    low: int
    high: int
    meaning: str

    def read(self, env: Mapping[str, str]) -> int:
        text = env.get(self.env)
        if text is None or text.strip() == "":
            return self.default
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"{self.env} must be an integer, got {text!r}") from None
        return self.check(value)

    def check(self, value: int) -> int:
        if not self.low <= value <= self.high:
            raise ConfigError(
                f"{self.env} ({self.meaning}) must be between {self.low} and {self.high}, "
                f"got {value}"
            )
        return value


#: every integer setting, by the ``Settings`` field it fills
LIMITS: dict[str, Limit] = {
    "max_result_bytes": Limit(
        "COMPOZY_MAX_RESULT_BYTES", 256 * 1024, 1024, 16 * 1024 * 1024,
        "the largest result returned whole; a larger one becomes an artifact",
    ),
    "store_busy_timeout_ms": Limit(
        "COMPOZY_STORE_BUSY_TIMEOUT_MS", 5_000, 0, 600_000,
        "how long a write waits for another writer before it fails as store_busy",
    ),
    "artifact_ttl_seconds": Limit(
        "COMPOZY_ARTIFACT_TTL_SECONDS", DAY, 1, 365 * DAY,
        "how long a truncated result's artifact is kept after it was last stored",
    ),
    "mcp_max_sessions": Limit(
        "COMPOZY_MCP_MAX_SESSIONS", 64, 1, 100_000,
        "stateful MCP sessions open at once over HTTP; past it the longest idle is closed",
    ),
    "mcp_session_idle_seconds": Limit(
        "COMPOZY_MCP_SESSION_IDLE_SECONDS", 900, 1, 7 * DAY,
        "how long a stateful MCP session may stay idle before it is closed",
    ),
    "http_head_timeout_seconds": Limit(
        "COMPOZY_HTTP_HEAD_TIMEOUT_SECONDS", 15, 1, 3_600,
        "how long a request's line and headers may take to arrive",
    ),
    "http_body_timeout_seconds": Limit(
        "COMPOZY_HTTP_BODY_TIMEOUT_SECONDS", 60, 1, 3_600,
        "how long a request's body may take to arrive",
    ),
    "upkeep_seconds": Limit(
        "COMPOZY_UPKEEP_SECONDS", 300, 1, DAY,
        "how often the daemon sweeps expired sessions and artifacts and folds the WAL",
    ),
    "agent_start_timeout_seconds": Limit(
        "COMPOZY_AGENT_START_TIMEOUT_SECONDS", 60, 1, 3_600,
        "how long an agent process may take to start and answer initialize and new_session",
    ),
    "permission_timeout_seconds": Limit(
        "COMPOZY_PERMISSION_TIMEOUT_SECONDS", 300, 1, 7 * DAY,
        "how long an agent's permission request waits for an answer before it is rejected",
    ),
    "agent_stop_grace_seconds": Limit(
        "COMPOZY_AGENT_STOP_GRACE_SECONDS", 3, 0, 60,
        "how long an agent process has to exit after SIGTERM before it is killed",
    ),
    "agent_max_frame_bytes": Limit(
        "COMPOZY_AGENT_MAX_FRAME_BYTES", 16 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024,
        "the longest line (one ACP message) an agent may write on stdout; a longer one fails "
        "the agent",
    ),
    "loop_source_bytes": Limit(
        "COMPOZY_LOOP_SOURCE_BYTES", 4 * 1024 * 1024, 1024, 64 * 1024 * 1024,
        "the largest Loop document (YAML or JSON text) lint reads",
    ),
    "loop_source_values": Limit(
        "COMPOZY_LOOP_SOURCE_VALUES", 200_000, 1_000, 10_000_000,
        "the most values a Loop document may hold once its YAML aliases are expanded",
    ),
    "loop_max_nodes": Limit(
        "COMPOZY_LOOP_MAX_NODES", 10_000, 1, 20_000,
        "the most nodes (and, times four, edges) a Loop may have",
    ),
    "loop_node_output_bytes": Limit(
        "COMPOZY_LOOP_NODE_OUTPUT_BYTES", 2 * 1024 * 1024, 1024, 64 * 1024 * 1024,
        "the largest output (or rendered value) one Loop node may make, as JSON",
    ),
    "loop_run_bytes": Limit(
        "COMPOZY_LOOP_RUN_BYTES", 16 * 1024 * 1024, 64 * 1024, 64 * 1024 * 1024,
        "the most bytes of node outputs one Loop run may hold",
    ),
    "lease_seconds": Limit(
        "COMPOZY_LEASE_SECONDS", 15, 1, 3_600,
        "how long a daemon's lease on a session's agent (or a Loop run) lasts unless renewed: "
        "after it, another daemon of the same store takes the session over",
    ),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Settings:
    """``COMPOZY_HOME`` (default ``~/.compozy``), ``COMPOZY_WORKSPACE`` (the default workspace's
    path when the store is created) and the limits of :data:`LIMITS`."""

    home: Path
    #: the path recorded for the default workspace when the store is first created
    default_workspace_path: Path | None = None
    max_result_bytes: int = LIMITS["max_result_bytes"].default
    store_busy_timeout_ms: int = LIMITS["store_busy_timeout_ms"].default
    artifact_ttl_seconds: int = LIMITS["artifact_ttl_seconds"].default
    mcp_max_sessions: int = LIMITS["mcp_max_sessions"].default
    mcp_session_idle_seconds: int = LIMITS["mcp_session_idle_seconds"].default
    http_head_timeout_seconds: int = LIMITS["http_head_timeout_seconds"].default
    http_body_timeout_seconds: int = LIMITS["http_body_timeout_seconds"].default
    upkeep_seconds: int = LIMITS["upkeep_seconds"].default
    agent_start_timeout_seconds: int = LIMITS["agent_start_timeout_seconds"].default
    permission_timeout_seconds: int = LIMITS["permission_timeout_seconds"].default
    agent_stop_grace_seconds: int = LIMITS["agent_stop_grace_seconds"].default
    agent_max_frame_bytes: int = LIMITS["agent_max_frame_bytes"].default
    loop_source_bytes: int = LIMITS["loop_source_bytes"].default
    loop_source_values: int = LIMITS["loop_source_values"].default
    loop_max_nodes: int = LIMITS["loop_max_nodes"].default
    loop_node_output_bytes: int = LIMITS["loop_node_output_bytes"].default
    loop_run_bytes: int = LIMITS["loop_run_bytes"].default
    lease_seconds: int = LIMITS["lease_seconds"].default
    #: the permission mode of sessions that have none set (``COMPOZY_PERMISSION_MODE``):
    #: default, accept_edits, bypass or plan (docs/approvals.md)
    permission_mode: str = "default"
    #: the PostgreSQL database the store is in (``COMPOZY_STORE``, ``serve --store``): its
    #: URL; ``None``: the SQLite file in the home (docs/deployment.md)
    store: str | None = None

    @property
    def db_path(self) -> Path:
        """The SQLite store's file (when ``store`` names no PostgreSQL database)."""
        return self.home / DATABASE_FILE

    @property
    def skills_dir(self) -> Path:
        return self.home / "skills"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home_text = env.get("COMPOZY_HOME") or str(Path.home() / ".compozy")
        workspace = env.get("COMPOZY_WORKSPACE")
        mode = (env.get(ENV_PERMISSION_MODE) or "default").strip()
        if mode not in PERMISSION_MODES:
            raise ConfigError(
                f"{ENV_PERMISSION_MODE} must be one of {', '.join(PERMISSION_MODES)}, got {mode!r}"
            )
        return cls(
            store=env.get(ENV_STORE, "").strip() or None,
            permission_mode=mode,
            home=Path(home_text).expanduser(),
            default_workspace_path=Path(workspace).expanduser() if workspace else None,
            **{name: limit.read(env) for name, limit in LIMITS.items()},
        )

    def with_budget(self, max_result_bytes: int) -> Settings:
        return replace(self, max_result_bytes=LIMITS["max_result_bytes"].check(max_result_bytes))


assert set(LIMITS) <= {f.name for f in fields(Settings)}
