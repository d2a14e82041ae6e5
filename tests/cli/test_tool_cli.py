"""``compozy tool ...`` as a user types it, in this process, on a scratch ``COMPOZY_HOME``.

The spec's CLI examples run the installed executable through ``bash -c`` exactly as the spec
writes them (with
``pipefail``, so that a failing ``compozy`` cannot hide behind ``jq``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import run_cli

from compozy_mcp.native import build_registry

COMPOZY = Path(sys.executable).parent / "compozy"
JQ = shutil.which("jq")
needs_jq = pytest.mark.skipif(JQ is None, reason="the spec's examples pipe into jq")

EXAMPLE_SESSION = "sess-example"
CREATE_EXAMPLE = '{"session_id":"sess-example","agent_name":"general"}'
STATUS_INPUT = '{"session_id":"sess-example"}'

# The spec, section "CLI", verbatim.
SPEC_COMPACT = """compozy tool invoke compozy__session_status \\
  --input '{"session_id":"sess-example"}' -o json | jq '.result.structured'"""
SPEC_FULL = """compozy tool invoke compozy__session_status \\
  --input '{"session_id":"sess-example","result_view":"full"}' -o json | jq '.result.structured'"""
SPEC_VIEWS = (
    "compozy tool info compozy__session_status -o json | jq '.tool.descriptor.output_views | keys'"
)

# The spec, section "Errors": dispatch messages.
UNKNOWN_VIEW = 'tool "compozy__session_status" input "result_view" must be one of "compact", "full"'
SINGLE_RESULT = (
    'tool "compozy__skill_view" returns a single result and does not accept "result_view"'
)
REDACTED_INPUT = "invalid tool request"
REDACTED_DENIAL = "tool invocation denied"

EXIT_USAGE, EXIT_NOT_FOUND, EXIT_DENIED, EXIT_CONFLICT = 2, 3, 4, 5


@dataclass(frozen=True, slots=True)
class Home:
    """A scratch data directory and the environment every command runs in."""

    path: Path
    env: dict[str, str]


def _home(root: Path) -> Home:
    (root / "workspace").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOZY_")}
    env["COMPOZY_HOME"] = str(root / "home")
    env["COMPOZY_WORKSPACE"] = str(root / "workspace")
    env["PATH"] = os.pathsep.join([str(COMPOZY.parent), env.get("PATH", "")])
    return Home(root / "home", env)


def compozy(home: Home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=home.env, stdin=stdin)


def shell(home: Home, command: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def invoke(
    home: Home, tool_id: str, tool_input: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return compozy(home, "tool", "invoke", tool_id, "--input", tool_input, *extra)


def ok_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def error_json(done: subprocess.CompletedProcess[str], exit_code: int) -> dict[str, Any]:
    """The one ``{"error": {...}}`` document a failing ``-o json`` command prints."""
    assert done.returncode == exit_code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr
    parsed = json.loads(done.stdout)
    assert list(parsed) == ["error"]
    error: dict[str, Any] = parsed["error"]
    return error


def subset_problems(part: Any, whole: Any, path: str = "$") -> list[str]:
    """Paths where ``part`` is not contained in ``whole`` at the same place with the same value.

    Objects may gain keys in ``whole``; lists must match element for element.
    """
    if isinstance(part, dict):
        if not isinstance(whole, dict):
            return [path]
        problems: list[str] = []
        for key, value in part.items():
            if key not in whole:
                problems.append(f"{path}.{key}")
            else:
                problems.extend(subset_problems(value, whole[key], f"{path}.{key}"))
        return problems
    if isinstance(part, list):
        if not isinstance(whole, list) or len(part) != len(whole):
            return [path]
        return [
            p
            for i, (a, b) in enumerate(zip(part, whole, strict=True))
            for p in subset_problems(a, b, f"{path}[{i}]")
        ]
    return [] if type(part) is type(whole) and part == whole else [path]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Home:
    """One data directory with ``sess-example``, for the tests that only read."""
    home = _home(tmp_path_factory.mktemp("cli"))
    ok_json(invoke(home, "compozy__session_create", CREATE_EXAMPLE, "-o", "json"))
    return home


@pytest.fixture
def fresh(tmp_path: Path) -> Home:
    """A data directory of its own, for tests that change sessions."""
    return _home(tmp_path)


@pytest.fixture(scope="module")
def spec_views(shared: Home) -> tuple[dict[str, Any], dict[str, Any]]:
    """The outputs of the spec's first two CLI examples: (compact, full)."""
    if JQ is None:
        pytest.skip("the spec's examples pipe into jq")
    compact = json.loads(shell(shared, SPEC_COMPACT).stdout)
    full = json.loads(shell(shared, SPEC_FULL).stdout)
    return compact, full


