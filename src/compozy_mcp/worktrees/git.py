"""Running git: one command at a time, under a deadline, in a process group of its own.

Every call is synchronous (the session layer runs it in a worker thread). A command that
outlives its deadline is killed with its whole group (git may start hooks, ``gc`` or a pager
helper), so nothing it started is left behind. The environment is the caller's, minus the
variables that would point git at another repository (``GIT_DIR`` set by an enclosing git hook,
say), and the daemon's secrets (:mod:`compozy_mcp.childenv`), plus what keeps git from asking
anyone anything.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from compozy_mcp.childenv import child_environment

#: seconds one git command may take; a worktree of a large repository is checked out in one
DEFAULT_TIMEOUT = 120.0

#: variables that would make git act on another repository or index than the one asked for
_REPOSITORY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)

_QUIET = {
    "GIT_TERMINAL_PROMPT": "0",  # never ask for a password: fail instead
    "GIT_ASKPASS": "true",
    "GIT_EDITOR": "true",
    "GIT_PAGER": "cat",
    "GIT_MERGE_AUTOEDIT": "no",
    "LC_ALL": "C",  # messages and porcelain in one language, the one parsed here
}


class GitError(Exception):
    """A git command failed, or git could not be run. ``stderr`` is what git said."""

    def __init__(
        self, args: Sequence[str], message: str, *, stderr: str = "", returncode: int = -1
    ) -> None:
        super().__init__(message)
        self.args_run = tuple(args)
        self.stderr = stderr.strip()
        self.returncode = returncode


class GitMissing(GitError):
    """git is not installed (or not on PATH)."""


class GitTimeout(GitError):
    """A git command outlived its deadline and was killed with its process group."""


@dataclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: str
    stderr: str


def git_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    # never the daemon's token: git runs the repository's hooks, which a session may write
    env = child_environment(base)
    for name in _REPOSITORY_VARIABLES:
        env.pop(name, None)
    env.update(_QUIET)
    return env


class Git:
    """Runs ``git`` commands in a directory. ``executable`` is found on PATH when relative."""

    def __init__(self, executable: str = "git", *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.executable = executable
        self.timeout = timeout
        self._env = git_environment()

    def run(
        self,
        cwd: Path | str,
        *args: str,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> GitResult:
        """Run ``git ARGS`` in ``cwd``; with ``check``, a non-zero exit raises :class:`GitError`
        quoting git's own message."""
        argv = [self.executable, *args]
        environment = {**self._env, **env} if env else self._env
        if not Path(cwd).is_dir():
            raise GitError(argv, f"{cwd} is not a directory")
        try:
            process = subprocess.Popen(
                argv,
                cwd=str(cwd),
                env=environment,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise GitMissing(argv, f"{self.executable} is not installed or not on PATH") from None
        limit = self.timeout if timeout is None else timeout
        try:
            out, err = process.communicate(
                stdin.encode() if stdin is not None else None, timeout=limit
            )
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise GitTimeout(
                argv, f"git {' '.join(args[:2])} took longer than {limit:g} s and was stopped"
            ) from None
        except BaseException:
            _kill_group(process)
            raise
        finally:
            _kill_group(process, only_leftovers=True)
        result = GitResult(
            process.returncode,
            out.decode("utf-8", "surrogateescape"),
            err.decode("utf-8", "replace"),
        )
        if check and result.returncode != 0:
            said = result.stderr.strip().splitlines()
            raise GitError(
                argv,
                said[-1] if said else f"git {args[0] if args else ''} exited {result.returncode}",
                stderr=result.stderr,
                returncode=result.returncode,
            )
        return result

    def text(self, cwd: Path | str, *args: str, env: Mapping[str, str] | None = None) -> str:
        """The command's output without its trailing newline (a failure raises)."""
        return self.run(cwd, *args, env=env).stdout.rstrip("\n")


def _kill_group(process: subprocess.Popen[bytes], *, only_leftovers: bool = False) -> None:
    """End the command's process group: after a timeout, or whatever it left running."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if not only_leftovers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=5)
