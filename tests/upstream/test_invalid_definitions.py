"""Issue 22: one reserved server name in ``mcp.yaml`` kept the daemon from starting, and tool names
clients cannot take were passed on. A definition that is not one is skipped with a warning
naming it, a tool whose name breaks ``^[a-zA-Z0-9_-]{1,128}$`` is withheld with one; the
others are served."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from tests.api.support import Home, running_daemon, short_dir
from tests.upstream.support import extension, raw_call, serving

from compozy_mcp.assembly import App
from compozy_mcp.errors import ConfigError
from compozy_mcp.upstream.config import user_file
from compozy_mcp.upstream.defined import defined

RESERVED = """servers:
  compozy:
    command: cat
  kept:
    command: cat
"""


def test_a_reserved_server_name_is_skipped_with_a_warning_and_the_others_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "mcp.yaml").write_text(RESERVED)
    with caplog.at_level(logging.WARNING, logger="compozy_mcp.upstream.config"):
        found = defined(tmp_path, None)
    assert "kept" in found
    assert "compozy" not in found
    assert [r.getMessage() for r in caplog.records] == [
        "skipped an MCP server: $COMPOZY_HOME/mcp.yaml: the server name 'compozy' is "
        "reserved for compozy's own tools"
    ]


def test_adding_to_a_file_with_a_reserved_name_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "mcp.yaml").write_text(RESERVED)
    with pytest.raises(ConfigError, match="reserved"):
        user_file(tmp_path).servers()


@pytest.mark.process
def test_the_daemon_starts_with_a_reserved_server_name_in_mcp_yaml(tmp_path: Path) -> None:
    home = Home.make(tmp_path)
    home.path.mkdir(mode=0o700, exist_ok=True)
    (home.path / "mcp.yaml").write_text("servers:\n  compozy:\n    command: cat\n")
    with (
        short_dir() as where,
        running_daemon(home, "--no-tcp", "--uds", str(where / "d.sock"), listeners=1) as d,
    ):
        assert d.process.poll() is None
        assert any("the server name 'compozy' is reserved" in line for line in d.stderr_lines)


@pytest.mark.anyio
async def test_upstream_tool_names_clients_cannot_take_are_withheld_with_a_logged_reason(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """``../../x`` and a 310-character name broke ``^[a-zA-Z0-9_-]{1,128}$`` and were passed on
    (many clients reject the whole list then): they are withheld, the good name is served."""
    definition = extension("misnamed", "tests.upstream.servers.misnamed:build")
    with caplog.at_level(logging.WARNING, logger="compozy_mcp.upstream.supervisor"):
        async with serving(app, [definition]) as proxy, Client(proxy.server) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            with pytest.raises(MCPError, match=r"Unknown tool: misnamed__\.\./\.\./x"):
                await raw_call(client, "misnamed__../../x")
    upstream = [name for name in listed if name.startswith("misnamed__")]
    assert upstream == ["misnamed__fine"]
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,128}", name) for name in listed)
    warnings = [r.getMessage() for r in caplog.records]
    assert (
        "MCP server \"misnamed\": a tool is not served: its name 'misnamed__../../x' has "
        "characters other than a-z A-Z 0-9 _ -"
    ) in warnings
    long_name = "misnamed__" + "a" * 310
    assert (
        f'MCP server "misnamed": a tool is not served: its name {long_name[:60]!r}… has 320 '
        "characters (at most 128)"
    ) in warnings
