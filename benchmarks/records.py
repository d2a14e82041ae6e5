"""A seeded generator of realistic session data, driven through the app's dispatcher.

``build_world(app, seed)`` fills an app with what a busy workspace holds after a working day:
root sessions bound to a runtime that advertises 30 commands (:mod:`benchmarks.driver`),
transcripts, model switches, spawned children (and grandchildren) with narrowed permission
policies, worktrees, queued prompts, pending interactions, pull requests, supervision turns,
"later" markers, failures, stops, forks, rewinds and archived sessions, plus a realistic set of
skills. Every change a tool can make is made through ``Dispatcher.call``, the path users take;
runtime events that no tool makes (an agent asking for permission, a pull request being
linked, a turn in progress, a crash) go through the session service's event methods, as the
agent bridge reports them.

The same seed gives the same records: the same sessions, fields and byte sizes. Generated ids
and timestamps of ids are random but of fixed length, so byte counts do not vary.
"""

from __future__ import annotations

import random
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from benchmarks.driver import RealisticDriver
from compozy_mcp.assembly import App, open_app
from compozy_mcp.clock import FixedClock, timestamp
from compozy_mcp.config import Settings
from compozy_mcp.sessions.model import PullRequest
from compozy_mcp.store import SQLiteStore, Store

START = datetime(2026, 11, 10, 9, 0, 0, tzinfo=UTC)
DEFAULT_SEED = 20261110

TASKS = (
    "Fix flaky upload test",
    "Migrate billing webhooks to the v2 API",
    "Add a retry budget to the sync worker",
    "Investigate the p95 latency regression in search",
    "Document compozy tool invoke",
    "Upgrade pydantic to 2.14",
    "Refactor session fences into one check",
    "Triage the nightly end-to-end failures",
    "Port the CSV importer to async",
    "Harden the artifact reader against short reads",
    "Review third-party licences before the release",
    "Speed up cold start of the proxy",
    "Add pagination to the audit log API",
    "Replace the hand-written SQL in reports",
    "Stabilize the websocket reconnect logic",
    "Write a migration guide for result views",
)
AGENTS = ("general", "general", "general", "reviewer", "planner", "release-manager")
CHILD_AGENTS = ("general", "tester", "reviewer", "researcher", "docs-writer")
CHILD_ROLES = ("worker", "worker", "reviewer", "tester", "researcher")
CHILD_TASKS = (
    "Reproduce the failure locally",
    "Write a regression test",
    "Review the diff for edge cases",
    "Check the changelog and docs",
    "Bisect the offending commit",
    "Profile the hot path",
    "Update the fixtures",
)
PROMPTS = (
    "The upload test fails about one run in twenty on CI; find out why and fix it.",
    "Read tests/upload/test_resumable.py and the retry helper, then explain the race.",
    "Run the suite with -p no:randomly and report which tests depend on order.",
    "Make the fix, keep the public API unchanged, and add a test that fails without it.",
    "Summarize what you changed and what is left for the review.",
    "Look at the last three nightly runs and group the failures by cause.",
)
#: a child's tools are chosen from these (the parent, a root, has every tool)
CHILD_TOOLS = (
    "compozy__session_status",
    "compozy__session_list",
    "compozy__session_spawn",
    "compozy__session_continue",
    "compozy__skill_*",
    "compozy__tool_info",
    "compozy__tool_search",
    "compozy__tool_artifact_read",
)
#: the models (and efforts) the real adapters announce when they start (docs/agents.md): the
#: built-in definitions list none, so the world picks from these
ANNOUNCED_MODELS = {
    "claude": ("default", "sonnet[1m]", "opus[1m]", "haiku"),
    "codex": ("gpt-5.5-codex", "gpt-5.5", "gpt-5.5-mini"),
    "gemini": ("gemini-2.5-pro", "gemini-2.5-flash"),
}
ANNOUNCED_EFFORTS = {"codex": ("low", "medium", "high", "xhigh")}
MCP_SERVERS = ("github", "linear", "sentry", "postgres", "playwright")
CHILD_PATHS = ("src/upload", "src/sync", "tests/upload", "tests/e2e", "docs", "scripts")
TOOLS_IN_TURN = ("Bash", "Edit", "Read", "Grep", "compozy__session_status", None)
QUESTIONS = (
    ("question", "Which branch should the fix target?", ["main", "release/2026.11"]),
    ("permission", "Run make test", None),
    ("permission", "Write to tests/fixtures/upload.bin", None),
    ("plan", "Plan: split the importer into reader and writer stages", ["approve", "revise"]),
)
SKILL_TOPICS = (
    ("python-testing", "How we write and run pytest suites", ["python", "testing"]),
    ("code-review", "Checklist for reviewing a pull request", ["review"]),
    ("release", "Cut a release: changelog, tag, publish", ["release", "ci"]),
    ("sql-migrations", "Write reversible schema migrations", ["database"]),
    ("incident-triage", "First steps when production alerts fire", ["ops"]),
    ("docs-style", "House style for user documentation", ["docs", "writing"]),
    ("frontend-testing", "Playwright conventions for the web app", ["testing", "web"]),
    ("profiling", "Profile Python services with py-spy and pyinstrument", ["python", "perf"]),
    ("git-hygiene", "Branch names, commit messages and rebasing", ["git"]),
    ("api-design", "Resource-oriented API rules we follow", ["api"]),
    ("security-review", "Threat-model a change before merging", ["security", "review"]),
    ("dependency-upgrades", "Upgrade dependencies without surprises", ["python", "ci"]),
)


