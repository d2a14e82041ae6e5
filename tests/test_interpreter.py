"""Ending a process without the interpreter's teardown (``compozy_mcp.interpreter.exit_now``):
what a normal exit does that can be seen still happens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from tests.leftovers import running

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


# --- Ctrl-C while a command starts -----------------------------------------------------------

INTERRUPT_SOON = textwrap.dedent(
    """
    import os, signal, threading
    from compozy_mcp.interpreter import end_on_interrupt, raise_on_interrupt
    end_on_interrupt()
    # SIGINT in 50 ms: into the import of the ACP SDK, whose ~270 schema models take 0.4 s
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
    """
)


def test_ctrl_c_while_pydantic_builds_an_sdks_schema_ends_at_once_with_130_saying_nothing() -> None:
    """Before, a KeyboardInterrupt traceback; one raised inside pydantic-core became a
    SchemaError (exit status 1), as ``compozy proxy`` on a terminal showed."""
    done = _run(INTERRUPT_SOON + "import acp\nprint('imported: the interrupt was lost')\n")
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "")


def test_after_raise_on_interrupt_ctrl_c_is_a_keyboard_interrupt_again() -> None:
    done = _run(
        INTERRUPT_SOON
        + textwrap.dedent(
            """
            raise_on_interrupt()
            import time
            try:
                time.sleep(30)
            except KeyboardInterrupt:
                print("interrupted")
            """
        )
    )
    assert (done.returncode, done.stdout) == (0, "interrupted\n")


def test_raise_on_interrupt_leaves_a_handler_it_did_not_set() -> None:
    done = _run(
        """
        import signal
        from compozy_mcp.interpreter import raise_on_interrupt
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise_on_interrupt()
        print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
        """
    )
    assert (done.returncode, done.stdout) == (0, "True\n")


def test_an_ignored_interrupt_stays_ignored() -> None:
    """A job a shell starts in the background inherits SIGINT ignored: Ctrl-C is not for it."""
    done = _run(
        """
        import os, signal
        from compozy_mcp.interpreter import end_on_interrupt
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        end_on_interrupt()
        os.kill(os.getpid(), signal.SIGINT)
        print("still running")
        """
    )
    assert (done.returncode, done.stdout) == (0, "still running\n")


def test_freeze_start_up_takes_what_exists_out_of_the_collectors_reach() -> None:
    done = _run(
        """
        import gc
        from compozy_mcp.interpreter import freeze_start_up
        before = gc.get_freeze_count()
        kept = [[] for _ in range(1000)]
        freeze_start_up()
        print(before, gc.get_freeze_count() >= 1000)
        """
    )
    assert (done.returncode, done.stdout) == (0, "0 True\n")


# --- a program a command waits for ------------------------------------------------------------


def test_ctrl_c_while_the_program_starts_kills_it_with_this_process() -> None:
    """The CI failure of ``compozy agent install``: SIGINT came while ``Popen`` still waited to
    learn that npm had started, and ``subprocess.run``, never given the process, left npm
    running. Here the SIGINT comes from inside ``Popen``, after the program started."""
    done = _run(
        """
        import os, signal, subprocess
        from compozy_mcp.interpreter import end_on_interrupt, run_program

        class InterruptedWhileStarting(subprocess.Popen):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                print(self.pid, flush=True)
                os.kill(os.getpid(), signal.SIGINT)

        subprocess.Popen = InterruptedWhileStarting
        end_on_interrupt()  # as the console script does
        try:
            run_program(["sleep", "60"])
        except KeyboardInterrupt:
            print("interrupted")
        """
    )
    pid = int(done.stdout.split()[0])
    try:
        assert (done.returncode, done.stdout.split()[1:]) == (0, ["interrupted"]), done.stderr
        assert not running(pid)
    finally:
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def test_ctrl_c_while_the_program_runs_kills_it_and_a_normal_end_gives_its_output() -> None:
    done = _run(
        """
        import os, signal, subprocess, threading
        from compozy_mcp.interpreter import end_on_interrupt, run_program
        end_on_interrupt()
        said = run_program(["echo", "hello"], stdout=subprocess.PIPE, text=True)
        print(said.returncode, said.stdout.strip(), flush=True)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            run_program(["sh", "-c", "echo $$; exec sleep 60"])
        except KeyboardInterrupt:
            print("interrupted")
        """
    )
    lines = done.stdout.splitlines()
    pid = int(lines[1])
    try:
        said = (done.returncode, lines[0], lines[2:])
        assert said == (0, "0 hello", ["interrupted"]), done.stderr
        assert not running(pid)
    finally:
        if running(pid):
            os.kill(pid, signal.SIGKILL)
