"""Assembly: settings, store, services, registry, hooks and the dispatcher, built once per
process.

Every in-process surface runs on one :class:`App`; against a daemon, the surfaces open none.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import anyio

from compozy_mcp.approvals import Approvals, PermissionMode
from compozy_mcp.artifacts import ArtifactService
from compozy_mcp.background import TaskOwner
from compozy_mcp.blocking import Offload
from compozy_mcp.calls import CallInfo
from compozy_mcp.clock import Clock, SystemClock
from compozy_mcp.config import Settings
from compozy_mcp.dispatch import Dispatcher
from compozy_mcp.hooks import HookEngine, ToolHook
from compozy_mcp.hooks.admin import HookAdminService
from compozy_mcp.hooks.registry import HookRegistry
from compozy_mcp.hooks.runlog import RunLog
from compozy_mcp.info.catalog import ToolCatalog
from compozy_mcp.loops.limits import LoopLimits
from compozy_mcp.loops.service import LoopService
from compozy_mcp.native import ToolDefinition, build_registry
from compozy_mcp.native.context import Services
from compozy_mcp.runtime.answers import PermissionAnswerer
from compozy_mcp.runtime.process import Launcher
from compozy_mcp.runtime.supervisor import AgentRuntime
from compozy_mcp.sessions.heartbeats import Heartbeats, Waker
from compozy_mcp.sessions.runtime import RuntimeDriver
from compozy_mcp.sessions.service import Sessions
from compozy_mcp.sessions.tasks import Tasks
from compozy_mcp.skills import SkillService
from compozy_mcp.store import Store
from compozy_mcp.store.open import open_store
from compozy_mcp.upkeep import Upkeep


@dataclass(frozen=True, slots=True)
class App:
    settings: Settings
    store: Store
    services: Services
    dispatcher: Dispatcher
    catalog: ToolCatalog
    hooks: HookEngine
    upkeep: Upkeep
    approvals: Approvals
    #: the agents this process runs
    runtime: AgentRuntime
    #: the tasks its services start beyond a call (agents' turns, Loop runs)
    tasks: TaskOwner

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[App]:
        """The app's life in this process (the daemon's lifespan, an in-process command): the
        tasks its services start beyond a call run in one task group, and stop when it ends
        (:meth:`shutdown` first, then whatever is left is cancelled)."""
        async with self.tasks.hosting():
            try:
                yield self
            finally:
                with anyio.CancelScope(shield=True):
                    await self.shutdown()

    async def shutdown(self) -> None:
        """Before the process ends: the Loop runs it drives stop where they are (saved, for
        the next daemon to recover), its agents stop (their sessions are unbound), async hooks
        and run records finish."""
        await self.loops.shutdown()
        await self.runtime.shutdown()
        await self.hooks.drain()
        await self.tasks.close_own()

    @property
    def sessions(self) -> Sessions:
        return self.services.sessions

    @property
    def loops(self) -> LoopService:
        loops = self.services.loops
        assert isinstance(loops, LoopService)
        return loops

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
    launcher: Launcher | None = None,
    extra_tools: Sequence[ToolDefinition] = (),
    hooks: Sequence[ToolHook] = (),
) -> App:
    """Open the store (``COMPOZY_STORE``'s database, else ``$COMPOZY_HOME/compozy.db``; or
    the one given) and wire the core."""
    settings = settings or Settings.from_env()
    store = store or open_store(
        settings.store, settings.home, busy_timeout_ms=settings.store_busy_timeout_ms
    )
    try:
        clock = clock or SystemClock()
        offload = Offload()
        background = TaskOwner()
        registry = build_registry(list(extra_tools))
        sessions = Sessions(
            store,
            clock,
            offload,
            default_workspace_path=settings.default_workspace_path,
            worktrees_dir=settings.home / "worktrees",
        )
        # turns, history and events are read through the runtime whatever binds (a driver of
        # the caller's own binds without processes: its sessions' prompts stay queued)
        runtime = AgentRuntime(sessions, settings, offload, background, launcher)
        sessions.driver = driver or runtime
        catalog = ToolCatalog(registry, sessions)
        approvals = Approvals(
            store,
            sessions,
            clock,
            offload,
            registry,
            default_mode=PermissionMode(settings.permission_mode),
        )
        engine = HookEngine(
            HookRegistry(store, settings.home), RunLog(store, offload), sessions, clock
        )
        for hook in hooks:
            engine.registry.add_code_hook(hook)
        loops = LoopService(
            store, registry, sessions, clock, offload, background, LoopLimits.of(settings)
        )
        tasks = Tasks(store, clock, offload)
        tasks.prompter = _prompter(runtime)
        tasks.note_worktree = sessions.turn_ended
        heartbeats = Heartbeats(sessions.ledger, clock, offload)
        heartbeats.waker = _prompter(runtime)
        services = Services(
            settings=settings,
            sessions=sessions,
            skills=SkillService(settings.skills_dir),
            artifacts=ArtifactService(
                store, clock, offload, ttl_seconds=settings.artifact_ttl_seconds
            ),
            catalog=catalog,
            hooks=HookAdminService(engine, registry, store, sessions, clock, offload),
            approvals=approvals,
            loops=loops,
            tasks=tasks,
            heartbeats=heartbeats,
            agents=runtime,
        )
        # its agents' permission requests are answered there
        approvals.answerers.register(PermissionAnswerer(runtime))
        dispatcher = Dispatcher(registry, services, hooks=engine, approvals=approvals)
        loops.attach(dispatcher)
        upkeep = Upkeep(
            store, sessions, services.artifacts, sweeps=(approvals.sweep, tasks.expire_claims)
        )
    except BaseException:
        store.close()
        raise
    return App(
        settings,
        store,
        services,
        dispatcher,
        catalog,
        engine,
        upkeep,
        approvals,
        runtime,
        background,
    )


def _prompter(runtime: AgentRuntime) -> Waker:
    """A prompt the system sends a session (requested changes, a heartbeat), as the operator:
    the reviewer may be a sibling, which could not prompt it itself. The turn's id."""

    async def prompt(session_id: str, text: str) -> str:
        call = CallInfo("compozy__session_prompt")
        await runtime.ensure_running(call, session_id)
        return await runtime.prompt(call, session_id, text, wait=False)

    return prompt
