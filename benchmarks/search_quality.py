"""Search quality: on the fixed task set of :mod:`benchmarks.search_tasks`, the share of tasks
whose tool ``compozy__tool_search`` ranks in its top 3 (and top 1, and the mean reciprocal
rank over the top 10), over the native tools plus upstream compozy's 269 served through the
proxy. Every search runs through the one dispatch path, as an agent's would.

    python -m benchmarks.search_quality [--json]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio

from benchmarks.catalogs import bench_app, with_fixture
from benchmarks.common import emit_json, machine, machine_line, table
from benchmarks.search_tasks import TASKS
from compozy_mcp.assembly import App

DEPTH = 10


async def ranks(app: App) -> list[dict[str, Any]]:
    """Each task with the rank of its tool (``None``: not in the top ``DEPTH``)."""
    out = []
    for task in TASKS:
        found = await app.dispatcher.call(
            "compozy__tool_search", {"query": task.text, "limit": DEPTH}
        )
        ids = [hit["id"] for hit in found.structured["tools"]]
        rank = next((i + 1 for i, tool_id in enumerate(ids) if tool_id in task.expected), None)
        out.append({"task": task.text, "tool": task.tool, "rank": rank, "top3": ids[:3]})
    return out


async def measure() -> dict[str, Any]:
    with bench_app() as app:
        async with with_fixture(app) as upstreams:
            found = await ranks(app)
            catalog = len(app.dispatcher.registry) + len(upstreams.tools())
    total = len(found)
    top = {k: sum(1 for r in found if r["rank"] is not None and r["rank"] <= k) for k in (1, 3)}
    mrr = sum(1 / r["rank"] for r in found if r["rank"] is not None) / total
    return {
        "benchmark": "search_quality",
        "ranking": "BM25F over name, description and parameter names (compozy_mcp.ranking)",
        "catalog_tools": catalog,
        "tasks": total,
        "top1_share": round(top[1] / total, 4),
        "top3_share": round(top[3] / total, 4),
        "top3_hits": top[3],
        f"mrr_at_{DEPTH}": round(mrr, 4),
        "misses": [r for r in found if r["rank"] is None or r["rank"] > 3],
        "machine": machine(),
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"Search quality: {result['tasks']} tasks over {result['catalog_tools']} tools "
        f"({result['ranking']})",
        "",
        table(
            ["figure", "value"],
            [
                ["tool in the top 3", f"{result['top3_share']:.1%} ({result['top3_hits']})"],
                ["tool first", f"{result['top1_share']:.1%}"],
                [f"MRR@{DEPTH}", result[f"mrr_at_{DEPTH}"]],
            ],
        ),
    ]
    if result["misses"]:
        lines += ["", "Not in the top 3:", ""]
        lines.append(
            table(
                ["task", "tool", "rank", "top 3"],
                [
                    [m["task"], m["tool"], m["rank"] or f">{DEPTH}", ", ".join(m["top3"])]
                    for m in result["misses"]
                ],
            )
        )
    lines += ["", machine_line(result["machine"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.search_quality", description=__doc__
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="the same run (it takes a second)")
    args = parser.parse_args(argv)
    result = anyio.run(measure)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