# --- the spec's CLI examples ------------------------------------------------------------------


@pytest.mark.process
@needs_jq
def test_spec_cli_example_compact_view_is_the_default(
    spec_views: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    compact, _ = spec_views
    assert list(compact) == ["session"]
    session = compact["session"]
    assert session["id"] == EXAMPLE_SESSION
    assert session["agent_name"] == "general"
    assert session["state"] == "active"
    assert "permission_policy" not in session["lineage"]
    assert "supervision" not in session
    assert "available_commands" not in session


@pytest.mark.process
@needs_jq
def test_spec_cli_example_full_view_adds_lineage_and_supervision(
    spec_views: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    _, full = spec_views
    session = full["session"]
    assert session["id"] == EXAMPLE_SESSION
    assert session["lineage"]["permission_policy"]["tools"] == ["*"]
    assert isinstance(session["supervision"], dict)
    assert session["available_commands"] == []


@pytest.mark.process
@needs_jq
def test_spec_every_compact_field_is_in_full_at_the_same_path_with_the_same_value(
    spec_views: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    compact, full = spec_views
    assert subset_problems(compact, full) == []
    assert compact != full


def test_subset_check_reports_changed_missing_and_reshaped_fields() -> None:
    whole = {"a": 1, "b": {"c": [1, 2]}, "d": True}
    assert subset_problems({"a": 1, "b": {"c": [1, 2]}}, whole) == []
    assert subset_problems({"a": 2}, whole) == ["$.a"]
    assert subset_problems({"z": 1}, whole) == ["$.z"]
    assert subset_problems({"b": {"c": [1]}}, whole) == ["$.b.c"]
    assert subset_problems({"d": 1}, whole) == ["$.d"]  # True is not 1 here


@pytest.mark.process
@needs_jq
def test_spec_cli_example_tool_info_lists_both_output_views(shared: Home) -> None:
    assert json.loads(shell(shared, SPEC_VIEWS).stdout) == ["compact", "full"]


def _descriptor(home: Home, tool_id: str) -> dict[str, Any]:
    info = ok_json(compozy(home, "tool", "info", tool_id, "-o", "json"))
    descriptor: dict[str, Any] = info["tool"]["descriptor"]
    return descriptor


def test_spec_single_result_tool_info_has_output_schema_only_and_no_selector(
    shared: Home,
) -> None:
    single = _descriptor(shared, "compozy__skill_view")
    assert "output_schema" in single
    assert "output_views" not in single
    assert "result_view" not in single["input_schema"]["properties"]

    viewed = _descriptor(shared, "compozy__session_status")
    assert viewed["input_schema"]["properties"]["result_view"]["enum"] == ["compact", "full"]
    assert viewed["output_schema"] == viewed["output_views"]["compact"]["schema"]
    assert viewed["output_schema_digest"] == viewed["output_views"]["compact"]["digest"]


def test_json_output_success_prints_result_with_structured_and_preview(shared: Home) -> None:
    done = invoke(shared, "compozy__session_status", STATUS_INPUT, "-o", "json")
    out = ok_json(done)
    assert list(out) == ["result"]
    assert set(out["result"]) == {"structured", "preview"}
    assert out["result"]["structured"]["session"]["id"] == EXAMPLE_SESSION
    assert isinstance(out["result"]["preview"], str)
    assert out["result"]["preview"].startswith(EXAMPLE_SESSION)
    assert done.stderr == ""


# --- errors: the selector ---------------------------------------------------------------------

SELECTOR_ERRORS = [
    pytest.param(
        "compozy__session_status",
        '{"session_id":"sess-example","result_view":"huge"}',
        UNKNOWN_VIEW,
        id="unknown-value",
    ),
    pytest.param(
        "compozy__session_status",
        '{"session_id":"sess-example","result_view":1}',
        UNKNOWN_VIEW,
        id="not-a-string",
    ),
    pytest.param(
        "compozy__skill_view",
        '{"name":"x","result_view":"full"}',
        SINGLE_RESULT,
        id="single-result-tool",
    ),
]


@pytest.mark.parametrize(("tool_id", "tool_input", "diagnostic"), SELECTOR_ERRORS)
def test_spec_errors_selector_error_is_redacted_with_o_json(
    shared: Home, tool_id: str, tool_input: str, diagnostic: str
) -> None:
    done = invoke(shared, tool_id, tool_input, "-o", "json")
    assert error_json(done, EXIT_USAGE) == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": REDACTED_INPUT,
        "tool_id": tool_id,
    }
    assert diagnostic not in done.stdout + done.stderr


@pytest.mark.parametrize(("tool_id", "tool_input", "diagnostic"), SELECTOR_ERRORS)
def test_spec_errors_selector_error_verbose_prints_the_dispatch_message(
    shared: Home, tool_id: str, tool_input: str, diagnostic: str
) -> None:
    done = invoke(shared, tool_id, tool_input, "-o", "json", "-v")
    assert error_json(done, EXIT_USAGE)["message"] == REDACTED_INPUT
    assert diagnostic in done.stderr


# --- errors: other input problems -------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_input", "field"),
    [
        pytest.param("{}", "session_id", id="missing-required"),
        pytest.param('{"session_id":"sess-example","bogus":1}', "bogus", id="unknown-field"),
        pytest.param('{"session_id":5}', "session_id", id="wrong-type"),
    ],
)
def test_invalid_input_is_redacted_and_verbose_names_the_field(
    shared: Home, tool_input: str, field: str
) -> None:
    done = invoke(shared, "compozy__session_status", tool_input, "-o", "json", "-v")
    error = error_json(done, EXIT_USAGE)
    # the message stays redacted; -v adds the dispatch diagnostic beside it (issue 17)
    assert {k: v for k, v in error.items() if k != "diagnostic"} == {
        "code": "tool_invalid_input",
        "reason": "schema_invalid",
        "message": REDACTED_INPUT,
        "tool_id": "compozy__session_status",
    }
    assert f'input "{field}"' in error["diagnostic"]
    assert f'input "{field}"' in done.stderr


def _json_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "JSON" in line]


