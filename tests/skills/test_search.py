"""How ``search`` scores and orders skills."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from compozy_mcp.skills import SKILL_SEARCH_ITEM_SCHEMA, SkillService

jsonschema: Any = importlib.import_module("jsonschema")


def write_skill(root: Path, name: str, description: str, tags: str = "") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    tag_line = f"tags: [{tags}]\n" if tags else ""
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{tag_line}---\nBody.\n", encoding="utf-8"
    )


def scores(records: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(record["name"], record["score"]) for record in records]


@pytest.fixture
def service(tmp_path: Path) -> SkillService:
    root = tmp_path / "user"
    write_skill(root, "git-commit", "Write commit messages.", "vcs, git")
    write_skill(root, "deploy", "Ship the app; uses git tags.", "ops")
    write_skill(root, "pdf", "Read PDF files.", "documents")
    return SkillService(root)


def test_name_counts_three_tags_two_and_description_one(service: SkillService) -> None:
    assert scores(service.search("git", None)) == [("git-commit", 3 + 2), ("deploy", 1)]
    assert scores(service.search("ops", None)) == [("deploy", 2)]
    assert scores(service.search("ship", None)) == [("deploy", 1)]


def test_exact_name_match_adds_a_bonus(service: SkillService) -> None:
    assert scores(service.search("pdf", None)) == [("pdf", 3 + 10 + 1)]
    assert scores(service.search("git-commit", None)) == [("git-commit", 3 + 10)]


def test_each_token_adds_its_own_score(service: SkillService) -> None:
    assert scores(service.search("commit ship", None)) == [("git-commit", 3 + 1), ("deploy", 1)]


def test_search_is_case_insensitive(service: SkillService) -> None:
    assert scores(service.search("GIT", None)) == scores(service.search("git", None))
    assert scores(service.search("PDF", None)) == [("pdf", 14)]


def test_repeated_tokens_count_once(service: SkillService) -> None:
    assert scores(service.search("pdf pdf", None)) == scores(service.search("pdf", None))


def test_skills_that_do_not_match_are_left_out(service: SkillService) -> None:
    assert service.search("kubernetes", None) == []
    assert service.search("", None) == []
    assert service.search("   ", None) == []


def test_ties_are_ordered_by_name(tmp_path: Path) -> None:
    root = tmp_path / "user"
    for name in ("zulu", "alpha", "mike"):
        write_skill(root, name, "Handles shared work.")
    assert scores(SkillService(root).search("shared", None)) == [
        ("alpha", 1),
        ("mike", 1),
        ("zulu", 1),
    ]


def test_limit_keeps_the_best(service: SkillService) -> None:
    assert scores(service.search("git", None, limit=1)) == [("git-commit", 5)]
    assert service.search("git", None, limit=0) == []


def test_items_are_summaries_with_score_last(service: SkillService) -> None:
    [item] = service.search("pdf", None)
    summary = next(s for s in service.list(None) if s["name"] == "pdf")
    assert item == {**summary, "score": 14}
    assert list(item)[-1] == "score"
    jsonschema.Draft202012Validator(SKILL_SEARCH_ITEM_SCHEMA).validate(item)


def test_search_covers_the_workspace_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / "user", "pdf", "User PDF tool.")
    write_skill(tmp_path / "ws" / ".compozy" / "skills", "pdf", "Workspace PDF tool.")
    [item] = SkillService(tmp_path / "user").search("workspace", tmp_path / "ws")
    assert item["scope"] == "workspace"
    assert item["description"] == "Workspace PDF tool."
