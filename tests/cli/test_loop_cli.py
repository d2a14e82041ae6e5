"""``compozy loop ...`` in-process on the embedded store, as a user types it (issue 15, items 3
and 4): lint through the CLI prints the spec's lines word for word and stops create and run
before anything is stored; runs are followed live, answered and listed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.api.support import Home, compozy
from tests.loops.support import (
    LINT_CASES,
    RUN_ERRORS,
    SPEC_CLI_LINES,
    SPEC_EXAMPLE,
    SPEC_EXAMPLE_COMPACT,
    define_general,
    gate,
    graph,
    status_node,
    transform,
)

EXIT_USAGE, EXIT_CONFLICT = 2, 5


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = Home.make(tmp_path)
    define_general(made.path)  # the one line the spec's example needs (agent: general)
    return made


def _file(home: Home, name: str, text: str) -> str:
    path = home.path.parent / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def test_validate_prints_the_spec_error_word_for_word(home: Home) -> None:
    path = _file(home, "loop.yaml", SPEC_EXAMPLE_COMPACT)
    done = compozy(home, "loop", "validate", path)
    assert done.returncode == EXIT_USAGE
    assert done.stdout.startswith(SPEC_CLI_LINES + "\n")
    assert f"  --> {path}:13:36 (node report, params.prompt)" in done.stdout


@pytest.mark.parametrize("verb", ["create", "run"])
def test_create_and_run_stop_the_spec_example_before_start(home: Home, verb: str) -> None:
    path = _file(home, "loop.yaml", SPEC_EXAMPLE_COMPACT)
    done = compozy(home, "loop", verb, path)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.startswith(SPEC_CLI_LINES + "\n")
    assert ok(compozy(home, "loop", "list")).strip() == "no loops"
    assert ok(compozy(home, "loop", "runs")).strip() == "no runs"


def test_the_spec_example_with_full_passes(home: Home) -> None:
    path = _file(home, "loop.yaml", SPEC_EXAMPLE)
    assert (
        ok(compozy(home, "loop", "validate", path))
        .strip()
        .endswith("valid (0 error(s), 0 warning(s))")
    )
    made = ok(compozy(home, "loop", "create", path, "--id", "inspect-report"))
    assert made.splitlines()[0] == "loop inspect-report version 1"
    assert "compozy__session_status (result_view full)" in made


@pytest.mark.parametrize("code", sorted(LINT_CASES))
def test_lint_codes_through_the_cli(home: Home, code: str) -> None:
    path = _file(home, "loop.yaml", LINT_CASES[code])
    done = compozy(home, "loop", "validate", path, "-o", "json")
    result: dict[str, Any] = json.loads(done.stdout)
    assert [item["code"] for item in result["items"]] == [code]
    message = result["items"][0]["message"]
    if code in RUN_ERRORS:  # a warning until a run starts now
        assert done.returncode == 0
        assert compozy(home, "loop", "validate", path).stdout.startswith(
            f"warning: {code}\n{message}\n"
        )
        started = compozy(home, "loop", "run", path)
        assert started.returncode == EXIT_USAGE
        assert f"error: {code}\n{message}\n" in started.stderr
        return
    assert done.returncode == EXIT_USAGE
    text_out = compozy(home, "loop", "validate", path).stdout
    assert text_out.startswith(f"error: {code}\n{message}\n")


def test_the_warning_that_a_path_cannot_be_proven_does_not_stop_a_run(home: Home) -> None:
    text = graph(
        transform("a", "1"), transform("b", '"{{ .nodes.a.output.value }}"'), edges=(("a", "b"),)
    )
    path = _file(home, "loop.yaml", text)
    done = compozy(home, "loop", "run", path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("warning: unresolvable_path\n")
    assert done.stdout.splitlines()[-1] == "succeeded"


def test_run_follows_the_run_then_status_approve_and_runs(home: Home) -> None:
    session = json.loads(
        ok(
            compozy(
                home,
                "tool",
                "invoke",
                "compozy__session_create",
                "--input",
                '{"agent_name":"general"}',
                "-o",
                "json",
            )
        )
    )["result"]["structured"]["session"]["id"]
    text = graph(
        status_node(view="full"),
        gate("review", ("tools_ok", "Are the tools right?")),
        edges=(("inspect", "review"),),
    )
    path = _file(home, "loop.yaml", text)
    out = ok(compozy(home, "loop", "run", path, "--input", f"session_id={session}"))
    lines = out.splitlines()
    run_id = lines[0].split()[1]
    # each node as its status changes (a fast node may be seen succeeded at once)
    assert "  inspect              succeeded" in lines
    assert lines[-3:] == [
        "  review               waiting",
        "      [tools_ok] Are the tools right?",
        f"waiting at gate: compozy loop approve {run_id}",
    ]
    status = ok(compozy(home, "loop", "status", run_id))
    assert "[tools_ok] Are the tools right?" in status
    approved = ok(compozy(home, "loop", "approve", run_id, "--criterion", "tools_ok=pass"))
    assert approved.splitlines()[-1] == "succeeded"
    listed = ok(compozy(home, "loop", "runs"))
    assert f"{run_id}  " in listed
    assert "succeeded" in listed
    done = compozy(home, "loop", "cancel", run_id)
    assert done.returncode == EXIT_CONFLICT
    shown = json.loads(ok(compozy(home, "loop", "status", run_id, "--full", "-o", "json")))
    assert shown["run"]["contracts"]["inspect"]["view"] == "full"


def test_cancel_a_waiting_run(home: Home) -> None:
    path = _file(home, "loop.yaml", graph(gate("review")))
    run_id = ok(compozy(home, "loop", "run", path)).splitlines()[0].split()[1]
    out = ok(compozy(home, "loop", "cancel", run_id))
    assert out.splitlines()[0].endswith(": cancelled")


def test_detach_without_a_daemon_follows_the_run(home: Home) -> None:
    path = _file(home, "loop.yaml", graph(transform("t", "x")))
    done = compozy(home, "loop", "run", path, "--detach")
    assert done.returncode == 0, done.stderr
    assert "following the run in this process" in done.stderr
    assert done.stdout.splitlines()[-1] == "succeeded"


def test_inspect_says_who_owns_the_loop_and_who_wrote_each_version(home: Home) -> None:
    """Issue 22, item 3: a session's version and the operator's, told apart."""
    ok(compozy(home, "session", "create", "--agent", "general", "--id", "sess-author"))
    definition = json.dumps({"definition": graph(gate("review")), "loop_id": "shared"})
    ok(
        compozy(
            home,
            "tool",
            "invoke",
            "compozy__loop_create",
            "--input",
            definition,
            "--session",
            "sess-author",
        )
    )
    ok(
        compozy(
            home,
            "loop",
            "create",
            _file(home, "loop.yaml", graph(gate("review"))),
            "--id",
            "shared",
        )
    )
    lines = ok(compozy(home, "loop", "inspect", "shared")).splitlines()
    assert "owner: session:sess-author" in lines
    assert [line.split(" at ")[0].split() for line in lines if "written by" in line] == [
        ["version", "1", "written", "by", "session:sess-author"],
        ["version", "2", "written", "by", "operator"],
    ]


def test_tool_invoke_loop_create_json_error_carries_the_lint_items(home: Home) -> None:
    """A script on ``compozy tool invoke`` gets the redacted message and every lint item."""
    tool_input = json.dumps({"definition": SPEC_EXAMPLE_COMPACT})
    done = compozy(
        home, "tool", "invoke", "compozy__loop_create", "--input", tool_input, "-o", "json"
    )
    assert done.returncode == EXIT_USAGE
    error = json.loads(done.stdout)["error"]
    assert (error["reason"], error["message"]) == ("loop_invalid", "invalid tool request")
    (item,) = error["details"]["items"]
    assert item["code"] == "result_view_field_requires_full"
    assert item["node_id"] == "report"


def test_loop_run_shows_a_failed_nodes_dispatch_error_redacted(home: Home) -> None:
    """Spec, Errors: the CLI keeps code and reason and redacts the dispatch message; a node's
    failed call is no exception (``-v`` is for the dispatch diagnostic, not the run record)."""
    path = _file(home, "loop.yaml", graph(status_node(view="full")))
    done = compozy(home, "loop", "run", path, "--inputs", '{"session_id": 7}')
    assert done.returncode != 0
    shown = done.stdout + done.stderr
    assert "invalid tool request" in shown
    assert "tool_invalid_input (schema_invalid)" in shown
    assert "must be a string" not in shown
    as_json = compozy(home, "loop", "run", path, "--inputs", '{"session_id": 7}', "-o", "json")
    run = json.loads(as_json.stdout)["run"]
    assert run["nodes"][0]["error"]["message"] == "invalid tool request"
