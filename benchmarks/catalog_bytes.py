"""Catalog bytes: what ``tools/list`` weighs for the full-policy catalog, at each feature stage.

Four figures, each the serialized bytes a client receives, taken from a live proxy through an
SDK ``mcp.client.Client`` and a byte-level wire (:mod:`benchmarks.wire`):

(a) baseline: before result views (full ``outputSchema`` on every tool, no selector);
(b) views with output schemas still advertised (compact ``outputSchema`` + ``output_views``);
(c) today's ``tools/list`` (no ``outputSchema``);
(d) the model-facing projection of (c): name, description and input schema only.

A figure is the bytes of the JSON-RPC ``result`` of every ``tools/list`` page, sliced from the
response lines. Both protocol eras are measured; the headline is 2026-07-28, the era
``mcp.client.Client`` negotiates by default.

Then progressive discovery: the same figures with ``--discovery search`` against ``full``, for
the native catalog and for the native catalog plus upstream compozy's 269 tools served through
the proxy by a test MCP server (:mod:`benchmarks.fixture_server`); the bytes of one search
answer; and the search-quality figure of :mod:`benchmarks.search_quality`.

    python -m benchmarks.catalog_bytes [--json] [--quick] [--verify-stdio]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.client import Client
from mcp.server import Server

from benchmarks import search_quality
from benchmarks.catalogs import bench_app, with_fixture
from benchmarks.common import (
    REPO_ROOT,
    emit_json,
    initialize_request,
    machine,
    machine_line,
    table,
)
from benchmarks.search_tasks import TASKS
from benchmarks.variants import VARIANTS, VariantProxyServer
from benchmarks.wire import WireLog, exchanges, response_result, wire_transport
from compozy_mcp import jsonutil
from compozy_mcp.assembly import App
from compozy_mcp.proxy.modes import Discovery
from compozy_mcp.proxy.server import ProxyServer

ERAS = {"2026-07-28": "auto", "2025-11-25": "legacy"}
HEADLINE_ERA = "2026-07-28"
LABELS = {"baseline": "a", "views_with_schemas": "b", "current": "c"}
#: the spec's figures for upstream's full-policy catalog (288 tools, 99 view adopters)
SPEC = {"a": 744_687, "b": 1_088_135, "c": 347_863, "d": 207_320}
TARGET_C_OVER_D = 1.15
TARGET_C_OVER_A = 0.5
TOP = 10


@dataclass(frozen=True, slots=True)
class Listing:
    """One variant's ``tools/list`` as one era's client received it."""

    variant: str
    era: str
    negotiated: str
    pages: int
    #: bytes of every page's ``result``
    result_bytes: int
    #: bytes of every page's whole JSON-RPC response line
    message_bytes: int
    tools: list[dict[str, Any]]
    #: the ``result`` lines, for comparison with another transport
    results: list[bytes]


#: the catalogs of the discovery figures
CATALOGS = {"native": "native tools", "with_fixture": "native + upstream compozy (fixture)"}
#: the size of a search answer an agent reads
SEARCH_LIMIT = 5


async def list_through_wire(app: App, variant: str, era: str) -> Listing:
    return await list_server_through_wire(VariantProxyServer(app, variant).server, variant, era)


async def list_server_through_wire(server: Server[Any], variant: str, era: str) -> Listing:
    log = WireLog()
    async with Client(wire_transport(server, log), mode=ERAS[era]) as client:
        negotiated = str(client.protocol_version)
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            cursor = page.next_cursor
            if cursor is None:
                break
    tools: list[dict[str, Any]] = []
    results: list[bytes] = []
    message_bytes = 0
    for request_id, line in exchanges(log, "tools/list"):
        result = response_result(line, request_id)
        parsed = jsonutil.loads(result)
        # per-tool weights are re-serialized below; prove that reproduces the wire bytes
        if jsonutil.dumps(parsed) != result:
            raise AssertionError("orjson does not reproduce the wire bytes of tools/list")
        results.append(result)
        message_bytes += len(line) + 1  # the newline that frames it on stdio
        tools.extend(parsed["tools"])
    return Listing(
        variant=variant,
        era=era,
        negotiated=negotiated,
        pages=len(results),
        result_bytes=sum(len(r) for r in results),
        message_bytes=message_bytes,
        tools=tools,
        results=results,
    )


def model_projection(tools: list[dict[str, Any]]) -> bytes:
    """What a host puts in the model's context: name, description, input schema."""
    projected = [
        {
            "name": t["name"],
            "description": t.get("description", ""),
            "inputSchema": t["inputSchema"],
        }
        for t in tools
    ]
    return jsonutil.dumps({"tools": projected})


