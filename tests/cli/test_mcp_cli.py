"""Issue 16, item 1: upstream MCP server definitions in ``$COMPOZY_HOME/mcp.yaml`` and a
workspace's ``.compozy/mcp.yaml``, managed with ``compozy mcp add|list|remove`` (the shape of
``claude mcp add``); ``compozy mcp list`` shows what running proxies report about each server.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.cli.test_tool_cli import Home, _loaded_heavy_modules
from tests.clirun import run_cli

from compozy_mcp.upstream.config import (
    Restart,
    Scope,
    Timeouts,
    Transport,
    parse_server,
    user_file,
    workspace_file,
)
from compozy_mcp.upstream.status import Report, ServerStatus, State, StatusBoard

EXT = Path(__file__).parents[1] / "upstream" / "ext"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "ws").mkdir()
    return {
        "COMPOZY_HOME": str(tmp_path / "home"),
        "COMPOZY_WORKSPACE": str(tmp_path / "ws"),
        "DOCS_TOKEN": "s3cret",
    }


def mcp(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("mcp", *args, env=env)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def listing(env: dict[str, str], *args: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads(ok(mcp(env, "list", "-o", "json", *args)))["servers"]
    return rows


def home_yaml(env: dict[str, str]) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load(Path(env["COMPOZY_HOME"], "mcp.yaml").read_text())
    return data


def test_mcp_add_writes_a_stdio_server_like_claude_mcp_add(env: dict[str, str]) -> None:
    out = ok(
        mcp(env, "add", "-e", "NOTES_DIR=/srv/notes", "notes", "--", "python", "-m", "n", "-v")
    )
    assert "notes__<tool>" in out
    assert home_yaml(env) == {
        "servers": {
            "notes": {
                "command": "python",
                "args": ["-m", "n", "-v"],
                "env": {"NOTES_DIR": "/srv/notes"},
            }
        }
    }
    assert Path(env["COMPOZY_HOME"], "mcp.yaml").stat().st_mode & 0o777 == 0o600


def test_mcp_add_takes_a_url_as_a_streamable_http_server(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "-H", "Authorization: Bearer ${DOCS_TOKEN}", "docs", "https://d.test/mcp"))
    assert home_yaml(env) == {
        "servers": {
            "docs": {
                "url": "https://d.test/mcp",
                "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
            }
        }
    }
    ok(mcp(env, "add", "--transport", "http", "other", "http://127.0.0.1:9/mcp"))
    assert [row["name"] for row in listing(env)] == ["docs", "other"]


def test_mcp_add_to_the_workspace_scope_writes_its_compozy_dir(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "--scope", "workspace", "notes", "python", "notes.py"))
    path = Path(env["COMPOZY_WORKSPACE"], ".compozy", "mcp.yaml")
    assert yaml.safe_load(path.read_text()) == {
        "servers": {"notes": {"command": "python", "args": ["notes.py"]}}
    }
    assert listing(env)[0]["scope"] == "workspace"


def test_a_workspace_definition_wins_over_the_users(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "notes", "python", "user.py"))
    ok(mcp(env, "add", "-s", "workspace", "notes", "python", "ws.py"))
    [row] = listing(env)
    assert (row["scope"], row["target"]) == ("workspace", "python ws.py")


def test_mcp_remove_takes_the_definition_out(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "notes", "python", "n.py"))
    ok(mcp(env, "add", "docs", "https://d.test/mcp"))
    assert "removed server notes" in ok(mcp(env, "remove", "notes"))
    assert [row["name"] for row in listing(env)] == ["docs"]
    missing = mcp(env, "remove", "notes")
    assert missing.returncode == 6
    assert "no server 'notes'" in missing.stderr
    assert "mcp_server_unknown" in missing.stderr


def test_removing_a_name_both_scopes_define_needs_a_scope(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "notes", "python", "user.py"))
    ok(mcp(env, "add", "-s", "workspace", "notes", "python", "ws.py"))
    both = mcp(env, "remove", "notes")
    assert both.returncode == 2  # a usage error
    assert "--scope" in both.stderr
    ok(mcp(env, "remove", "notes", "--scope", "workspace"))
    assert listing(env)[0]["scope"] == "user"


def test_mcp_add_refuses_a_name_already_defined_or_not_a_name(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "notes", "python", "n.py"))
    again = mcp(env, "add", "notes", "python", "other.py")
    assert again.returncode == 6
    assert "mcp_server_exists" in again.stderr
    for name in ("a__b", "compozy", "no spaces", "-x"):
        bad = mcp(env, "add", name, "python", "n.py")
        assert bad.returncode != 0, name
    assert home_yaml(env)["servers"] == {"notes": {"command": "python", "args": ["n.py"]}}


def test_a_broken_file_is_reported_without_its_path(env: dict[str, str], tmp_path: Path) -> None:
    Path(env["COMPOZY_HOME"]).mkdir()
    Path(env["COMPOZY_HOME"], "mcp.yaml").write_text("servers: {notes: {args: [x]}}\n")
    done = mcp(env, "list")
    # issue 22: one invalid definition is skipped with a warning naming it (the rest serve)
    assert done.returncode == 0
    assert "$COMPOZY_HOME/mcp.yaml: server 'notes': command is required" in done.stderr
    assert str(tmp_path) not in done.stderr
    Path(env["COMPOZY_HOME"], "mcp.yaml").write_text("servers: [\n")
    assert "is not valid YAML (line 2)" in mcp(env, "list").stderr
    # a broken file is never rewritten
    assert mcp(env, "add", "docs", "https://d.test/mcp").returncode == 6
    assert Path(env["COMPOZY_HOME"], "mcp.yaml").read_text() == "servers: [\n"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"url": "ftp://x"}, "url must be an http:// or https:// URL"),
        ({"command": "x", "url": "http://x"}, "http servers take headers, url, not command"),
        (
            {"transport": "stdio", "url": "http://x"},
            "stdio servers take args, command, env, not url",
        ),
        ({"command": "x", "args": "a b"}, "args must be a list of strings"),
        ({"command": "x", "tools": []}, "unknown key(s) tools"),
        ({"command": "x", "timeouts": {"call": 0}}, "call must be a positive number"),
        ({"command": "x", "timeouts": {"ping": 1}}, "takes only call, ping_interval"),
        ({"command": "x", "restart": {"initial_delay": 9, "max_delay": 1}}, "initial_delay"),
    ],
)
def test_a_definition_that_breaks_the_format_is_refused(
    raw: dict[str, object], problem: str
) -> None:
    from compozy_mcp.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        parse_server("notes", raw, Scope.USER)
    assert problem in refused.value.message
    assert refused.value.reason == "mcp_config_invalid"


def test_timeouts_and_restart_are_read_and_written_back(tmp_path: Path) -> None:
    raw = {"command": "x", "timeouts": {"call": 5, "ping_interval": 2}, "restart": {"max_delay": 4}}
    definition = parse_server("notes", raw, Scope.USER)
    assert definition.timeouts == Timeouts(call=5.0, ping_interval=2.0)
    assert definition.restart == Restart(max_delay=4.0)
    assert definition.to_yaml() == raw | {
        "timeouts": {"call": 5.0, "ping_interval": 2.0},
        "restart": {"max_delay": 4.0},
    }
    config = user_file(tmp_path)
    config.add(definition)
    assert config.servers()["notes"] == definition
    assert workspace_file(tmp_path).servers() == {}


def test_variables_are_read_from_the_environment_when_a_server_starts() -> None:
    raw = {
        "url": "https://${HOST:-d.test}/mcp",
        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Missing": "[${NOPE}]"},
    }
    definition = parse_server("docs", raw, Scope.USER)
    assert definition.transport is Transport.HTTP
    expanded = definition.expanded({"DOCS_TOKEN": "s3cret"})
    assert expanded.url == "https://d.test/mcp"
    assert expanded.headers == {"Authorization": "Bearer s3cret", "X-Missing": "[]"}
    assert definition.headers["Authorization"] == "Bearer ${DOCS_TOKEN}"  # never written back


# --- what running proxies report ---------------------------------------------------------


def test_mcp_list_shows_the_state_and_last_error_running_proxies_report(
    env: dict[str, str],
) -> None:
    ok(mcp(env, "add", "notes", "python", "n.py"))
    ok(mcp(env, "add", "docs", "https://d.test/mcp"))
    board = StatusBoard(Path(env["COMPOZY_HOME"]))
    board.publish(
        Report(
            os.getpid(),
            "proxy",
            (
                ServerStatus("notes", State.READY, tools=4, since="2026-12-03T10:00:00Z"),
                ServerStatus(
                    "docs", State.DOWN, last_error="cannot reach https://d.test/mcp", restarts=2
                ),
            ),
        )
    )
    rows = {row["name"]: row for row in listing(env)}
    assert rows["notes"]["connections"] == [
        {
            "pid": os.getpid(),
            "kind": "proxy",
            "state": "ready",
            "tools": 4,
            "restarts": 0,
            "since": "2026-12-03T10:00:00Z",
        }
    ]
    docs: list[dict[str, object]] = rows["docs"]["connections"]  # type: ignore[assignment]
    assert (docs[0]["state"], docs[0]["last_error"]) == ("down", "cannot reach https://d.test/mcp")
    text = ok(mcp(env, "list"))
    assert f"proxy {os.getpid()}: ready, 4 tools" in text
    assert "down (restarts 2); last error: cannot reach https://d.test/mcp" in text
    board.withdraw(os.getpid())
    assert "not connected" in ok(mcp(env, "list"))


def test_the_report_of_a_process_that_is_gone_is_ignored(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "notes", "python", "n.py"))
    board = StatusBoard(Path(env["COMPOZY_HOME"]))
    gone = 2**22 + 12345  # above any pid_max
    board.publish(Report(gone, "proxy", (ServerStatus("notes", State.READY, tools=1),)))
    assert listing(env)[0]["connections"] == []
    board.sweep()
    assert not (board.directory / f"{gone}.json").exists()


def test_mcp_list_without_servers_says_how_to_add_one(env: dict[str, str]) -> None:
    assert "compozy mcp add" in ok(mcp(env, "list"))
    assert listing(env) == []


# --- extensions ----------------------------------------------------------------------------


def test_an_extension_of_the_compozy_tools_entry_point_group_is_listed(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXT))
    [row] = listing(env)
    assert row == {
        "name": "notes_ext",
        "scope": "extension",
        "transport": "extension",
        "target": "tests.upstream.servers.notes:build",
        "connections": [],
    }
    # a definition of the same name in a file wins
    ok(mcp(env, "add", "notes_ext", "python", "n.py"))
    assert listing(env)[0]["scope"] == "user"


def test_mcp_list_check_connects_to_each_server_now(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXT))
    ok(mcp(env, "add", "down", "http://127.0.0.1:9/mcp"))
    checked = mcp(env, "list", "--check", "-o", "json")
    assert checked.returncode == 1  # a server failed its check
    rows = {row["name"]: row for row in json.loads(checked.stdout)["servers"]}
    assert rows["notes_ext"]["check"] == {
        "state": "ready",
        "tools": 8,
        "restarts": 0,
    }
    down = rows["down"]["check"]
    assert down["state"] == "down"
    assert 'cannot reach MCP server "down" at http://127.0.0.1:9/mcp' in down["last_error"]
    text = mcp(env, "list", "--check")
    assert text.returncode == 1
    assert "check: ready, 8 tools" in text.stdout
    assert "1 of 2 MCP servers failed the check: down" in text.stderr
    ok(mcp(env, "remove", "down"))
    assert "check: ready, 8 tools" in ok(mcp(env, "list", "--check"))  # all ready: exit 0


def test_mcp_list_check_fails_when_every_server_is_down(env: dict[str, str]) -> None:
    ok(mcp(env, "add", "down", "http://127.0.0.1:9/mcp"))
    ok(mcp(env, "add", "gone", "http://127.0.0.1:10/mcp"))
    done = mcp(env, "list", "--check")
    assert done.returncode == 1
    assert "2 of 2 MCP servers failed the check: down, gone" in done.stderr
    assert mcp(env, "list").returncode == 0  # without --check, listing is not checking


def test_mcp_add_makes_compozy_home_readable_by_its_owner_only(env: dict[str, str]) -> None:
    home = Path(env["COMPOZY_HOME"])
    assert not home.exists()
    ok(mcp(env, "add", "notes", "--", "python", "n.py"))
    assert home.stat().st_mode & 0o777 == 0o700


# --- start-up ------------------------------------------------------------------------------


@pytest.mark.process
def test_mcp_add_list_and_remove_never_import_the_mcp_server(env: dict[str, str]) -> None:
    home = Home(Path(env["COMPOZY_HOME"]), {**os.environ, **env})
    for args in (
        ["mcp", "add", "notes", "--", "python", "notes.py"],
        ["mcp", "list"],
        ["mcp", "list", "-o", "json"],
        ["mcp", "remove", "notes"],
    ):
        assert _loaded_heavy_modules(home, args) == [], args
