"""Opening a pull request with the GitHub CLI (``gh``): push the branch, then open the pull
request, or find the one already open for it.

``gh`` does the talking to GitHub (its login, its host, its enterprise settings); compozy only
runs it, under a deadline, never asking anyone anything. Without ``gh`` (or logged out) the
caller gets the commands that do the same by hand.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compozy_mcp import jsonutil
from compozy_mcp.reasons import Reason
from compozy_mcp.worktrees.git import Git, GitError

#: what ``gh`` answers about a pull request
_FIELDS = "number,url,state,isDraft,title"
#: gh never prompts, never colours, never checks for its own updates
_QUIET = {"GH_PROMPT_DISABLED": "1", "NO_COLOR": "1", "GH_NO_UPDATE_NOTIFIER": "1"}


class HandOffUnavailable(Exception):
    """A pull request cannot be opened from here; ``reason`` says why."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PullRequestAsk:
    branch: str
    base: str
    title: str
    body: str
    draft: bool = False
    remote: str = "origin"


def by_hand(root: Path, ask: PullRequestAsk) -> list[str]:
    """The commands that push the branch and open its pull request."""
    draft = " --draft" if ask.draft else ""
    return [
        f"git -C {shlex.quote(str(root))} push --set-upstream {shlex.quote(ask.remote)} "
        f"{shlex.quote(ask.branch)}",
        f"gh pr create --head {shlex.quote(ask.branch)} --base {shlex.quote(ask.base)} "
        f"--title {shlex.quote(ask.title)} --body {shlex.quote(ask.body)}{draft}",
    ]


def _pull_request(answer: dict[str, Any]) -> dict[str, Any]:
    state = str(answer.get("state", "open")).lower()
    if state == "open" and answer.get("isDraft"):
        state = "draft"
    out: dict[str, Any] = {
        "number": int(answer["number"]),
        "url": str(answer["url"]),
        "state": state if state in ("open", "draft", "merged", "closed") else "open",
    }
    if answer.get("title"):
        out["title"] = str(answer["title"])
    return out


class GitHub:
    def __init__(self, git: Git, gh: str = "gh", *, timeout: float = 120.0) -> None:
        self.git = git
        self.gh = gh
        self.timeout = timeout

    def ready(self, root: Path, ask: PullRequestAsk) -> Git:
        """``gh``, checked to be installed and logged in, with the remote there: the runner
        :meth:`publish` takes (nothing is pushed or changed yet)."""
        found = shutil.which(self.gh)
        if found is None:
            raise HandOffUnavailable(Reason.GH_MISSING, "the GitHub CLI (gh) is not installed")
        if self.git.run(root, "remote", "get-url", ask.remote, check=False).returncode != 0:
            raise HandOffUnavailable(
                Reason.NO_REMOTE, f'the repository at {root} has no remote "{ask.remote}"'
            )
        gh = Git(found, timeout=self.timeout)
        if gh.run(root, "auth", "status", check=False, env=_QUIET).returncode != 0:
            raise HandOffUnavailable(
                Reason.GH_UNAUTHENTICATED, "the GitHub CLI is not logged in (run gh auth login)"
            )
        return gh

    def publish(self, gh: Git, root: Path, ask: PullRequestAsk) -> tuple[dict[str, Any], bool]:
        """Push ``ask.branch`` and open its pull request; ``(pull_request, created)`` (one
        already open for the branch is returned as it is, after the push)."""
        try:
            self.git.run(root, "push", "--quiet", "--set-upstream", ask.remote, ask.branch)
        except GitError as exc:
            raise HandOffUnavailable(Reason.PUSH_FAILED, f"git push failed: {exc}") from None
        existing = gh.run(
            root, "pr", "view", ask.branch, "--json", _FIELDS, check=False, env=_QUIET
        )
        if existing.returncode == 0:
            answer = jsonutil.loads(existing.stdout)
            if str(answer.get("state", "")).upper() == "OPEN":
                return _pull_request(answer), False
        create = ["pr", "create", "--head", ask.branch, "--base", ask.base]
        create += ["--title", ask.title, "--body", ask.body]
        if ask.draft:
            create.append("--draft")
        try:
            url = gh.text(root, *create, env=_QUIET).strip().splitlines()[-1]
            answer = jsonutil.loads(gh.text(root, "pr", "view", url, "--json", _FIELDS, env=_QUIET))
            return _pull_request(answer), True
        except (GitError, IndexError, ValueError, KeyError, TypeError) as exc:
            raise HandOffUnavailable(Reason.GH_FAILED, f"gh pr create failed: {exc}") from None
