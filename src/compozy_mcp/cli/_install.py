"""``compozy install CLIENT [--scope user|project] [--session ID] [--http URL] [--print]``:
point an MCP client at compozy, in the client's own configuration
(:mod:`compozy_mcp.cli._clients`).

``--scope user`` (the default) configures the client for you: it starts ``compozy proxy``
itself (stdio) with the absolute path of this ``compozy`` executable, so that it works whatever
the client's ``PATH``, and with the variables that name your data directory or daemon
(``COMPOZY_HOME``, ``COMPOZY_URL``, ``COMPOZY_TOKEN_FILE``). ``--scope project`` writes the
workspace's shared file (``.mcp.json``, ``.cursor/mcp.json``, ``.vscode/mcp.json``,
``.codex/config.toml``) for everyone who clones it: the command is ``compozy`` as found on
``PATH``, with nothing of yours in it.

``--session`` binds the proxy to a managed session (checked: it must exist); ``--http URL``
connects the client to a running proxy or daemon instead (Claude Desktop, which takes no URL,
gets ``compozy --url BASE proxy``, which relays it).

When the client's own command is installed (``claude`` for Claude Code, ``codex`` for Codex's
user configuration) it writes the entry (``claude mcp add-json``, ``codex mcp add``), as the
client's documentation recommends; otherwise the file is edited with a parser, keeping every
other server and setting. A file that does not parse is refused with its line and column and
never written. ``--print`` prints what a fresh file would hold and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compozy_mcp.cli._clients import (
    CLIENTS,
    NAME,
    SCOPES,
    ClientFile,
    Scope,
    Server,
    check_parses,
    client_file,
    entry,
    env_for,
    has_scope,
    read_existing,
    rendered,
    stdio_only,
    write_atomically,
)
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.errors import ConfigError, InvalidRequest
from compozy_mcp.hostapi import operations as ops

if TYPE_CHECKING:
    from collections.abc import Mapping

    from compozy_mcp.cli._context import Context

#: variables a client must pass to the proxy it starts, when they are set here (user scope)
PASSED_ON = ("COMPOZY_HOME", "COMPOZY_URL", "COMPOZY_TOKEN_FILE")
MCP_SUFFIX = "/mcp"
#: how long a client's own command may take to add the server
CLIENT_CLI_TIMEOUT = 60.0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    install = commands.add_parser(
        "install",
        help="configure an MCP client to use compozy (Claude Code, Claude Desktop, Cursor, "
        "Codex, VS Code)",
        description="Write (or print, with --print) an MCP client's configuration so that it "
        "uses compozy: the client starts `compozy proxy` on stdio, or with --http connects to "
        "a running proxy or daemon. --scope user (default) is your own configuration, with the "
        "absolute path of this compozy; --scope project writes the workspace's shared file "
        "(.mcp.json, .cursor/mcp.json, .vscode/mcp.json, .codex/config.toml) with `compozy` as "
        "found on PATH and nothing personal. The client's own command (claude, codex) writes "
        "the entry when it is installed.",
    )
    install.add_argument("client", choices=CLIENTS, help="the MCP client to configure")
    install.add_argument(
        "--scope",
        choices=SCOPES,
        default="user",
        help="user: your configuration (default); project: the workspace's shared file",
    )
    install.add_argument(
        "--session",
        metavar="ID",
        help="bind the proxy to this managed session (its policy); it must exist",
    )
    install.add_argument(
        "--http",
        metavar="URL",
        help="connect to this Streamable HTTP endpoint (http://HOST:PORT/mcp of compozy serve "
        "or compozy proxy --http) instead of starting a proxy",
    )
    install.add_argument(
        "--workspace",
        metavar="DIR",
        help="where project files go (default: $COMPOZY_WORKSPACE or the current directory)",
    )
    install.add_argument(
        "--no-client-cli",
        action="store_true",
        help="edit the file even when the client's own command (claude, codex) is installed",
    )
    install.add_argument(
        "--print", action="store_true", help="print the configuration; write nothing"
    )


def executable() -> str:
    """The absolute path of this ``compozy``: the console script beside this interpreter
    (a venv, pipx or ``uv tool`` install), else the one on ``PATH``."""
    beside = Path(sys.executable).with_name("compozy")
    if beside.exists():
        return str(beside)
    found = shutil.which("compozy")
    if found is None:
        raise ConfigError("cannot find the compozy executable; install compozy-mcp first")
    return str(Path(found).resolve())


def server_for(args: argparse.Namespace, context: Context) -> Server:
    scope: Scope = args.scope
    if not has_scope(args.client, scope):
        raise InvalidRequest(f"{args.client} has no project scope; use --scope user")
    if args.session and scope == "project":
        raise InvalidRequest(
            "--session names a session of your own store, which a project's shared file "
            "cannot carry; use --scope user"
        )
    if args.http and not args.http.startswith(("http://", "https://")):
        raise InvalidRequest(f"--http takes an http(s):// URL, got {args.http!r}")
    # a project's file is shared: nothing of this machine or this user in it
    passed = env_for(context.env, PASSED_ON) if scope == "user" else {}
    command = executable() if scope == "user" else NAME
    if args.http and not stdio_only(args.client):
        if args.session:
            raise InvalidRequest(
                "--session applies to a proxy the client starts; with --http, start the proxy "
                "yourself: compozy proxy --http HOST:PORT --session ID"
            )
        return Server(url=args.http)
    words = ["proxy"]
    if args.http:  # a stdio-only client relays the daemon (or proxy) at that URL
        base = args.http.rstrip("/").removesuffix(MCP_SUFFIX)
        words = ["--url", base, "proxy"]
        passed.pop("COMPOZY_URL", None)
    if args.session:
        words += ["--session", args.session]
    return Server(command=command, args=tuple(words), env=passed)


def _check_session(session: str, context: Context) -> None:
    """The session exists (in-process, or on the daemon the command talks to); an unknown id
    fails as every command's does (``not_found``, with "did you mean")."""
    context.call(lambda host: host.call(ops.SESSION_STATUS, {"session_id": session}))


