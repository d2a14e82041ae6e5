"""Loop lint: every check a definition passes before it is stored or started.

The checks, with their codes:

- structure (:mod:`.model`): ``definition_invalid``, ``node_id_invalid``, ``node_id_duplicate``,
  ``class_unknown``, ``kind_unknown``, ``params_invalid``, ``produces_invalid``,
  ``unknown_node`` (an edge or a reference names no node), ``cycle``;
- agents: ``agent_unknown``, a ``run-agent`` node's (or a gate reviewer's) ``agent`` that the
  agent catalog it will run with does not define, with a "did you mean"; an error when the run
  starts now, a warning when the catalog can change before it does (validate, create);
- tool nodes: ``unknown_tool``, ``result_view_not_literal`` (spec, Errors), ``params_invalid``
  (literal params against the tool's input schema, the selector's dispatch messages included);
- references: ``template_invalid`` (syntax, unknown function, arity), ``unknown_reference`` (a
  root other than inputs, nodes, item, index), ``unknown_input``, ``reference_not_upstream``
  (a node that does not run before the reader), ``item_outside_fanout``, ``gate_in_fanout``;
- paths, against the view each tool node selects or a node's ``produces``:
  ``result_view_field_requires_full`` (spec, Loops: the field is in the full view only),
  ``unresolvable_path`` (neither view has it; the error names the deepest valid segment and
  the available fields, as upstream), and the ``unresolvable_path`` *warning* that a path
  cannot be proven (it runs into an open part of a schema).

Lint never raises on a bad document: every problem is an item. It is a pure function of the
definition, the tool registry and (when given) the names of the agent catalog.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compozy_mcp.loops import _kinds as kinds
from compozy_mcp.loops import _refs as refs
from compozy_mcp.loops._lint_graph import LoopGraph
from compozy_mcp.loops._lint_paths import Prover, not_literal_message, selected_view
from compozy_mcp.loops._lint_report import LintReport
from compozy_mcp.loops._model import (
    ACTION,
    ERROR,
    GATE,
    KINDS,
    RUN_AGENT,
    WARNING,
    Definition,
    LintItem,
    Node,
    dotted,
    read_definition,
)
from compozy_mcp.loops._source import Path, Source
from compozy_mcp.loops.limits import LoopLimits, exceeded
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.validation import compile_validator, describe
from compozy_mcp.views import SELECTOR_FIELD, ResultView

COMPACT, FULL = ResultView.COMPACT.value, ResultView.FULL.value
#: every code lint reports (``unresolvable_path`` also as the warning that a path cannot be
#: proven)
CODES = (
    "definition_invalid",
    "node_id_invalid",
    "node_id_duplicate",
    "class_unknown",
    "kind_unknown",
    "params_invalid",
    "produces_invalid",
    "unknown_node",
    "cycle",
    "agent_unknown",
    "unknown_tool",
    "result_view_not_literal",
    "template_invalid",
    "unknown_reference",
    "unknown_input",
    "reference_not_upstream",
    "item_outside_fanout",
    "gate_in_fanout",
    "result_view_field_requires_full",
    "unresolvable_path",
)


@dataclass(frozen=True, slots=True)
class KnownAgents:
    """The agent catalog ``run-agent`` nodes are checked against."""

    names: tuple[str, ...]
    #: ``error`` when the run starts now; ``warning`` when the catalog can change before it does
    severity: str = WARNING


def agent_unknown_message(node_id: str, field: str, agent: str, known: tuple[str, ...]) -> str:
    message = f'node "{node_id}" {field} "{agent}" is not a known agent (known: {", ".join(known)})'
    close = difflib.get_close_matches(agent, known, n=1)
    if close:
        message += f'; did you mean "{close[0]}"?'
    return message + f"; or define it in agents.yaml, e.g. `agents: {{{agent}: {{like: claude}}}}`"


class _NodeChecks:
    """The checks of each node on its own: its kind, its tool and params, its gate, its agent;
    references and paths are the prover's."""

    def __init__(
        self,
        tools: ToolRegistry,
        agents: KnownAgents | None,
        report: LintReport,
        graph: LoopGraph,
        prover: Prover,
    ) -> None:
        self.tools = tools
        self.agents = agents
        self.report = report
        self.graph = graph
        self.prover = prover

    def node(self, node: Node) -> None:
        if node.kind == GATE and node.id in self.graph.bodies:
            self.report.add(
                "gate_in_fanout",
                f'gate "{node.id}" is inside the body of fan-out "{self.graph.bodies[node.id]}"; a '
                "gate stops the whole run, so put it before the fan-out or after its collect",
                node,
                (*node.where, "kind"),
                path="kind",
            )
        if node.is_tool:
            self.tool_node(node)
        else:
            schema = kinds.PARAMS.get(node.kind)
            if schema is not None:
                self.params(node, schema, None)
            if node.kind == GATE:
                self.gate(node)
                reviewer = node.params.get("reviewer")
                if isinstance(reviewer, Mapping):
                    self.agent(node, reviewer, ("reviewer",))
            elif node.kind == RUN_AGENT:
                self.agent(node, node.params, ())
        self.prover.references(node, node.params, (*node.where, "params"), "params")
        if node.produces is not None:
            self.prover.produces(node)

    def agent(self, node: Node, params: Mapping[str, Any], at: tuple[str, ...]) -> None:
        """The agent a new session of this node runs (none is created when ``session_id``
        names one; a reference is known at run time only)."""
        agent = params.get("agent")
        if self.agents is None or params.get("session_id") or not isinstance(agent, str):
            return
        if refs.has_action(agent) or agent in self.agents.names:
            return
        field = ".".join(("params", *at, "agent"))
        self.report.add(
            "agent_unknown",
            agent_unknown_message(node.id, field, agent, self.agents.names),
            node,
            (*node.where, "params", *at, "agent"),
            path=field,
            severity=self.agents.severity,
        )

    def tool_node(self, node: Node) -> None:
        tool = self.tools.find(node.kind)
        if tool is None:
            self.report.add(
                "unknown_tool",
                f'node "{node.id}" kind "{node.kind}" is neither a registered tool nor one of '
                f"{', '.join(KINDS[ACTION])}",
                node,
                (*node.where, "kind"),
                path="kind",
            )
            return
        if SELECTOR_FIELD in node.params:
            value = node.params[SELECTOR_FIELD]
            where = (*node.where, "params", SELECTOR_FIELD)
            if not isinstance(value, str) or refs.has_action(value) or value not in (COMPACT, FULL):
                self.report.add(
                    "result_view_not_literal",
                    not_literal_message(node.id),
                    node,
                    where,
                    path=f"params.{SELECTOR_FIELD}",
                )
                return
            if not tool.has_views:
                self.report.add(
                    "params_invalid",
                    f'tool "{tool.id}" returns a single result and does not accept '
                    f'"{SELECTOR_FIELD}"',
                    node,
                    where,
                    path=f"params.{SELECTOR_FIELD}",
                )
                return
        self.params(node, tool.input_schema, tool.id)

    def params(self, node: Node, schema: Mapping[str, Any], tool_id: str | None) -> None:
        """Literal params against the input schema; a value that holds a reference is known at
        run time only, so an error about it (or inside it) is not reported."""
        validator = _validator(tool_id or f"kind:{node.kind}", schema)
        for error in validator.iter_errors(node.params):
            at = list(error.absolute_path)
            if _templated(node.params, at):
                continue
            field, problem = describe([error], unknown="is not a param of this kind")
            if tool_id is not None:
                problem = problem.replace("this kind", f"tool {tool_id}")
            where: Path = (*node.where, "params", *at)
            name = f"params.{field}" if field != "$" else "params"
            self.report.add(
                "params_invalid",
                f'node "{node.id}" {name} {problem}',
                node,
                where,
                path=name,
            )

    def gate(self, node: Node) -> None:
        criteria = node.params.get("criteria")
        if not isinstance(criteria, list):
            return
        seen: set[str] = set()
        for index, criterion in enumerate(criteria):
            if isinstance(criterion, dict) and criterion.get("id") in seen:
                self.report.add(
                    "params_invalid",
                    f'node "{node.id}" criterion id "{criterion["id"]}" is used twice',
                    node,
                    (*node.where, "params", "criteria", index, "id"),
                    path=f"params.criteria[{index}].id",
                )
            elif isinstance(criterion, dict) and isinstance(criterion.get("id"), str):
                seen.add(criterion["id"])


