"""The derived fields of a session record: badge and board column precedence."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from compozy_mcp.sessions._record import badge_and_column
from compozy_mcp.sessions.model import (
    Failure,
    Interaction,
    Later,
    Lineage,
    PermissionPolicy,
    SessionState,
    SpawnBudget,
    Supervision,
)

TS = "2026-11-10T14:02:11Z"


def _state(**fields: Any) -> SessionState:
    state = SessionState(
        id="sess-x",
        agent_name="general",
        profile_id="prof_default",
        workspace_id="ws_default",
        lineage=Lineage(
            kind="root",
            root_session_id="sess-x",
            spawn_budget=SpawnBudget(max_children=1, max_depth=1, ttl_seconds=60),
            permission_policy=PermissionPolicy(
                tools=[], skills=[], mcp_servers=[], workspace_paths=[]
            ),
        ),
        supervision=Supervision(mode="operator"),
        created_at=TS,
        updated_at=TS,
    )
    for name, value in fields.items():
        setattr(state, name, value)
    return state


def _interaction(kind: Literal["permission", "question", "plan"]) -> Interaction:
    return Interaction(
        interaction_id="int-1", kind=kind, provider_request_id="req-1", created_at=TS
    )


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, ("idle", "backlog")),
        ({"later": Later(set_at=TS)}, ("later", "later")),
        ({"pending_interactions": [_interaction("permission")]}, ("waiting-for-auth", "needs_you")),
        ({"pending_interactions": [_interaction("question")]}, ("waiting-for-input", "needs_you")),
        ({"state": "stopped"}, ("stopped", "done")),
        (
            {"state": "stopped", "failure": Failure(kind="crash", summary="x")},
            ("failed", "needs_you"),
        ),
        ({"archived_at": TS, "failure": Failure(kind="crash", summary="x")}, ("archived", "done")),
        (
            {"pending_interactions": [_interaction("permission")], "later": Later(set_at=TS)},
            ("waiting-for-auth", "needs_you"),
        ),
    ],
)
def test_badge_and_column_follow_the_documented_precedence(
    fields: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert badge_and_column(_state(**fields)) == expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("running", ("running", "working")),
        ("ready", ("idle", "working")),  # bound, between turns: not running (issue 21)
        ("binding", ("starting", "working")),
        ("recovering", ("starting", "working")),
        ("failed", ("failed", "needs_you")),
        ("unbound", ("idle", "backlog")),
    ],
)
def test_runtime_status_sets_the_badge_of_an_active_session(
    status: str, expected: tuple[str, str]
) -> None:
    state = _state()
    state.runtime.status = status  # type: ignore[assignment]
    assert badge_and_column(state) == expected
