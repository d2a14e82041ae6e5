"""Issue 17, item 4: ``compozy install CLIENT`` writes (or prints) each client's configuration
in that client's own documented format (docs/clients/*.md cite each client's documentation).

The schemas below are the clients' documented shapes, written from their documentation:
Claude Code's project ``.mcp.json`` and Claude Desktop's ``claude_desktop_config.json``
(``mcpServers``), Cursor's ``mcp.json`` (``mcpServers``; a remote server is ``{"url"}``), VS
Code's ``.vscode/mcp.json`` (``servers``, with ``type``), Codex's ``config.toml``
(``[mcp_servers.NAME]``)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.api.support import Home, compozy

from compozy_mcp.cli.reporting import EXIT_SETUP

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


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = Home.make(tmp_path)
    user = tmp_path / "user"
    user.mkdir()
    return made.with_env(HOME=str(user))


def _parse(client: str, text: str) -> dict[str, Any]:
    parsed: dict[str, Any] = tomllib.loads(text) if client == "codex" else json.loads(text)
    return parsed


@pytest.mark.parametrize("client", list(DOCUMENTED))
def test_print_gives_the_clients_documented_stdio_format(home: Home, client: str) -> None:
    done = compozy(home, "install", client, "--print", "--session", "sess-1")
    assert done.returncode == 0, done.stderr
    document = _parse(client, done.stdout)
    Draft202012Validator(DOCUMENTED[client][0]).validate(document)
    key = "servers" if client == "vscode" else "mcp_servers" if client == "codex" else "mcpServers"
    server = document[key]["compozy"]
    assert Path(server["command"]).is_absolute()
    assert Path(server["command"]).name == "compozy"
    assert server["args"] == ["proxy", "--session", "sess-1"]
    assert server["env"] == {"COMPOZY_HOME": home.env["COMPOZY_HOME"]}
    assert not list(Path(home.env["HOME"]).rglob("*"))  # --print writes nothing
    assert not (Path(home.env["COMPOZY_WORKSPACE"]) / ".mcp.json").exists()


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


@pytest.mark.parametrize(
    ("client", "where"),
    [
        ("claude-code", "workspace/.mcp.json"),
        ("cursor", "workspace/.cursor/mcp.json"),
        ("vscode", "workspace/.vscode/mcp.json"),
        ("codex", "user/.codex/config.toml"),
        ("claude-desktop", "user/.config/Claude/claude_desktop_config.json"),
    ],
)
def test_install_writes_the_clients_file_and_keeps_what_else_it_holds(
    home: Home, tmp_path: Path, client: str, where: str
) -> None:
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        path.write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n')
    else:
        key = "servers" if client == "vscode" else "mcpServers"
        path.write_text(json.dumps({"inputs": [], key: {"other": {"command": "other"}}}))
    for _ in range(2):  # twice: the second run replaces its own entry, nothing else
        done = compozy(home, "install", client)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"wrote {path}")
    document = _parse(client, path.read_text())
    Draft202012Validator(DOCUMENTED[client][0]).validate(document)
    key = "servers" if client == "vscode" else "mcp_servers" if client == "codex" else "mcpServers"
    assert set(document[key]) == {"other", "compozy"}
    assert document[key]["compozy"]["args"] == ["proxy"]
    if client == "codex":
        assert document["model"] == "o3"
        assert path.read_text().count("[mcp_servers.compozy]") == 1
    else:
        assert document["inputs"] == []


def test_a_file_that_is_not_json_is_left_alone(home: Home, tmp_path: Path) -> None:
    path = tmp_path / "workspace" / ".mcp.json"
    path.write_text("{not json")
    done = compozy(home, "install", "claude-code")
    assert done.returncode == EXIT_SETUP
    assert f"cannot update {path}" in done.stderr
    assert path.read_text() == "{not json"


def test_session_with_http_is_refused_with_what_to_do(home: Home) -> None:
    done = compozy(home, "install", "cursor", "--http", URL, "--session", "sess-1")
    assert done.returncode == EXIT_SETUP
    assert "compozy proxy --http HOST:PORT --session ID" in done.stderr
