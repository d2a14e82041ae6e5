"""Issue 17, items 1 and 2, as a user types them: processes that stop on Ctrl-C (on a
pseudo-terminal) and SIGTERM (in a pipe), the one line they print on a terminal, a daemon
that checks every listener before announcing any, its health routes and request log, and
``-v`` diagnostics from a daemon on its socket or loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from tests.api.support import COMPOZY, Daemon, Home, compozy, running_daemon, short_dir
from tests.proxy.support import INITIALIZE
from tests.terminal import CTRL_C, on_terminal

pytestmark = pytest.mark.process

STOP_SECONDS = 20


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    home = Home.make(tmp_path_factory.mktemp("operator"))
    done = compozy(home, "session", "create", "--agent", "general", "--id", "sess-example")
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture(scope="module")
def daemon(home: Home) -> Iterator[Daemon]:
    with (
        short_dir() as where,
        running_daemon(
            home, "--port", "0", "--uds", str(where / "d.sock"), "--log-level", "info"
        ) as running,
    ):
        yield running


# --- item 2: Ctrl-C on a terminal, SIGTERM in a pipe ------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("proxy",), "compozy proxy: serving the native tools over MCP on stdio"),
        (("mcp", "serve"), "compozy mcp serve: serving the Host API tools"),
        (("proxy", "--http", "127.0.0.1:0"), "compozy proxy: serving MCP at http://127.0.0.1:"),
        (("proxy", "--uds", "{sock}"), "compozy proxy: serving MCP on unix socket"),
    ],
    ids=["proxy-stdio", "mcp-serve", "proxy-http", "proxy-uds"],
)
def test_ctrl_c_on_a_terminal_stops_at_once_after_one_line_saying_what_is_served(
    home: Home, args: tuple[str, ...], says: str
) -> None:
    with (
        short_dir() as where,
        on_terminal(
            [str(COMPOZY), *(arg.format(sock=where / "p.sock") for arg in args)], home.env
        ) as terminal,
    ):
        text = terminal.read_until(says)
        terminal.type(CTRL_C)  # no Enter: the line discipline sends SIGINT
        code = terminal.wait(STOP_SECONDS)
    assert code in (0, 130), terminal.text
    assert "Traceback" not in terminal.text
    if (args[0] == "proxy" and len(args) == 1) or args[0] == "mcp":
        [line] = [ln for ln in text.splitlines() if ln.startswith("compozy ")]
        assert "Ctrl-C stops" in line
        assert "compozy install" in line


def _wait_until_loaded(pid: int, command: str, library: str) -> None:
    """Until the process runs ``command`` (it has exec'd: the fork of this test process has
    this process's libraries) and has loaded ``library`` (its imports have reached it)."""
    proc = Path(f"/proc/{pid}")
    deadline = time.monotonic() + STOP_SECONDS
    while (
        command not in (proc / "cmdline").read_text() or library not in (proc / "maps").read_text()
    ):
        assert time.monotonic() < deadline, f"{command} never loaded {library}"
        time.sleep(0.001)


@pytest.mark.parametrize("after", [0.0, 0.05, 0.1])
def test_ctrl_c_while_a_proxy_starts_ends_it_at_once_without_a_traceback(
    home: Home, after: float
) -> None:
    """Ctrl-C in the middle of the proxy's imports (pydantic building the SDKs' models): a
    KeyboardInterrupt raised there became a SchemaError (a traceback, exit 1), or was
    swallowed by importlib ("Exception ignored in ... _get_module_lock") and the proxy served
    on, Ctrl-C lost."""
    with on_terminal([str(COMPOZY), "proxy"], home.env) as terminal:
        _wait_until_loaded(terminal.pid, str(COMPOZY), "_pydantic_core")
        time.sleep(after)
        terminal.type(CTRL_C)
        code = terminal.wait(STOP_SECONDS)
    assert code in (0, 130), terminal.text
    assert "Traceback" not in terminal.text


def _initialize(process: subprocess.Popen[bytes]) -> None:
    """An MCP initialize request over the process's stdio, answered."""
    assert process.stdin is not None
    assert process.stdout is not None
    request = INITIALIZE
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1


def test_sigterm_stops_a_proxy_relaying_a_daemon(home: Home, daemon: Daemon) -> None:
    assert daemon.socket is not None
    process = subprocess.Popen(
        [str(COMPOZY), "--socket", str(daemon.socket), "proxy", "--session", "sess-example"],
        env=home.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        assert "relaying the compozy daemon" in process.stderr.readline().decode()
        _initialize(process)  # answered: it serves, and its SIGTERM handler is in place
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_SECONDS) == 0
        out, err = process.communicate(timeout=STOP_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()  # closes the pipes, whatever failed above
    assert out == b""
    assert b"Traceback" not in err


def test_ctrl_c_stops_a_proxy_relaying_a_daemon(home: Home, daemon: Daemon) -> None:
    assert daemon.url is not None
    with on_terminal([str(COMPOZY), "--url", daemon.url, "proxy"], home.env) as terminal:
        terminal.read_until("over MCP on stdio")
        terminal.type(CTRL_C)
        assert terminal.wait(STOP_SECONDS) in (0, 130), terminal.text
    assert f"of the compozy daemon at {daemon.url}" in terminal.text


@pytest.mark.parametrize(
    "args",
    [("proxy",), ("mcp", "serve"), ("proxy", "--http", "127.0.0.1:0")],
    ids=["proxy-stdio", "mcp-serve", "proxy-http"],
)
def test_sigterm_stops_a_piped_server_cleanly_and_stdout_stays_the_mcp_stream(
    home: Home, args: tuple[str, ...]
) -> None:
    process = subprocess.Popen(
        [str(COMPOZY), *args],
        env=home.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # an initialize request answered proves it serves; stdio only
        if "--http" not in args:
            _initialize(process)
        else:
            assert process.stderr is not None
            line = process.stderr.readline().decode()
            assert "serving MCP at" in line
            _wait_answering(line.split("serving MCP at ")[1].strip())
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_SECONDS) == 0
        out, err = process.communicate(timeout=STOP_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert out == b""  # nothing but MCP on stdout: no banner in a pipe
    assert b"Ctrl-C stops" not in err
    assert b"Traceback" not in err


def _wait_answering(url: str) -> None:
    """Until the server answers (its signal handlers are in place once it serves)."""
    deadline = time.monotonic() + STOP_SECONDS
    while True:
        try:
            httpx2.get(url, timeout=5, trust_env=False)
            return
        except httpx2.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# --- item 2: serve checks every listener first; health; the request log ---------------------


def test_a_second_daemon_fails_before_announcing_anything(home: Home, daemon: Daemon) -> None:
    assert daemon.socket is not None
    done = subprocess.run(
        [str(COMPOZY), "serve", "--port", "0", "--uds", str(daemon.socket)],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "listening on" not in done.stderr
    assert str(daemon.socket) in done.stderr


def _logged(daemon: Daemon, wanted: Callable[[str], bool], count: int = 1) -> list[str]:
    """The daemon's log lines ``wanted`` picks, once there are ``count`` of them (a request's
    line is written as its response ends, maybe after the client has read it)."""
    deadline = time.monotonic() + STOP_SECONDS
    while True:
        found = [line for line in list(daemon.stderr_lines) if wanted(line)]
        if len(found) >= count or time.monotonic() > deadline:
            assert len(found) >= count, daemon.stderr
            return found
        time.sleep(0.05)


def test_healthz_and_api_health_and_one_log_line_per_request(daemon: Daemon) -> None:
    with daemon.client() as client:
        live = client.get("/healthz")
        ready = client.get("/api/health")
    assert live.status_code == 200
    assert live.json()["status"] == "ok"
    assert ready.status_code == 200
    body = ready.json()
    assert body["status"] == "ok"
    assert body["store"]["reachable"] is True
    assert body["store"]["schema_version"] >= 1
    assert body["version"]
    assert body["uptime_seconds"] >= 0
    with daemon.socket_client() as client:
        assert client.get("/api/health").status_code == 200
    logged = _logged(daemon, lambda line: "GET /api/health 200" in line, count=2)
    assert any(line.rstrip().endswith(" unix") for line in logged)


def test_log_format_json_writes_one_object_per_request(home: Home) -> None:
    with (
        running_daemon(
            home,
            "--port",
            "0",
            "--no-uds",
            "--log-level",
            "info",
            "--log-format",
            "json",
            listeners=1,
        ) as daemon,
        daemon.client() as client,
    ):
        assert client.get("/healthz").status_code == 200
        lines = _logged(daemon, lambda line: line.startswith("{") and '"/healthz"' in line)
    requests = [json.loads(line) for line in lines]
    assert {"time", "level", "logger", "message", "method", "status", "duration_ms"} <= set(
        requests[0]
    )
    assert (requests[0]["level"], requests[0]["status"]) == ("info", 200)


def test_without_log_level_info_requests_are_not_logged(home: Home) -> None:
    with running_daemon(home, "--port", "0", "--no-uds", listeners=1) as daemon:
        with daemon.client() as client:
            assert client.get("/healthz").status_code == 200
        assert daemon.stop() == 0  # its stderr is complete once it has exited
    assert "stopped" in daemon.stderr
    assert "GET /healthz" not in daemon.stderr


# --- item 1: -v against a daemon, anywhere on the line; one unknown-tool error ------------


def _cli(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPOZY), *args],
        env=home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("where", ["url", "socket", "env-url-with-api"])
def test_verbose_shows_the_missing_field_from_a_local_daemon(
    home: Home, daemon: Daemon, where: str
) -> None:
    assert daemon.url is not None
    assert daemon.socket is not None
    env = home
    if where == "url":
        target: tuple[str, ...] = ("--url", daemon.url + "/")
    elif where == "socket":
        target = ("--socket", str(daemon.socket))
    else:
        target = ()
        env = home.with_env(COMPOZY_URL=daemon.url + "/api")
    args = ("tool", "invoke", "compozy__session_status", "--input", "{}")
    for line in (("-v", *args, *target), (*args, *target, "-v"), (*target, *args, "--verbose")):
        done = _cli(env, *line)
        assert done.returncode == 2, done.stderr
        assert "error: invalid tool request (tool_invalid_input: schema_invalid)" in done.stderr
        assert 'diagnostic: tool "compozy__session_status" input "session_id" is required' in (
            done.stderr
        )
    quiet = _cli(env, *args, *target)
    assert "diagnostic" not in quiet.stderr


def test_unknown_tool_has_one_code_and_wording_and_a_suggestion_on_every_command(
    home: Home, daemon: Daemon
) -> None:
    assert daemon.url is not None
    outputs = []
    for target in ((), ("--url", daemon.url)):
        for command in ("invoke", "info"):
            done = _cli(home, "tool", command, "compozy__sesion_status", *target)
            assert done.returncode == 3
            outputs.append(done.stderr)
    assert len(set(outputs)) == 1
    [error, hint] = outputs[0].splitlines()
    assert error == (
        'error: tool "compozy__sesion_status" is not registered (tool_not_found: tool_unknown)'
    )
    assert hint.startswith('hint: did you mean "compozy__session_status"')


def test_unknown_session_suggests_close_ids_in_process_and_against_a_daemon(
    home: Home, daemon: Daemon
) -> None:
    assert daemon.socket is not None
    for target in ((), ("--socket", str(daemon.socket))):
        done = _cli(home, "session", "status", "sess-exampel", *target)
        assert done.returncode == 3
        assert 'hint: did you mean "sess-example"?' in done.stderr


# --- item 3 on a terminal: colour, NO_COLOR, the terminal's width; completion ---------------


def _tty_output(home: Home, args: tuple[str, ...], columns: int, **env: str) -> str:
    environment = {k: v for k, v in home.env.items() if k not in ("NO_COLOR", "COLUMNS")}
    environment.update(TERM="xterm", **env)
    with on_terminal([str(COMPOZY), *args], environment, columns=columns) as terminal:
        assert terminal.wait(STOP_SECONDS) == 0, terminal.text
    return terminal.text


def test_a_terminal_gets_colour_and_its_width_a_pipe_and_no_color_get_neither(
    home: Home,
) -> None:
    coloured = _tty_output(home, ("session", "list"), 90)
    assert "\x1b[1mID\x1b[0m" in coloured
    assert "\x1b[32mactive\x1b[0m" in coloured
    assert "\x1b[" not in _tty_output(home, ("session", "list"), 90, NO_COLOR="1")
    piped = _cli(home, "session", "list")
    assert "\x1b[" not in piped.stdout
    narrow = _tty_output(home, ("tool", "list"), 80, NO_COLOR="1")
    assert all(len(line) <= 80 for line in narrow.splitlines())
    wide = _tty_output(home, ("tool", "list"), 250, NO_COLOR="1")
    assert max(len(line) for line in wide.splitlines()) > 80


def test_completion_scripts_complete_commands_in_bash(home: Home) -> None:
    for shell in ("bash", "zsh", "fish"):
        done = _cli(home, "completion", shell)
        assert done.returncode == 0
        assert "_ARGCOMPLETE" in done.stdout
    script = (
        "source <(compozy completion bash); COMP_WORDS=(compozy ses); COMP_CWORD=1; "
        'COMP_LINE="compozy ses"; COMP_POINT=11; _python_argcomplete compozy ses compozy; '
        'echo "${COMPREPLY[@]}"'
    )
    env = dict(home.env, PATH=f"{COMPOZY.parent}:{home.env.get('PATH', '')}")
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.split() == ["session"]


# --- item 4: what `compozy install` writes starts a working server ---------------------------


def test_the_installed_command_serves_mcp(home: Home, tmp_path: Path) -> None:
    # your own configuration (--scope user, the default): HOME is the test's
    mine = Home(home.path, {**home.env, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    done = _cli(mine, "install", "claude-code", "--workspace", str(tmp_path))
    assert done.returncode == 0, done.stderr
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["compozy"]
    request = INITIALIZE
    # what the client does: run command + args with env, write to stdin, read stdout
    started = subprocess.run(
        [server["command"], *server["args"]],
        env={"PATH": "/usr/bin:/bin", **server["env"]},
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    assert json.loads(started.stdout.splitlines()[0])["result"]["serverInfo"]["name"]
