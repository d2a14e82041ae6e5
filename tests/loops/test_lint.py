"""Issue 15, item 3: Loop lint. The spec's example literally (fails with exactly the spec's
message without ``result_view: full``, passes with it), every lint code, and each item's
``{node_id, path, code, message, severity, line, column}``; through dispatch and MCP here, the
CLI in ``tests/cli/test_loop_cli.py``."""

from __future__ import annotations

import json

import pytest
from tests.conftest import Caller
from tests.loops.support import (
    LINT_CASES,
    RUN_ERRORS,
    SPEC_EXAMPLE,
    SPEC_EXAMPLE_COMPACT,
    SPEC_MESSAGE,
    codes,
    gate,
    graph,
    lint_items,
    mcp_client,
    status_node,
    transform,
)
from tests.proxy.support import record, tool_error

from compozy_mcp.assembly import App
from compozy_mcp.errors import LoopInvalid
from compozy_mcp.loops._lint import CODES

pytestmark = pytest.mark.anyio


# --- the spec's example ----------------------------------------------------------------------


async def test_spec_example_without_full_fails_with_exactly_the_spec_message(app: App) -> None:
    items = await lint_items(app, SPEC_EXAMPLE_COMPACT)
    assert items == [
        {
            "node_id": "report",
            "path": "params.prompt",
            "code": "result_view_field_requires_full",
            "message": SPEC_MESSAGE,
            "severity": "error",
            "line": 13,
            "column": 36,
        }
    ]


async def test_spec_example_with_full_passes(app: App) -> None:
    result = (
        await app.dispatcher.call("compozy__loop_validate", {"definition": SPEC_EXAMPLE})
    ).structured
    assert result == {"valid": True, "items": []}


# --- agents -----------------------------------------------------------------------------------

BARE_INSTALL_MESSAGE = (
    'node "report" params.agent "general" is not a known agent (known: claude, codex, echo, '
    "gemini); or define it in agents.yaml, e.g. `agents: {general: {like: claude}}`"
)


async def test_on_a_default_install_the_spec_example_warns_that_general_is_no_agent(
    app: App,
) -> None:
    """The catalog can change before a stored Loop runs: validate and create warn."""
    (app.settings.home / "agents.yaml").unlink()
    result = (
        await app.dispatcher.call("compozy__loop_validate", {"definition": SPEC_EXAMPLE})
    ).structured
    assert result["valid"] is True
    assert [
        (i["code"], i["severity"], i["message"], i["path"], i["line"]) for i in result["items"]
    ] == [("agent_unknown", "warning", BARE_INSTALL_MESSAGE, "params.agent", 13)]


async def test_a_run_that_starts_now_stops_on_an_unknown_agent_before_start(app: App) -> None:
    (app.settings.home / "agents.yaml").unlink()
    with pytest.raises(LoopInvalid) as caught:
        await app.dispatcher.call(
            "compozy__loop_run", {"definition": SPEC_EXAMPLE, "inputs": {"session_id": "s"}}
        )
    (item,) = caught.value.details["items"]
    assert (item["code"], item["severity"], item["message"]) == (
        "agent_unknown",
        "error",
        BARE_INSTALL_MESSAGE,
    )
    listed = (await app.dispatcher.call("compozy__loop_list", {})).structured
    assert listed["loops"] == []  # nothing was stored


async def test_a_stored_loop_whose_agent_went_away_is_refused_at_its_next_start(
    app: App,
) -> None:
    made = (
        await app.dispatcher.call("compozy__loop_create", {"definition": SPEC_EXAMPLE})
    ).structured
    (app.settings.home / "agents.yaml").unlink()
    with pytest.raises(LoopInvalid, match="agent_unknown"):
        await app.dispatcher.call(
            "compozy__loop_run", {"loop_id": made["loop"]["id"], "inputs": {"session_id": "s"}}
        )


async def test_an_agent_close_to_a_known_one_gets_a_did_you_mean(app: App) -> None:
    text = graph("id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: cluade\n  prompt: hi")
    [item] = await lint_items(app, text)
    assert item["message"].startswith(
        'node "ask" params.agent "cluade" is not a known agent (known: claude, codex, echo, '
        'gemini, general); did you mean "claude"?'
    )


