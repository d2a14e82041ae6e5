"""Issue 17, item 4, and issue 30, item 3: ``compozy install CLIENT`` writes (or prints) each
client's configuration in that client's own documented format (docs/clients/*.md cite each
client's documentation), editing the file with a parser: TOML with tomlkit (comments, layout,
inline tables and dotted keys kept), JSON with the standard library; a file that does not parse
is refused with its line and column and left as it was. ``--scope project`` writes a portable
entry; ``--session`` must name a session; the client's own command writes the entry when it is
installed.

The schemas below are the clients' documented shapes, written from their documentation:
Claude Code's ``.mcp.json``/``~/.claude.json`` and Claude Desktop's
``claude_desktop_config.json`` (``mcpServers``), Cursor's ``mcp.json`` (``mcpServers``; a remote
server is ``{"url"}``), VS Code's ``mcp.json`` (``servers``, with ``type``), Codex's
``config.toml`` (``[mcp_servers.NAME]``)."""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.api.support import Home, compozy

from compozy_mcp.cli._reporting import EXIT_NOT_FOUND, EXIT_SETUP, EXIT_USAGE

STRINGS = {"type": "array", "items": {"type": "string"}}
ENV = {"type": "object", "additionalProperties": {"type": "string"}}
ABSOLUTE = {"type": "string", "pattern": "^/"}


def _stdio(*, typed: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {"command": ABSOLUTE, "args": STRINGS, "env": ENV}
    required = ["command", "args"]
    if typed:
        properties["type"] = {"const": "stdio"}
        required.append("type")
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _document(key: str, server: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {"type": "object", "properties": {"compozy": server}, "required": ["compozy"]}
        },
        "required": [key],
    }


