"""Skill tools. Spec: skill list/search omit diagnostics only when every diagnostic is valid,
verified, and has no warning, failure or activation reason; otherwise they keep the whole list."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Caller

from compozy_mcp.assembly import App
from compozy_mcp.calls import CallScope
from compozy_mcp.errors import ResourceNotFound, ToolConflict

pytestmark = pytest.mark.anyio


def _skill(root: Path, name: str, description: str = "Does a thing.", extra: str = "") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nBody.\n"
    )


@pytest.fixture
def user_skills(app: App) -> Path:
    root = app.settings.skills_dir
    _skill(root, "review", "Review a change.")
    _skill(root, "deploy", "Ship a release.", "tags: [ops]\n")
    return root


async def test_compact_skill_list_omits_diagnostics_when_all_are_clean(
    call: Caller, user_skills: Path
) -> None:
    compact = await call.structured("compozy__skill_list", {})
    assert compact == {
        "skills": [
            {"name": "deploy", "description": "Ship a release.", "scope": "user", "tags": ["ops"]},
            {"name": "review", "description": "Review a change.", "scope": "user"},
        ]
    }
    full = await call.structured("compozy__skill_list", {"result_view": "full"})
    assert all(s["diagnostics"]["valid"] and s["diagnostics"]["verified"] for s in full["skills"])
    assert full["skills"][0]["path"].endswith("deploy/SKILL.md")


async def test_one_warning_keeps_every_skills_diagnostics(call: Caller, user_skills: Path) -> None:
    _skill(user_skills, "odd", "Has an unknown key.", "colour: blue\n")
    compact = await call.structured("compozy__skill_list", {})
    assert [s["diagnostics"] for s in compact["skills"]] == [
        {"valid": True, "verified": True, "warnings": [], "failures": []},
        {
            "valid": True,
            "verified": True,
            "warnings": ['unknown front-matter key "colour"'],
            "failures": [],
        },
        {"valid": True, "verified": True, "warnings": [], "failures": []},
    ]


async def test_an_activation_reason_keeps_the_diagnostics(
    call: Caller, user_skills: Path, workspace: Path
) -> None:
    _skill(workspace / ".compozy" / "skills", "review", "The team's review.")
    compact = await call.structured("compozy__skill_search", {"query": "review"})
    assert compact["skills"][0]["scope"] == "workspace"
    assert compact["skills"][0]["diagnostics"]["activation_reason"].startswith(
        "workspace skill overrides the user skill"
    )
    assert compact["skills"][0]["score"] > 0


async def test_skill_view_reads_one_skill(call: Caller, user_skills: Path) -> None:
    skill = (await call.structured("compozy__skill_view", {"name": "review"}))["skill"]
    assert skill["body"].startswith("# review")
    assert skill["front_matter"] == {"name": "review", "description": "Review a change."}


@pytest.mark.parametrize("name", ["../review", "/etc/passwd", "..", "missing", "review/../x"])
async def test_skill_view_finds_nothing_outside_a_skills_folder(
    call: Caller, user_skills: Path, name: str
) -> None:
    with pytest.raises(ResourceNotFound) as caught:
        await call("compozy__skill_view", {"name": name})
    assert caught.value.reason == "skill_not_found"


async def test_an_invalid_skill_is_listed_but_cannot_be_viewed(
    call: Caller, user_skills: Path
) -> None:
    broken = user_skills / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no front matter here\n")
    listed = await call.structured("compozy__skill_list", {})
    entry = next(s for s in listed["skills"] if s["name"] == "broken")
    assert entry["diagnostics"]["valid"] is False
    with pytest.raises(ToolConflict) as caught:
        await call("compozy__skill_view", {"name": "broken"})
    assert caught.value.reason == "skill_invalid"


async def test_a_session_sees_only_the_skills_its_policy_allows(
    call: Caller, user_skills: Path
) -> None:
    root = (await call.create())["id"]
    child = await call.structured(
        "compozy__session_spawn",
        {"parent_session_id": root, "agent_name": "g", "ttl_seconds": 60, "skills": ["review"]},
    )
    scope = CallScope(session_id=child["session_id"])
    listed = await call.structured("compozy__skill_list", {}, scope=scope)
    assert [s["name"] for s in listed["skills"]] == ["review"]
    with pytest.raises(ResourceNotFound):
        await call("compozy__skill_view", {"name": "deploy"}, scope=scope)


async def test_skills_of_an_unknown_workspace_are_not_found(call: Caller) -> None:
    with pytest.raises(ResourceNotFound, match='workspace "ws_nope"'):
        await call("compozy__skill_list", {"workspace_id": "ws_nope"})
