"""A session's git worktree: made on create, spawn and fork, kept across restarts, removed on
archive and delete without losing work, diffed, merged and handed off.

Git runs outside store transactions (a checkout of a large repository takes a second; the
store's write lock must not wait on it): a worktree is made first, then recorded with its
session in one transaction, and made undone if that transaction fails. Everything here is
synchronous; :class:`~compozy_mcp.sessions.service.Sessions` runs it in worker threads.

Nothing is lost: removing a worktree that holds uncommitted changes first commits them to the
session's branch ("work in progress"), and a branch is never deleted (except the empty branch
of a worktree whose session could not be recorded).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from compozy_mcp.calls import CallInfo
from compozy_mcp.errors import (
    MergeConflict,
    PullRequestUnavailable,
    ResourceNotFound,
    ToolConflict,
    ToolDenied,
    ToolInvalidInput,
    WorktreeDirty,
    WorktreeUnavailable,
)
from compozy_mcp.reasons import Reason
from compozy_mcp.sessions._record import worktree_summary
from compozy_mcp.sessions.ledger import SessionLedger, new_id
from compozy_mcp.store.base import StoreReader, WorkspaceRow
from compozy_mcp.store.worktrees import WorktreeQuery, WorktreeRow
from compozy_mcp.worktrees import diff
from compozy_mcp.worktrees.git import Git, GitError, GitMissing, GitTimeout
from compozy_mcp.worktrees.github import GitHub, HandOffUnavailable, PullRequestAsk, by_hand
from compozy_mcp.worktrees.repo import NotARepository, Repository

MergeMode = Literal["fast_forward", "merge", "squash"]
MERGE_MODES: tuple[MergeMode, ...] = ("fast_forward", "merge", "squash")

#: the branch a worktree gets when none is named: ``compozy/<slug of the session's name>``
BRANCH_PREFIX = "compozy/"
_SLUG_CHARS = re.compile(r"[^a-z0-9]+")


def slug(text: str, limit: int = 40) -> str:
    """``Fix the flaky upload test!`` -> ``fix-the-flaky-upload-test``."""
    return _SLUG_CHARS.sub("-", text.lower()).strip("-")[:limit].strip("-") or "session"


class SessionWorktrees:
    def __init__(self, ledger: SessionLedger, directory: Path, git: Git | None = None) -> None:
        self._ledger = ledger
        #: ``$COMPOZY_HOME/worktrees``: one folder per workspace, one worktree per session
        self.directory = directory
        self.git = git or Git()

    def _repository(self, row: WorktreeRow) -> Repository:
        return Repository(self.git, Path(row.repository))

    def _git_failed(self, call: CallInfo, doing: str, exc: GitError) -> WorktreeUnavailable:
        if isinstance(exc, GitMissing):
            return WorktreeUnavailable(
                call.tool_id,
                "git is not installed or not on PATH; install git to give sessions worktrees",
                reason=Reason.GIT_MISSING,
            )
        reason = Reason.GIT_FAILED
        detail = f" ({exc.stderr.splitlines()[-1]})" if exc.stderr else f" ({exc})"
        if isinstance(exc, GitTimeout):
            detail = f" ({exc})"
        return WorktreeUnavailable(call.tool_id, f"git failed while {doing}{detail}", reason=reason)

    # --- reading -------------------------------------------------------------------------

    def row(self, reader: StoreReader, call: CallInfo, worktree_id: str) -> WorktreeRow:
        """A worktree the caller may see (a managed session: its own and its descendants')."""
        row = reader.worktree(worktree_id)
        if row is None:
            raise ResourceNotFound(call.tool_id, "worktree", worktree_id)
        caller = call.scope.session_id
        outside = caller is not None and caller != row.session_id
        if outside and caller not in reader.ancestry(row.session_id):
            raise ToolDenied(
                call.tool_id,
                f'worktree "{worktree_id}" belongs to session "{row.session_id}", but '
                f'session "{caller}" may act only on itself and its descendants',
                reason=Reason.SESSION_NOT_IN_SCOPE,
            )
        return row

    @staticmethod
    def of_session(reader: StoreReader, session_id: str) -> WorktreeRow | None:
        """The session's active worktree, else its latest one (removed or missing)."""
        rows = reader.worktrees(WorktreeQuery(session_ids=[session_id], states=None, limit=1))
        return rows[0] if rows else None

    def record(self, row: WorktreeRow, *, live: bool = False) -> dict[str, Any]:
        """A worktree as the worktree tools return it; ``live`` adds what git says now
        (``head``, and ``dirty``: the files with uncommitted changes) for an active one."""
        out: dict[str, Any] = {
            "worktree_id": row.id,
            "session_id": row.session_id,
            "workspace_id": row.workspace_id,
            "branch": row.branch,
            **worktree_summary(row),
            "repository": row.repository,
        }
        if live and row.state == "active" and Path(row.path).is_dir():
            checkout = Path(row.path)
            try:
                out["head"] = Repository(self.git, checkout).commit("HEAD")
                dirty = self._repository(row).changed_files(checkout)
                out["uncommitted"] = len(dirty)
                out["dirty"] = dirty
            except GitError:
                pass  # a worktree git cannot read is described by its row alone
        out["created_at"] = row.created_at
        out["updated_at"] = row.updated_at
        if row.removed_at is not None:
            out["removed_at"] = row.removed_at
        return out

    # --- making one ----------------------------------------------------------------------

    def plan(
        self,
        call: CallInfo,
        workspace: WorkspaceRow,
        session_id: str,
        *,
        name: str | None,
        branch: str | None,
        base: str | None,
        reuse_branch: bool = False,
    ) -> WorktreeRow:
        """Make a worktree for a session that is about to be recorded (or exists without
        one): a new branch (``branch``, else ``compozy/<slug>``) at ``base`` (default the
        workspace's HEAD), under ``directory/<workspace>/<session>``. ``reuse_branch``: an
        existing ``branch`` is checked out instead (a session getting its worktree back)."""
        try:
            where = Repository.locate(self.git, Path(workspace.path))
        except NotARepository:
            raise WorktreeUnavailable(
                call.tool_id,
                f'workspace "{workspace.id}" ({workspace.path}) is not a git repository; '
                "run git init there, or create the session without a worktree",
                reason=Reason.NOT_A_GIT_REPOSITORY,
            ) from None
        except GitError as exc:
            raise self._git_failed(call, "locating the repository", exc) from None
        repo = Repository(self.git, where.root)
        try:
            return self._add(
                call, repo, where.prefix, workspace, session_id, name, branch, base, reuse_branch
            )
        except GitError as exc:
            raise self._git_failed(call, "adding the worktree", exc) from None

    def _add(
        self,
        call: CallInfo,
        repo: Repository,
        prefix: str,
        workspace: WorkspaceRow,
        session_id: str,
        name: str | None,
        branch: str | None,
        base: str | None,
        reuse_branch: bool,
    ) -> WorktreeRow:
        base_ref = base if base is not None else repo.current_branch()
        base_commit = repo.commit(base if base is not None else "HEAD")
        if base_commit is None:
            if base is not None:
                raise WorktreeUnavailable(
                    call.tool_id,
                    f'base "{base}" names no commit in {repo.root}',
                    reason=Reason.BASE_UNKNOWN,
                )
            raise WorktreeUnavailable(
                call.tool_id,
                f"the repository at {repo.root} has no commit yet; commit once, then create "
                "the session",
                reason=Reason.REPOSITORY_EMPTY,
            )
        start: str | None = base_commit
        if branch is not None:
            if not repo.is_branch_name(branch):
                raise ToolInvalidInput.for_field(
                    call.tool_id, "branch", f'"{branch}" is not a valid git branch name'
                )
            tip = repo.branch_tip(branch)
            if tip is not None and reuse_branch:
                start = None
                if repo.checkout_of(branch) is not None:
                    raise ToolConflict(
                        call.tool_id,
                        f'branch "{branch}" is checked out in {repo.checkout_of(branch)}; '
                        "a branch is worked on in one worktree at a time",
                        reason=Reason.BRANCH_EXISTS,
                    )
            elif tip is not None:
                raise ToolConflict(
                    call.tool_id,
                    f'branch "{branch}" already exists in {repo.root}; name another branch, '
                    "or leave branch out for a new compozy/ branch",
                    reason=Reason.BRANCH_EXISTS,
                )
        else:
            branch = self._free_branch(repo, slug(name or session_id))
        path = self.directory / workspace.id / session_id
        if path.exists():
            repo.prune()
            if path.exists():
                raise ToolConflict(
                    call.tool_id,
                    f"{path} exists already; remove it or pick another session id",
                    reason=Reason.WORKTREE_IN_USE,
                )
        repo.add_worktree(path, branch=branch, start=start)
        now = self._ledger.now()
        return WorktreeRow(
            id=new_id("wt"),
            session_id=session_id,
            workspace_id=workspace.id,
            path=str(path),
            repository=str(repo.root),
            prefix=prefix,
            branch=branch,
            base_ref=base_ref,
            base_commit=base_commit,
            state="active",
            created_at=now,
            updated_at=now,
        )

    @staticmethod
    def _free_branch(repo: Repository, stem: str) -> str:
        """``compozy/<stem>``, or ``-2``, ``-3`` ... when taken."""
        candidate = f"{BRANCH_PREFIX}{stem}"
        suffix = 1
        while repo.branch_tip(candidate) is not None:
            suffix += 1
            candidate = f"{BRANCH_PREFIX}{stem}-{suffix}"
        return candidate

    def plan_fork(
        self, call: CallInfo, source: WorktreeRow, session_id: str, name: str | None
    ) -> WorktreeRow:
        """A worktree for a fork: a new branch at the source's work as it is now (its branch
        tip plus its uncommitted changes, taken without touching the source's checkout),
        diffed against the source's base."""
        repo = self._repository(source)
        try:
            start = repo.branch_tip(source.branch)
            if source.state == "active" and Path(source.path).is_dir():
                made = repo.snapshot(
                    Path(source.path), f"compozy: work of session {source.session_id} at fork"
                )
                if made is not None:
                    start = made[1]
            if start is None:
                raise WorktreeUnavailable(
                    call.tool_id,
                    f'the branch "{source.branch}" of the session being forked is gone',
                    reason=Reason.BRANCH_UNKNOWN,
                )
            branch = self._free_branch(repo, slug(name or session_id))
            path = self.directory / source.workspace_id / session_id
            repo.add_worktree(path, branch=branch, start=start)
        except GitError as exc:
            raise self._git_failed(call, "adding the fork's worktree", exc) from None
        now = self._ledger.now()
        return replace(
            source,
            id=new_id("wt"),
            session_id=session_id,
            path=str(path),
            branch=branch,
            state="active",
            created_at=now,
            updated_at=now,
            removed_at=None,
            changed_files=None,
            lines_added=None,
            lines_removed=None,
            changes_checked_at=None,
            merged_into=None,
            merge_commit=None,
            merged_at=None,
        )

    def discard(self, row: WorktreeRow) -> None:
        """Undo :meth:`plan` for a session that was not recorded: the directory goes, and the
        branch too while it holds nothing but its starting point."""
        repo = self._repository(row)
        try:
            repo.remove_worktree(Path(row.path))
            tip = repo.branch_tip(row.branch)
            if tip is not None and tip == row.base_commit:
                self.git.run(repo.root, "branch", "-D", "--", row.branch, check=False)
        except GitError:
            pass  # best effort: the caller reports its own failure, which is what matters

    # --- taking one away -----------------------------------------------------------------

    def retire(
        self, call: CallInfo, row: WorktreeRow, *, refuse_dirty: bool
    ) -> tuple[WorktreeRow, str | None]:
        """Remove a worktree's directory, keeping its branch; uncommitted changes are first
        committed to the branch (or, with ``refuse_dirty``, refused as ``worktree_dirty``).
        Returns the row as removed and the work-in-progress commit, if one was made."""
        path = Path(row.path)
        repo = self._repository(row)
        saved: str | None = None
        try:
            if path.is_dir():
                dirty = repo.changed_files(path)
                if dirty and refuse_dirty:
                    raise WorktreeDirty(
                        call.tool_id,
                        f'worktree "{row.id}" ({row.path})',
                        dirty,
                        "pass force: true to commit them to branch "
                        f'"{row.branch}" as work in progress and remove it',
                    )
                if dirty:
                    saved = repo.commit_all(
                        path,
                        row.branch,
                        f"compozy: work in progress of session {row.session_id}\n\n"
                        f"Committed by compozy when its worktree was removed.",
                    )
            repo.remove_worktree(path)
        except GitError as exc:
            raise self._git_failed(call, "removing the worktree", exc) from None
        now = self._ledger.now()
        return replace(row, state="removed", removed_at=now, updated_at=now), saved

    def check_present(self, rows: list[WorktreeRow]) -> list[WorktreeRow]:
        """Active worktrees whose directory vanished, marked ``missing`` (each repository is
        pruned once, so git forgets them too)."""
        gone = [row for row in rows if row.state == "active" and not Path(row.path).is_dir()]
        for repository in {row.repository for row in gone}:
            # the repository itself may be gone; the rows are marked all the same
            with contextlib.suppress(GitError):
                Repository(self.git, Path(repository)).prune()
        now = self._ledger.now()
        return [replace(row, state="missing", updated_at=now) for row in gone]

    # --- what changed ------------------------------------------------------------------------

    def _work(self, row: WorktreeRow) -> tuple[str, str, bool]:
        """``(head, tree-ish, uncommitted)``: the session's work as it is now."""
        repo = self._repository(row)
        path = Path(row.path)
        if row.state == "active" and path.is_dir():
            head = Repository(self.git, path).commit("HEAD")
            if head is not None:
                tree = repo.snapshot_tree(path)
                committed = self.git.text(repo.root, "rev-parse", f"{head}^{{tree}}")
                return head, tree, tree != committed
        tip = repo.branch_tip(row.branch)
        if tip is None:
            raise GitError(("rev-parse",), f'branch "{row.branch}" no longer exists')
        return tip, tip, False

    def diff(self, call: CallInfo, row: WorktreeRow) -> dict[str, Any]:
        """The session's changes against the base its worktree was made from, uncommitted
        ones included (the full record: the patch too)."""
        repo = self._repository(row)
        try:
            head, work, uncommitted = self._work(row)
            files = diff.changed_files(self.git, repo.root, row.base_commit, work)
            patch = diff.patch(self.git, repo.root, row.base_commit, work)
        except GitError as exc:
            raise self._git_failed(call, "computing the diff", exc) from None
        return {
            "session_id": row.session_id,
            "worktree_id": row.id,
            "branch": row.branch,
            "base": worktree_summary(row)["base"],
            "head": {"commit": head, "uncommitted": uncommitted},
            **diff.summary(files),
            "patch": patch,
        }

    def changes(self, row: WorktreeRow) -> WorktreeRow:
        """The row with what the session changed since its base (or its last merge), as a
        turn ended; a row whose worktree cannot be read is returned unchanged."""
        reference = row.merge_commit or row.base_commit
        try:
            _, work, _ = self._work(row)
            files = diff.changed_files(self.git, Path(row.repository), reference, work)
        except GitError:
            return row
        return replace(
            row,
            changed_files=len(files),
            lines_added=sum(f.added or 0 for f in files),
            lines_removed=sum(f.removed or 0 for f in files),
            changes_checked_at=self._ledger.now(),
        )

    # --- hand-off ------------------------------------------------------------------------

    def merge(
        self,
        call: CallInfo,
        row: WorktreeRow,
        *,
        into: str | None,
        mode: MergeMode,
        message: str | None,
    ) -> tuple[WorktreeRow, dict[str, Any]]:
        """Merge the session's work (its branch, and what is uncommitted, committed to it
        first) into ``into`` (default: the branch the worktree was based on). Computed with
        ``git merge-tree``: a conflict changes nothing. The target moves only forward: by
        updating its ref, or by fast-forwarding its checkout (which must be clean)."""
        target = into or row.base_ref
        if target is None:
            raise ToolInvalidInput.for_field(
                call.tool_id,
                "into",
                "is required: the worktree was made from a detached HEAD, not a branch",
            )
        try:
            return self._merge(call, row, target, mode, message)
        except GitError as exc:
            raise self._git_failed(call, f'merging into "{target}"', exc) from None

    def _merge(
        self,
        call: CallInfo,
        row: WorktreeRow,
        target: str,
        mode: MergeMode,
        message: str | None,
    ) -> tuple[WorktreeRow, dict[str, Any]]:
        repo = self._repository(row)
        target_tip = repo.branch_tip(target)
        if target_tip is None:
            raise ToolConflict(
                call.tool_id,
                f'branch "{target}" does not exist in {repo.root}',
                reason=Reason.BRANCH_UNKNOWN,
            )
        path = Path(row.path)
        active = row.state == "active" and path.is_dir()
        snapshot = (
            repo.snapshot(path, f"compozy: work of session {row.session_id}") if active else None
        )
        branch_tip = repo.branch_tip(row.branch)
        source = snapshot[1] if snapshot is not None else branch_tip
        if source is None:
            raise ToolConflict(
                call.tool_id,
                f'branch "{row.branch}" no longer exists',
                reason=Reason.BRANCH_UNKNOWN,
            )
        checkout = repo.checkout_of(target)
        if checkout is not None and Path(checkout).resolve() != path.resolve():
            dirty = repo.changed_files(checkout)
            if dirty:
                raise WorktreeDirty(
                    call.tool_id,
                    f'the checkout of "{target}" ({checkout})',
                    dirty,
                    "commit or stash them there, then merge again",
                )
        result: dict[str, Any] = {
            "session_id": row.session_id,
            "worktree_id": row.id,
            "branch": row.branch,
            "into": target,
            "mode": mode,
            "previous": target_tip,
        }
        if repo.is_ancestor(source, target_tip):
            return row, {**result, "outcome": "up_to_date", "commit": target_tip}
        fast_forward = repo.is_ancestor(target_tip, source)
        if mode == "fast_forward" and not fast_forward:
            raise ToolConflict(
                call.tool_id,
                f'"{target}" has commits that branch "{row.branch}" does not; it cannot be '
                'fast-forwarded (use mode "merge" or "squash")',
                reason=Reason.NOT_FAST_FORWARD,
            )
        if fast_forward and mode != "squash":
            new, outcome = source, "fast_forward"
        else:
            merged = repo.merge_tree(target_tip, source)
            if merged.conflicts:
                raise MergeConflict(call.tool_id, row.branch, target, list(merged.conflicts))
            if mode == "squash":
                text = message or f"Squash the work of session {row.session_id} ({row.branch})"
                new, outcome = repo.commit_tree(merged.tree, (target_tip,), text), "squashed"
            else:
                text = message or f"Merge branch '{row.branch}' into {target}"
                new = repo.commit_tree(merged.tree, (target_tip, source), text)
                outcome = "merge_commit"
        # the work merged becomes the session branch's tip, so the branch holds what merged
        if snapshot is not None and branch_tip is not None:
            repo.update_branch(row.branch, snapshot[1], branch_tip)
            self.git.run(path, "reset", "--quiet")
        if checkout is not None:
            repo.fast_forward_checkout(Path(checkout), new)
        else:
            repo.update_branch(target, new, target_tip)
        now = self._ledger.now()
        merged_row = replace(
            row,
            merged_into=target,
            merge_commit=source,
            merged_at=now,
            changed_files=0,
            lines_added=0,
            lines_removed=0,
            changes_checked_at=now,
            updated_at=now,
        )
        return merged_row, {
            **result,
            "outcome": outcome,
            "commit": new,
            "committed_work_in_progress": snapshot is not None,
            "merged_at": now,
        }

    def pull_request(
        self, call: CallInfo, row: WorktreeRow, ask: PullRequestAsk
    ) -> tuple[dict[str, Any], bool]:
        """Push the session's branch (its uncommitted work committed to it first) and open a
        pull request with ``gh``; ``(pull_request, created)``."""
        repo = self._repository(row)
        github = GitHub(self.git)
        try:
            gh = github.ready(repo.root, ask)
            path = Path(row.path)
            if row.state == "active" and path.is_dir():
                repo.commit_all(path, row.branch, f"compozy: work of session {row.session_id}")
            return github.publish(gh, repo.root, ask)
        except HandOffUnavailable as exc:
            raise PullRequestUnavailable(
                call.tool_id, str(exc), reason=exc.reason, commands=by_hand(repo.root, ask)
            ) from None
        except GitError as exc:
            raise self._git_failed(call, "preparing the pull request", exc) from None
