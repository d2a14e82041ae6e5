"""Loop lint on a generated 500-node Loop: how long one lint takes (issue 15: "well under a
second").

The Loop is a chain of tool nodes (``compozy__session_status``, every third one in the full view)
and transforms, each transform reading a field of the tool node before it (proven against the
view that node selects), with a fan-out and its collect every 50 nodes. Lint is run end to end:
the document is parsed from YAML text (positions included), read, and every check runs.

    python -m benchmarks.loop_lint [--nodes 500] [--json] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from benchmarks.common import emit_json, machine, machine_line, median, percentile, table
from compozy_mcp.loops._lint import lint
from compozy_mcp.loops._source import load
from compozy_mcp.native import build_registry

DEFAULT_NODES = 500
ROUNDS = 20


def generate(count: int) -> str:
    """A valid Loop of ``count`` nodes, as YAML text."""
    lines = ["name: generated", "graph:", "  nodes:"]
    edges: list[tuple[str, str]] = []
    previous: str | None = None
    for index in range(count):
        node_id = f"n{index}"
        if index % 50 == 49 and index + 2 < count:
            lines += [
                f"    - id: {node_id}",
                "      class: control",
                "      kind: fan-out",
                "      params:",
                '        items: "{{ .inputs.names }}"',
            ]
        elif index % 50 == 0 and index and (f"n{index - 1}" in _fan_outs(count)):
            lines += [
                f"    - id: {node_id}",
                "      class: action",
                "      kind: transform",
                "      params:",
                "        output:",
                '          greeting: "hello {{ .item }} {{ .index }}"',
            ]
        elif index % 50 == 1 and index > 1 and (f"n{index - 2}" in _fan_outs(count)):
            lines += [
                f"    - id: {node_id}",
                "      class: control",
                "      kind: collect",
                "      params:",
                f"        from: n{index - 2}",
            ]
        elif index % 2 == 0:
            view = "full" if index % 3 == 0 else "compact"
            lines += [
                f"    - id: {node_id}",
                "      class: action",
                "      kind: compozy__session_status",
                "      params:",
                '        session_id: "{{ .inputs.session_id }}"',
                f"        result_view: {view}",
            ]
        else:
            source = f"n{index - 1}"
            field = (
                "session.lineage.permission_policy.tools"
                if (index - 1) % 3 == 0
                else "session.runtime.selection_revision"
            )
            lines += [
                f"    - id: {node_id}",
                "      class: action",
                "      kind: transform",
                "      params:",
                "        output:",
                f'          value: "{{{{ .nodes.{source}.output.{field} | json }}}}"',
                "          state: "
                f'"{{{{ default \\"none\\" .nodes.{source}.output.session.state }}}}"',
            ]
        if previous is not None:
            edges.append((previous, node_id))
        previous = node_id
    lines.append("  edges:")
    for source, target in edges:
        lines += [f"    - from: {source}", f"      to: {target}"]
    return "\n".join(lines) + "\n"


def _fan_outs(count: int) -> set[str]:
    return {f"n{i}" for i in range(count) if i % 50 == 49 and i + 2 < count}


def measure(nodes: int, rounds: int) -> dict[str, Any]:
    registry = build_registry()
    text = generate(nodes)
    _, items = lint(load(text), registry)  # warm: validators compiled, imports done
    seconds: list[float] = []
    parse_seconds: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        source = load(text)
        parsed = time.perf_counter()
        _, items = lint(source, registry)
        seconds.append(time.perf_counter() - started)
        parse_seconds.append(parsed - started)
    errors = [item.payload() for item in items if item.severity == "error"]
    return {
        "nodes": nodes,
        "document_bytes": len(text.encode()),
        "rounds": rounds,
        "items": len(items),
        "errors": errors,
        "lint_ms": {
            "median": median(seconds) * 1000,
            "p95": percentile(seconds, 0.95) * 1000,
            "min": min(seconds) * 1000,
        },
        "yaml_parse_ms_median": median(parse_seconds) * 1000,
        "machine": machine(),
    }


def report(result: dict[str, Any]) -> str:
    ms = result["lint_ms"]
    rows = [
        ["lint, end to end (YAML text -> items)", ms["median"], ms["p95"], ms["min"]],
        ["of which YAML parsing with positions", result["yaml_parse_ms_median"], "", ""],
    ]
    head = (
        f"Loop lint: {result['nodes']} nodes, {result['document_bytes']:,} bytes of YAML, "
        f"{result['rounds']} rounds; {result['items']} items ({len(result['errors'])} errors)"
    )
    return "\n".join(
        [head, table(["ms", "median", "p95", "min"], rows), machine_line(result["machine"])]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.loop_lint", description=__doc__)
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--quick", action="store_true", help="three rounds")
    args = parser.parse_args(argv)
    result = measure(args.nodes, 3 if args.quick else ROUNDS)
    if args.json:
        emit_json(result)
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