HTTP_TYPED = {
    "type": "object",
    "properties": {"type": {"const": "http"}, "url": {"type": "string"}},
    "required": ["type", "url"],
    "additionalProperties": False,
}
HTTP_URL = {
    "type": "object",
    "properties": {"url": {"type": "string"}},
    "required": ["url"],
    "additionalProperties": False,
}
#: client -> (stdio schema, http schema) of the whole document, as each client documents it
DOCUMENTED: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "claude-code": (
        _document("mcpServers", _stdio(typed=True)),
        _document("mcpServers", HTTP_TYPED),
    ),
    "claude-desktop": (_document("mcpServers", _stdio(typed=False)), None),
    "cursor": (_document("mcpServers", _stdio(typed=False)), _document("mcpServers", HTTP_URL)),
    "vscode": (_document("servers", _stdio(typed=True)), _document("servers", HTTP_TYPED)),
    "codex": (
        _document("mcp_servers", _stdio(typed=False)),
        _document("mcp_servers", HTTP_URL),
    ),
}
URL = "http://127.0.0.1:8765/mcp"
#: where each client's file is, per scope, under the test's home ("user") and workspace
WHERE = {
    ("claude-code", "user"): "user/.claude.json",
    ("claude-code", "project"): "workspace/.mcp.json",
    ("cursor", "user"): "user/.cursor/mcp.json",
    ("cursor", "project"): "workspace/.cursor/mcp.json",
    ("vscode", "user"): "user/.config/Code/User/mcp.json",
    ("vscode", "project"): "workspace/.vscode/mcp.json",
    ("codex", "user"): "user/.codex/config.toml",
    ("codex", "project"): "workspace/.codex/config.toml",
    ("claude-desktop", "user"): "user/.config/Claude/claude_desktop_config.json",
}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = Home.make(tmp_path)
    user = tmp_path / "user"
    user.mkdir()
    # no client command on PATH (claude, codex): the file is edited
    return made.with_env(HOME=str(user), PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")


def _key(client: str) -> str:
    return "servers" if client == "vscode" else "mcp_servers" if client == "codex" else "mcpServers"


def _parse(client: str, text: str) -> dict[str, Any]:
    parsed: dict[str, Any] = tomllib.loads(text) if client == "codex" else json.loads(text)
    return parsed


def _make_session(home: Home) -> str:
    done = compozy(home, "session", "create", "--agent", "general", "-o", "json")
    assert done.returncode == 0, done.stderr
    ident: str = json.loads(done.stdout)["session"]["id"]
    return ident


@pytest.mark.parametrize("client", list(DOCUMENTED))
def test_print_gives_the_clients_documented_stdio_format(home: Home, client: str) -> None:
    session = _make_session(home)
    done = compozy(home, "install", client, "--print", "--session", session)
    assert done.returncode == 0, done.stderr
    document = _parse(client, done.stdout)
    Draft202012Validator(DOCUMENTED[client][0]).validate(document)
    server = document[_key(client)]["compozy"]
    assert Path(server["command"]).is_absolute()
    assert Path(server["command"]).name == "compozy"
    assert server["args"] == ["proxy", "--session", session]
    assert server["env"] == {"COMPOZY_HOME": home.env["COMPOZY_HOME"]}
    assert not list(Path(home.env["HOME"]).rglob("*"))  # --print writes nothing
    assert not (Path(home.env["COMPOZY_WORKSPACE"]) / ".mcp.json").exists()


@pytest.mark.parametrize("client", [c for c in DOCUMENTED if c != "claude-desktop"])
def test_the_project_scope_is_portable(home: Home, client: str) -> None:
    """A project's file is shared: `compozy` as found on PATH, no path of this machine, no
    variable of this user."""
    done = compozy(home, "install", client, "--scope", "project", "--print")
    assert done.returncode == 0, done.stderr
    server = _parse(client, done.stdout)[_key(client)]["compozy"]
    assert (server["command"], server["args"]) == ("compozy", ["proxy"])
    assert "env" not in server
    assert home.env["COMPOZY_HOME"] not in done.stdout
    assert sys.prefix not in done.stdout


def test_a_project_scope_refuses_what_only_you_have(home: Home) -> None:
    desktop = compozy(home, "install", "claude-desktop", "--scope", "project")
    assert desktop.returncode == EXIT_USAGE
    assert "has no project scope" in desktop.stderr
    session = _make_session(home)
    bound = compozy(home, "install", "cursor", "--scope", "project", "--session", session)
    assert bound.returncode == EXIT_USAGE
    assert "--scope user" in bound.stderr


def test_an_unknown_session_is_refused_with_what_was_meant(home: Home) -> None:
    session = _make_session(home)
    done = compozy(home, "install", "cursor", "--session", session[:-1] + "x")
    assert done.returncode == EXIT_NOT_FOUND
    assert "does not exist" in done.stderr
    assert f'did you mean "{session}"' in done.stderr
    assert not (Path(home.env["HOME"]) / ".cursor").exists()


@pytest.mark.parametrize("client", [c for c, (_, http) in DOCUMENTED.items() if http])
def test_http_gives_the_clients_documented_remote_format(home: Home, client: str) -> None:
    done = compozy(home, "install", client, "--print", "--http", URL)
    assert done.returncode == 0, done.stderr
    schema = DOCUMENTED[client][1]
    assert schema is not None
    Draft202012Validator(schema).validate(_parse(client, done.stdout))
    assert URL in done.stdout


def test_claude_desktop_takes_no_url_so_the_proxy_relays_the_daemon(home: Home) -> None:
    done = compozy(home, "install", "claude-desktop", "--print", "--http", URL)
    server = json.loads(done.stdout)["mcpServers"]["compozy"]
    assert server["args"] == ["--url", "http://127.0.0.1:8765", "proxy"]


@pytest.mark.parametrize(("client", "scope"), list(WHERE))
def test_install_writes_the_clients_file_and_keeps_what_else_it_holds(
    home: Home, tmp_path: Path, client: str, scope: str
) -> None:
    path = tmp_path / WHERE[client, scope]
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        path.write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n')
    else:
        path.write_text(json.dumps({"inputs": [], _key(client): {"other": {"command": "other"}}}))
    path.chmod(0o640)
    for _ in range(2):  # twice: the second run replaces its own entry, nothing else
        done = compozy(home, "install", client, "--scope", scope)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"wrote {path}")
    document = _parse(client, path.read_text())
    if scope == "user":
        Draft202012Validator(DOCUMENTED[client][0]).validate(document)
    assert set(document[_key(client)]) == {"other", "compozy"}
    assert document[_key(client)]["compozy"]["args"] == ["proxy"]
    if client == "codex":
        assert document["model"] == "o3"
        assert path.read_text().count("[mcp_servers.compozy]") == 1
    else:
        assert document["inputs"] == []
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # replaced whole, its mode kept