def test_bad_json_input_exits_2_with_one_clear_line_and_no_traceback(shared: Home) -> None:
    done = invoke(shared, "compozy__session_status", '{"session_id":')
    assert done.returncode == EXIT_USAGE
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout == ""
    [line] = _json_lines(done.stderr)
    assert "--input is not valid JSON" in line


def test_bad_json_input_with_o_json_reports_input_not_json(shared: Home) -> None:
    done = invoke(shared, "compozy__session_status", '{"session_id":', "-o", "json")
    error = error_json(done, EXIT_USAGE)
    assert (error["code"], error["reason"], error["message"]) == (
        "tool_invalid_input",
        "input_not_json",
        REDACTED_INPUT,
    )
    assert len(_json_lines(done.stderr)) == 1


def test_input_from_a_missing_file_exits_2_naming_the_file(shared: Home, tmp_path: Path) -> None:
    missing = tmp_path / "missing-file.json"
    done = invoke(shared, "compozy__session_status", f"@{missing}")
    assert done.returncode == EXIT_USAGE
    assert "Traceback" not in done.stdout + done.stderr
    assert f"cannot read {missing}" in done.stderr


def test_input_from_a_file_is_read(shared: Home, tmp_path: Path) -> None:
    source = tmp_path / "input.json"
    source.write_text(STATUS_INPUT, encoding="utf-8")
    out = ok_json(invoke(shared, "compozy__session_status", f"@{source}", "-o", "json"))
    assert out["result"]["structured"]["session"]["id"] == EXAMPLE_SESSION


