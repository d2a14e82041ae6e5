"""Loop lint's proofs: every reference a node's params hold (template syntax, roots, inputs,
upstream nodes, fan-out items) and every output path they read, proven against the view each
tool node selects or a node's ``produces`` (spec, Loops)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compozy_mcp.loops import _kinds as kinds
from compozy_mcp.loops import _paths as paths
from compozy_mcp.loops import _refs as refs
from compozy_mcp.loops._lint_graph import LoopGraph
from compozy_mcp.loops._lint_report import LintReport
from compozy_mcp.loops._model import ERROR, INPUT, SOURCE, WARNING, Definition, Node
from compozy_mcp.loops._source import Path
from compozy_mcp.native.registry import RegisteredTool, ToolRegistry
from compozy_mcp.views import SELECTOR_FIELD, ResultView

COMPACT, FULL = ResultView.COMPACT.value, ResultView.FULL.value

#: reports one item about the reference being checked: ``(code, message, severity)``
Report = Callable[..., None]


@dataclass(frozen=True, slots=True)
class Contract:
    """The output contract a node's readers are proven against."""

    schema: Mapping[str, Any] | None
    #: for a tool node without produces: the tool, its view, and its full schema
    tool: RegisteredTool | None = None
    view: str | None = None


def requires_full_message(reader: str, reference: str, tool_id: str, source: str) -> str:
    return (
        f'node "{reader}" reads {reference}, which the compact result of {tool_id} does not '
        f'include; fix: add `result_view: full` to the params of node "{source}"'
    )


def not_literal_message(node_id: str) -> str:
    return f'node "{node_id}" params.result_view must be a literal "compact" or "full"'


def not_declared(steps: tuple[str, ...], found: paths.Resolution) -> str:
    fields = ", ".join(found.available) if found.available else "(none)"
    return (
        f'schema path "{paths.text(steps)}" is not declared; deepest valid segment '
        f'"{paths.text(found.deepest)}"; available fields: {fields}'
    )


def selected_view(tool: RegisteredTool, params: Mapping[str, Any]) -> str | None:
    """The view a tool node selects (``None``: a single-result tool)."""
    if not tool.has_views:
        return None
    value = params.get(SELECTOR_FIELD, COMPACT)
    return value if value in (COMPACT, FULL) else COMPACT


def view_schema(tool: RegisteredTool, view: str | None) -> Mapping[str, Any]:
    if tool.views is None or view is None:
        return tool.output_schema
    return tool.views.full.schema if view == FULL else tool.views.compact.schema


