"""What a board card shows of a session record, and the columns it sits in."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from compozy_mcp.board.render import age, card, columns, transcript_line
from compozy_mcp.sessions.record_schema import BOARD_COLUMNS

NOW = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)


def record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "sess-1",
        "agent_name": "general",
        "badge": "idle",
        "board_column": "backlog",
        "state": "active",
        "workspace_id": "ws-1",
        "pending_interactions": [],
        "runtime": {"status": "running", "effective": {"model": "m-1"}},
        "archived_at": None,
        "updated_at": "2026-12-04T11:58:00Z",
    }
    return {**base, **fields}


def test_age_counts_in_the_largest_whole_unit() -> None:
    assert age("2026-12-04T11:59:30Z", NOW) == "30s"
    assert age("2026-12-04T11:55:00Z", NOW) == "5m"
    assert age("2026-12-04T09:00:00Z", NOW) == "3h"
    assert age("2026-12-02T12:00:00Z", NOW) == "2d"
    assert age(None, NOW) == ""
    assert age("not a time", NOW) == ""


def test_a_card_shows_model_attention_branch_and_children() -> None:
    shown = card(
        record(
            branch="feature/x",
            children=[{"id": "a"}, {"id": "b"}],
            attention={"kind": "interaction", "reason": "Write notes.txt"},
            waiting_on={"kind": "interaction", "interaction_kind": "permission"},
            pending_interactions=[{"interaction_id": "int-1"}],
        ),
        NOW,
    )
    assert shown["model"] == "m-1"
    assert shown["branch"] == "feature/x"
    assert shown["children"] == 2
    assert (shown["attention"], shown["waiting_on"]) == ("Write notes.txt", "permission")
    assert shown["needs_you"] is True
    assert shown["age"] == "2m"


def test_every_board_column_is_drawn_in_order_even_empty() -> None:
    drawn = columns([record(board_column="review")], NOW)
    assert [name for name, _ in drawn] == list(BOARD_COLUMNS)
    assert [len(cards) for name, cards in drawn if name == "review"] == [1]


def test_a_transcript_line_is_the_event_text_or_its_payload() -> None:
    assert transcript_line({"kind": "agent_message_chunk", "payload": {"text": "hi"}}) == {
        "kind": "agent_message_chunk",
        "text": "hi",
    }
    chunk = {"kind": "agent_message_chunk", "payload": {"content": {"type": "text", "text": "yo"}}}
    assert transcript_line(chunk)["text"] == "yo"
    assert transcript_line({"kind": "tool_call", "payload": {"raw_input": {"p": 1}}})["text"] == (
        '{"raw_input":{"p":1}}'
    )
