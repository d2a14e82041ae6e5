"""``compozy agent list``: the agents a session's runtime can select (``provider``), built in
and from ``$COMPOZY_HOME/agents.yaml`` or a workspace's ``.compozy/agents.yaml``.
``compozy agent install NAME``: its pinned npm package into ``$COMPOZY_HOME/agents``, where the
runtime finds it (no registry call when an agent starts)."""

from __future__ import annotations

import argparse

from compozy_mcp.cli._context import Context
from compozy_mcp.cli._options import operation_command, output_options
from compozy_mcp.cli._output import Column, Style, emit, table
from compozy_mcp.cli._reporting import EXIT_OK
from compozy_mcp.hostapi import operations as ops

AGENT_TABLE = (
    Column.key("NAME", "name"),
    Column.key("SOURCE", "source"),
    Column("MODELS", lambda row: ", ".join(row["models"]) or "-", flex=True),
    Column.key("DESCRIPTION", "description", flex=True),
)


def list_agents(args: argparse.Namespace, context: Context) -> int:
    listed = context.call(
        lambda host: host.call(
            ops.LIST_AGENTS, {} if args.workspace is None else {"workspace_id": args.workspace}
        )
    )

    def readable(style: Style) -> str:
        lines = [table(AGENT_TABLE, listed["agents"], style)]
        for problem in listed["problems"]:
            where = f" agent {problem['agent']}" if "agent" in problem else ""
            lines.append(f"problem: {problem['source']}{where}: {problem['message']}")
        return "\n".join(lines)

    emit(args, listed, readable, env=context.env)
    return EXIT_OK


def install(args: argparse.Namespace, context: Context) -> int:
    """npm install the agent's package into ``$COMPOZY_HOME/agents`` (npm's own output shown)."""
    import shutil

    from compozy_mcp.agents.definitions import load_catalog
    from compozy_mcp.errors import InvalidRequest
    from compozy_mcp.interpreter import run_program
    from compozy_mcp.reasons import Reason

    home = context.settings().home
    catalog = load_catalog(home)
    agent = catalog.get(args.name)
    if agent is None:
        raise InvalidRequest(
            f'no agent "{args.name}" (agents: {catalog.known()})', reason=Reason.AGENT_NOT_FOUND
        )
    if agent.package is None:
        raise InvalidRequest(
            f'agent "{agent.name}" names no npm package to install (its command: '
            f"{agent.command}); give it a package in agents.yaml, or install it yourself",
            reason=Reason.REQUEST_INVALID,
        )
    npm = shutil.which("npm", path=context.env.get("PATH"))
    if npm is None:
        raise InvalidRequest(
            "npm is not installed: install Node.js (https://nodejs.org) and run this again",
            reason=Reason.REQUEST_INVALID,
        )
    target = home / "agents"
    target.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", agent.package]
    print(f"installing {agent.package} into {target}", flush=True)
    done = run_program(command, env=dict(context.env))  # Ctrl-C stops npm with this process
    if done.returncode != 0:
        raise InvalidRequest(
            f"npm install {agent.package} failed (exit {done.returncode})",
            reason=Reason.REQUEST_INVALID,
        )
    print(f"{agent.name}: {agent.command} installed; sessions run it from {target}")
    return EXIT_OK


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agent = commands.add_parser("agent", help="the agents sessions can run")
    sub = agent.add_subparsers(dest="agent_command", metavar="SUBCOMMAND", required=True)
    cmd = operation_command(sub, ops.LIST_AGENTS, description=__doc__)
    cmd.add_argument("--workspace", metavar="ID", help="include this workspace's agents.yaml")
    output_options(cmd)
    cmd = sub.add_parser(
        "install",
        help="install an agent's pinned npm package for compozy (claude, codex, gemini)",
    )
    cmd.add_argument(
        "name",
        metavar="NAME",
        help="the agent: claude, codex, gemini, or one of agents.yaml that names a package",
    )


def run(args: argparse.Namespace, context: Context) -> int:
    if args.agent_command == "install":
        return install(args, context)
    return list_agents(args, context)