class Prover:
    def __init__(
        self, definition: Definition, tools: ToolRegistry, report: LintReport, graph: LoopGraph
    ) -> None:
        self.definition = definition
        self.tools = tools
        self.report = report
        self.graph = graph

    # --- references -------------------------------------------------------------------------

    def references(self, node: Node, value: Any, where: Path, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                self.references(node, item, (*where, str(key)), f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.references(node, item, (*where, index), f"{path}[{index}]")
        elif isinstance(value, str) and refs.has_action(value):
            if node.is_tool and where == (*node.where, "params", SELECTOR_FIELD):
                return  # reported as result_view_not_literal
            self.template(node, value, where, path)

    def template(self, node: Node, text: str, where: Path, path: str) -> None:
        try:
            template = refs.parse_cached(text)
        except refs.TemplateSyntaxError as exc:
            self.report.add(
                "template_invalid",
                f'node "{node.id}" {path}: {exc.message}',
                node,
                where,
                path=path,
                at=self.report.text_position(where, text, exc.offset),
            )
            return
        for message, offset in refs.arity_problems(template):
            self.report.add(
                "template_invalid",
                f'node "{node.id}" {path}: {message}',
                node,
                where,
                path=path,
                at=self.report.text_position(where, text, offset),
            )
        for found in template.fields():
            self.field(
                node, found, where, path, self.report.text_position(where, text, found.offset)
            )

    def field(
        self,
        node: Node,
        found: refs.Field,
        where: Path,
        path: str,
        at: tuple[int | None, int | None],
    ) -> None:
        steps = found.steps
        root = steps[0]
        reference = ".".join(steps)

        def add(code: str, message: str, severity: str = ERROR) -> None:
            self.report.add(code, message, node, where, path=path, severity=severity, at=at)

        if root == "inputs":
            declared = self.definition.inputs()
            if len(steps) > 1 and declared and steps[1] not in declared:
                add(
                    "unknown_input",
                    f'node "{node.id}" reads {reference}, but the Loop declares no input '
                    f'"{steps[1]}" (declared: {", ".join(sorted(declared))})',
                )
            return
        if root in ("item", "index"):
            if node.id not in self.graph.bodies:
                add(
                    "item_outside_fanout",
                    f'node "{node.id}" reads .{root} outside the body of a fan-out',
                )
            return
        if root != "nodes":
            add(
                "unknown_reference",
                f'node "{node.id}" reads {found.text}: unknown reference root "{root}" '
                f"(known: {', '.join(refs.ROOTS)})",
            )
            return
        if len(steps) < 2:
            return
        source_id = steps[1]
        source = self.definition.nodes.get(source_id)
        if source is None:
            add(
                "unknown_node",
                f'node "{node.id}" reads {reference}, but no node "{source_id}" is defined',
            )
            return
        if self.graph.ordered and not self.graph.upstream(source_id, node.id):
            add(
                "reference_not_upstream",
                f'node "{node.id}" reads {reference}, but node "{source_id}" does not run '
                f'before it; add an edge from "{source_id}"',
            )
            return
        if len(steps) < 3:
            return
        if steps[2] not in refs.NODE_FIELDS:
            add(
                "unknown_reference",
                f'node "{node.id}" reads {reference}: a node has {", ".join(refs.NODE_FIELDS)}',
            )
            return
        if steps[2] != "output" or len(steps) < 4:
            return
        self.output_path(node, source, steps[3:], reference, add)

    def output_path(
        self, reader: Node, source: Node, steps: tuple[str, ...], ref: str, add: Report
    ) -> None:
        contract = self.contract(source)
        if contract.schema is None:
            add(
                "unresolvable_path",
                f'node "{source.id}" has no declared output schema; path "{paths.text(steps)}" '
                f'read by node "{reader.id}" cannot be proven',
                WARNING,
            )
            return
        found = paths.resolve(contract.schema, steps)
        if found.proven:
            return
        if found.status == paths.OPEN:
            add(
                "unresolvable_path",
                f'node "{reader.id}" reads {ref}; the output schema of node "{source.id}" '
                f'leaves "{paths.text(found.deepest) or "$"}" open, so path '
                f'"{paths.text(steps)}" cannot be proven; check it against a real result',
                WARNING,
            )
            return
        tool = contract.tool
        if tool is not None and contract.view == COMPACT:
            in_full = paths.resolve(view_schema(tool, FULL), steps)
            if in_full.status != paths.MISSING:
                add(
                    "result_view_field_requires_full",
                    requires_full_message(reader.id, ref, tool.id, source.id),
                )
                return
        add("unresolvable_path", f'node "{reader.id}" reads {ref}: {not_declared(steps, found)}')

    def contract(self, node: Node) -> Contract:
        if node.produces:
            return Contract(node.produces)
        if node.is_tool:
            tool = self.tools.find(node.kind)
            if tool is None:
                return Contract({})  # reported as unknown_tool; nothing to prove against
            view = selected_view(tool, node.params)
            return Contract(view_schema(tool, view), tool, view)
        if node.cls == SOURCE and node.kind == INPUT:
            declared = kinds.input_schema(node.params)
            return Contract(declared or None)
        return Contract(kinds.OUTPUTS.get(node.kind))

    # --- produces ---------------------------------------------------------------------------

    def produces(self, node: Node) -> None:
        """A tool node's ``produces`` may declare only fields its view has (spec, Loops)."""
        if not node.is_tool or node.produces is None:
            return
        tool = self.tools.find(node.kind)
        if tool is None:
            return
        view = selected_view(tool, node.params)
        schema = view_schema(tool, view)
        where = (*node.where, "produces")
        reported: set[tuple[str, ...]] = set()
        for steps in paths.leaf_paths(node.produces):
            found = paths.resolve(schema, steps)
            if found.status != paths.MISSING:
                continue
            stop = (*found.deepest, steps[len(found.deepest)])
            if stop in reported:
                continue
            reported.add(stop)
            declared = paths.text(stop)
            if tool.has_views and view == COMPACT:
                in_full = paths.resolve(view_schema(tool, FULL), stop)
                if in_full.status != paths.MISSING:
                    self.report.add(
                        "result_view_field_requires_full",
                        f'node "{node.id}" produces {declared}, which the compact result of '
                        f"{tool.id} does not include; fix: add `result_view: full` to the "
                        f'params of node "{node.id}"',
                        node,
                        where,
                        path="produces",
                    )
                    continue
            self.report.add(
                "unresolvable_path",
                f'node "{node.id}" produces {declared}, which no view of {tool.id} has: '
                f"{not_declared(stop, found)}",
                node,
                where,
                path="produces",
            )
