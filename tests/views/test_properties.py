"""Property: over generated records, every compact field is in the full result at the same path
with the same value, and both results validate against their published schemas."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.tiers import examples

from compozy_mcp.native import build_registry
from compozy_mcp.native.registry import RegisteredTool
from compozy_mcp.sessions._record import RecordContext, session_record
from compozy_mcp.sessions.model import (
    AcpCaps,
    AvailableCommand,
    CommandInput,
    Diagnostic,
    Failure,
    Interaction,
    Later,
    Lineage,
    PermissionPolicy,
    PullRequest,
    QueuedPrompt,
    RuntimeState,
    Selection,
    SessionState,
    SpawnBudget,
    Supervision,
    TurnActivity,
)
from compozy_mcp.sessions.record_schema import LINEAGE, RUNTIME, SESSION, SESSION_RESULT
from compozy_mcp.store.base import ChildSummary, ProfileRow, WorkspaceRow
from compozy_mcp.validation import compile_validator
from compozy_mcp.views import project

REGISTRY = build_registry()
TS = st.sampled_from(["2026-11-10T14:02:11Z", "2026-11-10T14:19:47Z", "2026-12-01T00:00:00Z"])
NAME = st.text(alphabet="abcdefghij-_ é", min_size=1, max_size=12)
IDENT = st.text(alphabet="abcdef0123456789", min_size=4, max_size=8).map(lambda s: f"sess-{s}")
PROFILE = ProfileRow("prof_default", "Default", "#64748b", "sparkles", "2026-11-10T14:02:11Z")
WORKSPACE = WorkspaceRow("ws_default", "default", "/work", "2026-11-10T14:02:11Z")


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


selections = st.builds(
    Selection,
    provider=st.sampled_from(["claude", "codex"]),
    model=_maybe(NAME),
    reasoning_effort=_maybe(st.sampled_from(["low", "high"])),
)
failures = st.builds(Failure, kind=NAME, summary=NAME, crash_bundle_path=_maybe(NAME))
runtimes = st.builds(
    RuntimeState,
    status=st.sampled_from(
        ["unbound", "binding", "ready", "reconfiguring", "recovering", "failed"]
    ),
    transition=_maybe(st.sampled_from(["initial_bind", "live_configuration"])),
    failure=_maybe(failures),
    generation=st.integers(0, 5),
    selection_revision=st.integers(0, 5),
    selected=_maybe(selections),
    effective=_maybe(selections),
    acp_session_id=_maybe(NAME),
    acp_caps=_maybe(
        st.builds(
            AcpCaps,
            supports_load_session=st.booleans(),
            prompt_image=st.booleans(),
            prompt_audio=st.booleans(),
            prompt_embedded_context=st.booleans(),
            supported_modes=st.lists(NAME, max_size=3),
        )
    ),
)
policies = st.builds(
    PermissionPolicy,
    tools=st.lists(NAME, max_size=3),
    skills=st.lists(NAME, max_size=2),
    mcp_servers=st.lists(NAME, max_size=2),
    workspace_paths=st.lists(NAME, max_size=2),
)
lineages = st.builds(
    Lineage,
    kind=st.sampled_from(["root", "spawn", "fork"]),
    parent_session_id=_maybe(IDENT),
    root_session_id=IDENT,
    spawn_depth=st.integers(0, 3),
    spawn_role=_maybe(NAME),
    ttl_expires_at=_maybe(TS),
    spawn_budget=st.builds(
        SpawnBudget,
        max_children=st.integers(0, 9),
        max_depth=st.integers(0, 4),
        ttl_seconds=st.integers(0, 9999),
    ),
    permission_policy=policies,
    auto_stop_on_parent=st.booleans(),
    notify_creator=st.booleans(),
)
interactions = st.builds(
    Interaction,
    interaction_id=NAME,
    kind=st.sampled_from(["permission", "question", "plan"]),
    provider_request_id=NAME,
    turn_id=_maybe(NAME),
    title=_maybe(NAME),
    choices=_maybe(st.lists(NAME, max_size=3)),
    created_at=TS,
)
commands = st.builds(
    AvailableCommand, name=NAME, description=NAME, input=_maybe(st.builds(CommandInput, hint=NAME))
)


@st.composite
def session_states(draw: st.DrawFn, *, child: bool = False) -> SessionState:
    lineage = draw(lineages)
    if child:
        lineage.kind = draw(st.sampled_from(["spawn", "fork"]))
    return SessionState(
        id=draw(IDENT),
        name=draw(_maybe(NAME)),
        agent_name=draw(NAME),
        profile_id="prof_default",
        workspace_id="ws_default",
        type=draw(st.sampled_from(["user", "subagent", "automation"])),
        worktree_id=draw(_maybe(NAME)),
        branch=draw(_maybe(NAME)),
        state=draw(st.sampled_from(["starting", "active", "stopping", "stopped"])),
        runtime=draw(runtimes),
        transcript_epoch=draw(st.integers(0, 4)),
        lineage=lineage,
        pending_interactions=draw(st.lists(interactions, max_size=3)),
        supervision=draw(
            st.builds(
                Supervision,
                mode=st.sampled_from(["operator", "parent"]),
                supervisor_session_id=_maybe(IDENT),
                iterations=st.integers(0, 9),
                turn=_maybe(
                    st.builds(
                        TurnActivity,
                        turn_id=NAME,
                        started_at=TS,
                        last_activity_at=TS,
                        current_tool=_maybe(NAME),
                    )
                ),
            )
        ),
        available_commands=draw(st.lists(commands, max_size=4)),
        diagnostics=draw(
            st.lists(
                st.builds(
                    Diagnostic,
                    code=NAME,
                    severity=st.sampled_from(["info", "warning", "error"]),
                    message=NAME,
                    at=TS,
                ),
                max_size=3,
            )
        ),
        stop_reason=draw(_maybe(NAME)),
        stop_detail=draw(_maybe(NAME)),
        stop_cause=draw(_maybe(st.sampled_from(["operator", "parent", "ttl", "failure"]))),
        failure=draw(_maybe(failures)),
        permission_mode_degraded=draw(st.booleans()),
        pull_request=draw(
            _maybe(
                st.builds(
                    PullRequest,
                    number=st.integers(1, 999),
                    url=NAME,
                    state=st.sampled_from(["open", "draft", "merged", "closed"]),
                    title=_maybe(NAME),
                )
            )
        ),
        queue=draw(
            st.lists(
                st.builds(
                    QueuedPrompt, prompt_id=NAME, turn=st.integers(1, 9), preview=NAME, queued_at=TS
                ),
                max_size=2,
            )
        ),
        later=draw(_maybe(st.builds(Later, set_at=TS, until=_maybe(TS), note=_maybe(NAME)))),
        archived_at=draw(_maybe(TS)),
        created_at=draw(TS),
        updated_at=draw(TS),
    )


@st.composite
def session_records(draw: st.DrawFn) -> dict[str, Any]:
    children = [
        ChildSummary(
            session_id=child.id,
            parent_session_id="sess-parent",
            kind=child.lineage.kind,
            agent_name=child.agent_name,
            name=child.name,
            state=child.state,
            spawn_role=child.lineage.spawn_role,
            failed=draw(st.booleans()),
        )
        for child in draw(st.lists(session_states(child=True), max_size=3))
    ]
    context = RecordContext(
        profile=draw(_maybe(st.just(PROFILE))), workspace=WORKSPACE, children=children
    )
    return session_record(draw(session_states()), context)


def assert_compact_within_full(compact: Any, full: Any, path: str = "$") -> None:
    """Every compact field is in full at the same path with the same value."""
    if isinstance(compact, dict):
        assert isinstance(full, dict), path
        for key, value in compact.items():
            assert key in full, f"{path}.{key} is not in the full result"
            assert_compact_within_full(value, full[key], f"{path}.{key}")
    elif isinstance(compact, list):
        assert isinstance(full, list), path
        assert len(compact) == len(full), path
        for index, (item, whole) in enumerate(zip(compact, full, strict=True)):
            assert_compact_within_full(item, whole, f"{path}[{index}]")
    else:
        assert compact == full, path


_VALIDATORS: dict[bytes, Any] = {}
#: (schema, instance) pairs, as sorted JSON, that validated: a verdict depends on nothing else.
#: The tools of a kind share their schemas and masks (the 12 session-record tools: one full
#: schema, one compact one, one mask), so each distinct check runs once, not once per tool.
_VALID: set[tuple[bytes, bytes]] = set()


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _validate(schema: Any, instance: Any) -> None:
    pair = (_canonical(schema), _canonical(instance))
    if pair in _VALID:
        return
    validator = _VALIDATORS.get(pair[0])
    if validator is None:
        validator = _VALIDATORS[pair[0]] = compile_validator(schema)
    validator.validate(instance)
    _VALID.add(pair)


def check_views(tool: RegisteredTool, full: dict[str, Any]) -> None:
    assert tool.views is not None
    compact = project(full, tool.views.mask)
    assert_compact_within_full(compact, full)
    _validate(tool.views.full.schema, full)
    _validate(tool.views.compact.schema, compact)
    _validate(tool.output_schema, compact)


SESSION_TOOLS = [t for t in REGISTRY if t.definition.output_schema is SESSION_RESULT]


@settings(max_examples=examples(150), deadline=None)
@given(record=session_records())
def test_session_record_tools_compact_is_within_full_and_both_validate(
    record: dict[str, Any],
) -> None:
    assert len(SESSION_TOOLS) == 12
    for tool in SESSION_TOOLS:
        check_views(tool, {"session": record})


def _in_order(keys: list[str], order: tuple[str, ...]) -> bool:
    positions = [order.index(key) for key in keys]
    return positions == sorted(positions)


@settings(max_examples=examples(60), deadline=None)
@given(record=session_records())
def test_records_list_their_fields_in_the_order_the_declared_shape_gives(
    record: dict[str, Any],
) -> None:
    """One source: the builder's field order is the one ``sessions/record_schema.py`` declares
    (the full schema's property order and the compact mask come from the same declaration)."""
    assert _in_order(list(record), SESSION.names)
    assert _in_order(list(record["runtime"]), RUNTIME.names)
    assert _in_order(list(record["lineage"]), LINEAGE.names)
    assert list(SESSION_RESULT["properties"]["session"]["properties"]) == list(SESSION.names)


@settings(max_examples=examples(40), deadline=None)
@given(records=st.lists(session_records(), max_size=4), cursor=_maybe(NAME))
def test_session_list_compact_is_within_full_and_both_validate(
    records: list[dict[str, Any]], cursor: str | None
) -> None:
    page: dict[str, Any] = {"sessions": records}
    if cursor is not None:
        page["next_cursor"] = cursor
    check_views(REGISTRY.get("compozy__session_list"), page)


@settings(max_examples=examples(60), deadline=None)
@given(
    result=st.fixed_dictionaries(
        {
            "session_id": IDENT,
            "spawn_role": NAME,
            "spawn_depth": st.integers(1, 4),
            "ttl_expires_at": TS,
            "permissions": st.fixed_dictionaries(
                {
                    k: st.lists(NAME, max_size=3)
                    for k in ("tools", "skills", "mcp_servers", "workspace_paths")
                }
            ),
        },
        optional={
            "prompt": st.fixed_dictionaries(
                {"prompt_id": NAME, "turn": st.integers(1, 3), "status": st.just("queued")}
            ),
            "worktree": st.fixed_dictionaries({"worktree_id": NAME, "branch": NAME}),
        },
    )
)
def test_spawn_compact_is_within_full_and_both_validate(result: dict[str, Any]) -> None:
    check_views(REGISTRY.get("compozy__session_spawn"), result)


diagnostics = st.fixed_dictionaries(
    {
        "valid": st.booleans(),
        "verified": st.booleans(),
        "warnings": st.lists(NAME, max_size=2),
        "failures": st.lists(NAME, max_size=2),
    },
    optional={"activation_reason": NAME},
)
skill_items = st.fixed_dictionaries(
    {
        "name": NAME,
        "description": NAME,
        "scope": st.sampled_from(["user", "workspace"]),
        "path": NAME,
    },
    optional={"tags": st.lists(NAME, min_size=1, max_size=2), "version": NAME},
).flatmap(lambda item: diagnostics.map(lambda d: {**item, "diagnostics": d}))


@settings(max_examples=examples(80), deadline=None)
@given(items=st.lists(skill_items, max_size=4), score=st.integers(1, 30))
def test_skill_list_and_search_compact_is_within_full_and_both_validate(
    items: list[dict[str, Any]], score: int
) -> None:
    check_views(REGISTRY.get("compozy__skill_list"), {"skills": items})
    scored = [{**item, "score": score} for item in items]
    check_views(REGISTRY.get("compozy__skill_search"), {"skills": scored})
    compact = project({"skills": items}, REGISTRY.get("compozy__skill_list").views.mask)  # type: ignore[union-attr]
    clean = all(
        d["valid"]
        and d["verified"]
        and not d["warnings"]
        and not d["failures"]
        and "activation_reason" not in d
        for d in (item["diagnostics"] for item in items)
    )
    kept = ["diagnostics" in item for item in compact["skills"]]
    assert kept == [not clean] * len(items)


def test_tool_list_compact_is_within_full_and_both_validate() -> None:
    from compozy_mcp.info.descriptors import descriptor

    check_views(
        REGISTRY.get("compozy__tool_list"),
        {"tools": [descriptor(tool) for tool in REGISTRY], "next_cursor": "x"},
    )