@dataclass(slots=True)
class World:
    """What ``build_world`` made, in creation order (the same order for the same seed)."""

    app: App
    clock: FixedClock
    driver: RealisticDriver
    seed: int
    roots: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    forks: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)

    @property
    def now(self) -> str:
        return timestamp(self.clock.now())


@dataclass(frozen=True, slots=True)
class Size:
    roots: int = 12
    max_children: int = 4

    @classmethod
    def quick(cls) -> Size:
        return cls(roots=3, max_children=2)


def git_workspace(path: Path) -> Path:
    """``path`` as a git repository with one commit (sessions there may have worktrees)."""
    path.mkdir(parents=True, exist_ok=True)
    if not (path / ".git").exists():
        (path / "README.md").write_text("A workspace of the benchmark world.\n")
        identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        for args in (
            ["init", "--quiet", "--initial-branch", "main"],
            ["add", "--all"],
            [*identity, "commit", "--quiet", "-m", "first"],
        ):
            subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def bench_settings(home: Path) -> Settings:
    """Settings for a scratch home with a workspace (a git repository) in it."""
    workspace = git_workspace(home / "workspace")
    return Settings(home=home / "home", default_workspace_path=workspace)


@contextmanager
def open_world_app(
    home: Path, *, store: Store | None = None, now: datetime = START, extra_tools: Any = ()
) -> Iterator[tuple[App, FixedClock, RealisticDriver]]:
    """An app with a fixed clock and the realistic driver, on ``store`` (in memory by default)."""
    clock = FixedClock(now)
    driver = RealisticDriver()
    with open_app(
        bench_settings(home),
        store=store or SQLiteStore.memory(),
        clock=clock,
        driver=driver,
        extra_tools=extra_tools,
    ) as app:
        yield app, clock, driver


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


