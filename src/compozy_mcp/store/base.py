"""The store interface: every engine implements these two views of one database.

A :class:`StoreReader` sees a consistent snapshot; a :class:`StoreWriter` is one transaction
that commits when its block ends and rolls back on any exception, so a failed call changes
nothing. Session rows are compared-and-swapped on ``version``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.store.heartbeats import HeartbeatReader, HeartbeatWriter
from compozy_mcp.store.leases import LeaseReader, LeaseWriter
from compozy_mcp.store.loops import LoopReader, LoopWriter
from compozy_mcp.store.tasks import TaskReader, TaskWriter
from compozy_mcp.store.worktrees import WorktreeReader, WorktreeWriter


@dataclass(frozen=True, slots=True)
class WorkspaceRow:
    id: str
    name: str
    path: str
    created_at: str
    #: when the operator trusted it (its ``.compozy/hooks.yaml`` runs only then); ``None``: not
    trusted_at: str | None = None


@dataclass(frozen=True, slots=True)
class ProfileRow:
    id: str
    name: str
    color: str | None
    icon: str | None
    created_at: str


@dataclass(slots=True)
class SessionRow:
    """One session: indexed columns plus the complete state document, as stored (JSON)."""

    id: str
    workspace_id: str
    profile_id: str
    parent_session_id: str | None
    root_session_id: str
    agent_name: str
    state: str
    archived_at: str | None
    ttl_expires_at: str | None
    created_at: str
    updated_at: str
    doc_json: bytes
    version: int = 0
    seq: int = 0

    @property
    def doc(self) -> dict[str, Any]:
        """The document, parsed (each time: most readers validate ``doc_json`` directly)."""
        parsed: dict[str, Any] = jsonutil.loads(self.doc_json)
        return parsed


@dataclass(frozen=True, slots=True)
class ChildSummary:
    """What a parent's record shows of one child: a few fields, read without the document."""

    session_id: str
    parent_session_id: str
    kind: str
    agent_name: str
    name: str | None
    state: str
    spawn_role: str | None
    failed: bool


@dataclass(frozen=True, slots=True)
class SessionQuery:
    workspace_id: str | None = None
    state: str | None = None
    archived: bool = False
    parent_session_id: str | None = None
    agent_name: str | None = None
    #: only this session and its descendants (what a managed session may see)
    subtree_of: str | None = None
    #: keyset pagination: only rows created before this sequence number (newest first)
    before_seq: int | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    """One turn: the prompt (``text``) and, once an agent ran it, what came back."""

    session_id: str
    turn: int
    epoch: int
    role: str
    text: str
    created_at: str
    turn_id: str | None = None
    #: queued, running, completed, cancelled or failed
    status: str = "queued"
    stop_reason: str | None = None
    final_message: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    #: chunks, thoughts, tool calls, plan, usage (JSON), once the turn ran
    doc: str | None = None


@dataclass(frozen=True, slots=True)
class SessionEventRow:
    """One update an agent sent (or the runtime recorded) for a session, in arrival order."""

    seq: int
    session_id: str
    turn_id: str | None
    kind: str
    at: str
    payload: str


@dataclass(frozen=True, slots=True)
class ArtifactRow:
    uri: str
    sha256: str
    mime_type: str
    bytes: int
    tool_id: str
    created_at: str
    meta: dict[str, Any] = field(default_factory=dict)
    #: when the artifact may be swept; storing the same content again moves it later
    expires_at: str | None = None


@dataclass(frozen=True, slots=True)
class DeletedCounts:
    sessions: int
    transcript_turns: int
    artifacts: int


@dataclass(frozen=True, slots=True)
class StoreSize:
    """The store's files, in bytes: the database and its write-ahead log."""

    database: int
    wal: int

    @property
    def total(self) -> int:
        return self.database + self.wal


@dataclass(frozen=True, slots=True)
class HookRow:
    """A hook made through the tools (hooks in files are not stored): its definition."""

    id: str
    definition: dict[str, Any]
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class HookRunRow:
    """One run of one hook, as the run log keeps it."""

    hook_id: str
    event: str
    tool_id: str
    tool_call_id: str
    session_id: str | None
    started_at: str
    duration_ms: float
    outcome: str
    decision: str
    patch_applied: bool
    detail: str | None
    exit_code: int | None
    stderr_tail: str
    patch: dict[str, Any] | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class HookStatsRow:
    """How a hook's runs went, counted over all its runs (the log itself keeps the latest)."""

    hook_id: str
    runs: int
    failed: int
    last_outcome: str
    last_run_at: str