def tool_weights(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each tool's bytes in the listing, heaviest first, split into its parts."""
    rows = []
    for tool in tools:
        rows.append(
            {
                "name": tool["name"],
                "bytes": len(jsonutil.dumps(tool)),
                "description_bytes": len(jsonutil.dumps(tool.get("description", ""))),
                "input_schema_bytes": len(jsonutil.dumps(tool["inputSchema"])),
                "annotations_bytes": len(jsonutil.dumps(tool.get("annotations", {}))),
            }
        )
    rows.sort(key=lambda row: (-row["bytes"], row["name"]))
    return rows


async def measure(eras: list[str]) -> dict[str, Any]:
    listings: dict[str, dict[str, Listing]] = {}
    with bench_app() as app:
        for era in eras:
            listings[era] = {v: await list_through_wire(app, v, era) for v in VARIANTS}
        with_views = sum(1 for tool in app.dispatcher.registry if tool.has_views)
        total = len(app.dispatcher.registry)
    by_era: dict[str, Any] = {}
    for era, variants in listings.items():
        current = variants["current"]
        figures = {LABELS[v]: listing.result_bytes for v, listing in variants.items()}
        figures["d"] = len(model_projection(current.tools))
        by_era[era] = {
            "negotiated": current.negotiated,
            "pages": current.pages,
            "figures": figures,
            "message_bytes": {LABELS[v]: lst.message_bytes for v, lst in variants.items()},
            "ratios": ratios(figures),
        }
    headline = by_era[HEADLINE_ERA] if HEADLINE_ERA in by_era else next(iter(by_era.values()))
    current_tools = listings[next(iter(listings))]["current"].tools
    return {
        "benchmark": "catalog_bytes",
        "headline_era": HEADLINE_ERA if HEADLINE_ERA in by_era else next(iter(by_era)),
        "tools": total,
        "tools_with_views": with_views,
        "figures": headline["figures"],
        "ratios": headline["ratios"],
        "targets": targets(headline["ratios"]),
        "eras": by_era,
        "heaviest": tool_weights(current_tools)[:TOP],
        "spec": {"figures": SPEC, "ratios": ratios(dict(SPEC))},
        "machine": machine(),
        "_listings": listings,
    }


# --- progressive discovery ------------------------------------------------------------------


async def discovery_figures(era: str) -> dict[str, Any]:
    """Each catalog's ``tools/list`` with ``--discovery full`` and ``search``: tools, result
    bytes, model-facing bytes; and what one search answer weighs."""
    out: dict[str, Any] = {}
    for catalog in CATALOGS:
        row: dict[str, Any] = {}
        for mode in Discovery:
            with bench_app() as app:
                async with contextlib.AsyncExitStack() as stack:
                    upstreams = None
                    if catalog == "with_fixture":
                        upstreams = await stack.enter_async_context(with_fixture(app))
                    proxy = ProxyServer(app, upstreams=upstreams, discovery=mode)
                    listing = await list_server_through_wire(proxy.server, mode.value, era)
                    if mode is Discovery.SEARCH:
                        row["search_answer"] = await _search_answers(app)
            row[mode.value] = {
                "tools": len(listing.tools),
                "list_bytes": listing.result_bytes,
                "model_bytes": len(model_projection(listing.tools)),
            }
        row["search_over_full"] = round(
            row["search"]["model_bytes"] / row["full"]["model_bytes"], 4
        )
        out[catalog] = row
    return out


async def _search_answers(app: App) -> dict[str, Any]:
    """The bytes of ``compozy__tool_search`` answers (limit 5) over the task set."""
    sizes = []
    for task in TASKS:
        found = await app.dispatcher.call(
            "compozy__tool_search", {"query": task.text, "limit": SEARCH_LIMIT}
        )
        sizes.append(len(found.structured_json))
    return {
        "limit": SEARCH_LIMIT,
        "median_bytes": int(statistics.median(sizes)),
        "max_bytes": max(sizes),
        "queries": len(sizes),
    }


def ratios(figures: dict[str, int]) -> dict[str, float]:
    return {
        "c_over_a": round(figures["c"] / figures["a"], 4),
        "c_over_d": round(figures["c"] / figures["d"], 4),
        "b_over_a": round(figures["b"] / figures["a"], 4),
    }


def targets(found: dict[str, float]) -> dict[str, dict[str, Any]]:
    return {
        "c_over_d": {
            "target": f"<= {TARGET_C_OVER_D}",
            "value": found["c_over_d"],
            "met": found["c_over_d"] <= TARGET_C_OVER_D,
        },
        "c_over_a": {
            "target": f"<= {TARGET_C_OVER_A}",
            "value": found["c_over_a"],
            "met": found["c_over_a"] <= TARGET_C_OVER_A,
        },
    }


# --- stdio cross-check ---------------------------------------------------------------------


def serve(variant: str) -> None:
    """Serve one variant over stdio (for ``--verify-stdio``)."""
    from compozy_mcp.proxy.transports import serve_stdio

    with bench_app() as app:
        anyio.run(serve_stdio, VariantProxyServer(app, variant).server)


def stdio_result(variant: str) -> bytes:
    """The ``tools/list`` result line a real stdio subprocess writes, read raw (2025-11-25)."""
    requests = [
        initialize_request("bench"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.catalog_bytes", "--serve", variant],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        for request in requests:
            proc.stdin.write(jsonutil.dumps(request) + b"\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"stdio server for {variant} exited without answering")
            message = jsonutil.loads(line)
            if message.get("id") == 2:
                return response_result(line.rstrip(b"\n"), 2)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def verify_stdio(listings: dict[str, Listing]) -> dict[str, bool]:
    return {
        variant: stdio_result(variant) == b"".join(listing.results)
        for variant, listing in listings.items()
    }


# --- output --------------------------------------------------------------------------------


def report(result: dict[str, Any]) -> str:
    fig = result["figures"]
    eras = result["eras"]
    names = {
        "a": "baseline: full outputSchema, no selector",
        "b": "views + outputSchema (compact) + output_views",
        "c": "today: no outputSchema",
        "d": "model projection: name, description, input",
    }
    rows = []
    for key in "abcd":
        row: list[object] = [f"({key}) {names[key]}"]
        row += [eras[era]["figures"][key] for era in eras]
        row.append(result["spec"]["figures"][key])
        rows.append(row)
    lines = [
        f"Catalog bytes: full-policy catalog, {result['tools']} tools, "
        f"{result['tools_with_views']} with views (tools/list result bytes, all pages)",
        "",
        table(["figure", *[f"bytes {era}" for era in eras], "spec (288 tools)"], rows),
        "",
    ]
    r, spec = result["ratios"], result["spec"]["ratios"]
    t = result["targets"]
    lines.append(
        table(
            ["ratio", f"ours ({result['headline_era']})", "spec", "target", "met"],
            [
                [
                    "c/a",
                    r["c_over_a"],
                    spec["c_over_a"],
                    t["c_over_a"]["target"],
                    t["c_over_a"]["met"],
                ],
                [
                    "c/d",
                    r["c_over_d"],
                    spec["c_over_d"],
                    t["c_over_d"]["target"],
                    t["c_over_d"]["met"],
                ],
                ["b/a", r["b_over_a"], spec["b_over_a"], "-", "-"],
            ],
        )
    )
    lines += ["", f"Heaviest {TOP} tools in (c):", ""]
    lines.append(
        table(
            ["tool", "bytes", "share", "description", "input schema", "annotations"],
            [
                [
                    w["name"],
                    w["bytes"],
                    f"{w['bytes'] / fig['c']:.1%}",
                    w["description_bytes"],
                    w["input_schema_bytes"],
                    w["annotations_bytes"],
                ]
                for w in result["heaviest"]
            ],
        )
    )
    lines += ["", discovery_report(result)]
    if "stdio_identical" in result:
        lines += [
            "",
            f"stdio cross-check (2025-11-25, byte-identical): {result['stdio_identical']}",
        ]
    lines += ["", machine_line(result["machine"])]
    return "\n".join(lines)


def discovery_report(result: dict[str, Any]) -> str:
    found = result["discovery"]
    rows = []
    for catalog, name in CATALOGS.items():
        row = found[catalog]
        full, search = row["full"], row["search"]
        rows.append(
            [
                f"{name} ({full['tools']})",
                full["list_bytes"],
                full["model_bytes"],
                search["list_bytes"],
                search["model_bytes"],
                f"{row['search_over_full']:.1%}",
            ]
        )
    answer = found["with_fixture"]["search_answer"]
    quality = result["search_quality"]
    lines = [
        "Progressive discovery (--discovery search against full; bytes of the tools/list "
        "result, and of its model-facing projection):",
        "",
        table(
            [
                "catalog (tools)",
                "full list",
                "full model",
                "search list",
                "search model",
                "search/full model",
            ],
            rows,
        ),
        "",
        f"One compozy__tool_search answer (limit {answer['limit']}, over the "
        f"{answer['queries']} tasks): median {answer['median_bytes']:,} B, max "
        f"{answer['max_bytes']:,} B.",
        f"Search quality ({quality['tasks']} tasks, {quality['catalog_tools']} tools): tool in "
        f"the top 3 for {quality['top3_share']:.1%}, first for {quality['top1_share']:.1%} "
        f"(MRR@10 {quality['mrr_at_10']}); python -m benchmarks.search_quality lists the misses.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.catalog_bytes", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="headline era only")
    parser.add_argument(
        "--verify-stdio",
        action="store_true",
        help="also list each variant from a stdio subprocess and compare the bytes",
    )
    parser.add_argument("--serve", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    eras = [HEADLINE_ERA] if args.quick else list(ERAS)
    result = anyio.run(measure, eras)
    result["discovery"] = anyio.run(discovery_figures, HEADLINE_ERA)
    quality = anyio.run(search_quality.measure)
    del quality["machine"]
    result["search_quality"] = quality
    listings: dict[str, dict[str, Listing]] = result.pop("_listings")
    if args.verify_stdio:
        legacy = listings.get("2025-11-25")
        if legacy is None:
            legacy = {v: anyio.run(_legacy, v) for v in VARIANTS}
        result["stdio_identical"] = verify_stdio(legacy)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


async def _legacy(variant: str) -> Listing:
    with bench_app() as app:
        return await list_through_wire(app, variant, "2025-11-25")


if __name__ == "__main__":
    sys.exit(main())
