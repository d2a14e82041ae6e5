"""Which skills are found where, and which one is chosen per name."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compozy_mcp.skills import (
    DIAGNOSTICS_SCHEMA,
    SKILL_SEARCH_ITEM_SCHEMA,
    SKILL_SUMMARY_SCHEMA,
    SKILL_VIEW_SCHEMA,
    SkillService,
)
from compozy_mcp.skills import _discovery as discovery_module
from compozy_mcp.skills._metadata import ParsedSkill, parse_skill

# imported by name: jsonschema ships no type information, and mypy --strict would refuse it
jsonschema: Any = importlib.import_module("jsonschema")


def write_skill(root: Path, folder: str, front: str = "", body: str = "Body.\n") -> Path:
    """A SKILL.md whose name is its folder's unless ``front`` says otherwise."""
    if "name:" not in front:
        front = f"name: {folder}\n" + front
    if "description:" not in front:
        front += f"description: The {folder} skill.\n"
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return path


def names(records: list[dict[str, Any]]) -> list[str]:
    return [record["name"] for record in records]


@pytest.mark.process
def test_importing_the_package_does_not_load_yaml() -> None:
    # PyYAML is only needed once a SKILL.md is parsed; CLI start-up should not pay for it
    code = "import sys, compozy_mcp.skills; print('yaml' in sys.modules)"
    src = str(Path(discovery_module.__file__).parents[2])
    env = {**os.environ, "PYTHONPATH": src}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.strip() == "False"


def test_missing_roots_have_no_skills(tmp_path: Path) -> None:
    service = SkillService(tmp_path / "absent")
    assert service.list(None) == []
    assert service.list(tmp_path / "no-workspace") == []


def test_missing_workspace_root_leaves_the_user_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / "user", "alpha")
    assert names(SkillService(tmp_path / "user").list(tmp_path / "ws")) == ["alpha"]


def test_summaries_are_sorted_by_name_with_keys_in_order(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write_skill(user, "zeta")
    path = write_skill(user, "alpha", 'tags: [git]\nversion: "2.1"\n')
    records = SkillService(user).list(None)
    assert names(records) == ["alpha", "zeta"]
    assert records[0] == {
        "name": "alpha",
        "description": "The alpha skill.",
        "scope": "user",
        "path": str(path),
        "tags": ["git"],
        "version": "2.1",
        "diagnostics": {"valid": True, "verified": True, "warnings": [], "failures": []},
    }
    assert list(records[1]) == ["name", "description", "scope", "path", "diagnostics"]


def test_path_is_absolute_for_a_relative_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "user", "alpha")
    monkeypatch.chdir(tmp_path)
    [record] = SkillService(Path("user")).list(None)
    assert record["path"] == str(tmp_path / "user" / "alpha" / "SKILL.md")


