"""Issue 22, item 4: the daemon's secrets never reach the processes it starts: the variables
that hold or name its token are left out, and so is any variable holding the token."""

from __future__ import annotations

import pytest

from compozy_mcp import childenv
from compozy_mcp.childenv import child_environment, withhold

TOKEN = "daemon-token-0123456789"


@pytest.fixture(autouse=True)
def withheld(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(childenv, "_withheld", set())


def test_the_token_variables_are_left_out() -> None:
    given = {
        "PATH": "/usr/bin",
        "COMPOZY_TOKEN": TOKEN,
        "COMPOZY_TOKEN_FILE": "/home/op/.compozy-token",
        "COMPOZY_SESSION_TOKEN": "compozy-session:sess-x:abc",
        "COMPOZY_HOME": "/home/op/.compozy",
    }
    assert child_environment(given) == {"PATH": "/usr/bin", "COMPOZY_HOME": "/home/op/.compozy"}


def test_a_withheld_token_is_left_out_under_any_name() -> None:
    withhold(TOKEN)
    given = {"MY_TOKEN": TOKEN, "AUTH": f"Bearer {TOKEN}", "OTHER": "kept"}
    assert child_environment(given) == {"OTHER": "kept"}


def test_a_short_secret_is_not_looked_for_in_values() -> None:
    withhold("abc")
    assert child_environment({"A": "abcdef"}) == {"A": "abcdef"}


def test_the_default_base_is_this_processs_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPOZY_TOKEN", TOKEN)
    monkeypatch.setenv("CHILDENV_PROBE", "1")
    env = child_environment()
    assert "COMPOZY_TOKEN" not in env
    assert env["CHILDENV_PROBE"] == "1"


def test_git_runs_without_the_token_either() -> None:
    """git runs the repository's hooks, which a session working in it may have written."""
    from compozy_mcp.worktrees.git import git_environment

    withhold(TOKEN)
    env = git_environment({"PATH": "/usr/bin", "COMPOZY_TOKEN": TOKEN, "X": TOKEN})
    assert "COMPOZY_TOKEN" not in env
    assert "X" not in env
    assert env["PATH"] == "/usr/bin"
