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
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compozy_mcp.loops import kinds, paths, refs
from compozy_mcp.loops.limits import LoopLimits, exceeded
from compozy_mcp.loops.model import (
    ACTION,
    COLLECT,
    ERROR,
    FAN_OUT,
    GATE,
    INPUT,
    KINDS,
    RUN_AGENT,
    SOURCE,
    WARNING,
    Definition,
    LintItem,
    Node,
    dotted,
    locate,
    read_definition,
)
from compozy_mcp.loops.source import Path, Source
from compozy_mcp.native.registry import RegisteredTool, ToolRegistry
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


#: reports one item about the reference being checked: ``(code, message, severity)``
Report = Callable[..., None]


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


class _Linter:
    def __init__(
        self, definition: Definition, tools: ToolRegistry, agents: KnownAgents | None = None
    ) -> None:
        self.definition = definition
        self.source: Source = definition.source
        self.tools = tools
        self.agents = agents
        self.items: list[LintItem] = []
        self.parents = definition.parents()
        #: the nodes that run before each node, as a bitset over :attr:`index` (an int: a
        #: 10,000-node chain takes 12 MB, where sets of ids took over a gigabyte)
        self.ancestors: dict[str, int] = {}
        self.index = {node_id: bit for bit, node_id in enumerate(definition.nodes)}
        self.ordered = False
        self.bodies: dict[str, str] = {}

    # --- reporting --------------------------------------------------------------------------

    def add(
        self,
        code: str,
        message: str,
        node: Node | None,
        where: Path,
        *,
        path: str | None = None,
        severity: str = ERROR,
        at: tuple[int | None, int | None] | None = None,
    ) -> None:
        line, column = at if at is not None else locate(self.source, where)
        self.items.append(
            LintItem(code, message, severity, node.id if node else None, path, line, column)
        )

    def text_position(self, where: Path, text: str, offset: int) -> tuple[int | None, int | None]:
        mark = self.source.mark(where)
        if mark is None:
            return None, None
        if self.source.marks.get(where) is None:
            return mark.line, mark.column
        return mark.at(*refs.position(text, offset))

    # --- the graph --------------------------------------------------------------------------

    def graph(self) -> list[str]:
        order = self.topological()
        if order is None:
            return []
        index = self.index
        for node_id in order:
            seen = 0
            for parent in self.parents[node_id]:
                seen |= self.ancestors[parent] | (1 << index[parent])
            self.ancestors[node_id] = seen
        self.ordered = True
        self.fan_out_bodies()
        return order

    def topological(self) -> list[str] | None:
        """Node ids in an order that respects every edge; ``None`` (and a ``cycle`` item for
        the nodes on cycles) if there is none."""
        nodes = self.definition.nodes
        waiting = {node_id: len(parents) for node_id, parents in self.parents.items()}
        children = self.definition.children()
        ready = deque(node_id for node_id in nodes if waiting[node_id] == 0)
        order: list[str] = []
        while ready:
            node_id = ready.popleft()
            order.append(node_id)
            for edge in children[node_id]:
                waiting[edge.target] -= 1
                if waiting[edge.target] == 0:
                    ready.append(edge.target)
        if len(order) == len(nodes):
            return order
        done = set(order)
        stuck = [node_id for node_id in nodes if node_id not in done]
        first = nodes[stuck[0]]
        self.add(
            "cycle",
            f"the graph has a cycle through nodes {', '.join(repr(s) for s in stuck)}; "
            "a Loop is acyclic",
            first,
            first.where,
        )
        return None

    def fan_out_bodies(self) -> None:
        """Each node between a fan-out and its collect belongs to that fan-out's body."""
        nodes = self.definition.nodes
        for node in nodes.values():
            if node.kind != COLLECT:
                continue
            origin = node.params.get("from")
            fan = nodes.get(origin) if isinstance(origin, str) else None
            if fan is None or fan.kind != FAN_OUT:
                self.add(
                    "unknown_node",
                    f'node "{node.id}" params.from must name a fan-out node (got {origin!r})',
                    node,
                    (*node.where, "params", "from"),
                    path="params.from",
                )
                continue
            if not self.upstream(fan.id, node.id):
                self.add(
                    "reference_not_upstream",
                    f'node "{node.id}" collects fan-out "{fan.id}", which does not run before it',
                    node,
                    (*node.where, "params", "from"),
                    path="params.from",
                )
                continue
            for member in self.nodes_before(node.id):
                if self.upstream(fan.id, member):
                    self.bodies[member] = fan.id

    def upstream(self, source_id: str, node_id: str) -> bool:
        """Whether ``source_id`` runs before ``node_id`` (an edge path leads from it)."""
        bit = self.index.get(source_id)
        return bit is not None and bool(self.ancestors.get(node_id, 0) >> bit & 1)

    def nodes_before(self, node_id: str) -> list[str]:
        bits = self.ancestors.get(node_id, 0)
        ids = list(self.definition.nodes)
        found = []
        while bits:
            low = bits & -bits
            found.append(ids[low.bit_length() - 1])
            bits ^= low
        return found

    # --- nodes ------------------------------------------------------------------------------

    def node(self, node: Node) -> None:
        if node.kind == GATE and node.id in self.bodies:
            self.add(
                "gate_in_fanout",
                f'gate "{node.id}" is inside the body of fan-out "{self.bodies[node.id]}"; a '
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
        self.references(node, node.params, (*node.where, "params"), "params")
        if node.produces is not None:
            self.produces(node)

    def agent(self, node: Node, params: Mapping[str, Any], at: tuple[str, ...]) -> None:
        """The agent a new session of this node runs (none is created when ``session_id``
        names one; a reference is known at run time only)."""
        agent = params.get("agent")
        if self.agents is None or params.get("session_id") or not isinstance(agent, str):
            return
        if refs.has_action(agent) or agent in self.agents.names:
            return
        field = ".".join(("params", *at, "agent"))
        self.add(
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
            self.add(
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
                self.add(
                    "result_view_not_literal",
                    not_literal_message(node.id),
                    node,
                    where,
                    path=f"params.{SELECTOR_FIELD}",
                )
                return
            if not tool.has_views:
                self.add(
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
            self.add(
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
                self.add(
                    "params_invalid",
                    f'node "{node.id}" criterion id "{criterion["id"]}" is used twice',
                    node,
                    (*node.where, "params", "criteria", index, "id"),
                    path=f"params.criteria[{index}].id",
                )
            elif isinstance(criterion, dict) and isinstance(criterion.get("id"), str):
                seen.add(criterion["id"])

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
            self.add(
                "template_invalid",
                f'node "{node.id}" {path}: {exc.message}',
                node,
                where,
                path=path,
                at=self.text_position(where, text, exc.offset),
            )
            return
        for message, offset in refs.arity_problems(template):
            self.add(
                "template_invalid",
                f'node "{node.id}" {path}: {message}',
                node,
                where,
                path=path,
                at=self.text_position(where, text, offset),
            )
        for found in template.fields():
            self.field(node, found, where, path, self.text_position(where, text, found.offset))

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
            self.add(code, message, node, where, path=path, severity=severity, at=at)

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
            if node.id not in self.bodies:
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
        if self.ordered and not self.upstream(source_id, node.id):
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
                    self.add(
                        "result_view_field_requires_full",
                        f'node "{node.id}" produces {declared}, which the compact result of '
                        f"{tool.id} does not include; fix: add `result_view: full` to the "
                        f'params of node "{node.id}"',
                        node,
                        where,
                        path="produces",
                    )
                    continue
            self.add(
                "unresolvable_path",
                f'node "{node.id}" produces {declared}, which no view of {tool.id} has: '
                f"{not_declared(stop, found)}",
                node,
                where,
                path="produces",
            )


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
    linter = _Linter(definition, tools, agents)
    linter.graph()
    for node in definition.nodes.values():
        linter.node(node)
    return linter.items


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
    linter = _Linter(definition, ToolRegistry())
    order = linter.graph()
    return order, linter.bodies


def errors(items: list[LintItem]) -> list[LintItem]:
    return [item for item in items if item.severity == ERROR]


__all__ = ["KnownAgents", "dotted", "errors", "lint", "lint_definition"]
