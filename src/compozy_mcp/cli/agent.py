"""``compozy agent list``: the agents a session's runtime can select (``provider``), built in
and from ``$COMPOZY_HOME/agents.yaml`` or a workspace's ``.compozy/agents.yaml``."""

from __future__ import annotations

import argparse

from compozy_mcp.cli.context import Context
from compozy_mcp.cli.options import output_options
from compozy_mcp.cli.output import Column, Style, emit, table
from compozy_mcp.cli.reporting import EXIT_OK

AGENT_TABLE = (
    Column.key("NAME", "name"),
    Column.key("SOURCE", "source"),
    Column("MODELS", lambda row: ", ".join(row["models"]) or "-", flex=True),
    Column.key("DESCRIPTION", "description", flex=True),
)


def list_agents(args: argparse.Namespace, context: Context) -> int:
    listed = context.call(lambda host: host.list_agents(args.workspace))

    def readable(style: Style) -> str:
        lines = [table(AGENT_TABLE, listed["agents"], style)]
        for problem in listed["problems"]:
            where = f" agent {problem['agent']}" if "agent" in problem else ""
            lines.append(f"problem: {problem['source']}{where}: {problem['message']}")
        return "\n".join(lines)

    emit(args, listed, readable, env=context.env)
    return EXIT_OK


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agent = commands.add_parser("agent", help="the agents sessions can run")
    sub = agent.add_subparsers(dest="agent_command", metavar="SUBCOMMAND", required=True)
    cmd = sub.add_parser(
        "list",
        help="list agents with their models",
        description=__doc__,
    )
    cmd.add_argument("--workspace", metavar="ID", help="include this workspace's agents.yaml")
    output_options(cmd)


def run(args: argparse.Namespace, context: Context) -> int:
    return list_agents(args, context)
