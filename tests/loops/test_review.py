"""Issue 15, item 1 (stretch): a gate answered by a reviewing agent. How its answer is read."""

from __future__ import annotations

from compozy_mcp.loops import _review as review

CRITERIA = [{"id": "tests", "prompt": "Tests pass"}, {"id": "docs", "prompt": "Docs updated"}]


def test_every_criterion_passed_approves() -> None:
    verdict = review.read("tests: **PASS** all green\n- **docs**: pass", CRITERIA)
    assert verdict is not None
    assert verdict.decision == "approve"
    assert [a.get("note") for a in verdict.answers] == ["all green", None]


def test_one_failed_criterion_rejects() -> None:
    verdict = review.read("tests: PASS\ndocs: FAIL - the README is stale", CRITERIA)
    assert verdict is not None
    assert verdict.decision == "reject"
    assert verdict.answers[1] == {
        "criterion_id": "docs",
        "prompt": "Docs updated",
        "passed": False,
        "note": "the README is stale",
    }


def test_a_missing_or_contradictory_answer_decides_nothing() -> None:
    assert review.read("tests: PASS", CRITERIA) is None
    assert review.read("tests: PASS\ntests: FAIL\ndocs: PASS", CRITERIA) is None


def test_the_prompt_lists_every_criterion() -> None:
    text = review.prompt("Ship?", CRITERIA, "diff: +1 -1")
    assert "- tests: Tests pass\n- docs: Docs updated" in text
    assert "Gate: Ship?" in text
    assert "Context:\ndiff: +1 -1" in text
