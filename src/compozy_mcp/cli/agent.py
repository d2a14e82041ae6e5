"""``compozy agent list``: the agents a session's runtime can select (``provider``), built in
and from ``$COMPOZY_HOME/agents.yaml`` or a workspace's ``.compozy/agents.yaml``."""

from __future__ import annotations

import argparse

from compozy_mcp import jsonutil
from compozy_mcp.cli.context import Context
from compozy_mcp.cli.options import output_options
from compozy_mcp.cli.reporting import EXIT_OK


def list_agents(args: argparse.Namespace, context: Context) -> int:
    listed = context.call(lambda host: host.list_agents(args.workspace))
    if args.output == "json":
        print(jsonutil.dumps_pretty(listed))
        return EXIT_OK
    agents = listed["agents"]
    width = max((len(a["name"]) for a in agents), default=4)
    print(f"{'NAME':<{width}}  {'SOURCE':<9}  {'MODELS':<40}  DESCRIPTION")
    for agent in agents:
        models = ", ".join(agent["models"]) or "-"
        print(
            f"{agent['name']:<{width}}  {agent['source']:<9}  {models:<40}  "
            f"{agent['description']}".rstrip()
        )
    for problem in listed["problems"]:
        where = f" agent {problem['agent']}" if "agent" in problem else ""
        print(f"problem: {problem['source']}{where}: {problem['message']}")
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