def test_input_dash_reads_standard_input(shared: Home) -> None:
    done = compozy(
        shared,
        "tool",
        "invoke",
        "compozy__session_status",
        "--input",
        "-",
        "-o",
        "json",
        stdin=STATUS_INPUT,
    )
    assert ok_json(done)["result"]["structured"]["session"]["id"] == EXAMPLE_SESSION


def test_bad_json_on_standard_input_exits_2_without_traceback(shared: Home) -> None:
    done = compozy(shared, "tool", "invoke", "compozy__session_status", "--input", "-", stdin="{")
    assert done.returncode == EXIT_USAGE
    assert "Traceback" not in done.stdout + done.stderr
    [line] = _json_lines(done.stderr)
    assert "standard input is not valid JSON" in line


# --- errors: not found, denied, conflict ------------------------------------------------------


def test_unknown_tool_exits_3_with_tool_not_found(shared: Home) -> None:
    error = error_json(invoke(shared, "compozy__no_such_tool", "{}", "-o", "json"), EXIT_NOT_FOUND)
    assert (error["code"], error["tool_id"]) == ("tool_not_found", "compozy__no_such_tool")


def test_unknown_session_exits_3_with_session_not_found(shared: Home) -> None:
    done = invoke(shared, "compozy__session_status", '{"session_id":"sess-nope"}', "-o", "json")
    error = error_json(done, EXIT_NOT_FOUND)
    assert (error["code"], error["reason"]) == ("not_found", "session_not_found")


def _spawn_child(home: Home, tools: list[str]) -> str:
    ok_json(
        invoke(
            home,
            "compozy__session_create",
            '{"session_id":"sess-parent","agent_name":"general"}',
            "-o",
            "json",
        )
    )
    spawn = {
        "parent_session_id": "sess-parent",
        "agent_name": "general",
        "ttl_seconds": 3600,
        "tools": tools,
    }
    out = ok_json(invoke(home, "compozy__session_spawn", json.dumps(spawn), "-o", "json"))
    child: str = out["result"]["structured"]["session_id"]
    return child


def test_denied_tool_exits_4_with_tool_denied_and_redacted_message(fresh: Home) -> None:
    child = _spawn_child(fresh, ["compozy__session_status"])

    denied = compozy(
        fresh, "tool", "invoke", "compozy__tool_list", "--session", child, "-o", "json"
    )
    assert error_json(denied, EXIT_DENIED) == {
        "code": "tool_denied",
        "reason": "permission_denied",
        "message": REDACTED_DENIAL,
        "tool_id": "compozy__tool_list",
    }
    # The tool the policy allows still runs as the same session: the denial is the policy's.
    allowed = invoke(
        fresh, "compozy__session_status", json.dumps({"session_id": child}), "--session", child
    )
    assert allowed.returncode == 0, allowed.stderr


def _full_status(home: Home, session_id: str) -> dict[str, Any]:
    tool_input = json.dumps({"session_id": session_id, "result_view": "full"})
    out = ok_json(invoke(home, "compozy__session_status", tool_input, "-o", "json"))
    session: dict[str, Any] = out["result"]["structured"]["session"]
    return session