def test_a_new_user_file_is_readable_by_its_owner_only(home: Home, tmp_path: Path) -> None:
    assert compozy(home, "install", "cursor").returncode == 0
    assert stat.S_IMODE((tmp_path / WHERE["cursor", "user"]).stat().st_mode) == 0o600


# --- Codex's config.toml, however compozy was written there before ------------------------

TOML_CASES = {
    "inline-table": (
        "# my settings\n"
        'model = "o3" # the model\n'
        "\n"
        "[mcp_servers]\n"
        'compozy = { command = "old", args = ["x"], startup_timeout_sec = 20 } # mine\n'
        'other = { command = "other" }\n'
    ),
    "dotted-keys": (
        'model = "o3"\n'
        'mcp_servers.compozy.command = "old"\n'
        "mcp_servers.compozy.startup_timeout_sec = 20\n"
        "\n"
        "[profiles.fast]\n"
        'model = "o4-mini" # fast\n'
    ),
    "table-with-env": (
        "# my settings\n"
        'model = "o3"\n'
        "\n"
        "[mcp_servers.compozy]\n"
        'command = "old"\n'
        "startup_timeout_sec = 20\n"
        "\n"
        "[mcp_servers.compozy.env]\n"
        'OLD = "1"\n'
        "\n"
        "[mcp_servers.other] # keep me\n"
        'command = "other"\n'
    ),
}


@pytest.mark.parametrize("case", list(TOML_CASES))
def test_codex_config_is_edited_in_place_keeping_comments_and_the_users_keys(
    home: Home, tmp_path: Path, case: str
) -> None:
    path = tmp_path / WHERE["codex", "user"]
    path.parent.mkdir(parents=True)
    before = TOML_CASES[case]
    path.write_text(before)
    done = compozy(home, "install", "codex")
    assert done.returncode == 0, done.stderr
    after = path.read_text()
    document = tomllib.loads(after)  # one compozy: no duplicate key (Codex refuses one)
    server = document["mcp_servers"]["compozy"]
    assert Path(server["command"]).name == "compozy"
    assert server["args"] == ["proxy"]
    assert server["env"] == {"COMPOZY_HOME": home.env["COMPOZY_HOME"]}
    assert server["startup_timeout_sec"] == 20  # the user's own key of the entry stays
    assert document["model"] == "o3"
    for line in before.splitlines():  # comments and the other entries' lines stay as written
        if ("#" in line or "other" in line or "profiles" in line) and "compozy" not in line:
            assert line in after, (line, after)


@pytest.mark.parametrize(
    ("client", "broken", "where"),
    [
        ("codex", 'model = "o3\n', "line 1, column 12"),
        ("codex", '[mcp_servers]\ncompozy = { command = "a" }\ncompozy = 1\n', "line 3, column 1"),
        ("cursor", '{"mcpServers": {\n  "a": 1,\n}\n', "line 3, column 1"),
    ],
)
def test_a_file_that_does_not_parse_is_refused_with_where_and_left_alone(
    home: Home, tmp_path: Path, client: str, broken: str, where: str
) -> None:
    path = tmp_path / WHERE[client, "user"]
    path.parent.mkdir(parents=True)
    path.write_text(broken)
    done = compozy(home, "install", client)
    assert done.returncode == EXIT_SETUP
    assert f"cannot update {path}" in done.stderr
    assert where in done.stderr, done.stderr
    assert "nothing was written" in done.stderr
    assert path.read_text() == broken


def test_session_with_http_is_refused_with_what_to_do(home: Home) -> None:
    done = compozy(home, "install", "cursor", "--http", URL, "--session", "sess-1")
    assert done.returncode == EXIT_USAGE
    assert "compozy proxy --http HOST:PORT --session ID" in done.stderr