async def test_a_reviewers_agent_is_checked_and_a_named_session_or_a_reference_is_not(
    app: App,
) -> None:
    reviewer = (
        "id: review\nclass: control\nkind: gate\nparams:\n  criteria: [{id: ok, prompt: Ok?}]\n"
        "  reviewer: {agent: nobody}"
    )
    [item] = await lint_items(app, graph(reviewer))
    assert (item["code"], item["path"]) == ("agent_unknown", "params.reviewer.agent")
    named = "id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: nobody\n  prompt: hi"
    assert await lint_items(app, graph(named + '\n  session_id: "{{ .inputs.sid }}"')) == []
    templated = (
        'id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: "{{ .inputs.a }}"\n  prompt: hi'
    )
    assert await lint_items(app, graph(templated)) == []


async def test_the_spec_example_runs_with_the_one_line_agents_yaml(app: App, call: Caller) -> None:
    """docs/loops.md: ``agents: {general: {like: ...}}`` makes ``agent: general`` run."""
    sid = (await call.create())["id"]
    run = (
        await app.dispatcher.call(
            "compozy__loop_run",
            {"definition": SPEC_EXAMPLE, "inputs": {"session_id": sid}, "wait": True},
        )
    ).structured["run"]
    assert run["status"] == "succeeded", run
    report = (
        await app.dispatcher.call(
            "compozy__loop_status", {"run_id": run["run_id"], "result_view": "full"}
        )
    ).structured["run"]
    output = next(n for n in report["nodes"] if n["node_id"] == "report")["output"]
    assert output["final_message"].startswith("echo: Tools allowed:")


async def test_spec_example_through_mcp(app: App) -> None:
    async with mcp_client(app) as client:
        failed = record(
            await client.call_tool("compozy__loop_validate", {"definition": SPEC_EXAMPLE_COMPACT})
        )
        passed = record(
            await client.call_tool("compozy__loop_validate", {"definition": SPEC_EXAMPLE})
        )
        refused = tool_error(
            await client.call_tool("compozy__loop_create", {"definition": SPEC_EXAMPLE_COMPACT})
        )
    assert failed["valid"] is False
    assert [(i["code"], i["message"]) for i in failed["items"]] == [
        ("result_view_field_requires_full", SPEC_MESSAGE)
    ]
    assert passed == {"valid": True, "items": []}
    assert (refused["code"], refused["reason"]) == ("tool_invalid_input", "loop_invalid")
    assert f"error: result_view_field_requires_full\n{SPEC_MESSAGE}" in refused["message"]


async def test_create_and_run_stop_the_spec_example_before_start(app: App) -> None:
    for verb in ("create", "run"):
        with pytest.raises(LoopInvalid) as caught:
            await app.dispatcher.call(f"compozy__loop_{verb}", {"definition": SPEC_EXAMPLE_COMPACT})
        assert caught.value.details["items"][0]["message"] == SPEC_MESSAGE
    listed = (await app.dispatcher.call("compozy__loop_runs", {})).structured
    assert listed["runs"] == []
    assert (await app.dispatcher.call("compozy__loop_list", {})).structured["loops"] == []


async def test_an_object_definition_lints_without_positions(app: App) -> None:
    import yaml

    document = yaml.safe_load(SPEC_EXAMPLE_COMPACT)
    items = await lint_items(app, document)
    assert [(i["code"], i["message"], i["line"]) for i in items] == [
        ("result_view_field_requires_full", SPEC_MESSAGE, None)
    ]


async def test_json_text_lints_with_positions(app: App) -> None:
    import yaml

    text = json.dumps(yaml.safe_load(SPEC_EXAMPLE_COMPACT), indent=2)
    items = await lint_items(app, text)
    assert items[0]["code"] == "result_view_field_requires_full"
    assert (
        items[0]["line"]
        == text.splitlines().index(next(line for line in text.splitlines() if '"prompt"' in line))
        + 1
    )


# --- result_view_not_literal (spec, Errors) ----------------------------------------------------


@pytest.mark.parametrize(
    "value", ['"{{ .inputs.view }}"', "7", "Full", '"compact {{ .inputs.x }}"']
)
async def test_result_view_not_literal(app: App, value: str) -> None:
    items = await lint_items(app, graph(status_node("inspect", view=value)))
    assert items == [
        {
            "node_id": "inspect",
            "path": "params.result_view",
            "code": "result_view_not_literal",
            "message": 'node "inspect" params.result_view must be a literal "compact" or "full"',
            "severity": "error",
            "line": 8,
            "column": 24,
        }
    ]


