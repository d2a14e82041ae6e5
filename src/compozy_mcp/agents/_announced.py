"""What each agent announced when it last started: the models and reasoning efforts it offers
(ACP config options). A definition that lists none takes these, so ``compozy agent list`` shows
what the installed adapter really offers instead of a list that goes stale.

Kept in ``$COMPOZY_HOME/run/agents.json`` (private), replaced whole on each change.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.private_paths import private_dirs

FILE = Path("run") / "agents.json"


class Announcements:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / FILE

    def stamp(self) -> tuple[int, int] | None:
        try:
            found = self.path.stat()
        except OSError:
            return None
        return (found.st_mtime_ns, found.st_size)

    def read(self) -> dict[str, dict[str, list[str]]]:
        """``{agent name: {"models": [...], "reasoning_efforts": [...]}}``; an unreadable file
        is as good as none (it is written again at the next start)."""
        try:
            loaded: Any = jsonutil.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(loaded, dict):
            return {}
        found: dict[str, dict[str, list[str]]] = {}
        for name, offered in loaded.items():
            if isinstance(offered, dict):
                found[str(name)] = {
                    key: [str(v) for v in offered.get(key, []) if isinstance(v, str)]
                    for key in ("models", "reasoning_efforts")
                }
        return found

    def record(self, name: str, models: list[str], efforts: list[str]) -> None:
        """Remember what agent ``name`` offers (nothing is written when it is unchanged)."""
        current = self.read()
        offered = {"models": models, "reasoning_efforts": efforts}
        if current.get(name) == offered:
            return
        current[name] = offered
        private_dirs(self.home, FILE.parent)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".agents-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(jsonutil.dumps(current))
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
