"""Issue 17, items 1 and 3, through the CLI as a user types it (in this process: the same
parser, commands and output as the console script; ``test_operator_processes`` runs the
executable on a terminal and in pipes)."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import pytest
import yaml
from starlette.requests import Request
from tests.api.support import Home, compozy

from compozy_mcp.api.responses import wants_diagnostic
from compozy_mcp.cli._examples import EXAMPLES
from compozy_mcp.cli._output import Column, Style, style_of, table
from compozy_mcp.cli._parsing import is_leaf, subparsers
from compozy_mcp.cli._reporting import EXIT_CONFLICT, EXIT_USAGE
from compozy_mcp.cli.main import build_parser
from compozy_mcp.hostapi.wire import DIAGNOSTIC_HEADER

MISSING = ("tool", "invoke", "compozy__session_status", "--input", "{}")


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home.make(tmp_path)
    assert (
        compozy(home, "session", "create", "--agent", "general", "--id", "sess-one").returncode == 0
    )
    return home


# --- item 1 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        ("-v", *MISSING),
        (*MISSING, "-v"),
        ("tool", "-v", "invoke", "compozy__session_status", "--input", "{}"),
        (*MISSING, "--verbose"),
    ],
    ids=["before", "after", "between", "long-after"],
)
def test_verbose_is_accepted_anywhere_and_names_the_missing_field(
    home: Home, line: tuple[str, ...]
) -> None:
    done = compozy(home, *line)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.splitlines() == [
        "error: invalid tool request (tool_invalid_input: schema_invalid)",
        'diagnostic: tool "compozy__session_status" input "session_id" is required',
    ]


def test_without_verbose_the_message_stays_redacted(home: Home) -> None:
    done = compozy(home, *MISSING)
    assert done.stderr.splitlines() == [
        "error: invalid tool request (tool_invalid_input: schema_invalid)"
    ]


def test_home_after_the_subcommand_is_the_home_used(home: Home, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    done = compozy(home, "session", "list", "-o", "json", "--home", str(other))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions"] == []
    assert (other / "compozy.db").exists()


def test_url_and_socket_together_are_a_usage_error(home: Home) -> None:
    done = compozy(home, "session", "list", "--url", "http://127.0.0.1:1", "--socket", "/x")
    assert done.returncode == EXIT_USAGE
    assert "--socket: not allowed with argument --url" in done.stderr


@pytest.mark.parametrize(
    ("line", "meant"),
    [
        (("sesion", "list"), '"session"'),
        (("tool", "lst"), '"list"'),
        (("session", "list", "--state", "actve"), '"active"'),
    ],
)
def test_a_mistyped_subcommand_or_choice_says_what_was_meant(
    home: Home, line: tuple[str, ...], meant: str
) -> None:
    done = compozy(home, *line)
    assert done.returncode == EXIT_USAGE
    assert f"did you mean {meant}?" in done.stderr


def test_an_unknown_tool_is_one_error_on_invoke_and_info_with_a_suggestion(home: Home) -> None:
    invoked = compozy(home, "tool", "invoke", "compozy__sesion_status")
    info = compozy(home, "tool", "info", "compozy__sesion_status")
    assert (invoked.returncode, invoked.stderr) == (info.returncode, info.stderr)
    assert invoked.stderr.splitlines()[0] == (
        'error: tool "compozy__sesion_status" is not registered (tool_not_found: tool_unknown)'
    )
    assert 'hint: did you mean "compozy__session_status"' in invoked.stderr


def test_an_unknown_session_suggests_the_close_id(home: Home) -> None:
    done = compozy(home, "session", "status", "sess-onee")
    assert done.returncode == 3
    assert done.stderr.splitlines()[-1] == 'hint: did you mean "sess-one"?'


def test_nothing_close_gives_no_hint(home: Home) -> None:
    done = compozy(home, "session", "status", "zzzzzzzzzzzz")
    assert "hint" not in done.stderr


def _request(client: tuple[str, int] | None, header: str | None = "1") -> Request:
    headers = [(DIAGNOSTIC_HEADER.lower().encode(), header.encode())] if header else []
    scope = {"type": "http", "method": "GET", "path": "/", "headers": headers, "client": client}
    return Request(scope)


@pytest.mark.parametrize(
    ("client", "header", "given"),
    [
        (None, "1", True),  # the Unix socket: no peer address
        (("127.0.0.1", 5000), "1", True),
        (("::1", 5000), "1", True),
        (("10.1.2.3", 5000), "1", False),  # a remote client never, token or not
        (("127.0.0.1", 5000), None, False),  # not asked for
    ],
    ids=["socket", "loopback", "loopback-v6", "remote", "not-asked"],
)
def test_the_daemon_gives_the_diagnostic_only_locally_and_when_asked(
    client: tuple[str, int] | None, header: str | None, given: bool
) -> None:
    assert wants_diagnostic(_request(client, header)) is given


# --- item 3: tables, colour, -o ---------------------------------------------------------------


def test_tables_have_headers_and_fit_the_width_without_cutting_ids(home: Home) -> None:
    wide = home.with_env(COLUMNS="200")
    narrow = home.with_env(COLUMNS="90")
    long_agent = "an-agent-whose-name-is-far-too-long-for-one-column"
    assert compozy(home, "session", "create", "--agent", long_agent).returncode == 0
    for env, limit in ((narrow, 90), (wide, 200)):
        lines = compozy(env, "session", "list").stdout.splitlines()
        assert lines[0].split()[:5] == ["ID", "STATE", "BADGE", "AGENT", "UPDATED"]
        assert all(len(line) <= limit for line in lines)
        assert any(line.startswith("sess-one ") for line in lines)
    assert long_agent in compozy(wide, "session", "list").stdout
    assert long_agent not in compozy(narrow, "session", "list").stdout
    described = compozy(home.with_env(COLUMNS="1000"), "tool", "list").stdout
    assert "…" not in described  # a wide terminal shows whole descriptions (no 72-char cut)


def test_workspace_and_profile_lists_have_headers(home: Home) -> None:
    assert compozy(home, "workspace", "list").stdout.split()[:3] == ["ID", "NAME", "PATH"]
    header = compozy(home, "profile", "list").stdout.splitlines()[0]
    assert header.split() == ["ID", "NAME", "COLOR", "ICON"]


def test_colour_only_when_asked_or_on_a_terminal() -> None:
    rows = [{"state": "active"}]
    columns = [Column.key("STATE", "state", colour=lambda _: "green")]
    assert "\x1b[" not in table(columns, rows, Style(color=False))
    assert "\x1b[32mactive" in table(columns, rows, Style(color=True))

    class Tty:
        def isatty(self) -> bool:
            return True

    tty = Tty()
    assert style_of({}, tty).color is True  # type: ignore[arg-type]
    assert style_of({"NO_COLOR": "1"}, tty).color is False  # type: ignore[arg-type]
    assert style_of({"TERM": "dumb"}, tty).color is False  # type: ignore[arg-type]
    assert style_of({}, tty, "never").color is False  # type: ignore[arg-type]
    assert style_of({}, None).color is False  # a pipe (this test's stdout)


@pytest.mark.parametrize(
    "line",
    [
        ("session", "list"),
        ("session", "status", "sess-one"),
        ("tool", "list"),
        ("tool", "info", "compozy__session_status"),
        ("workspace", "list"),
        ("profile", "list"),
        ("tool", "invoke", "compozy__session_status", "--input", '{"session_id":"sess-one"}'),
    ],
)
def test_o_yaml_is_the_same_document_as_o_json(home: Home, line: tuple[str, ...]) -> None:
    as_json = json.loads(compozy(home, *line, "-o", "json").stdout)
    as_yaml = yaml.safe_load(compozy(home, *line, "-o", "yaml").stdout)
    if (line[0] == "session" and line[1] == "list") or line[:2] == ("tool", "invoke"):
        # timestamps and per-call fields are the same documents read twice; compare shapes
        assert set(as_yaml) == set(as_json)
    else:
        assert as_yaml == as_json


def test_o_yaml_errors_are_the_json_error_document(home: Home) -> None:
    as_json = compozy(home, "session", "status", "nope", "-o", "json")
    as_yaml = compozy(home, "session", "status", "nope", "-o", "yaml")
    assert as_yaml.returncode == as_json.returncode == 3
    assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)


def test_the_next_page_command_keeps_every_filter_and_the_limit(home: Home) -> None:
    for _ in range(2):
        assert compozy(home, "session", "create", "--agent", "general").returncode == 0
    out = compozy(home, "session", "list", "--limit", "1", "--agent", "general").stdout
    more = out.splitlines()[-1]
    assert more.startswith("more: compozy session list --agent general --limit 1 --cursor ")
    words = shlex.split(more.removeprefix("more: "))[1:]
    assert compozy(home, *words).returncode == 0


def test_duplicate_workspace_paths_and_profile_names_are_refused(
    home: Home, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert compozy(home, "workspace", "add", str(project)).returncode == 0
    again = compozy(home, "workspace", "add", str(project / "."), "--name", "other")
    assert again.returncode == EXIT_CONFLICT
    assert f"{project} is already registered as workspace" in again.stderr
    assert "(conflict: workspace_exists)" in again.stderr
    assert compozy(home, "profile", "add", "work").returncode == 0
    twice = compozy(home, "profile", "add", "work", "-o", "json")
    assert twice.returncode == EXIT_CONFLICT
    assert json.loads(twice.stdout)["error"]["reason"] == "profile_exists"
    listed = json.loads(compozy(home, "profile", "list", "-o", "json").stdout)["profiles"]
    assert [p["name"] for p in listed].count("work") == 1


def test_all_reads_a_truncated_result_back_whole_over_several_pages(home: Home) -> None:
    from compozy_mcp.artifacts import MAX_PAGE_BYTES

    name = "n" * 200
    for _ in range(48):  # together over one artifact page (64 KiB)
        assert (
            compozy(home, "session", "create", "--agent", "general", "--name", name).returncode == 0
        )
    small = home.with_env(COMPOZY_MAX_RESULT_BYTES="1024")
    line = (
        "tool",
        "invoke",
        "compozy__session_list",
        "--input",
        '{"result_view":"full","limit":200}',
    )
    expected = json.loads(compozy(home, *line, "-o", "json").stdout)["result"]["structured"]
    assert len(json.dumps(expected)) > MAX_PAGE_BYTES
    cut = compozy(small, *line, "-o", "json")
    assert cut.returncode == 0
    assert json.loads(cut.stdout)["result"]["truncated"] is True
    assert "add --all to read it whole" in cut.stderr
    whole = compozy(small, *line, "--all", "-o", "json")
    assert whole.returncode == 0, whole.stderr
    result = json.loads(whole.stdout)["result"]
    assert "truncated" not in result
    assert result["structured"] == expected
    assert "add --all" not in whole.stderr
    same = compozy(small, *line[:-2], "--follow-artifacts", "--input", line[-1])
    assert same.returncode == 0
    assert same.stdout.startswith("the whole result (")


# --- item 3: --help on every command ----------------------------------------------------------


def _commands() -> list[tuple[str, argparse.ArgumentParser]]:
    return list(subparsers(build_parser()))


def test_every_command_has_examples_that_parse() -> None:
    parser = build_parser()
    for path, command in _commands():
        assert (command.epilog or "").startswith("examples:"), path
        assert path in EXAMPLES, path
        for example in EXAMPLES[path]:
            words = shlex.split(example.split(" && ")[-1].split(" | ")[-1].split(" > ")[0])
            assert words[0] == "compozy", example
            if is_leaf(command):
                parser.parse_args(words[1:])  # raises SystemExit if the example is wrong


def test_every_argument_of_every_command_has_help() -> None:
    for path, command in _commands():
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name in action.choices:
                    helped = [a for a in action._choices_actions if a.dest == name]
                    assert [a.help for a in helped if a.help], f"{path} {name}"
                continue
            assert action.help, f"{path}: {action.option_strings or action.dest} has no help"


def test_help_shows_the_examples(home: Home) -> None:
    done = compozy(home, "tool", "invoke", "--help")
    assert done.returncode == 0
    assert "examples:\n  compozy tool invoke compozy__session_list" in done.stdout
