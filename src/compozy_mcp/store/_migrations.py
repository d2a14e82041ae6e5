"""Versioned schema migrations, one source for both engines. Append only: a released
migration never changes (on SQLite it renders to the statements it always ran).

Written in SQLite's SQL, portable where PostgreSQL agrees; :func:`~compozy_mcp.store.sql.
render_schema` spells the rest per engine: column types (``INTEGER`` is 64-bit, ``TEXT``
compares bytewise, ``BLOB`` is ``BYTEA``, an ``AUTOINCREMENT`` key a ``BIGSERIAL``), ``@ROWID``
at the end of a table read in insertion order, and ``@SQLITE_ONLY`` before a back-fill of rows
only a SQLite store can have had (PostgreSQL stores start at version 11). A new migration's
back-fill is written in SQL both engines run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, workspaces, profiles, transcripts, artifacts",
        """
        CREATE TABLE workspaces (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            created_at TEXT NOT NULL@ROWID
        );
        CREATE TABLE profiles (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            color TEXT,
            icon TEXT,
            created_at TEXT NOT NULL@ROWID
        );
        CREATE TABLE sessions (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id),
            profile_id TEXT NOT NULL REFERENCES profiles(id),
            parent_session_id TEXT REFERENCES sessions(id),
            root_session_id TEXT NOT NULL,
            agent_name TEXT NOT NULL,
            state TEXT NOT NULL,
            archived_at TEXT,
            ttl_expires_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            version INTEGER NOT NULL,
            doc TEXT NOT NULL
        );
        CREATE INDEX sessions_by_parent ON sessions(parent_session_id, seq);
        CREATE INDEX sessions_by_archived ON sessions((archived_at IS NOT NULL), seq);
        CREATE INDEX sessions_by_ttl ON sessions(ttl_expires_at) WHERE ttl_expires_at IS NOT NULL;
        CREATE TABLE transcript_turns (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn INTEGER NOT NULL,
            epoch INTEGER NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, turn)
        );
        CREATE TABLE artifacts (
            uri TEXT PRIMARY KEY,
            sha256 TEXT NOT NULL,
            mime_type TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            tool_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            meta TEXT NOT NULL,
            data BLOB NOT NULL
        );
        """,
    ),
    Migration(
        2,
        "artifacts expire and know who stored them; indexes for expiry and deletion",
        """
        ALTER TABLE artifacts ADD COLUMN expires_at TEXT;
        @SQLITE_ONLY UPDATE artifacts
            SET expires_at = strftime('%Y-%m-%dT%H:%M:%SZ', created_at, '+1 day');
        CREATE INDEX artifacts_by_expiry ON artifacts(expires_at);
        CREATE TABLE artifact_refs (
            uri TEXT NOT NULL REFERENCES artifacts(uri) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            PRIMARY KEY (uri, owner)
        );
        CREATE INDEX artifact_refs_by_owner ON artifact_refs(owner);
        INSERT INTO artifact_refs (uri, owner) SELECT uri, '' FROM artifacts;
        CREATE INDEX transcript_turns_by_session ON transcript_turns(session_id);
        """,
    ),
    Migration(
        3,
        "turns that agents ran (outcome, timings, chunks) and the session event stream",
        """
        ALTER TABLE transcript_turns ADD COLUMN turn_id TEXT;
        ALTER TABLE transcript_turns ADD COLUMN status TEXT NOT NULL DEFAULT 'queued';
        ALTER TABLE transcript_turns ADD COLUMN stop_reason TEXT;
        ALTER TABLE transcript_turns ADD COLUMN final_message TEXT;
        ALTER TABLE transcript_turns ADD COLUMN started_at TEXT;
        ALTER TABLE transcript_turns ADD COLUMN ended_at TEXT;
        ALTER TABLE transcript_turns ADD COLUMN doc TEXT;
        CREATE INDEX transcript_turns_by_turn_id ON transcript_turns(session_id, turn_id);
        CREATE TABLE session_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            turn_id TEXT,
            kind TEXT NOT NULL,
            at TEXT NOT NULL,
            payload TEXT NOT NULL
        );
        CREATE INDEX session_events_by_session ON session_events(session_id, seq);
        """,
    ),
    Migration(
        4,
        "hooks, hook runs and per-hook run statistics",
        """
        CREATE TABLE hooks (
            id TEXT PRIMARY KEY,
            doc TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL@ROWID
        );
        CREATE TABLE hook_runs (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            hook_id TEXT NOT NULL,
            event TEXT NOT NULL,
            tool_id TEXT NOT NULL,
            tool_call_id TEXT NOT NULL,
            session_id TEXT,
            started_at TEXT NOT NULL,
            duration_ms REAL NOT NULL,
            outcome TEXT NOT NULL,
            decision TEXT NOT NULL,
            patch_applied INTEGER NOT NULL,
            detail TEXT,
            exit_code INTEGER,
            stderr_tail TEXT NOT NULL,
            patch TEXT
        );
        CREATE INDEX hook_runs_by_hook ON hook_runs(hook_id, seq);
        CREATE INDEX hook_runs_by_call ON hook_runs(tool_call_id);
        CREATE TABLE hook_stats (
            hook_id TEXT PRIMARY KEY,
            runs INTEGER NOT NULL,
            failed INTEGER NOT NULL,
            last_outcome TEXT NOT NULL,
            last_run_at TEXT NOT NULL
        );
        """,
    ),
    Migration(
        5,
        "approvals: remembered grants, single-use tokens and answers, permission modes",
        """
        CREATE TABLE approval_grants (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            workspace_id TEXT NOT NULL,
            agent_name TEXT NOT NULL DEFAULT '',
            tool_id TEXT NOT NULL,
            input_digest TEXT NOT NULL DEFAULT '',
            decision TEXT NOT NULL,
            profile_id TEXT,
            source TEXT NOT NULL,
            tool_input TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (workspace_id, agent_name, tool_id, input_digest)
        );
        CREATE TABLE approval_tokens (
            token_hash TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            tool_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            workspace_id TEXT NOT NULL,
            agent_name TEXT NOT NULL,
            input_digest TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT@ROWID
        );
        CREATE INDEX approval_tokens_by_call ON approval_tokens(session_id, tool_id, input_digest);
        CREATE INDEX approval_tokens_by_expiry ON approval_tokens(expires_at);
        CREATE TABLE approval_modes (
            session_id TEXT PRIMARY KEY,
            mode TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        """,
    ),
    Migration(
        6,
        "loops: definition versions and runs",
        """
        CREATE TABLE loops (
            id TEXT NOT NULL,
            version INTEGER NOT NULL,
            name TEXT,
            doc TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (id, version)
        );
        CREATE TABLE loop_runs (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            loop_id TEXT NOT NULL,
            loop_version INTEGER NOT NULL,
            status TEXT NOT NULL,
            owner TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            version INTEGER NOT NULL,
            doc TEXT NOT NULL
        );
        CREATE INDEX loop_runs_by_loop ON loop_runs(loop_id, seq);
        CREATE INDEX loop_runs_by_status ON loop_runs(status);
        """,
    ),
    Migration(
        7,
        "worktrees: the git worktree each session works in",
        """
        CREATE TABLE worktrees (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            workspace_id TEXT NOT NULL,
            path TEXT NOT NULL,
            repository TEXT NOT NULL,
            prefix TEXT NOT NULL,
            branch TEXT NOT NULL,
            base_ref TEXT,
            base_commit TEXT NOT NULL,
            state TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            removed_at TEXT,
            changed_files INTEGER,
            lines_added INTEGER,
            lines_removed INTEGER,
            changes_checked_at TEXT,
            merged_into TEXT,
            merge_commit TEXT,
            merged_at TEXT
        );
        CREATE UNIQUE INDEX worktrees_one_per_session ON worktrees(session_id)
            WHERE state = 'active';
        CREATE UNIQUE INDEX worktrees_one_per_path ON worktrees(path) WHERE state = 'active';
        CREATE INDEX worktrees_by_workspace ON worktrees(workspace_id, created_at);
        """,
    ),
    Migration(
        8,
        "loops know who owns them and who wrote each version; runs who started them",
        """
        ALTER TABLE loops ADD COLUMN owner TEXT;
        ALTER TABLE loops ADD COLUMN author TEXT;
        @SQLITE_ONLY UPDATE loops SET author = json_extract(doc, '$.created_by');
        ALTER TABLE loop_runs ADD COLUMN started_by TEXT;
        @SQLITE_ONLY UPDATE loop_runs SET started_by = json_extract(doc, '$.started_by');
        """,
    ),
    Migration(
        9,
        "workspaces the operator trusted (their hooks.yaml runs)",
        """
        ALTER TABLE workspaces ADD COLUMN trusted_at TEXT;
        """,
    ),
    Migration(
        10,
        "tasks: work agents claim in runs, and the reviews of what the runs delivered",
        """
        CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL,
            title TEXT NOT NULL,
            description TEXT NOT NULL,
            acceptance_criteria TEXT NOT NULL,
            labels TEXT NOT NULL,
            priority INTEGER NOT NULL,
            state TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            version INTEGER NOT NULL,
            created_by TEXT,
            current_run_id TEXT,
            review_notes TEXT@ROWID
        );
        CREATE INDEX tasks_by_queue ON tasks(workspace_id, state, priority DESC, created_at);
        CREATE TABLE task_runs (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            task_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            state TEXT NOT NULL,
            claimed_at TEXT NOT NULL,
            claim_expires_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            ended_at TEXT,
            summary TEXT,
            failure TEXT,
            delivery_id TEXT,
            branch TEXT,
            commit_sha TEXT,
            diff_stat TEXT
        );
        CREATE INDEX task_runs_by_task ON task_runs(task_id, seq);
        CREATE INDEX task_runs_active ON task_runs(claim_expires_at) WHERE state = 'active';
        CREATE TABLE task_reviews (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            task_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            delivery_id TEXT NOT NULL,
            decision TEXT NOT NULL,
            comments TEXT NOT NULL,
            created_at TEXT NOT NULL,
            reviewer TEXT
        );
        CREATE INDEX task_reviews_by_task ON task_reviews(task_id, seq);
        """,
    ),
    Migration(
        11,
        "heartbeats: sessions woken with a prompt on a schedule",
        """
        CREATE TABLE heartbeats (
            session_id TEXT PRIMARY KEY,
            interval_seconds INTEGER NOT NULL,
            prompt TEXT NOT NULL,
            enabled INTEGER NOT NULL,
            next_wake_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            quiet_hours TEXT,
            last_wake_at TEXT,
            last_outcome TEXT,
            last_turn_id TEXT,
            last_error TEXT,
            wakes INTEGER NOT NULL
        );
        CREATE INDEX heartbeats_due ON heartbeats(next_wake_at) WHERE enabled = 1;
        """,
    ),
    Migration(
        12,
        "heartbeats may follow a cron expression instead of an interval; their last wakes",
        """
        ALTER TABLE heartbeats ADD COLUMN cron TEXT;
        ALTER TABLE heartbeats ADD COLUMN recent_wakes TEXT;
        """,
    ),
    Migration(
        13,
        "several daemons on one store: leases (a session's agent, a Loop run) and the signals "
        "a daemon sends the owner of a session's agent",
        # portable SQL (PostgreSQL and SQLite): times are epoch milliseconds (BIGINT); a lease's
        # key is "session:<id>" (the daemon running its agent) or "loop_run:<id>"
        """
        CREATE TABLE leases (
            lease_key TEXT PRIMARY KEY,
            daemon_id TEXT NOT NULL,
            address TEXT,
            expires_at BIGINT NOT NULL,
            acquired_at BIGINT NOT NULL
        );
        CREATE INDEX leases_by_daemon ON leases(daemon_id);
        CREATE TABLE daemon_signals (
            signal_id TEXT PRIMARY KEY,
            daemon_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE INDEX daemon_signals_by_daemon ON daemon_signals(daemon_id, created_at);
        CREATE INDEX transcript_turns_queued ON transcript_turns(session_id)
            WHERE status = 'queued';
        """,
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version
