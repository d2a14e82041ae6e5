"""Issue 17, item 7: the README's tour runs as written against a daemon on any port (one
``PORT`` variable), with no ``jq``: every command of it succeeds except the two that show
errors on purpose."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tests.api.support import COMPOZY, Home, running_daemon

pytestmark = pytest.mark.process

README = Path(__file__).parent.parent / "README.md"


def tour() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## A five-minute tour", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1)


def test_the_tour_is_parametrised_on_one_port_and_needs_no_jq() -> None:
    script = tour()
    assert "jq" not in script
    assert "PORT=8765" in script
    assert script.count("8765") == 1  # the one place to change


def test_the_tour_runs_against_a_daemon_on_another_port(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon:
        assert daemon.url is not None
        port = daemon.url.rsplit(":", 1)[1]
        script = (
            tour().replace("source .venv/bin/activate\n", "").replace("PORT=8765", f"PORT={port}")
        )
        # each command on one line, its exit code printed after it
        joined = script.replace("\\\n", " ")
        traced = re.sub(r"(?m)^((?:compozy|curl) .*?)(\s+#.*)?$", r"\1; echo exit=$?", joined)
        done = subprocess.run(
            ["bash", "-c", traced],
            env={**home.env, "PATH": f"{COMPOZY.parent}:/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    codes = [int(code) for code in re.findall(r"^exit=(\d+)$", done.stdout, re.M)]
    assert len(codes) >= 12, done.stdout + done.stderr
    failures = [code for code in codes if code != 0]
    # on purpose: the missing field (-v) and the mistyped tool id
    assert failures == [2, 3], done.stdout + done.stderr
    assert 'diagnostic: tool "compozy__session_status" input "session_id" is required' in (
        done.stderr
    )
    assert 'did you mean "compozy__session_status"' in done.stderr
    assert '"sess-example"' in done.stdout
    # the echo agent's turns: a reply, and a write it was allowed to make once answered
    assert "echo: hello, agent" in done.stdout
    assert "(Write notes.txt): allow-once" in done.stdout
    assert "wrote notes.txt" in done.stdout
