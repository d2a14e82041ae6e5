"""Assembly: settings, store, services, registry and the dispatcher, built once per process."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compozy_mcp.artifacts import ArtifactService
from compozy_mcp.clock import Clock, SystemClock
from compozy_mcp.config import Settings
from compozy_mcp.dispatch import Dispatcher
from compozy_mcp.hooks import ToolHook
from compozy_mcp.info.catalog import ToolCatalog
from compozy_mcp.native import ToolDefinition, build_registry
from compozy_mcp.native.context import Services
from compozy_mcp.sessions.runtime import RecordedDriver, RuntimeDriver
from compozy_mcp.sessions.service import SessionService
from compozy_mcp.skills import SkillService
from compozy_mcp.store import SQLiteStore, Store


@dataclass(frozen=True, slots=True)
class App:
    settings: Settings
    store: Store
    services: Services
    dispatcher: Dispatcher

    @property
    def catalog(self) -> ToolCatalog:
        return self.services.catalog

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> App:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_app(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    clock: Clock | None = None,
    driver: RuntimeDriver | None = None,
    extra_tools: Sequence[ToolDefinition] = (),
    hooks: Sequence[ToolHook] = (),
) -> App:
    """Open the store at ``$COMPOZY_HOME/compozy.db`` (or the one given) and wire the core."""
    settings = settings or Settings.from_env()
    store = store or SQLiteStore(settings.db_path)
    clock = clock or SystemClock()
    registry = build_registry(list(extra_tools))
    sessions = SessionService(
        store,
        clock,
        driver or RecordedDriver(),
        default_workspace_path=settings.default_workspace_path,
    )
    services = Services(
        settings=settings,
        sessions=sessions,
        skills=SkillService(settings.skills_dir),
        artifacts=ArtifactService(store, clock),
        catalog=ToolCatalog(registry, sessions),
    )
    return App(settings, store, services, Dispatcher(registry, services, hooks=hooks))
