"""Every hook this process runs: in-process ones (code), ``$COMPOZY_HOME/hooks.yaml``, each
trusted workspace's ``.compozy/hooks.yaml`` and the stored ones (made by the tools), in that
order, which is the order they run in.

A workspace's file runs only once the operator trusted the workspace (``compozy workspace
trust PATH``): anything that can write into a workspace (an agent working there) could
otherwise run a command as the daemon on the next call. The file of a workspace that is not
trusted is never read; it is reported as a problem (``compozy hooks list``).

The set is rebuilt when one of its sources changes. A change made in this process (through the
tools) is seen by the next call; a change made elsewhere (another process, an edited file) within
:data:`RELOAD_SECONDS`, when the next call checks the sources again: a stat per file and one
read of the stored hooks, at most once a second, so a call with no hooks pays nothing more.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compozy_mcp.hooks._config import HookFile, Loaded, load
from compozy_mcp.hooks._events import EVENTS, ToolHook
from compozy_mcp.hooks._execution import InProcessRunner
from compozy_mcp.hooks._model import CODE, STORE, Hook, Matcher
from compozy_mcp.native.hook_schema import DEFAULT_TIMEOUT
from compozy_mcp.store.base import HookRow, Store

RELOAD_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class HookSet:
    """One consistent view of every hook."""

    hooks: tuple[Hook, ...] = ()
    problems: tuple[dict[str, Any], ...] = ()
    #: the enabled hooks of each event, in run order
    by_event: Mapping[str, tuple[Hook, ...]] = field(default_factory=dict)
    #: whether any hook is enabled (what a call asks first, so it is worked out once)
    active: bool = False

    @classmethod
    def of(cls, hooks: list[Hook], problems: list[dict[str, Any]]) -> HookSet:
        by_event = {
            event: tuple(h for h in hooks if h.enabled and h.event == event) for event in EVENTS
        }
        return cls(tuple(hooks), tuple(problems), by_event, any(by_event.values()))

    def find(self, hook_id: str) -> Hook | None:
        """A configured hook by id (in-process hooks have no id a caller can name)."""
        return next((h for h in self.hooks if h.id == hook_id and h.source != CODE), None)

    def enabled(self, event: str) -> tuple[Hook, ...]:
        return self.by_event.get(event, ())


def stored_hook(row: HookRow, home: Path) -> Hook:
    return Hook.configured(
        row.id,
        row.definition,
        source=STORE,
        cwd=str(home),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def untrusted_problem(source: HookFile) -> dict[str, Any]:
    # the problem's shape is the one every hooks_list problem has: a new field would change
    # the tool's output contract, which Loop runs pin
    return source.problem(
        f'not run: workspace "{source.workspace_id}" is not trusted (the operator trusts it '
        "with `compozy workspace trust PATH`)"
    )


class HookRegistry:
    def __init__(self, store: Store, home: Path) -> None:
        self._store = store
        self._home = home
        self._code: list[Hook] = []
        self._set = HookSet()
        self._stamp: object = None
        self._checked = -math.inf

    def add_code_hook(
        self,
        hook: ToolHook,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        events: tuple[str, ...] = EVENTS,
    ) -> None:
        """An in-process hook on ``events`` (default: all three) of every tool (sync;
        failures allowed)."""
        number = len({h.id for h in self._code}) + 1
        runner = InProcessRunner(hook)
        for event in events:
            self._code.append(
                Hook(
                    id=f"code-{number}",
                    event=event,
                    matcher=Matcher(),
                    runner=runner,
                    timeout=timeout,
                    sync=True,
                    enabled=True,
                    on_error="allow",
                    source=CODE,
                    definition={},
                )
            )
        self.invalidate()

    def invalidate(self) -> None:
        """Check the sources again at the next :meth:`current` (a change made here)."""
        self._checked = -math.inf

    def current(self) -> HookSet:
        now = time.monotonic()
        if now - self._checked >= RELOAD_SECONDS:
            self._checked = now
            self._refresh()
        return self._set

    def _refresh(self) -> None:
        with self._store.read() as reader:
            rows = reader.hooks()
            workspaces = reader.workspaces()
        files = [HookFile.home(self._home)]
        untrusted: list[HookFile] = []
        for workspace in workspaces:
            source = HookFile.workspace(workspace.id, Path(workspace.path))
            (files if workspace.trusted_at else untrusted).append(source)
        stamp = (
            len(self._code),
            rows,
            [(f.path, f.stamp()) for f in files],
            [(f.path, f.stamp()) for f in untrusted],
        )
        if stamp == self._stamp:
            return
        loaded = Loaded(hooks=list(self._code))
        for source in files:
            if source.stamp() is None:
                continue
            found = load(source)
            loaded.hooks += found.hooks
            loaded.problems += found.problems
        for source in untrusted:
            if source.stamp() is not None:
                loaded.problems.append(untrusted_problem(source))
        taken = {h.id for h in loaded.hooks}
        for row in rows:
            if row.id in taken:
                loaded.problems.append(
                    {
                        "source": "store",
                        "hook_id": row.id,
                        "message": f'stored hook "{row.id}" is not run: a hooks.yaml defines a '
                        "hook with the same id",
                    }
                )
                continue
            loaded.hooks.append(stored_hook(row, self._home))
        self._set = HookSet.of(loaded.hooks, loaded.problems)
        self._stamp = stamp