@dataclass(frozen=True, slots=True)
class HookRunQuery:
    hook_id: str | None = None
    event: str | None = None
    tool_call_id: str | None = None
    #: only runs of calls made by one of these sessions (``None``: any caller)
    session_ids: Sequence[str] | None = None
    outcomes: Sequence[str] | None = None
    #: keyset pagination: only runs recorded before this sequence number (newest first)
    before_seq: int | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class ApprovalGrantRow:
    """A remembered approval: ``decision`` (allow or reject) for calls of ``tool_id`` in a
    workspace, by one agent (``agent_name``) or any (``None``), with one input
    (``input_digest``) or any (``None``)."""

    id: str
    workspace_id: str
    agent_name: str | None
    tool_id: str
    input_digest: str | None
    decision: str
    #: the profile of the session whose answer made it (``None``: made by the operator)
    profile_id: str | None
    #: where it came from: ``answer`` (allow-always, reject-always) or ``operator`` (set)
    source: str
    created_at: str
    #: the input the answer was given on, as sent (only for grants made by an answer)
    tool_input: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ApprovalTokenRow:
    """A single-use approval. ``kind`` ``token``: minted for the operator's hand, found by the
    hash of its secret; ``allow_once``/``reject_once``: an operator's answer to a prompt, found
    by its binding and taken by the retried call."""

    token_hash: str
    kind: str
    tool_id: str
    session_id: str
    workspace_id: str
    agent_name: str
    input_digest: str
    created_at: str
    expires_at: str
    used_at: str | None = None


class StaleWrite(Exception):
    """A compare-and-swap lost: the row changed since it was read."""


class StoreReader(HeartbeatReader, LeaseReader, LoopReader, TaskReader, WorktreeReader):
    @abstractmethod
    def workspace(self, workspace_id: str) -> WorkspaceRow | None: ...

    @abstractmethod
    def workspaces(self) -> list[WorkspaceRow]: ...

    @abstractmethod
    def profile(self, profile_id: str) -> ProfileRow | None: ...

    @abstractmethod
    def all_profiles(self) -> list[ProfileRow]: ...

    @abstractmethod
    def session(self, session_id: str) -> SessionRow | None: ...

    @abstractmethod
    def sessions(self, query: SessionQuery) -> list[SessionRow]: ...

    @abstractmethod
    def children(self, parent_ids: Sequence[str]) -> list[SessionRow]:
        """Every session whose parent is one of ``parent_ids``, oldest first."""

    @abstractmethod
    def child_summaries(self, parent_ids: Sequence[str]) -> list[ChildSummary]:
        """The children of ``parent_ids``, oldest first, summarized (a parent is read often;
        its children's documents are not parsed for it)."""

    @abstractmethod
    def expired_sessions(self, now: str) -> list[SessionRow]:
        """Sessions whose TTL has passed and that are not stopped yet."""

    @abstractmethod
    def live_runtime_sessions(self) -> list[str]:
        """Sessions whose stored runtime status says an agent runs for them."""

    @abstractmethod
    def any_expired(self, now: str) -> bool:
        """Whether :meth:`expired_sessions` would find one (without reading any)."""

    def revision(self) -> Hashable | None:
        """A value that changes whenever what this reader sees may have changed, by a commit of
        this process or another: two reads with equal revisions see the same data, so what was
        derived from one serves the other. ``None`` (the default, and always inside a write):
        this reader cannot tell, and nothing is kept across reads on it."""
        return None

    @abstractmethod
    def earliest_expiry(self) -> str | None:
        """The earliest ``ttl_expires_at`` of a session not stopped (``None``: none has one),
        kept with the :meth:`revision` so that :meth:`any_expired` need not be asked again
        while nothing changes."""

    @abstractmethod
    def ancestry(self, session_id: str) -> list[str]:
        """``session_id`` and its ancestors, nearest first; empty if it does not exist."""

    @abstractmethod
    def transcript(
        self, session_id: str, *, after_turn: int = 0, limit: int | None = None
    ) -> list[TranscriptTurn]:
        """Turns after ``after_turn``, oldest first, at most ``limit``."""

    @abstractmethod
    def turn(self, session_id: str, turn_id: str) -> TranscriptTurn | None: ...

    @abstractmethod
    def session_events(
        self, session_id: str, *, after_seq: int = 0, limit: int = 100
    ) -> list[SessionEventRow]:
        """Events after ``after_seq``, oldest first."""

    @abstractmethod
    def artifact(self, uri: str) -> ArtifactRow | None: ...

    @abstractmethod
    def artifact_bytes(self, uri: str, offset: int, limit: int) -> bytes: ...

    @abstractmethod
    def artifact_owners(self, uri: str) -> list[str]:
        """The sessions whose calls stored this artifact (``""`` for the operator's)."""

    @abstractmethod
    def subtree(self, session_id: str) -> list[str]:
        """``session_id`` and every descendant, the session first."""

    @abstractmethod
    def hooks(self) -> list[HookRow]:
        """Stored hooks, oldest first."""

    @abstractmethod
    def hook_runs(self, query: HookRunQuery) -> list[HookRunRow]:
        """Runs, newest first."""

    @abstractmethod
    def hook_stats(self) -> list[HookStatsRow]: ...

    @abstractmethod
    def approval_grants(self, workspace_id: str | None = None) -> list[ApprovalGrantRow]:
        """Remembered approvals, oldest first; of one workspace, or all."""

    @abstractmethod
    def approval_grant(self, grant_id: str) -> ApprovalGrantRow | None: ...

    @abstractmethod
    def approval_token(self, token_hash: str) -> ApprovalTokenRow | None: ...

    @abstractmethod
    def approval_modes(self, session_ids: Sequence[str]) -> dict[str, str]:
        """The permission modes set on these sessions (sessions with none are left out)."""


