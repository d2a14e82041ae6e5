"""Settings read from the environment: where the data lives and the result budget."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from compozy_mcp.errors import ConfigError

DEFAULT_MAX_RESULT_BYTES = 256 * 1024
MAX_RESULT_BYTES_CAP = 16 * 1024 * 1024
MIN_RESULT_BYTES = 1024
DEFAULT_STORE_BUSY_TIMEOUT_MS = 5_000
MAX_STORE_BUSY_TIMEOUT_MS = 600_000


@dataclass(frozen=True, slots=True)
class Settings:
    """``COMPOZY_HOME`` (default ``~/.compozy``), ``COMPOZY_MAX_RESULT_BYTES`` (256 KiB) and
    ``COMPOZY_STORE_BUSY_TIMEOUT_MS`` (how long a write waits for another writer, 5000)."""

    home: Path
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    store_busy_timeout_ms: int = DEFAULT_STORE_BUSY_TIMEOUT_MS
    #: the path recorded for the default workspace when the store is first created
    default_workspace_path: Path | None = None

    @property
    def db_path(self) -> Path:
        return self.home / "compozy.db"

    @property
    def skills_dir(self) -> Path:
        return self.home / "skills"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home_text = env.get("COMPOZY_HOME") or str(Path.home() / ".compozy")
        home = Path(home_text).expanduser()
        budget = _parse_budget(env.get("COMPOZY_MAX_RESULT_BYTES"))
        busy = _parse_int(
            "COMPOZY_STORE_BUSY_TIMEOUT_MS",
            env.get("COMPOZY_STORE_BUSY_TIMEOUT_MS"),
            DEFAULT_STORE_BUSY_TIMEOUT_MS,
            low=0,
            high=MAX_STORE_BUSY_TIMEOUT_MS,
        )
        workspace = env.get("COMPOZY_WORKSPACE")
        return cls(
            home=home,
            max_result_bytes=budget,
            store_busy_timeout_ms=busy,
            default_workspace_path=Path(workspace).expanduser() if workspace else None,
        )

    def with_budget(self, max_result_bytes: int) -> Settings:
        return replace(self, max_result_bytes=_check_budget(max_result_bytes))


def _parse_int(name: str, text: str | None, default: int, *, low: int, high: int) -> int:
    if text is None or text.strip() == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {text!r}") from None
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _parse_budget(text: str | None) -> int:
    if text is None or text.strip() == "":
        return DEFAULT_MAX_RESULT_BYTES
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"COMPOZY_MAX_RESULT_BYTES must be an integer, got {text!r}") from None
    return _check_budget(value)


def _check_budget(value: int) -> int:
    if not MIN_RESULT_BYTES <= value <= MAX_RESULT_BYTES_CAP:
        raise ConfigError(
            f"the result budget must be between {MIN_RESULT_BYTES} and {MAX_RESULT_BYTES_CAP} "
            f"bytes, got {value}"
        )
    return value