# --- the client's own command, when it is installed -----------------------------------------

FAKE_CLI = """#!{python}
# records its arguments, one JSON line per run; exits as the test says
import json, os, sys
with open(os.environ["FAKE_CLI_LOG"], "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd()}}) + "\\n")
sys.exit(int(os.environ.get("FAKE_CLI_EXIT_" + sys.argv[2].replace("-", "_"), "0")))
"""


def _fake_clis(home: Home, tmp_path: Path, **exits: str) -> tuple[Home, Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(FAKE_CLI.format(python=sys.executable))
        script.chmod(0o755)
    log = tmp_path / "cli.log"
    extra = {f"FAKE_CLI_EXIT_{verb}": code for verb, code in exits.items()}
    return home.with_env(FAKE_CLI_LOG=str(log), **extra), log


def _runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.process
@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_code_is_configured_by_claude_mcp_add_json(
    home: Home, tmp_path: Path, scope: str
) -> None:
    faked, log = _fake_clis(home, tmp_path, remove="1")  # nothing to remove: a failure
    done = compozy(faked, "install", "claude-code", "--scope", scope)
    assert done.returncode == 0, done.stderr
    remove, add = _runs(log)
    assert remove["argv"] == ["mcp", "remove", "--scope", scope, "compozy"]
    assert add["argv"][:5] == ["mcp", "add-json", "--scope", scope, "compozy"]
    added = json.loads(add["argv"][5])
    assert added["type"] == "stdio"
    assert added["args"] == ["proxy"]
    assert add["cwd"] == home.env["COMPOZY_WORKSPACE"]  # its project scope is the cwd's
    assert (added["command"] == "compozy") is (scope == "project")
    assert done.stdout.startswith("claude wrote ")
    assert not (tmp_path / WHERE["claude-code", scope]).exists()  # claude wrote it, not us


@pytest.mark.process
def test_codex_is_configured_by_codex_mcp_add(home: Home, tmp_path: Path) -> None:
    faked, log = _fake_clis(home, tmp_path)
    assert compozy(faked, "install", "codex").returncode == 0
    [run] = _runs(log)
    argv = run["argv"]
    assert argv[:5] == [
        "mcp",
        "add",
        "compozy",
        "--env",
        f"COMPOZY_HOME={home.env['COMPOZY_HOME']}",
    ]
    assert argv[5] == "--"
    assert Path(argv[6]).name == "compozy"
    assert argv[7:] == ["proxy"]
    assert compozy(faked, "install", "codex", "--http", URL).returncode == 0
    assert _runs(log)[-1]["argv"] == ["mcp", "add", "compozy", "--url", URL]
    # Codex's command writes only your own file: a project's is edited here
    assert compozy(faked, "install", "codex", "--scope", "project").returncode == 0
    assert len(_runs(log)) == 2
    assert (tmp_path / WHERE["codex", "project"]).exists()


@pytest.mark.process
def test_a_broken_file_is_refused_before_the_clients_command_runs(
    home: Home, tmp_path: Path
) -> None:
    faked, log = _fake_clis(home, tmp_path)
    path = tmp_path / WHERE["codex", "user"]
    path.parent.mkdir(parents=True)
    path.write_text("[mcp_servers\n")
    done = compozy(faked, "install", "codex")
    assert done.returncode == EXIT_SETUP
    assert "line 1, column" in done.stderr
    assert _runs(log) == []


@pytest.mark.process
def test_a_failing_client_command_is_reported_with_what_to_do(home: Home, tmp_path: Path) -> None:
    faked, _ = _fake_clis(home, tmp_path, add_json="1")
    done = compozy(faked, "install", "claude-code")
    assert done.returncode == EXIT_SETUP
    assert "claude mcp add-json failed (exit 1)" in done.stderr
    assert "--no-client-cli" in done.stderr
    edited = compozy(faked, "install", "claude-code", "--no-client-cli")
    assert edited.returncode == 0, edited.stderr
    assert (tmp_path / WHERE["claude-code", "user"]).exists()
    assert os.environ.get("FAKE_CLI_LOG") is None  # the test's own environment is untouched