_VALIDATORS: dict[str, Any] = {}


def _validator(key: str, schema: Mapping[str, Any]) -> Any:
    """Validators compiled once per tool (or kind) per process: a 500-node Loop of one tool
    compiles its schema once."""
    validator = _VALIDATORS.get(key)
    if validator is None or validator.schema is not schema:
        validator = _VALIDATORS[key] = compile_validator(schema)
    return validator


def _templated(params: Any, at: list[Any]) -> bool:
    """Whether the value at ``at`` (or one above it) holds a reference."""
    value = params
    for step in at:
        if isinstance(value, str):
            break
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return False
        if isinstance(value, str) and refs.has_action(value):
            return True
    return isinstance(value, str) and refs.has_action(value)


def lint_definition(
    definition: Definition, tools: ToolRegistry, agents: KnownAgents | None = None
) -> list[LintItem]:
    report = LintReport(definition.source)
    graph = LoopGraph(definition, report)
    graph.order()
    checks = _NodeChecks(tools, agents, report, graph, Prover(definition, tools, report, graph))
    for node in definition.nodes.values():
        checks.node(node)
    return report.items


def lint(
    source: Source,
    tools: ToolRegistry,
    agents: KnownAgents | None = None,
    limits: LoopLimits | None = None,
) -> tuple[Definition, list[LintItem]]:
    """Read and lint a document: the definition and every item, structure first. A graph
    past the node or edge budget is refused before any check runs."""
    definition, items = read_definition(source)
    limits = limits or LoopLimits()
    if len(definition.nodes) > limits.max_nodes:
        raise exceeded(
            "the Loop has too many nodes", "loop_max_nodes", limits.max_nodes, Reason.LOOP_TOO_LARGE
        )
    if len(definition.edges) > limits.max_edges:
        raise exceeded(
            f"the Loop has too many edges (at most {limits.max_edges}: four per node of the "
            "node budget)",
            "loop_max_nodes",
            limits.max_nodes,
            Reason.LOOP_TOO_LARGE,
        )
    return definition, [*items, *lint_definition(definition, tools, agents)]


def plan(definition: Definition) -> tuple[list[str], dict[str, str]]:
    """The order a (linted) definition's nodes run in, and the fan-out each body node
    belongs to."""
    graph = LoopGraph(definition, LintReport(definition.source))
    order = graph.order()
    return order, graph.bodies


def errors(items: list[LintItem]) -> list[LintItem]:
    return [item for item in items if item.severity == ERROR]


__all__ = [
    "CODES",
    "KnownAgents",
    "dotted",
    "errors",
    "lint",
    "lint_definition",
    "plan",
    "selected_view",
]