class _Builder:
    def __init__(self, world: World, size: Size) -> None:
        self.world = world
        self.app = world.app
        self.rng = random.Random(world.seed)
        self.size = size

    def tick(self, low: int = 5, high: int = 90) -> None:
        self.world.clock.advance(self.rng.randint(low, high))

    async def call(self, tool_id: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        result = await self.app.dispatcher.call(tool_id, tool_input)
        return result.structured

    async def full(self, session_id: str) -> dict[str, Any]:
        result = await self.call(
            "compozy__session_status", {"session_id": session_id, "result_view": "full"}
        )
        session: dict[str, Any] = result["session"]
        return session

    def selection(self) -> dict[str, str]:
        provider = self.rng.choices(("claude", "codex", "gemini"), weights=(55, 30, 15))[0]
        out = {"provider": provider, "model": self.rng.choice(ANNOUNCED_MODELS[provider])}
        efforts = ANNOUNCED_EFFORTS.get(provider)
        if efforts:
            out["reasoning_effort"] = self.rng.choice(efforts)
        return out

    async def bind(self, session_id: str, selection: dict[str, str]) -> dict[str, Any]:
        record = await self.full(session_id)
        runtime = record["runtime"]
        return await self.call(
            "compozy__session_runtime_set",
            {
                "session_id": session_id,
                **selection,
                "selection_revision": runtime["selection_revision"],
                "generation": runtime.get("generation", 0),
            },
        )

    async def prompt(self, session_id: str, text: str) -> None:
        record = await self.full(session_id)
        await self.call(
            "compozy__session_continue",
            {
                "session_id": session_id,
                "prompt": text,
                "transcript_epoch": record.get("transcript_epoch", 0),
                "generation": record["runtime"].get("generation", 0),
            },
        )

    # --- the day -----------------------------------------------------------------------

    async def build(self) -> None:
        sessions = self.app.services.sessions
        profiles = [
            "prof_default",
            (await sessions.add_profile("Backend", "#2563eb", "server")).id,
            (await sessions.add_profile("Docs", "#16a34a", "book-open")).id,
        ]
        workspace = self.app.settings.default_workspace_path
        assert workspace is not None
        web = git_workspace(workspace.parent / "acme-web")
        workspaces = ["ws_default", (await sessions.add_workspace(web, "acme-web")).id]
        self.write_skills(workspace)
        tasks = self.rng.sample(TASKS, k=min(self.size.roots, len(TASKS)))
        while len(tasks) < self.size.roots:
            tasks.append(self.rng.choice(TASKS))
        for task in tasks:
            await self.root(task, self.rng.choice(profiles), self.rng.choice(workspaces))
        await self.events()

    async def root(self, task: str, profile_id: str, workspace_id: str) -> None:
        rng = self.rng
        selection = self.selection()
        record = await self.call(
            "compozy__session_create",
            {
                "agent_name": rng.choice(AGENTS),
                "name": task,
                "profile_id": profile_id,
                "workspace_id": workspace_id,
                "type": rng.choices(("user", "automation"), weights=(85, 15))[0],
                "branch": f"{rng.choice(('fix', 'feat', 'chore'))}/{_slug(task)}",
                **selection,
            },
        )
        session_id = record["session"]["id"]
        self.world.roots.append(session_id)
        self.world.sessions.append(session_id)
        self.tick()
        await self.bind(session_id, selection)
        for text in rng.sample(PROMPTS, k=rng.randint(1, 4)):
            self.tick(20, 300)
            await self.prompt(session_id, text)
        if rng.random() < 0.4:  # switch model on the bound runtime (live configuration)
            models = ANNOUNCED_MODELS[selection["provider"]]
            await self.bind(session_id, {**selection, "model": rng.choice(models)})
        for _ in range(self.n_children()):
            await self.spawn(session_id, depth=1)

    def n_children(self) -> int:
        return min(self.size.max_children, self.rng.choice((0, 1, 1, 2, 2, 3, 4)))

    async def spawn(self, parent_id: str, depth: int) -> None:
        rng = self.rng
        parent = await self.full(parent_id)
        remaining = 86_400
        expires = parent["lineage"].get("ttl_expires_at")
        if expires is not None:
            left = datetime.fromisoformat(expires.replace("Z", "+00:00")) - self.world.clock.now()
            remaining = int(left.total_seconds()) - 60
        ttl = min(rng.choice((1800, 3600, 7200, 14_400)), remaining)
        if ttl < 300 or parent["state"] == "stopped":
            return
        parent_tools = parent["lineage"]["permission_policy"]["tools"]
        tools = (
            sorted(rng.sample(CHILD_TOOLS, k=rng.randint(3, len(CHILD_TOOLS))))
            if parent_tools == ["*"]
            else parent_tools[: max(1, len(parent_tools) - 1)]
        )
        spawn_input: dict[str, Any] = {
            "parent_session_id": parent_id,
            "agent_name": rng.choice(CHILD_AGENTS),
            "ttl_seconds": ttl,
            "name": rng.choice(CHILD_TASKS),
            "spawn_role": rng.choice(CHILD_ROLES),
            "prompt": rng.choice(PROMPTS),
            "tools": tools,
            "auto_stop_on_parent": rng.random() < 0.8,
            "notify_creator": rng.random() < 0.5,
        }
        if depth == 1:
            spawn_input["skills"] = sorted(rng.sample([s[0] for s in SKILL_TOPICS], k=3))
            spawn_input["mcp_servers"] = sorted(rng.sample(MCP_SERVERS, k=rng.randint(1, 3)))
            spawn_input["workspace_paths"] = sorted(rng.sample(CHILD_PATHS, k=rng.randint(1, 3)))
        if rng.random() < 0.4:
            spawn_input["worktree"] = True
        if rng.random() < 0.5:
            spawn_input.update(self.selection())
        if rng.random() < 0.3:
            spawn_input["idempotency_key"] = f"spawn-{len(self.world.children):04d}"
        spawned = await self.call("compozy__session_spawn", spawn_input)
        child_id = spawned["session_id"]
        self.world.children.append(child_id)
        self.world.sessions.append(child_id)
        self.tick()
        if rng.random() < 0.7:  # most children are picked up by a runtime; the rest stay queued
            if rng.random() < 0.15:
                self.world.driver.fail_next(
                    child_id, "spawn_failed", "agent process exited with status 1 during start"
                )
            child = await self.full(child_id)
            await self.bind(child_id, child["runtime"].get("selected") or self.selection())
        if depth == 1 and rng.random() < 0.25:
            await self.spawn(child_id, depth=2)

    async def events(self) -> None:
        """What happens to sessions while they run, then the operator's tidying up."""
        rng, sessions, world = self.rng, self.app.sessions.events, self.world
        for session_id in world.sessions:
            self.tick(1, 30)
            if rng.random() < 0.6:
                turn = f"turn-{rng.randint(1, 40)}"
                sessions.record_turn(session_id, turn, current_tool=rng.choice(TOOLS_IN_TURN))
            if rng.random() < 0.35:
                for _ in range(rng.randint(1, 2)):
                    kind, title, choices = rng.choice(QUESTIONS)
                    sessions.request_interaction(
                        session_id,
                        kind=_kind(kind),
                        title=title,
                        choices=choices,
                        turn_id=f"turn-{rng.randint(1, 40)}",
                    )
            is_root = session_id in world.roots
            if rng.random() < (0.45 if is_root else 0.15):
                number = rng.randint(1000, 4999)
                sessions.link_pull_request(
                    session_id,
                    PullRequest(
                        number=number,
                        url=f"https://github.com/acme/platform/pull/{number}",
                        state=rng.choice(("open", "open", "draft", "merged")),
                        title=rng.choice(TASKS),
                    ),
                )
            if rng.random() < 0.1:
                sessions.set_later(session_id, until=world.now, note="after the release freeze")
        for session_id in list(world.roots):
            if rng.random() < 0.15:
                await self.fork(session_id)
            if rng.random() < 0.15:
                record = await self.full(session_id)
                if record["state"] != "stopped":
                    await self.call(
                        "compozy__session_rewind",
                        {
                            "session_id": session_id,
                            "to_turn": 1,
                            "transcript_epoch": record.get("transcript_epoch", 0),
                            "generation": record["runtime"].get("generation", 0),
                        },
                    )
        for session_id in world.sessions:
            roll = rng.random()
            if roll < 0.06:
                sessions.record_failure(
                    session_id,
                    "agent_crashed",
                    "the agent process was killed (out of memory)",
                    crash_bundle_path=f"/var/lib/compozy/crash/{session_id}.tar.zst",
                )
            elif roll < 0.14:
                await self.call(
                    "compozy__session_stop", {"session_id": session_id, "reason": "done for today"}
                )
            elif roll < 0.2:
                await self.call("compozy__session_archive", {"session_id": session_id})

    async def fork(self, session_id: str) -> None:
        record = await self.full(session_id)
        forked = await self.call(
            "compozy__session_fork",
            {"session_id": session_id, "transcript_epoch": record.get("transcript_epoch", 0)},
        )
        fork_id = forked["session"]["id"]
        self.world.forks.append(fork_id)
        self.world.sessions.append(fork_id)

    def write_skills(self, workspace: Path) -> None:
        user_root = self.app.settings.skills_dir
        workspace_root = workspace / ".compozy" / "skills"
        topics = list(SKILL_TOPICS)
        for index, (name, description, tags) in enumerate(topics):
            extra = "owner: platform-team\n" if index == 4 else ""  # an unknown key: a warning
            _write_skill(user_root, name, description, tags, self.rng, extra)
        for name, description, tags in self.rng.sample(topics, k=2):  # workspace overrides
            _write_skill(workspace_root, name, f"{description} (this repository)", tags, self.rng)
        _write_skill(
            workspace_root,
            "upload-service",
            "How the upload service is laid out",
            ["python"],
            self.rng,
        )


def _kind(kind: str) -> Literal["permission", "question", "plan"]:
    if kind == "permission":
        return "permission"
    return "question" if kind == "question" else "plan"


def _write_skill(
    root: Path, name: str, description: str, tags: list[str], rng: random.Random, extra: str = ""
) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    steps = "\n".join(f"{i}. {rng.choice(PROMPTS)}" for i in range(1, rng.randint(4, 9)))
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\ntags: [{', '.join(tags)}]\n"
        f'version: "1.{rng.randint(0, 9)}"\n{extra}---\n\n# {name}\n\n{steps}\n',
        encoding="utf-8",
    )
    (folder / "checklist.md").write_text("- [ ] first\n- [ ] second\n", encoding="utf-8")


async def build_world(
    app: App, clock: FixedClock, driver: RealisticDriver, seed: int, size: Size | None = None
) -> World:
    """Fill ``app`` with a seeded working day; returns the ids it made."""
    world = World(app=app, clock=clock, driver=driver, seed=seed)
    await _Builder(world, size or Size()).build()
    return world