#: runs the hook run log keeps (older ones are dropped; statistics keep counting them)
HOOK_RUNS_KEPT = 10_000


class StoreWriter(
    StoreReader, HeartbeatWriter, LeaseWriter, LoopWriter, TaskWriter, WorktreeWriter
):
    @abstractmethod
    def insert_workspace(self, row: WorkspaceRow) -> None: ...

    @abstractmethod
    def set_workspace_trust(self, workspace_id: str, trusted_at: str | None) -> bool:
        """Trust a workspace (``trusted_at``) or no longer (``None``); ``False``: no such one."""

    @abstractmethod
    def insert_profile(self, row: ProfileRow) -> None: ...

    @abstractmethod
    def insert_session(self, row: SessionRow) -> SessionRow:
        """Insert a new session; returns it with ``seq`` and ``version`` set."""

    @abstractmethod
    def update_session(self, row: SessionRow) -> SessionRow:
        """Write ``row`` if its ``version`` is still the stored one; raise :class:`StaleWrite`."""

    @abstractmethod
    def append_turns(self, turns: Sequence[TranscriptTurn]) -> None: ...

    @abstractmethod
    def truncate_transcript(self, session_id: str, keep_turns: int) -> None: ...

    @abstractmethod
    def save_turn(self, turn: TranscriptTurn) -> None:
        """Write a turn's outcome over the stored turn of the same session and number."""

    @abstractmethod
    def append_session_events(self, events: Sequence[SessionEventRow]) -> None:
        """Store events (their ``seq`` is assigned by the store)."""

    @abstractmethod
    def put_artifact(self, row: ArtifactRow, data: bytes, *, owner: str) -> None:
        """Store content under its URI for ``owner`` (a session id, ``""`` for the operator);
        storing the same URI again keeps the first copy, adds the owner, and keeps the later
        of the two expiry times."""

    @abstractmethod
    def delete_expired_artifacts(self, now: str) -> int:
        """Delete artifacts whose expiry has passed; returns how many."""

    @abstractmethod
    def delete_sessions(self, session_ids: Sequence[str]) -> DeletedCounts:
        """Delete sessions with their transcripts, and the artifacts only they stored."""

    @abstractmethod
    def put_hook(self, row: HookRow) -> None:
        """Insert or replace a stored hook."""

    @abstractmethod
    def delete_hook(self, hook_id: str) -> bool:
        """Delete a stored hook and its statistics; whether it existed."""

    @abstractmethod
    def put_approval_grant(self, row: ApprovalGrantRow) -> ApprovalGrantRow:
        """Remember a grant; one with the same key (workspace, agent, tool, digest) is replaced
        and keeps its id. Returns the grant as stored."""

    @abstractmethod
    def delete_approval_grant(self, grant_id: str) -> bool: ...

    @abstractmethod
    def put_approval_token(self, row: ApprovalTokenRow) -> None: ...

    @abstractmethod
    def use_approval_token(self, token_hash: str, now: str) -> bool:
        """Mark a token used if nobody has; whether this call was the one that did (the
        write lock makes it single-use across processes)."""

    @abstractmethod
    def take_approval_pass(
        self, session_id: str, tool_id: str, input_digest: str, now: str
    ) -> ApprovalTokenRow | None:
        """Use the oldest unexpired, unused ``allow_once``/``reject_once`` answer for this
        call, if there is one."""

    @abstractmethod
    def set_approval_mode(self, session_id: str, mode: str | None, now: str) -> None:
        """Set (or, with ``None``, clear) a session's permission mode."""

    @abstractmethod
    def delete_expired_approval_tokens(self, now: str) -> int: ...

    @abstractmethod
    def add_hook_run(self, row: HookRunRow, *, failed: bool) -> None:
        """Append a run to the log and count it in the hook's statistics; the log keeps the
        latest runs only (:data:`HOOK_RUNS_KEPT`)."""


class Store(ABC):
    """A database: open snapshots to read, transactions to write."""

    #: whether a read waits on another process (a database server): such reads are run off
    #: the event loop; an embedded store's reads are fast enough to run on it
    reads_wait_on_a_server: bool = False

    @abstractmethod
    def read(self) -> AbstractContextManager[StoreReader]: ...

    @abstractmethod
    def write(self) -> AbstractContextManager[StoreWriter]: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def size(self) -> StoreSize: ...

    @abstractmethod
    def checkpoint(self) -> None:
        """Give the free pages of deleted content back to the disk, copy the write-ahead log
        into the database and truncate it (a busy reader may keep part of it for now)."""

    @abstractmethod
    def vacuum(self) -> None:
        """Rebuild the database so that deleted content no longer takes space (and a database
        made before incremental vacuuming frees its pages at each checkpoint from then on)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def chunks(items: Sequence[str], size: int = 500) -> Iterator[Sequence[str]]:
    """Split a parameter list so queries stay under SQL variable limits."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
