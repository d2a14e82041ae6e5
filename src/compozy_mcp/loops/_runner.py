"""Running a Loop: nodes one at a time in an order that respects every edge, each state change
saved as it happens, so that another process (or a restarted daemon) sees the run as it is.

Tool nodes call their tool through the one dispatch path with their view pinned
(``pin_view``), after checking that the contract the run pinned is still the live one.
``run-agent`` nodes create a session when given none and prompt it through the session tools,
waiting for the turn. A gate stops the run (``waiting``) until it is answered; the run then goes
on wherever it is answered. A fan-out runs the nodes between it and its collect once per item.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from compozy_mcp.calls import CallScope
from compozy_mcp.clock import Clock, timestamp
from compozy_mcp.errors import CompozyError, ToolError
from compozy_mcp.loops import _contracts as contracts
from compozy_mcp.loops import _refs as refs
from compozy_mcp.loops import _review as review
from compozy_mcp.loops import redaction
from compozy_mcp.loops._lint import plan
from compozy_mcp.loops._model import (
    BRANCH,
    COLLECT,
    FAN_OUT,
    GATE,
    INPUT,
    RUN_AGENT,
    TRANSFORM,
    Definition,
    Node,
)
from compozy_mcp.loops.limits import LoopLimits, exceeded, json_size_within
from compozy_mcp.native.registry import Risk, ToolRegistry
from compozy_mcp.reasons import Reason
from compozy_mcp.views import SELECTOR_FIELD

SESSION_CREATE = "compozy__session_create"
SESSION_PROMPT = "compozy__session_prompt"
DEFAULT_TURN_TIMEOUT = 600
#: how much longer than the turn's own timeout a run-agent node waits for the prompt call
TURN_GRACE_SECONDS = 30

# run statuses
QUEUED, RUNNING, WAITING = "queued", "running", "waiting"
SUCCEEDED, FAILED, CANCELLED, INTERRUPTED = "succeeded", "failed", "cancelled", "interrupted"
ENDED = (SUCCEEDED, FAILED, CANCELLED, INTERRUPTED)
# node statuses (besides the run's)
PENDING, SKIPPED = "pending", "skipped"
NODE_DONE = (SUCCEEDED, SKIPPED)
#: kinds that change nothing outside the run: repeating one after a restart is safe
PURE_KINDS = (TRANSFORM, BRANCH, FAN_OUT, COLLECT, INPUT)


class CallResult(Protocol):
    @property
    def structured(self) -> dict[str, Any]: ...


class ToolCaller(Protocol):
    """The one dispatch path (:class:`compozy_mcp.dispatch.Dispatcher`), as Loops call it."""

    async def call(
        self, tool_id: str, tool_input: Any, *, scope: CallScope = ..., pin_view: bool = ...
    ) -> CallResult: ...


class NodeFailed(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


class RunStopped(Exception):
    """The run was changed elsewhere (cancelled): this runner stops without writing."""


def failure(code: str, reason: str, message: str) -> dict[str, Any]:
    return {"code": code, "reason": reason, "message": message}


def error_payload(exc: BaseException, tool_id: str | None = None) -> dict[str, Any]:
    if isinstance(exc, CompozyError):
        return redaction.error_payload(exc)
    return failure("loop_node_failed", str(Reason.HANDLER_FAILED), str(exc) or type(exc).__name__)


def _node_failed(what: str, limit: str, value: int, reason: Reason) -> NodeFailed:
    """A node that would go past the limit named ``limit`` (a field of the settings)."""
    return NodeFailed(error_payload(exceeded(what, limit, value, reason)))


def safe_to_repeat(node: Node, tools: ToolRegistry) -> bool:
    if node.is_tool:
        tool = tools.find(node.kind)
        return tool is not None and tool.risk is Risk.READ
    return node.kind in PURE_KINDS


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "null", "nil")
    return bool(value)


def walk(value: Any, steps: tuple[str, ...]) -> Any:
    """The value at ``steps``; a field that is missing is ``None`` (renders empty)."""
    for step in steps:
        if isinstance(value, Mapping):
            value = value.get(step)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return None
    return value


@dataclass(slots=True)
class _Frame:
    """What references read: the run, and inside a fan-out body the item and its outputs."""

    item: Any = None
    index: int | None = None
    outputs: dict[str, Any] = field(default_factory=dict)


Save = Callable[[dict[str, Any]], Awaitable[None]]


class Runner:
    def __init__(
        self,
        definition: Definition,
        doc: dict[str, Any],
        *,
        tools: ToolRegistry,
        caller: ToolCaller,
        save: Save,
        clock: Clock,
        limits: LoopLimits | None = None,
    ) -> None:
        self.limits = limits or LoopLimits()
        self.definition = definition
        self.doc = doc
        self.tools = tools
        self.caller = caller
        self._save = save
        self.clock = clock
        self.order, self.bodies = plan(definition)
        # the session it acts as (the narrower of its starter and its version's author, see
        # :mod:`.ownership`); a run stored before that was recorded acts as its starter
        acting = doc["acts_as"] if "acts_as" in doc else doc.get("started_by")
        self.scope = CallScope(session_id=acting)
        self._templates: dict[str, refs.Template] = {}
        #: the bytes of node outputs the run holds (a resumed run starts from what it has)
        self.used = json_size_within(doc.get("nodes"), self.limits.run_bytes)

    # --- state --------------------------------------------------------------------------------

    def now(self) -> str:
        return timestamp(self.clock.now())

    def state(self, node_id: str) -> dict[str, Any]:
        states: dict[str, dict[str, Any]] = self.doc["nodes"]
        return states[node_id]

    async def save(self) -> None:
        self.doc["updated_at"] = self.now()
        await self._save(self.doc)

    async def mark(self, node_id: str, status: str, **fields: Any) -> None:
        state = self.state(node_id)
        state["status"] = status
        if status == RUNNING:
            state["started_at"] = self.now()
            state.pop("error", None)
        if status in (*ENDED, SKIPPED):
            state["ended_at"] = self.now()
        state.update(fields)
        await self.save()

    async def end(self, status: str, error: dict[str, Any] | None = None) -> None:
        self.doc["status"] = status
        self.doc["ended_at"] = self.now()
        self.doc["owner"] = None
        if error is not None:
            self.doc["error"] = error
        await self.save()

    # --- the run ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run every node that has not run yet; returns when the run ends or waits."""
        self.doc["status"] = RUNNING
        await self.save()
        for node_id in self.order:
            if node_id in self.bodies:
                continue  # its fan-out runs it
            state = self.state(node_id)
            if state["status"] in NODE_DONE:
                continue
            if state["status"] == WAITING:
                self.doc["status"] = WAITING
                self.doc["owner"] = None
                await self.save()
                return
            node = self.definition.nodes[node_id]
            if not self.live(node_id):
                await self.mark(node_id, SKIPPED)
                continue
            try:
                await self.step(node)
            except NodeFailed as exc:
                await self.mark(node_id, FAILED, error=exc.error)
                await self.end(
                    FAILED,
                    {**exc.error, "node_id": node_id},
                )
                return
            if self.state(node_id)["status"] == WAITING:
                self.doc["status"] = WAITING
                self.doc["owner"] = None
                await self.save()
                return
        await self.end(SUCCEEDED)

    def live(self, node_id: str) -> bool:
        """A node runs unless it has parents and every edge into it is dead (its parent was
        skipped, or it leaves a branch on the other value)."""
        edges = [e for e in self.definition.edges if e.target == node_id]
        if not edges:
            return True
        for edge in edges:
            parent = self.state(edge.source)
            if parent["status"] != SUCCEEDED:
                continue
            if edge.when is None:
                return True
            result = walk(parent.get("output"), ("result",))
            if bool(result) is edge.when:
                return True
        return False

    async def step(self, node: Node, frame: _Frame | None = None) -> None:
        in_body = frame is not None
        if not in_body:
            await self.mark(node.id, RUNNING)
        frame = frame or _Frame()
        if node.kind == GATE:
            if in_body:
                raise NodeFailed(
                    failure(
                        "loop_node_failed",
                        str(Reason.LOOP_INVALID),
                        f'gate "{node.id}" cannot be answered inside a fan-out body',
                    )
                )
            state = self.state(node.id)
            criteria = [{"id": c["id"], "prompt": c["prompt"]} for c in node.params["criteria"]]
            state["gate"] = {"title": node.params.get("title"), "criteria": criteria}
            if node.params.get("reviewer"):
                output = await self.review(node, criteria)
                if output is not None and output["decision"] == "approve":
                    await self.mark(node.id, SUCCEEDED, output=output)
                    return
                if output is not None:
                    state["output"] = output
                    raise NodeFailed(
                        failure(
                            "loop_node_failed",
                            str(Reason.GATE_REJECTED),
                            f'gate "{node.id}" was rejected by the reviewing agent',
                        )
                    )
            await self.mark(node.id, WAITING)
            return
        output = await self.execute(node, frame)
        self.hold(node, output)
        if not in_body:
            await self.mark(node.id, SUCCEEDED, output=output)
        else:
            frame.outputs[node.id] = output

    async def execute(self, node: Node, frame: _Frame) -> Any:
        try:
            if node.kind == FAN_OUT:
                return await self.fan_out(node)
            if node.is_tool:
                return await self.tool(node, frame)
            if node.kind == RUN_AGENT:
                return await self.run_agent(node, frame)
            if node.kind == TRANSFORM:
                return self.render(node.params.get("output"), frame)
            if node.kind == BRANCH:
                return {"result": truthy(self.render(node.params["condition"], frame))}
            if node.kind == INPUT:
                return self.doc["inputs"].get(node.id)
            if node.kind == COLLECT:
                return self.collect(node)
        except (NodeFailed, asyncio.CancelledError):
            raise
        except refs.RenderTooLarge as exc:
            raise self._too_large(node) from exc
        except refs.RenderError as exc:
            raise NodeFailed(
                failure(
                    "loop_node_failed",
                    str(Reason.REFERENCE_RENDER_FAILED),
                    f'node "{node.id}": {exc}',
                )
            ) from exc
        except (ToolError, CompozyError) as exc:
            raise NodeFailed(error_payload(exc)) from exc
        raise NodeFailed(
            failure("loop_node_failed", str(Reason.LOOP_INVALID), f"unknown kind {node.kind}")
        )

    # --- budgets ------------------------------------------------------------------------------

    def hold(self, node: Node, output: Any) -> None:
        """Count a node's output against the node's and the run's budgets before the run
        keeps it: past either, the node fails with the limit and the run keeps nothing more."""
        size = json_size_within(output, self.limits.node_output_bytes)
        if size is None:
            raise self._past_output_budget(f'node "{node.id}" made an output too large to keep')
        if self.used is None or self.used + size > self.limits.run_bytes:
            raise _node_failed(
                f'the run cannot keep node "{node.id}"\'s output: its outputs would pass the '
                "run's budget",
                "loop_run_bytes",
                self.limits.run_bytes,
                Reason.RUN_TOO_LARGE,
            )
        self.used += size

    def _past_output_budget(self, what: str) -> NodeFailed:
        limit = self.limits.node_output_bytes
        return _node_failed(what, "loop_node_output_bytes", limit, Reason.OUTPUT_TOO_LARGE)

    def _too_large(self, node: Node) -> NodeFailed:
        return self._past_output_budget(f'node "{node.id}" renders a value too large to make')

    # --- references ---------------------------------------------------------------------------

    def template(self, text: str) -> refs.Template:
        parsed = self._templates.get(text)
        if parsed is None:
            parsed = self._templates[text] = refs.parse(text)
        return parsed

    def render(self, value: Any, frame: _Frame) -> Any:
        """``value`` with every template rendered; the whole of it within the node output
        budget (:class:`refs.RenderTooLarge` as soon as it would pass it)."""
        return self._render(value, frame, [self.limits.node_output_bytes])

    def _render(self, value: Any, frame: _Frame, left: list[int]) -> Any:
        if isinstance(value, str):
            if not refs.has_action(value):
                return value

            def lookup(found: refs.Field) -> Any:
                return self.lookup(found, frame)

            made = refs.render(self.template(value), lookup, left[0])
            size = len(made) if isinstance(made, str) else json_size_within(made, left[0])
            if size is None or size > left[0]:
                raise refs.RenderTooLarge(self.limits.node_output_bytes)
            left[0] -= size
            return made
        if isinstance(value, dict):
            return {key: self._render(item, frame, left) for key, item in value.items()}
        if isinstance(value, list):
            return [self._render(item, frame, left) for item in value]
        return value

    def lookup(self, found: refs.Field, frame: _Frame) -> Any:
        steps = found.steps
        root = steps[0]
        if root == "inputs":
            return walk(self.doc["inputs"], steps[1:])
        if root == "item":
            return walk(frame.item, steps[1:])
        if root == "index":
            return frame.index
        if root != "nodes" or len(steps) < 2:
            return None
        node_id = steps[1]
        state = self.doc["nodes"].get(node_id)
        if state is None:
            return None
        output = frame.outputs[node_id] if node_id in frame.outputs else state.get("output")
        if len(steps) == 2:
            return {"status": state["status"], "output": output}
        if steps[2] == "status":
            return state["status"]
        if steps[2] == "output":
            return walk(output, steps[3:])
        return None

    # --- kinds --------------------------------------------------------------------------------

    async def tool(self, node: Node, frame: _Frame) -> Any:
        pinned = self.doc["contracts"][node.id]
        tool = contracts.check(node.id, pinned, self.tools)
        tool_input = self.render(node.params, frame)
        if pinned.get("view") is not None:
            # the view the run pinned, written out: a run translated from before views has
            # none in its params and returns the full record
            tool_input[SELECTOR_FIELD] = pinned["view"]
        result = await self.caller.call(tool.id, tool_input, scope=self.scope, pin_view=True)
        return result.structured

    async def run_agent(self, node: Node, frame: _Frame) -> Any:
        return await self.prompt_agent(node.id, self.render(node.params, frame))

    async def prompt_agent(self, node_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Create a session of ``params.agent`` unless ``params.session_id`` names one, prompt
        it and wait for the turn: ``{session_id, turn_id, stop_reason, final_message}``."""
        timeout = int(params.get("timeout_seconds") or DEFAULT_TURN_TIMEOUT)
        async with asyncio.timeout(timeout + TURN_GRACE_SECONDS):
            session_id = params.get("session_id") or None
            if session_id is None:
                created = await self.caller.call(
                    SESSION_CREATE,
                    {
                        "agent_name": params.get("agent_name") or node_id,
                        "provider": params["agent"],
                    },
                    scope=self.scope,
                )
                session_id = created.structured["session"]["id"]
            prompted = await self.caller.call(
                SESSION_PROMPT,
                {
                    "session_id": session_id,
                    "prompt": str(params["prompt"]),
                    "wait": True,
                    "timeout_seconds": timeout,
                    "result_view": "full",
                },
                scope=self.scope,
            )
        turn = prompted.structured["turn"]
        if turn.get("status") != "completed":
            raise NodeFailed(
                failure(
                    "loop_node_failed",
                    str(Reason.TURN_NOT_COMPLETED),
                    f'node "{node_id}": the turn {turn.get("turn_id")} of session {session_id} '
                    f"ended {turn.get('status')} ({turn.get('stop_reason') or 'no stop reason'}), "
                    "not completed",
                )
            )
        return {
            "session_id": session_id,
            "turn_id": turn["turn_id"],
            "stop_reason": turn.get("stop_reason") or "",
            "final_message": turn.get("final_message") or "",
        }

    async def review(self, node: Node, criteria: list[dict[str, Any]]) -> dict[str, Any] | None:
        """A reviewing agent's answer to a gate: the gate's output when it decides, ``None``
        (with the reason kept on the gate) when the operator has to."""
        reviewer = self.render(node.params["reviewer"], _Frame())
        gate = self.state(node.id)["gate"]
        text = review.prompt(node.params.get("title"), criteria, reviewer.get("context"))
        try:
            answer = await self.prompt_agent(node.id, {**reviewer, "prompt": text})
        except (NodeFailed, ToolError, TimeoutError) as exc:
            reason = exc.error["message"] if isinstance(exc, NodeFailed) else str(exc)
            gate["review"] = {"note": f"the reviewing agent gave no answer: {reason}"}
            return None
        verdict = review.read(answer["final_message"], criteria)
        gate["review"] = {"session_id": answer["session_id"], "turn_id": answer["turn_id"]}
        if verdict is None:
            gate["review"]["note"] = "the reviewing agent did not decide every criterion"
            return None
        who = f"agent:{answer['session_id']}"
        gate.update(decision=verdict.decision, answered_by=who)
        return {"decision": verdict.decision, "answered_by": who, "answers": verdict.answers}

    async def fan_out(self, node: Node) -> Any:
        items = self.render(node.params.get("items"), _Frame())
        if not isinstance(items, list):
            raise NodeFailed(
                failure(
                    "loop_node_failed",
                    str(Reason.REFERENCE_RENDER_FAILED),
                    f'node "{node.id}" params.items must render to a list, got '
                    f"{type(items).__name__}",
                )
            )
        body = [node_id for node_id in self.order if self.bodies.get(node_id) == node.id]
        for member in body:
            self.state(member).update(status=RUNNING, started_at=self.now(), items=[])
        await self.save()
        for index, item in enumerate(items):
            frame = _Frame(item=item, index=index)
            for member in body:
                member_node = self.definition.nodes[member]
                try:
                    await self.step(member_node, frame)
                except NodeFailed as exc:
                    self.state(member)["items"].append({"status": FAILED, "error": exc.error})
                    raise NodeFailed({**exc.error, "item_index": index}) from exc
                self.state(member)["items"].append(
                    {"status": SUCCEEDED, "output": frame.outputs[member]}
                )
                await self.save()
        for member in body:
            await self.mark(member, SUCCEEDED)
        return {"items": items, "count": len(items)}

    def collect(self, node: Node) -> Any:
        origin = node.params["from"]
        sinks = [
            e.source
            for e in self.definition.edges
            if e.target == node.id and self.bodies.get(e.source) == origin
        ]
        count = int(walk(self.state(origin).get("output"), ("count",)) or 0)
        gathered: list[Any] = []
        for index in range(count):
            outputs = {
                sink: self.state(sink)["items"][index].get("output")
                for sink in sinks
                if index < len(self.state(sink).get("items", []))
            }
            gathered.append(outputs[sinks[0]] if len(sinks) == 1 else outputs)
        return {"items": gathered, "count": len(gathered)}


async def shielded(work: Awaitable[None]) -> None:
    """Finish a save even when the task that makes it is being cancelled."""
    with anyio.CancelScope(shield=True):
        await work
