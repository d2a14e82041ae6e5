"""Every ``compozy`` command gives the same output in-process and against a daemon.

One daemon serves this module's data directory on TCP and a socket. Each command runs twice
on the same store (as :func:`tests.clirun.run_cli` runs it), in-process and with ``--url`` /
``--socket`` / ``COMPOZY_URL``, and the two runs must print the same stdout and stderr and exit
with the same code.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from tests.api.support import Daemon, Home, compozy, running_daemon, short_dir

pytestmark = pytest.mark.process

STATUS_INPUT = '{"session_id":"sess-example"}'
FULL_INPUT = '{"session_id":"sess-example","result_view":"full"}'


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    home = Home.make(tmp_path_factory.mktemp("remote"))
    for args in (
        ("session", "create", "--agent", "general", "--id", "sess-example", "--name", "Example"),
        ("session", "create", "--agent", "general", "--id", "sess-archived"),
        ("session", "archive", "sess-archived"),
    ):
        done = compozy(home, *args)
        assert done.returncode == 0, done.stderr
    spawn = {
        "parent_session_id": "sess-example",
        "agent_name": "general",
        "ttl_seconds": 3600,
        "tools": ["compozy__session_status"],
        "idempotency_key": "remote-cli-child",
    }
    done = compozy(
        home, "tool", "invoke", "compozy__session_spawn", "--input", json.dumps(spawn), "-o", "json"
    )
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture(scope="module")
def child(home: Home) -> str:
    done = compozy(home, "session", "list", "--parent", "sess-example", "-o", "json")
    [session] = json.loads(done.stdout)["sessions"]
    ident: str = session["id"]
    return ident


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    with (
        short_dir() as where,
        running_daemon(home, "--port", "0", "--uds", str(where / "d.sock")) as running,
    ):
        yield running


Outcome = tuple[int, str, str]


def both(
    home: Home, remote: tuple[str, ...], args: tuple[str, ...], *, env: dict[str, str] | None = None
) -> tuple[Outcome, Outcome]:
    """(in-process, remote) outcomes of one read-only command."""
    local = compozy(home, *args)
    far = compozy(home.with_env(**(env or {})), *remote, *args)
    return (local.returncode, local.stdout, local.stderr), (far.returncode, far.stdout, far.stderr)


def same(home: Home, remote: tuple[str, ...], *args: str) -> Outcome:
    local, far = both(home, remote, args)
    assert "Traceback" not in local[2] + far[2]
    assert far == local
    return local


READS = [
    pytest.param(("tool", "list"), 0, id="tool-list"),
    pytest.param(("tool", "list", "-o", "json"), 0, id="tool-list-json"),
    pytest.param(("tool", "info", "compozy__session_status"), 0, id="tool-info"),
    pytest.param(("tool", "info", "compozy__skill_view", "-o", "json"), 0, id="tool-info-json"),
    pytest.param(("tool", "search", "session"), 0, id="tool-search"),
    pytest.param(("tool", "search", "fork", "-o", "json"), 0, id="tool-search-json"),
    pytest.param(
        ("tool", "invoke", "compozy__session_status", "--input", STATUS_INPUT, "-o", "json"),
        0,
        id="invoke-compact",
    ),
    pytest.param(
        ("tool", "invoke", "compozy__session_status", "--input", FULL_INPUT, "-o", "json"),
        0,
        id="invoke-full",
    ),
    pytest.param(
        ("tool", "invoke", "compozy__session_status", "--input", STATUS_INPUT), 0, id="invoke-text"
    ),
    pytest.param(("session", "status", "sess-example", "-o", "json"), 0, id="session-status-json"),
    pytest.param(("session", "status", "sess-example"), 0, id="session-status-text"),
    pytest.param(("session", "list", "-o", "json"), 0, id="session-list-json"),
    pytest.param(("session", "list", "--archived"), 0, id="session-list-archived"),
    pytest.param(("session", "list", "--limit", "1", "-o", "json"), 0, id="session-list-page"),
    pytest.param(("workspace", "list"), 0, id="workspace-list"),
    pytest.param(("workspace", "list", "-o", "json"), 0, id="workspace-list-json"),
    pytest.param(("profile", "list"), 0, id="profile-list"),
    pytest.param(("profile", "list", "-o", "json"), 0, id="profile-list-json"),
    pytest.param(
        ("workspace", "add", "/no/such/dir", "-o", "json"), 2, id="workspace-not-a-directory"
    ),
    pytest.param(("workspace", "add", "/no/such/dir"), 2, id="workspace-not-a-directory-text"),
    pytest.param(("profile", "add", " ", "-o", "json"), 2, id="profile-blank-name"),
    pytest.param(
        ("tool", "invoke", "compozy__no_such_tool", "--input", "{}", "-o", "json"),
        3,
        id="unknown-tool",
    ),
    pytest.param(("tool", "info", "compozy__no_such_tool"), 3, id="info-unknown-tool"),
    pytest.param(
        (
            "tool",
            "invoke",
            "compozy__session_status",
            "--input",
            '{"session_id":"sess-example","result_view":"huge"}',
            "-o",
            "json",
        ),
        2,
        id="unknown-result-view",
    ),
    pytest.param(
        ("tool", "invoke", "compozy__skill_view", "--input", '{"name":"x","result_view":"full"}'),
        2,
        id="selector-on-single-result-tool-text",
    ),
    pytest.param(
        ("tool", "invoke", "compozy__session_status", "--input", "[1]", "-o", "json"),
        2,
        id="input-not-an-object",
    ),
    pytest.param(
        ("tool", "invoke", "compozy__session_status", "--input", "{", "-o", "json"),
        2,
        id="input-not-json",
    ),
    pytest.param(("session", "status", "sess-nope", "-o", "json"), 3, id="unknown-session"),
    pytest.param(("session", "status", "a/b"), 3, id="session-id-with-a-slash"),
    pytest.param(("session", "list", "--cursor", "bogus", "-o", "json"), 2, id="bad-cursor"),
    pytest.param(
        ("session", "create", "--agent", "general", "--id", "sess-example", "-o", "json"),
        5,
        id="create-existing-id",
    ),
    pytest.param(
        ("session", "create", "--agent", "general", "--provider", "nope", "-o", "json"),
        2,  # model_not_found: a provider the user typed that no agent has (a usage error)
        id="create-unknown-provider",
    ),
    pytest.param(
        (
            "tool",
            "invoke",
            "compozy__session_runtime_set",
            "--input",
            '{"session_id":"sess-example","provider":"claude","selection_revision":9,'
            '"generation":0}',
            "-o",
            "json",
        ),
        5,
        id="stale-fence",
    ),
]


@pytest.mark.parametrize(("args", "exit_code"), READS)
def test_command_gives_the_same_output_over_tcp_as_in_process(
    home: Home, daemon: Daemon, args: tuple[str, ...], exit_code: int
) -> None:
    assert daemon.url is not None
    code, out, _ = same(home, ("--url", daemon.url), *args)
    assert code == exit_code
    assert out or code != 0


@pytest.mark.parametrize(
    "args",
    [
        ("session", "status", "sess-example", "-o", "json"),
        ("tool", "invoke", "compozy__session_status", "--input", FULL_INPUT, "-o", "json"),
        ("session", "status", "sess-nope"),
    ],
)
def test_command_gives_the_same_output_over_the_socket_as_in_process(
    home: Home, daemon: Daemon, args: tuple[str, ...]
) -> None:
    assert daemon.socket is not None
    same(home, ("--socket", str(daemon.socket)), *args)


@pytest.mark.parametrize("form", ["unix:{}", "unix://{}", "{}"])
def test_compozy_url_names_the_socket_in_each_documented_form(
    home: Home, daemon: Daemon, form: str
) -> None:
    assert daemon.socket is not None
    args = ("session", "status", "sess-example", "-o", "json")
    local, far = both(home, (), args, env={"COMPOZY_URL": form.format(daemon.socket)})
    assert far == local
    assert local[0] == 0


def test_denied_call_as_a_session_exits_4_the_same_way(
    home: Home, daemon: Daemon, child: str
) -> None:
    assert daemon.url is not None
    args = ("tool", "invoke", "compozy__tool_list", "--session", child, "-o", "json")
    code, out, _ = same(home, ("--url", daemon.url), *args)
    assert code == 4
    assert json.loads(out)["error"]["message"] == "tool invocation denied"


def test_mutations_print_the_same_record_either_way(home: Home, daemon: Daemon) -> None:
    """Archiving twice is idempotent, so the in-process and the remote run must agree."""
    assert daemon.url is not None
    for action in ("archive", "unarchive"):
        args = ("session", action, "sess-example", "-o", "json")
        local = compozy(home, *args)
        remote = compozy(home, "--url", daemon.url, *args)
        assert (
            (remote.returncode, remote.stdout)
            == (local.returncode, local.stdout)
            == (
                0,
                local.stdout,
            )
        )


@pytest.mark.parametrize(
    ("command", "extra", "kind"),
    [
        (("workspace", "add"), ("--name", "remote"), "workspaces"),
        (("profile", "add"), ("--color", "#000000", "--icon", "star"), "profiles"),
    ],
)
def test_workspaces_and_profiles_added_either_way_print_the_same_shape_and_are_listed(
    home: Home,
    daemon: Daemon,
    tmp_path_factory: pytest.TempPathFactory,
    command: tuple[str, ...],
    extra: tuple[str, ...],
    kind: str,
) -> None:
    assert daemon.url is not None

    def target(n: int) -> str:
        # paths and names are unique (issue 17): one for each way
        if command[0] == "workspace":
            return str(tmp_path_factory.mktemp(f"project{n}"))
        return f"Remote {n}"

    first, second = target(1), target(2)
    local = compozy(home, *command, first, *extra, "-o", "json")
    remote = compozy(home, "--url", daemon.url, *command, second, *extra, "-o", "json")
    assert (local.returncode, remote.returncode) == (0, 0), local.stderr + remote.stderr
    [mine], [theirs] = json.loads(local.stdout)[kind], json.loads(remote.stdout)[kind]
    assert mine.keys() == theirs.keys()
    varying = ("id", "created_at", "path", "name")
    same_fields = {k: v for k, v in mine.items() if k not in varying}
    assert same_fields == {k: v for k, v in theirs.items() if k not in varying}
    listed = json.loads(compozy(home, command[0], "list", "-o", "json").stdout)[kind]
    assert [mine, theirs] == listed[-2:]
    # the same one again is refused alike either way, with the same words
    again_local = compozy(home, *command, second, *extra)
    again_remote = compozy(home, "--url", daemon.url, *command, first, *extra)
    assert again_local.returncode == again_remote.returncode == 5
    assert "(conflict: " in again_local.stderr
    assert "(conflict: " in again_remote.stderr


def test_session_create_against_the_daemon_is_the_record_status_reads(
    home: Home, daemon: Daemon
) -> None:
    assert daemon.url is not None
    created = compozy(
        home, "--url", daemon.url, "session", "create", "--agent", "general", "--id",
        "sess-remote", "--branch", "b", "-o", "json",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    status = compozy(home, "session", "status", "sess-remote", "-o", "json")
    assert created.stdout == status.stdout


def test_three_surfaces_read_the_same_session_record(home: Home, daemon: Daemon) -> None:
    with daemon.client() as client:
        route = client.get("/api/sessions/sess-example").json()["session"]
    cli = json.loads(compozy(home, "session", "status", "sess-example", "-o", "json").stdout)
    invoked = compozy(
        home, "tool", "invoke", "compozy__session_status", "--input", FULL_INPUT, "-o", "json"
    )
    tool = json.loads(invoked.stdout)["result"]["structured"]["session"]
    assert route == cli["session"] == tool
    assert "permission_policy" in route["lineage"]


@pytest.mark.parametrize(
    "remote",
    [
        pytest.param(("--url", "http://127.0.0.1:1"), id="tcp"),
        pytest.param(("--socket", "/tmp/compozy-no-such-daemon.sock"), id="socket"),
    ],
)
def test_an_unreachable_daemon_is_one_clear_line_and_exit_6(
    home: Home, remote: tuple[str, ...]
) -> None:
    done = compozy(home, *remote, "session", "status", "sess-example")
    assert done.returncode == 6
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("error: cannot reach the compozy daemon at ")
    assert "compozy serve" in line
    as_json = compozy(home, *remote, "tool", "list", "-o", "json")
    assert as_json.returncode == 6
    assert json.loads(as_json.stdout)["error"]["code"] == "daemon_unreachable"


def test_a_compozy_url_of_an_unknown_form_is_a_configuration_error(home: Home) -> None:
    done = compozy(home.with_env(COMPOZY_URL="ftp://example"), "session", "list")
    assert done.returncode == 6
    [line] = done.stderr.splitlines()
    assert "COMPOZY_URL" in line


PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from compozy_mcp.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
    heavy = (
        "mcp", "pydantic", "uvicorn", "starlette", "httpx2", "httpcore2", "jsonschema",
        "yaml", "compozy_mcp.store", "compozy_mcp.assembly", "compozy_mcp.sessions",
        "compozy_mcp.native", "compozy_mcp.proxy", "compozy_mcp.api",
    )
    loaded = sorted(
        name for name in sys.modules if any(name == h or name.startswith(h + ".") for h in heavy)
    )
    print(json.dumps({"code": code, "loaded": loaded}))
    """
)