async def test_result_view_on_a_single_result_tool_has_the_dispatch_message(app: App) -> None:
    text = graph(
        "id: view\nclass: action\nkind: compozy__skill_view\n"
        "params:\n  name: x\n  result_view: full"
    )
    items = await lint_items(app, text)
    assert [(i["code"], i["message"]) for i in items] == [
        (
            "params_invalid",
            'tool "compozy__skill_view" returns a single result and does not accept "result_view"',
        )
    ]


# --- paths --------------------------------------------------------------------------------------


async def test_a_field_of_the_compact_view_needs_no_full(app: App) -> None:
    text = graph(
        status_node(),
        transform("use", '"{{ .nodes.inspect.output.session.runtime.selection_revision }}"'),
        edges=(("inspect", "use"),),
    )
    assert await lint_items(app, text) == []


async def test_unresolvable_path_names_the_deepest_valid_segment_and_the_fields(app: App) -> None:
    text = graph(
        status_node(view="full"),
        transform("use", '"{{ .nodes.inspect.output.session.lineage.nope }}"'),
        edges=(("inspect", "use"),),
    )
    [item] = await lint_items(app, text)
    assert item["code"] == "unresolvable_path"
    assert item["severity"] == "error"
    assert item["message"].startswith(
        'node "use" reads nodes.inspect.output.session.lineage.nope: schema path '
        '"session.lineage.nope" is not declared; deepest valid segment "session.lineage"; '
        "available fields: auto_stop_on_parent, kind, notify_creator, parent_session_id, "
        "permission_policy, root_session_id, spawn_budget, spawn_depth, spawn_role, ttl_expires_at"
    )


async def test_a_path_neither_view_has_is_unresolvable_even_from_compact(app: App) -> None:
    text = graph(
        status_node(),
        transform("use", '"{{ .nodes.inspect.output.session.nope }}"'),
        edges=(("inspect", "use"),),
    )
    assert codes(await lint_items(app, text)) == [("error", "unresolvable_path")]


async def test_an_open_part_of_the_full_schema_warns_that_the_path_cannot_be_proven(
    app: App,
) -> None:
    # compozy__loop_status's full record leaves the run's inputs open
    text = graph(
        "id: look\nclass: action\nkind: compozy__loop_status\nparams:\n  run_id: r\n"
        "  result_view: full",
        transform("use", '"{{ .nodes.look.output.run.inputs.ticket.title }}"'),
        edges=(("look", "use"),),
    )
    [item] = await lint_items(app, text)
    assert (item["severity"], item["code"]) == ("warning", "unresolvable_path")
    assert "cannot be proven" in item["message"]
    assert '"run.inputs" open' in item["message"]
    result = (await app.dispatcher.call("compozy__loop_validate", {"definition": text})).structured
    assert result["valid"] is True


async def test_the_open_part_in_compact_needs_full_first(app: App) -> None:
    text = graph(
        "id: look\nclass: action\nkind: compozy__loop_status\nparams:\n  run_id: r",
        transform("use", '"{{ .nodes.look.output.run.inputs.ticket }}"'),
        edges=(("look", "use"),),
    )
    assert codes(await lint_items(app, text)) == [("error", "result_view_field_requires_full")]


async def test_a_node_without_an_output_schema_cannot_be_proven(app: App) -> None:
    text = graph(
        transform("first", "x"),
        transform("second", '"{{ .nodes.first.output.value }}"'),
        edges=(("first", "second"),),
    )
    [item] = await lint_items(app, text)
    assert (item["severity"], item["code"]) == ("warning", "unresolvable_path")
    assert 'node "first" has no declared output schema' in item["message"]


async def test_run_agent_output_is_declared(app: App) -> None:
    text = graph(
        "id: ask\nclass: action\nkind: run-agent\nparams:\n  agent: claude\n  prompt: hi",
        transform("use", '"{{ .nodes.ask.output.final_message }} {{ .nodes.ask.output.nope }}"'),
        edges=(("ask", "use"),),
    )
    [item] = await lint_items(app, text)
    assert item["code"] == "unresolvable_path"
    assert "available fields: final_message, session_id, stop_reason, turn_id" in item["message"]


# --- produces -----------------------------------------------------------------------------------


def _produces(view: str | None, fields: str) -> str:
    return (
        status_node(view=view)
        + "\nproduces:\n  type: object\n  properties:\n    session:\n      type: object\n"
        + "      properties:\n"
        + fields
    )