def run(args: argparse.Namespace, context: Context) -> int:
    server = server_for(args, context)
    if args.session:
        _check_session(args.session, context)
    home = Path(context.env.get("HOME") or Path.home())
    workspace = context.workspace(args.workspace)
    target = client_file(args.client, args.scope, workspace=workspace, home=home, env=context.env)
    if args.print:
        sys.stdout.write(rendered(args.client, server, target))
        return EXIT_OK
    existing = read_existing(target.path)
    how = (
        f"connects to {server.url}"
        if server.url
        else f"starts {server.command} " + " ".join(server.args)
    )
    command = None if args.no_client_cli else _client_cli(args, context, target)
    if command is not None:
        check_parses(target, existing)  # the client's own command must not meet a broken file
        _run_client_cli(command, args, server, target, workspace, context.env)
        print(f'{Path(command).name} wrote {target.path}: the {args.client} server "{NAME}" {how}')
    else:
        content = rendered(args.client, server, target, existing)
        write_atomically(target.path, content, private=args.scope == "user")
        print(f'wrote {target.path}: the {args.client} server "{NAME}" {how}')
    print(f"restart {args.client} (or reload its MCP servers) to pick it up", file=sys.stderr)
    return EXIT_OK


# --- the client's own command -------------------------------------------------------------


def _client_cli(args: argparse.Namespace, context: Context, target: ClientFile) -> str | None:
    """The client's own command that writes ``target``, when it is installed: ``claude`` for
    either scope of Claude Code, ``codex`` for Codex's user configuration."""
    path = context.env.get("PATH")
    if args.client == "claude-code":
        return shutil.which("claude", path=path)
    if args.client == "codex" and args.scope == "user":
        return shutil.which("codex", path=path)
    return None


def _client_commands(
    program: str, client: str, scope: Scope, server: Server
) -> tuple[list[str] | None, list[str]]:
    """The commands that write the entry: one that removes an entry that is there (its
    failure is no failure: there may be none), and the one that adds it."""
    if client == "claude-code":
        add_json = json.dumps(entry(client, server), separators=(",", ":"))
        return (
            [program, "mcp", "remove", "--scope", scope, NAME],
            [program, "mcp", "add-json", "--scope", scope, NAME, add_json],
        )
    # codex mcp add replaces an entry of the same name
    if server.url is not None:
        return None, [program, "mcp", "add", NAME, "--url", server.url]
    env = [item for key, value in server.env.items() for item in ("--env", f"{key}={value}")]
    return None, [program, "mcp", "add", NAME, *env, "--", server.command or NAME, *server.args]


def _run_client_cli(
    program: str,
    args: argparse.Namespace,
    server: Server,
    target: ClientFile,
    workspace: Path,
    env: Mapping[str, str],
) -> None:
    remove, add = _client_commands(program, args.client, args.scope, server)
    # Claude Code's project scope is the current directory's .mcp.json
    cwd = workspace if args.client == "claude-code" else None
    if remove is not None:
        _client_run(remove, cwd, env)
    done = _client_run(add, cwd, env)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise ConfigError(
            f"{' '.join(add[:3])} failed (exit {done.returncode})"
            + (f": {said[-1]}" if said else "")
            + f"; compozy install {args.client} --no-client-cli edits {target.path} instead"
        )


def _client_run(
    command: list[str], cwd: Path | None, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    from compozy_mcp.interpreter import run_program

    try:  # Ctrl-C stops the client's CLI with this process
        return run_program(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=CLIENT_CLI_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(
            f"{' '.join(command[:3])} did not finish within {CLIENT_CLI_TIMEOUT:g} s"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