def test_stale_fence_exits_5_with_stale_fence_and_changes_nothing(fresh: Home) -> None:
    ok_json(invoke(fresh, "compozy__session_create", CREATE_EXAMPLE, "-o", "json"))
    before = _full_status(fresh, EXAMPLE_SESSION)
    current = before["runtime"]["selection_revision"]
    stale = {
        "session_id": EXAMPLE_SESSION,
        "provider": "claude",
        "selection_revision": current + 7,
        "generation": 0,
    }

    done = invoke(fresh, "compozy__session_runtime_set", json.dumps(stale), "-o", "json")
    error = error_json(done, EXIT_CONFLICT)
    assert (error["code"], error["reason"]) == ("tool_conflict", "stale_fence")
    assert _full_status(fresh, EXAMPLE_SESSION) == before


# --- text output ------------------------------------------------------------------------------


def _table_ids(stdout: str) -> list[str]:
    header, *rows = stdout.splitlines()
    assert header.split()[:3] == ["TOOL", "RISK", "VIEWS"]
    return [row.split()[0] for row in rows]


def test_tool_list_text_is_a_table_of_every_tool(shared: Home) -> None:
    done = compozy(shared, "tool", "list")
    assert done.returncode == 0, done.stderr
    assert sorted(_table_ids(done.stdout)) == sorted(tool.id for tool in build_registry())


def test_tool_info_text_is_readable_and_mentions_both_views(shared: Home) -> None:
    done = compozy(shared, "tool", "info", "compozy__session_status")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.splitlines()[0] == "compozy__session_status"
    [result_line] = [line for line in text.splitlines() if line.strip().startswith("result:")]
    assert "compact" in result_line
    assert "full" in result_line
    views = _descriptor(shared, "compozy__session_status")["output_views"]
    assert f"compact schema digest: {views['compact']['digest']}" in text
    assert f"full schema digest:    {views['full']['digest']}" in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_tool_search_text_lists_session_tools_first(shared: Home) -> None:
    done = compozy(shared, "tool", "search", "session")
    assert done.returncode == 0, done.stderr
    ids = _table_ids(done.stdout)
    session_tools = {
        tool.id for tool in build_registry() if tool.id.startswith("compozy__session_")
    }
    assert set(ids[: len(session_tools)]) == session_tools


def test_tool_invoke_text_prints_the_preview_line_first(shared: Home) -> None:
    envelope = ok_json(invoke(shared, "compozy__session_status", STATUS_INPUT, "-o", "json"))
    done = invoke(shared, "compozy__session_status", STATUS_INPUT)
    assert done.returncode == 0, done.stderr
    first, rest = done.stdout.split("\n", 1)
    assert first == envelope["result"]["preview"]
    assert json.loads(rest) == envelope["result"]["structured"]


# --- start-up ---------------------------------------------------------------------------------

HEAVY = ("mcp.server", "uvicorn", "starlette")

PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    {preload}
    from compozy_mcp.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
    heavy = {heavy!r}
    loaded = sorted(
        name for name in sys.modules if any(name == h or name.startswith(h + ".") for h in heavy)
    )
    print(json.dumps({{"code": code, "loaded": loaded}}))
    """
)


def _loaded_heavy_modules(home: Home, args: list[str], preload: str = "") -> list[str]:
    code = PROBE.format(preload=preload, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["code"] == 0, done.stderr
    loaded: list[str] = report["loaded"]
    return loaded


@pytest.mark.process
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["tool", "list"], id="list"),
        pytest.param(["tool", "info", "compozy__session_status"], id="info"),
        pytest.param(
            ["tool", "invoke", "compozy__session_status", "--input", STATUS_INPUT], id="invoke"
        ),
    ],
)
def test_cli_start_up_never_imports_the_mcp_server_or_http_stack(
    shared: Home, args: list[str]
) -> None:
    assert _loaded_heavy_modules(shared, args) == []


@pytest.mark.process
def test_start_up_probe_sees_the_http_stack_when_it_is_imported(shared: Home) -> None:
    loaded = _loaded_heavy_modules(shared, ["tool", "list"], preload="import mcp.server")
    assert "mcp.server" in loaded