async def test_produces_with_a_full_only_field_requires_full(app: App) -> None:
    fields = "        lineage:\n          type: object\n          properties:\n"
    fields += "            permission_policy: {type: object}\n"
    [item] = await lint_items(app, graph(_produces(None, fields)))
    assert item["code"] == "result_view_field_requires_full"
    assert item["path"] == "produces"
    assert item["message"] == (
        'node "inspect" produces session.lineage.permission_policy, which the compact result of '
        "compozy__session_status does not include; fix: add `result_view: full` to the params of "
        'node "inspect"'
    )
    assert await lint_items(app, graph(_produces("full", fields))) == []


async def test_produces_with_a_field_neither_view_has_is_unresolvable(app: App) -> None:
    fields = "        nope: {type: string}\n"
    [item] = await lint_items(app, graph(_produces("full", fields)))
    assert item["code"] == "unresolvable_path"
    assert item["message"].startswith(
        'node "inspect" produces session.nope, which no view of compozy__session_status has: '
        'schema path "session.nope" is not declared; deepest valid segment "session"'
    )


async def test_readers_are_proven_against_produces(app: App) -> None:
    reader = transform("use", '"{{ .nodes.inspect.output.session.state }}"')
    open_part = _produces(None, "        id: {type: string}\n")
    [item] = await lint_items(app, graph(open_part, reader, edges=(("inspect", "use"),)))
    assert (item["severity"], item["code"]) == ("warning", "unresolvable_path")
    closed = _produces(None, "        id: {type: string}\n      additionalProperties: false\n")
    [item] = await lint_items(app, graph(closed, reader, edges=(("inspect", "use"),)))
    assert (item["severity"], item["code"]) == ("error", "unresolvable_path")
    assert "available fields: id" in item["message"]


# --- the graph and the rest ---------------------------------------------------------------------


async def test_unknown_node_in_an_edge(app: App) -> None:
    [item] = await lint_items(app, graph(status_node(), edges=(("inspect", "ghost"),)))
    assert item["code"] == "unknown_node"
    assert item["message"] == 'edge 0 to names node "ghost", which is not defined'
    assert (item["line"], item["column"]) == (10, 11)


async def test_a_cycle(app: App) -> None:
    text = graph(transform("a", "x"), transform("b", "y"), edges=(("a", "b"), ("b", "a")))
    [item] = await lint_items(app, text)
    assert item["code"] == "cycle"
    assert "'a', 'b'" in item["message"]


async def test_an_unknown_tool(app: App) -> None:
    text = graph("id: x\nclass: action\nkind: compozy__nope\nparams: {}")
    [item] = await lint_items(app, text)
    assert (item["code"], item["path"], item["line"]) == ("unknown_tool", "kind", 5)


async def test_literal_params_against_the_tool_input_schema(app: App) -> None:
    text = graph(
        "id: x\nclass: action\nkind: compozy__session_status\nparams:\n  session_id: 5\n  extra: 1"
    )
    items = await lint_items(app, text)
    assert sorted(i["message"] for i in items) == [
        'node "x" params.extra is not a param of tool compozy__session_status',
        'node "x" params.session_id must be a string',
    ]
    assert {i["code"] for i in items} == {"params_invalid"}


async def test_a_templated_param_is_not_checked_before_it_is_known(app: App) -> None:
    text = graph(
        'id: x\nclass: action\nkind: compozy__hooks_runs\nparams:\n  limit: "{{ .inputs.n }}"'
    )
    assert await lint_items(app, text) == []


async def test_a_missing_required_param(app: App) -> None:
    text = graph("id: x\nclass: action\nkind: compozy__session_status\nparams: {}")
    [item] = await lint_items(app, text)
    assert item["message"] == 'node "x" params.session_id is required'


async def test_unknown_reference_root(app: App) -> None:
    [item] = await lint_items(app, graph(transform("t", '"{{ .secrets.token }}"')))
    assert item["code"] == "unknown_reference"
    assert item["message"] == (
        'node "t" reads .secrets.token: unknown reference root "secrets" '
        "(known: inputs, nodes, item, index)"
    )
    assert (item["line"], item["column"]) == (8, 22)


async def test_a_reference_to_an_unknown_node(app: App) -> None:
    [item] = await lint_items(app, graph(transform("t", '"{{ .nodes.ghost.output.x }}"')))
    assert item["code"] == "unknown_node"


