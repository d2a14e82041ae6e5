"""Issue 22: one reserved server name in ``mcp.yaml`` kept the daemon from starting. A definition
that is not one is skipped with a warning naming it; the others are served."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from tests.api.support import Home, running_daemon, short_dir

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
