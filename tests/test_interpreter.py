"""Ending a process without the interpreter's teardown (``compozy_mcp.interpreter.exit_now``):
what a normal exit does that can be seen still happens."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.process


def _run(body: str) -> subprocess.CompletedProcess[str]:
    script = "from compozy_mcp.interpreter import exit_now\n" + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_status_the_atexit_handlers_and_buffered_output_survive() -> None:
    done = _run(
        """
        import atexit, sys
        atexit.register(lambda: print("atexit ran", file=sys.stderr))
        sys.stdout.write("buffered, no newline")
        exit_now(7)
        """
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        7,
        "buffered, no newline",
        "atexit ran\n",
    )


def test_a_running_non_daemon_thread_is_waited_for_as_a_normal_exit_does() -> None:
    done = _run(
        """
        import threading, time
        def late():
            time.sleep(0.2)
            print("the thread finished")
        threading.Thread(target=late).start()
        exit_now(0)
        """
    )
    assert (done.returncode, done.stdout) == (0, "the thread finished\n")


def test_a_status_beyond_a_byte_exits_as_sys_exit_does() -> None:
    normal = _run("import sys\nsys.exit(256)")
    assert _run("exit_now(256)").returncode == normal.returncode
