"""Issue 13, "How it is shown": the spec's payload and patch examples reproduced literally
through the MCP proxy on a daemon, with command hooks written in shell (and the migration
recipe of ``docs/hooks.md``, copied from the page); the CLI against the daemon."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.api.support import Home as DaemonHome
from tests.api.support import running_daemon, short_dir
from tests.hooks.support import SPEC_POST_CALL, as_in_the_spec, write_hooks
from tests.proxy.support import (
    COMPOZY,
    Home,
    create_session,
    make_home,
    record,
    spawned,
    tool_error,
)

pytestmark = [pytest.mark.process, pytest.mark.anyio]

STATUS = "compozy__session_status"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"
#: the spec's tool.pre_call patch, as the spec prints it
SPEC_PATCH = '{ "tool_input": { "session_id": "sess-example", "result_view": "full" } }'
SINGLE_RESULT = (
    'tool "compozy__skill_view" returns a single result and does not accept "result_view"'
)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path / "d")


@pytest.fixture
def sockets() -> Iterator[Path]:
    with short_dir() as where:
        yield where


def _data(home: Home) -> Path:
    return Path(home.env["COMPOZY_HOME"])


async def _cli(home: Home, socket: Path, *args: str) -> str:
    """``compozy --socket SOCKET hooks ARGS``, a process of its own; its stdout."""
    done = await anyio.run_process(
        [str(COMPOZY), "--socket", str(socket), "hooks", *args], env=home.env, check=False
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout.decode()


def _daemon(home: Home, sockets: Path) -> Any:
    """``compozy serve`` on a socket only."""
    socket = str(sockets / "d.sock")
    return running_daemon(
        DaemonHome(_data(home), home.env), "--no-tcp", "--uds", socket, listeners=1
    )


def _relay(home: Home, socket: Path) -> Any:
    params = StdioServerParameters(
        command=str(COMPOZY), args=["--socket", str(socket), "proxy"], env=home.env
    )
    return spawned(home, params, "auto", "relay")


def _block(language: str, after: str) -> str:
    """The first ``language`` code block of docs/hooks.md after the heading ``after``."""
    text = DOCS.read_text()
    section = text[text.index(after) :]
    found = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


async def test_the_spec_payload_and_patch_examples_through_the_mcp_proxy_on_a_daemon(
    home: Home, sockets: Path
) -> None:
    write_hooks(
        _data(home) / "hooks.yaml",
        {
            "id": "observe",
            "event": "tool.post_call",
            "matcher": {"tool": STATUS},
            "command": "cat > post_call.json",  # runs in $COMPOZY_HOME
        },
    )
    with _daemon(home, sockets) as daemon:
        assert daemon.socket is not None
        async with _relay(home, daemon.socket) as client:
            await create_session(client, session_id="sess-example")

            # the payload: the spec's example, literally
            compact = record(await client.call_tool(STATUS, {"session_id": "sess-example"}))
            assert "supervision" not in compact["session"]
            observed = json.loads((_data(home) / "post_call.json").read_text())
            assert as_in_the_spec(observed) == SPEC_POST_CALL
            assert list(observed)[: len(SPEC_POST_CALL)] == list(SPEC_POST_CALL)

            # the patch: the spec's, printed by a shell hook made through the CLI
            await _cli(
                home,
                daemon.socket,
                "create",
                "--id",
                "full-status",
                "--event",
                "tool.pre_call",
                "--tool",
                STATUS,
                "--command",
                f"printf '%s' '{SPEC_PATCH}'",
            )
            full = record(await client.call_tool(STATUS, {"session_id": "sess-example"}))
            # consequence 1: the calling agent receives the full record too
            assert {"supervision", "available_commands"} <= set(full["session"])
            observed = json.loads((_data(home) / "post_call.json").read_text())
            assert observed["result_view"] == "full"
            assert observed["tool_input"] == json.loads(SPEC_PATCH)["tool_input"]

            # consequence 2: a hook asking a single-result tool for a view fails the call
            await _cli(
                home,
                daemon.socket,
                "create",
                "--id",
                "careless",
                "--event",
                "tool.pre_call",
                "--tool",
                "compozy__skill_view",
                "--command",
                'printf \'%s\' \'{"tool_input": {"name": "x", "result_view": "full"}}\'',
            )
            error = tool_error(await client.call_tool("compozy__skill_view", {"name": "x"}))
            assert (error["code"], error["reason"], error["message"]) == (
                "tool_invalid_input",
                "schema_invalid",
                SINGLE_RESULT,
            )

        listed = (await _cli(home, daemon.socket, "list")).splitlines()
        rows = {line.split()[0]: line.split() for line in listed[1:]}
        assert rows["observe"][1:] == ["tool.post_call", "home", "yes", "allow", "2", "0", "ok"]
        assert rows["full-status"][5:] == ["1", "0", "ok"]
        assert rows["careless"][5:] == ["1", "1", "patch_refused"]
        runs = json.loads(await _cli(home, daemon.socket, "runs", "--full", "-o", "json"))
        refused = next(r for r in runs["runs"] if r["hook_id"] == "careless")
        assert (refused["outcome"], refused["decision"], refused["detail"]) == (
            "patch_refused",
            "deny",
            SINGLE_RESULT,
        )


async def test_the_docs_migration_recipe_works_as_copied(home: Home, sockets: Path) -> None:
    (_data(home) / "hooks").mkdir(parents=True)
    (_data(home) / "hooks" / "full-record.py").write_text(_block("python", "## Migration recipe"))
    (_data(home) / "hooks.yaml").write_text(_block("yaml", "## Migration recipe"))
    with _daemon(home, sockets) as daemon:
        assert daemon.socket is not None
        async with _relay(home, daemon.socket) as client:
            await create_session(client, session_id="sess-example")
            status = record(await client.call_tool(STATUS, {"session_id": "sess-example"}))
            assert "supervision" in status["session"]
            # a tool the matcher leaves out keeps its compact default
            listed = record(await client.call_tool("compozy__tool_list", {"limit": 1}))
            assert "input_schema" not in listed["tools"][0]
        tested = json.loads(
            await _cli(home, daemon.socket, "test", "full-record", "--tool", STATUS, "-o", "json")
        )
        assert (tested["outcome"], tested["decision"], tested["result_view"]) == (
            "ok",
            "allow",
            "full",
        )
        pinned = {
            "event": "tool.pre_call",
            "tool_id": STATUS,
            "tool_call_id": "call-1",
            "has_result_views": True,
            "pinned_result_view": "compact",
            "tool_input": {"session_id": "sess-example"},
        }
        payload = home.root / "pinned.json"
        payload.write_text(json.dumps(pinned))
        skipped = json.loads(
            await _cli(
                home, daemon.socket, "test", "full-record", "--payload", str(payload), "-o", "json"
            )
        )
        assert (skipped["outcome"], skipped["decision"]) == ("ok", "allow")
        assert "patch" not in skipped


async def test_a_client_on_the_daemons_mcp_endpoint_gets_the_title_a_hook_gives(
    home: Home, sockets: Path
) -> None:
    write_hooks(
        _data(home) / "hooks.yaml",
        {
            "id": "titled",
            "event": "tool.post_call",
            "command": """printf '%s' '{"title": "Checked"}'""",
        },
    )
    served = running_daemon(
        DaemonHome(_data(home), home.env), "--port", "0", "--no-uds", listeners=1
    )
    with served as daemon:
        async with Client(f"{daemon.url}/mcp", mode="auto", cache=None) as client:
            result = await client.call_tool("compozy__tool_info", {"tool_id": STATUS})
            assert result.meta is not None
            assert result.meta["compozy.dev/title"] == "Checked"