@pytest.mark.parametrize(
    "command",
    [
        ("session", "status", "sess-example"),
        ("session", "list"),
        ("tool", "list"),
        ("tool", "invoke", "compozy__session_status", "--input", '{"session_id":"sess-example"}'),
    ],
    ids=" ".join,
)
def test_a_command_against_a_daemon_loads_no_http_library_server_stack_or_store(
    home: Home, daemon: Daemon, command: tuple[str, ...]
) -> None:
    """A command that sends one request and prints the answer imports the standard
    library's HTTP client and its own printing, nothing of the server (start-up is most of
    what such a command costs)."""
    assert daemon.url is not None
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "--url", daemon.url, *command],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report == {"code": 0, "loaded": []}


VERSION_PROBE = textwrap.dedent(
    """
    import json, sys
    from compozy_mcp.cli.main import main

    code = main(["--version"])
    ours = sorted(name for name in sys.modules if name.split(".")[0] == "compozy_mcp")
    print(json.dumps({"code": code, "ours": ours, "argparse": "argparse" in sys.modules}))
    """
)


def test_version_imports_nothing_but_the_command_line_entry() -> None:
    """Issue 29, item 2: ``compozy --version`` (what scripts ask most) answers before any
    parser, error hierarchy or context is imported."""
    done = subprocess.run(
        [sys.executable, "-c", VERSION_PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, report = done.stdout.split("\n", 1)
    assert first.startswith("compozy-mcp ")
    assert json.loads(report) == {
        "code": 0,
        "ours": ["compozy_mcp", "compozy_mcp.cli", "compozy_mcp.cli.main"],
        "argparse": False,
    }