def test_only_skill_md_one_level_deep_is_a_skill(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write_skill(user, "top")
    write_skill(user / "group", "nested")
    (user / "SKILL.md").write_text("---\nname: root\ndescription: x\n---\n", encoding="utf-8")
    (user / "no-skill-here").mkdir()
    (user / "no-skill-here" / "README.md").write_text("hello", encoding="utf-8")
    assert names(SkillService(user).list(None)) == ["top"]


def test_workspace_skill_overrides_the_user_skill_of_the_same_name(tmp_path: Path) -> None:
    user_path = write_skill(tmp_path / "user", "alpha", body="user\n")
    ws_path = write_skill(tmp_path / "ws" / ".compozy" / "skills", "alpha", body="ws\n")
    write_skill(tmp_path / "ws" / ".compozy" / "skills", "beta")
    records = SkillService(tmp_path / "user").list(tmp_path / "ws")
    assert names(records) == ["alpha", "beta"]
    alpha, beta = records
    assert alpha["scope"] == "workspace"
    assert alpha["path"] == str(ws_path)
    assert alpha["diagnostics"]["activation_reason"] == (
        f"workspace skill overrides the user skill at {user_path}"
    )
    assert alpha["diagnostics"]["warnings"] == []
    assert "activation_reason" not in beta["diagnostics"]


def test_without_a_workspace_the_user_skill_is_listed(tmp_path: Path) -> None:
    write_skill(tmp_path / "user", "alpha")
    write_skill(tmp_path / "ws" / ".compozy" / "skills", "alpha")
    [record] = SkillService(tmp_path / "user").list(None)
    assert record["scope"] == "user"
    assert "activation_reason" not in record["diagnostics"]


def test_workspace_whose_root_is_the_user_root_does_not_override_itself(tmp_path: Path) -> None:
    user = tmp_path / ".compozy" / "skills"
    write_skill(user, "alpha")
    [record] = SkillService(user).list(tmp_path)
    assert record["scope"] == "user"
    assert "activation_reason" not in record["diagnostics"]


def test_same_name_twice_in_one_root_keeps_the_first_folder(tmp_path: Path) -> None:
    user = tmp_path / "user"
    first = write_skill(user, "a-folder", "name: shared\n")
    second = write_skill(user, "b-folder", "name: shared\n")
    [record] = SkillService(user).list(None)
    assert record["path"] == str(first)
    assert record["diagnostics"]["warnings"] == [
        'name "shared" differs from its folder "a-folder"',
        f'another skill in {user} also declares name "shared": {second}',
    ]


def test_rescan_sees_added_changed_and_removed_skills(tmp_path: Path) -> None:
    user = tmp_path / "user"
    path = write_skill(user, "alpha", "description: before\n")
    service = SkillService(user)
    assert service.list(None)[0]["description"] == "before"

    path.write_text("---\nname: alpha\ndescription: after!\n---\n", encoding="utf-8")
    write_skill(user, "beta")
    records = service.list(None)
    assert [(r["name"], r["description"]) for r in records] == [
        ("alpha", "after!"),
        ("beta", "The beta skill."),
    ]

    (user / "beta" / "SKILL.md").unlink()
    assert names(service.list(None)) == ["alpha"]


def test_same_size_rewrite_with_new_mtime_is_parsed_again(tmp_path: Path) -> None:
    user = tmp_path / "user"
    path = write_skill(user, "alpha", "description: one\n")
    service = SkillService(user)
    service.list(None)
    stat = path.stat()
    path.write_text("---\nname: alpha\ndescription: two\n---\nBody.\n", encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert service.list(None)[0]["description"] == "two"


def test_unchanged_skill_is_not_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "user", "alpha")
    calls: list[bytes] = []

    def counting_parse(data: bytes) -> ParsedSkill:
        calls.append(data)
        return parse_skill(data)

    monkeypatch.setattr(discovery_module, "parse_skill", counting_parse)
    service = SkillService(tmp_path / "user")
    first = service.list(None)
    second = service.list(None)
    assert first == second
    assert len(calls) == 1


def test_cached_result_is_not_shared_between_listings(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write_skill(user, "a-folder", "name: shared\n")
    write_skill(user, "b-folder", "name: shared\n")
    service = SkillService(user)
    first = service.list(None)
    second = service.list(None)
    # the duplicate warning is added per scan, not accumulated in the cached parse
    assert first == second
    assert len(second[0]["diagnostics"]["warnings"]) == 2


@pytest.mark.parametrize(
    "schema",
    [DIAGNOSTICS_SCHEMA, SKILL_SUMMARY_SCHEMA, SKILL_SEARCH_ITEM_SCHEMA, SKILL_VIEW_SCHEMA],
)
def test_schemas_are_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)


def test_every_kind_of_summary_matches_the_summary_schema(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write_skill(user, "plain")
    write_skill(user, "tagged", 'tags: [a, 1]\nversion: "1"\nextra: yes\n')
    write_skill(user, "renamed", "name: other-name\n")
    (user / "broken").mkdir()
    (user / "broken" / "SKILL.md").write_text("no front matter", encoding="utf-8")
    write_skill(tmp_path / "ws" / ".compozy" / "skills", "plain")
    records = SkillService(user).list(tmp_path / "ws")
    assert len(records) == 4
    validator = jsonschema.Draft202012Validator(SKILL_SUMMARY_SCHEMA)
    for record in records:
        validator.validate(record)


def test_summary_schema_is_closed(tmp_path: Path) -> None:
    write_skill(tmp_path / "user", "plain")
    [record] = SkillService(tmp_path / "user").list(None)
    validator = jsonschema.Draft202012Validator(SKILL_SUMMARY_SCHEMA)
    assert not validator.is_valid({**record, "surprise": 1})
    assert not validator.is_valid({k: v for k, v in record.items() if k != "diagnostics"})


def test_a_root_with_more_skills_than_the_cache_once_held_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24, item 6: the cache held 512 entries, so 513 skills were parsed again on every
    listing (least-recently-used, read in order); it now makes room for what a root holds."""
    for index in range(600):
        write_skill(tmp_path, f"skill-{index:03d}")
    parsed: list[bytes] = []

    def counting(data: bytes) -> ParsedSkill:
        parsed.append(data)
        return parse_skill(data)

    monkeypatch.setattr(discovery_module, "parse_skill", counting)
    service = SkillService(tmp_path)
    assert len(service.list(None)) == 600
    assert len(parsed) == 600
    assert len(service.list(None)) == 600
    assert len(parsed) == 600  # every file came from the cache
