"""A daemon's identity among the daemons of one store: its id and its internal address."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compozy_mcp.errors import ConfigError

ENV_DAEMON_ID = "COMPOZY_DAEMON_ID"
ID_FILE = "daemon-id"
_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True, slots=True)
class DaemonIdentity:
    daemon_id: str
    #: where the other daemons (and a balancer) reach it: ``http://host:port``
    address: str | None = None


def daemon_identity(
    home: Path, env: Mapping[str, str], address: str | None = None
) -> DaemonIdentity:
    """``COMPOZY_DAEMON_ID``, else the id kept in ``$COMPOZY_HOME/daemon-id`` (made once).
    The id outlives a restart of the daemon of that home, so a restarted daemon knows the
    leases its killed predecessor held as its own (and frees them at once)."""
    given = env.get(ENV_DAEMON_ID)
    if given:
        if not _ID.match(given):
            raise ConfigError(
                f"{ENV_DAEMON_ID} must be 1-64 letters, digits, '.', '_' or '-', got {given!r}"
            )
        return DaemonIdentity(given, address)
    path = home / ID_FILE
    with contextlib.suppress(FileNotFoundError):
        kept = path.read_text(encoding="utf-8").strip()
        if _ID.match(kept):
            return DaemonIdentity(kept, address)
    made = f"d-{secrets.token_hex(6)}"
    home.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{ID_FILE}.{os.getpid()}")
    partial.write_text(made + "\n", encoding="utf-8")
    os.replace(partial, path)
    return DaemonIdentity(made, address)
