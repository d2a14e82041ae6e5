"""``compozy`` on a pseudo-terminal, as a person at a terminal starts it: the pty is the
process's controlling terminal and its stdin, stdout and stderr, so ``isatty()`` holds and a
Ctrl-C typed on it (``\\x03``) reaches the process as SIGINT through the line discipline.

Deadlines here bound a wait; no test asserts on how long anything took.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

WAIT_SECONDS = 30.0
CTRL_C = b"\x03"


@dataclass
class Terminal:
    pid: int
    fd: int
    output: bytearray = field(default_factory=bytearray)
    exit_code: int | None = None

    def _pump(self, seconds: float) -> bool:
        """Read what is there within ``seconds``; ``False`` once the terminal is closed."""
        ready, _, _ = select.select([self.fd], [], [], seconds)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the process and its terminal are gone
            return False
        self.output += data
        return bool(data)

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace").replace("\r\n", "\n")

    def read_until(self, needle: str, seconds: float = WAIT_SECONDS) -> str:
        deadline = time.monotonic() + seconds
        while needle not in self.text:
            if time.monotonic() > deadline or not self._pump(0.1):
                if needle in self.text:
                    break
                raise AssertionError(f"{needle!r} never appeared on the terminal: {self.text!r}")
        return self.text

    def type(self, data: bytes) -> None:
        os.write(self.fd, data)

    def wait(self, seconds: float = WAIT_SECONDS) -> int:
        """The exit code, once the process has ended (reading its output meanwhile)."""
        deadline = time.monotonic() + seconds
        while self.exit_code is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.exit_code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {seconds} s: {self.text!r}")
            self._pump(0.05)
        while self._pump(0.05):
            pass
        return self.exit_code


@contextlib.contextmanager
def on_terminal(
    argv: Sequence[str], env: Mapping[str, str], *, columns: int = 80
) -> Iterator[Terminal]:
    """Run ``argv`` on a new pseudo-terminal ``columns`` wide; killed (and reaped) if still
    running at the end."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: size its terminal, exec (nothing of the test process runs here)
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
            # as a shell starts a foreground job: a test run started in the background (`&`
            # in a non-interactive shell) ignores SIGINT and SIGQUIT, and exec keeps that
            for sig in (signal.SIGINT, signal.SIGQUIT):
                signal.signal(sig, signal.SIG_DFL)
            os.execve(argv[0], list(argv), dict(env))
        finally:
            os._exit(127)
    terminal = Terminal(pid, fd)
    try:
        yield terminal
    finally:
        if terminal.exit_code is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
