"""What a board card shows of a session record, and the columns it sits in."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from compozy_mcp.board._render import (
    CARD_SUMMARY_CHARS,
    age,
    card,
    columns,
    transcript_line,
    transcript_lines,
)
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
    assert transcript_line({"kind": "usage_update", "payload": {"used": 5}})["text"] == (
        '{"used":5}'
    )


def test_a_turn_start_a_permission_request_and_commands_are_said_in_words() -> None:
    assert transcript_line({"kind": "turn_started", "payload": {"turn": 2}})["text"] == "turn 2"
    asked = {
        "kind": "permission_requested",
        "payload": {
            "title": "Write notes.txt",
            "options": [
                {"option_id": "allow-once", "name": "Allow once", "kind": "allow_once"},
                {"option_id": "reject-once", "kind": "reject_once"},
            ],
        },
    }
    assert transcript_line(asked)["text"] == "Write notes.txt · options: Allow once, reject-once"
    commands = {"available_commands": [{"name": "plan"}, {"name": "write"}]}
    assert transcript_line({"kind": "available_commands_update", "payload": commands})["text"] == (
        "commands: plan, write"
    )


def test_a_tool_call_shows_its_title_status_input_and_result() -> None:
    started = {
        "kind": "tool_call",
        "payload": {
            "tool_call_id": "write-1",
            "title": "Write notes.txt",
            "kind": "edit",
            "status": "pending",
            "raw_input": {"path": "notes.txt"},
        },
    }
    assert transcript_line(started)["text"] == (
        'Write notes.txt · edit · pending · write-1\ninput: {\n  "path": "notes.txt"\n}'
    )
    ended = {
        "kind": "tool_call_update",
        "payload": {"tool_call_id": "write-1", "status": "completed", "raw_output": {"ok": 1}},
    }
    assert transcript_line(ended)["text"] == 'completed · write-1\nresult: {\n  "ok": 1\n}'


def test_a_plan_shows_an_entry_a_line_with_its_status() -> None:
    plan = {
        "kind": "plan",
        "payload": {
            "entries": [
                {"content": "Read", "status": "completed", "priority": "high"},
                {"content": "Do", "status": "pending", "priority": "high"},
            ]
        },
    }
    assert transcript_line(plan)["text"] == "[completed] Read\n[pending] Do"


def turn(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "turn_id": "turn-1",
        "status": "completed",
        "summary": {"text": "echo: hello", "truncated": False},
        "created_at": "2026-12-04T11:00:00Z",
        "started_at": "2026-12-04T11:00:01Z",
        "ended_at": "2026-12-04T11:55:00Z",
    }
    return {**base, **fields}


def test_a_card_shows_the_last_turn_summary_and_how_long_ago_it_ended() -> None:
    shown = card(record(), NOW, turn())
    assert (shown["turn_status"], shown["summary"], shown["turn_age"]) == (
        "completed",
        "echo: hello",
        "5m",
    )


def test_a_running_turn_is_aged_from_its_start_and_a_long_summary_is_cut() -> None:
    long = "word " * 100
    shown = card(record(), NOW, turn(status="running", ended_at=None, summary={"text": long}))
    assert shown["turn_age"] == "59m"
    assert len(shown["summary"]) == CARD_SUMMARY_CHARS
    assert shown["summary"].endswith("…")


def test_a_session_never_prompted_has_no_last_turn_on_its_card() -> None:
    shown = card(record(), NOW)
    assert (shown["turn_status"], shown["summary"], shown["turn_age"]) == ("", "", "")


def test_columns_give_each_card_its_own_last_turn() -> None:
    sessions = [record(id="sess-1"), record(id="sess-2")]
    drawn = dict(columns(sessions, NOW, {"sess-2": turn()}))
    by_id = {shown["id"]: shown for shown in drawn["backlog"]}
    assert by_id["sess-1"]["summary"] == ""
    assert by_id["sess-2"]["summary"] == "echo: hello"


def test_an_agents_consecutive_chunks_make_one_transcript_line() -> None:
    def chunk(kind: str, text: str) -> dict[str, Any]:
        return {"kind": kind, "payload": {"content": {"type": "text", "text": text}}}

    lines = transcript_lines(
        [
            chunk("agent_thought_chunk", "think"),
            chunk("agent_message_chunk", "echo: "),
            chunk("agent_message_chunk", "hi"),
            {"kind": "turn_ended", "payload": {"stop_reason": "end_turn"}},
            chunk("agent_message_chunk", "again"),
        ]
    )
    assert [(line["kind"], line["text"]) for line in lines] == [
        ("agent_thought_chunk", "think"),
        ("agent_message_chunk", "echo: hi"),
        ("turn_ended", "end_turn"),
        ("agent_message_chunk", "again"),
    ]