async def test_a_reference_to_a_node_that_does_not_run_before(app: App) -> None:
    text = graph(status_node(), transform("t", '"{{ .nodes.inspect.output.session.id }}"'))
    [item] = await lint_items(app, text)
    assert item["code"] == "reference_not_upstream"


async def test_unknown_input_when_inputs_are_declared(app: App) -> None:
    text = graph(
        "id: ticket\nclass: source\nkind: input\nparams:\n  schema: {type: string}",
        transform("t", '"{{ .inputs.tiket }}"'),
    )
    [item] = await lint_items(app, text)
    assert item["code"] == "unknown_input"
    assert "(declared: ticket)" in item["message"]


async def test_item_outside_a_fan_out(app: App) -> None:
    [item] = await lint_items(app, graph(transform("t", '"{{ .item.name }}"')))
    assert item["code"] == "item_outside_fanout"


async def test_item_inside_a_fan_out_body(app: App) -> None:
    text = graph(
        'id: each\nclass: control\nkind: fan-out\nparams:\n  items: "{{ .inputs.names }}"',
        transform("hello", '"hello {{ .item }} #{{ .index }}"'),
        "id: all\nclass: control\nkind: collect\nparams:\n  from: each",
        edges=(("each", "hello"), ("hello", "all")),
    )
    assert await lint_items(app, text) == []


@pytest.mark.parametrize(
    ("value", "message", "column"),
    [
        ('"{{ .inputs.x "', 'unclosed action: "{{" without "}}"', 19),
        ('"{{ nope .inputs.x }}"', 'function "nope" not defined', 22),
        ('"{{ join .inputs.x }}"', "join takes 2 arguments, got 1", 22),
        ('"a {{ }} b"', "empty action", 23),
    ],
)
async def test_template_errors_have_line_and_column(
    app: App, value: str, message: str, column: int
) -> None:
    [item] = await lint_items(app, graph(transform("t", value)))
    assert item["code"] == "template_invalid"
    assert message in item["message"]
    assert (item["line"], item["column"]) == (8, column)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("graph: {}", "definition_invalid"),
        ("- a\n- b", "definition_invalid"),
        (graph("id: Bad\nclass: action\nkind: transform"), "node_id_invalid"),
        (graph(transform("a", "x"), transform("a", "y")), "node_id_duplicate"),
        (graph("id: a\nclass: nope\nkind: transform"), "class_unknown"),
        (graph("id: a\nclass: control\nkind: transform"), "kind_unknown"),
        (graph("id: a\nclass: control\nkind: gate\nparams:\n  criteria: []"), "params_invalid"),
        ("graph: [unclosed", "definition_invalid"),
    ],
)
async def test_structure_codes(app: App, text: str, code: str) -> None:
    items = await lint_items(app, text)
    assert code in [item["code"] for item in items]
    assert all(item["severity"] == "error" for item in items)


async def test_a_gate_with_criteria_passes(app: App) -> None:
    assert await lint_items(app, graph(gate("review", ("ok", "Is it right?")))) == []


async def test_a_yaml_syntax_error_has_its_position(app: App) -> None:
    [item] = await lint_items(app, "graph:\n  nodes: [\n")
    assert item["code"] == "definition_invalid"
    assert item["line"] == 3


async def test_a_gate_inside_a_fan_out_body(app: App) -> None:
    text = graph(
        'id: each\nclass: control\nkind: fan-out\nparams:\n  items: "{{ .inputs.names }}"',
        gate("review"),
        "id: all\nclass: control\nkind: collect\nparams:\n  from: each",
        edges=(("each", "review"), ("review", "all")),
    )
    [item] = await lint_items(app, text)
    assert item["code"] == "gate_in_fanout"


def test_every_lint_code_has_a_case() -> None:
    assert set(LINT_CASES) == set(CODES)


@pytest.mark.parametrize("code", sorted(LINT_CASES))
async def test_lint_codes_through_mcp(app: App, code: str) -> None:
    text = LINT_CASES[code]
    async with mcp_client(app) as client:
        result = record(await client.call_tool("compozy__loop_validate", {"definition": text}))
        refused = tool_error(await client.call_tool("compozy__loop_run", {"definition": text}))
    assert [item["code"] for item in result["items"]] == [code]
    assert result["items"][0]["line"] is not None
    assert result["items"][0]["severity"] == ("warning" if code in RUN_ERRORS else "error")
    assert refused["reason"] == "loop_invalid"
    assert f"error: {code}\n{result['items'][0]['message']}" in refused["message"]
