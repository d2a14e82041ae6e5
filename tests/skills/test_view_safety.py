"""``view`` returns whole skills, and never reads anything outside a skills root."""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml  # noqa: F401 - loaded up front, so its lazy import is not an access under test

from compozy_mcp.skills import SKILL_VIEW_SCHEMA, SkillNotFound, SkillService, SkillUnreadable
from compozy_mcp.skills._fsguard import Refused, check_skill_file, read_checked

jsonschema: Any = importlib.import_module("jsonschema")

# --- recording filesystem access ------------------------------------------------------------
# An audit hook sees every open() and directory scan the process makes. Hooks cannot be
# removed, so this one records only while a test has asked it to.
_RECORDERS: list[list[str]] = []
_AUDITED = frozenset({"open", "os.scandir", "os.listdir"})


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _RECORDERS or event not in _AUDITED or not args:
        return
    target = args[0]
    if isinstance(target, str | bytes | os.PathLike):
        # both the path as given and where it leads
        path = os.path.abspath(os.fsdecode(target))
        _RECORDERS[-1].extend((path, os.path.realpath(path)))


sys.addaudithook(_audit)


@contextmanager
def recorded_access() -> Iterator[list[str]]:
    """The paths opened or scanned inside the block, each as given and resolved."""
    seen: list[str] = []
    _RECORDERS.append(seen)
    try:
        yield seen
    finally:
        _RECORDERS.remove(seen)


def inside(path: str, root: Path) -> bool:
    real_root = os.path.realpath(root)
    return path == real_root or path.startswith(real_root + os.sep)


# --- fixtures ---------------------------------------------------------------------------------


def write_skill(root: Path, folder: str, body: str = "Body.\n", extra: str = "") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {folder}\ndescription: The {folder} skill.\n{extra}---\n{body}"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A user root, a workspace, and a secret skill outside both roots."""
    user = tmp_path / "user"
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    write_skill(user, "alpha")
    write_skill(workspace / ".compozy" / "skills", "beta")
    write_skill(outside, "secret", body="TOP SECRET\n")
    (tmp_path / "passwd").write_text("root:x:0:0\n", encoding="utf-8")
    return {"user": user, "workspace": workspace, "outside": outside, "tmp": tmp_path}


# --- names that are paths ---------------------------------------------------------------------

EVIL_NAMES = [
    "../x",
    "../outside/secret",
    "/etc/passwd",
    "a/../../b",
    "alpha/../alpha",
    "alpha/",
    "..",
    ".",
    "",
    "~",
    "~root",
    "~/.ssh/id_rsa",
    "alpha\x00",
    "x\x00/etc/passwd",
    "..\\..\\x",
    "C:\\Windows",
]


@pytest.mark.parametrize("name", EVIL_NAMES)
def test_path_like_names_are_not_found_without_touching_the_filesystem(
    layout: dict[str, Path], name: str
) -> None:
    service = SkillService(layout["user"])
    with recorded_access() as seen, pytest.raises(SkillNotFound) as raised:
        service.view(name, layout["workspace"])
    assert raised.value.name == name
    assert seen == []


def test_absolute_path_to_a_skill_outside_the_roots_is_not_found(layout: dict[str, Path]) -> None:
    service = SkillService(layout["user"])
    for name in (str(layout["outside"] / "secret"), str(layout["outside"] / "secret" / "SKILL.md")):
        with recorded_access() as seen, pytest.raises(SkillNotFound):
            service.view(name, layout["workspace"])
        assert seen == []


@pytest.mark.parametrize("name", ["secret", "outside", "passwd", "a..b", "ALPHA"])
def test_unknown_names_only_scan_inside_the_roots(layout: dict[str, Path], name: str) -> None:
    service = SkillService(layout["user"])
    roots = [layout["user"], layout["workspace"] / ".compozy" / "skills"]
    with recorded_access() as seen, pytest.raises(SkillNotFound):
        service.view(name, layout["workspace"])
    assert seen  # the roots were scanned
    assert all(any(inside(path, root) for root in roots) for path in seen), seen


# --- symlinks -----------------------------------------------------------------------------------


def test_symlinked_folder_pointing_outside_is_invalid_and_never_read(
    layout: dict[str, Path],
) -> None:
    user = layout["user"]
    (user / "secret").symlink_to(layout["outside"] / "secret", target_is_directory=True)
    service = SkillService(user)
    with recorded_access() as seen:
        records = {record["name"]: record for record in service.list(None)}
        with pytest.raises(SkillUnreadable) as raised:
            service.view("secret", None)
    diagnostics = records["secret"]["diagnostics"]
    assert diagnostics["valid"] is False
    assert "symlink" in diagnostics["failures"][0]
    assert "outside the skills root" in diagnostics["failures"][0]
    assert records["secret"]["description"] == ""
    assert raised.value.name == "secret"
    assert raised.value.reason == diagnostics["failures"][0]
    assert not any(inside(path, layout["outside"]) for path in seen), seen


def test_symlinked_skill_md_is_invalid_and_never_read(layout: dict[str, Path]) -> None:
    user = layout["user"]
    (user / "secret").mkdir()
    (user / "secret" / "SKILL.md").symlink_to(layout["outside"] / "secret" / "SKILL.md")
    # even a symlink that stays inside the root is refused
    (user / "twin").mkdir()
    (user / "twin" / "SKILL.md").symlink_to(user / "alpha" / "SKILL.md")
    service = SkillService(user)
    with recorded_access() as seen:
        records = {record["name"]: record for record in service.list(None)}
        for name in ("secret", "twin"):
            with pytest.raises(SkillUnreadable, match="symlink"):
                service.view(name, None)
    for name in ("secret", "twin"):
        assert records[name]["diagnostics"]["failures"] == [
            "SKILL.md is a symlink; symlinked skill files are never read"
        ]
    assert not any(inside(path, layout["outside"]) for path in seen), seen
    assert str(user / "twin" / "SKILL.md") not in seen


def test_a_hardlinked_skill_md_is_never_read_and_its_failure_names_no_path(
    layout: dict[str, Path],
) -> None:
    """Issue 11: a hard link to a file outside the root passes every path check, so a SKILL.md
    must have exactly one link; and no failure discloses where a link points."""
    user = layout["user"]
    (user / "secret").mkdir()
    os.link(layout["outside"] / "secret" / "SKILL.md", user / "secret" / "SKILL.md")
    service = SkillService(user)
    with recorded_access() as seen:
        records = {record["name"]: record for record in service.list(None)}
        with pytest.raises(SkillUnreadable, match="hard link"):
            service.view("secret", None)
    [failure] = records["secret"]["diagnostics"]["failures"]
    assert failure == "SKILL.md has more than one hard link; linked skill files are never read"
    assert str(layout["outside"]) not in failure
    assert str(user / "secret" / "SKILL.md") not in seen  # never opened


def test_skill_md_reached_through_a_symlinked_folder_is_refused(layout: dict[str, Path]) -> None:
    user = layout["user"]
    (user / "secret").symlink_to(layout["outside"] / "secret", target_is_directory=True)
    with pytest.raises(Refused, match="outside the skills root"):
        check_skill_file(str(user / "secret" / "SKILL.md"), os.path.realpath(user))


def test_skill_md_swapped_for_a_symlink_after_the_check_is_not_read(
    layout: dict[str, Path],
) -> None:
    user = layout["user"]
    path = user / "alpha" / "SKILL.md"
    real_root = os.path.realpath(user)
    checked = check_skill_file(str(path), real_root)
    assert checked is not None
    path.unlink()
    path.symlink_to(layout["outside"] / "secret" / "SKILL.md")
    with recorded_access() as seen, pytest.raises(Refused):
        read_checked(checked, real_root)
    assert not any(inside(p, layout["outside"]) for p in seen), seen


def test_symlinked_root_is_followed(tmp_path: Path) -> None:
    write_skill(tmp_path / "dotfiles" / "skills", "alpha")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "skills").symlink_to(tmp_path / "dotfiles" / "skills")
    record = SkillService(tmp_path / "home" / "skills").view("alpha", None)
    assert record["diagnostics"]["valid"] is True
    assert record["path"] == str(tmp_path / "home" / "skills" / "alpha" / "SKILL.md")


# --- the view record ----------------------------------------------------------------------------


def test_view_returns_the_whole_skill(layout: dict[str, Path]) -> None:
    user = layout["user"]
    path = write_skill(user, "gamma", body="# Gamma\n\nDo it.\n", extra="tags: [x]\nversion: '3'\n")
    record = SkillService(user).view("gamma", None)
    assert record == {
        "name": "gamma",
        "description": "The gamma skill.",
        "scope": "user",
        "path": str(path),
        "tags": ["x"],
        "version": "3",
        "front_matter": {
            "name": "gamma",
            "description": "The gamma skill.",
            "tags": ["x"],
            "version": "3",
        },
        "body": "# Gamma\n\nDo it.\n",
        "files": [],
        "diagnostics": {"valid": True, "verified": True, "warnings": [], "failures": []},
    }
    assert list(record) == [
        "name",
        "description",
        "scope",
        "path",
        "tags",
        "version",
        "front_matter",
        "body",
        "files",
        "diagnostics",
    ]
    jsonschema.Draft202012Validator(SKILL_VIEW_SCHEMA).validate(record)


def test_view_lists_the_other_files_safely(layout: dict[str, Path]) -> None:
    folder = layout["user"] / "alpha"
    (folder / "scripts" / "deep").mkdir(parents=True)
    (folder / "scripts" / "run.sh").write_text("echo\n", encoding="utf-8")
    (folder / "scripts" / "deep" / "SKILL.md").write_text("nested\n", encoding="utf-8")
    (folder / "a-c.txt").write_text("x", encoding="utf-8")
    (folder / "empty-dir").mkdir()
    (folder / "inner-link").symlink_to(folder / "a-c.txt")
    (folder / "outer-link").symlink_to(layout["tmp"] / "passwd")
    (folder / "outer-dir").symlink_to(layout["outside"], target_is_directory=True)
    with recorded_access() as seen:
        record = SkillService(layout["user"]).view("alpha", None)
    assert record["files"] == ["a-c.txt", "inner-link", "scripts/deep/SKILL.md", "scripts/run.sh"]
    assert not any(inside(path, layout["outside"]) for path in seen), seen
    jsonschema.Draft202012Validator(SKILL_VIEW_SCHEMA).validate(record)


def test_view_lists_at_most_200_files(layout: dict[str, Path]) -> None:
    folder = layout["user"] / "alpha"
    for index in range(250):
        (folder / f"f{index:03d}.txt").write_text("", encoding="utf-8")
    files = SkillService(layout["user"]).view("alpha", None)["files"]
    assert files == [f"f{index:03d}.txt" for index in range(200)]


def test_view_of_an_invalid_skill_is_refused_with_its_first_failure(tmp_path: Path) -> None:
    (tmp_path / "user" / "broken").mkdir(parents=True)
    (tmp_path / "user" / "broken" / "SKILL.md").write_text(
        "---\nname: broken\n---\n", encoding="utf-8"
    )
    with pytest.raises(SkillUnreadable) as raised:
        SkillService(tmp_path / "user").view("broken", None)
    assert raised.value.name == "broken"
    assert raised.value.reason == 'missing required key "description"'


def test_view_of_an_unverified_but_valid_skill_is_allowed(tmp_path: Path) -> None:
    wrong = hashlib.sha256(b"other").hexdigest()
    write_skill(tmp_path / "user", "alpha", extra=f"sha256: {wrong}\n")
    record = SkillService(tmp_path / "user").view("alpha", None)
    assert record["body"] == "Body.\n"
    assert record["diagnostics"]["valid"] is True
    assert record["diagnostics"]["verified"] is False


def test_view_of_an_unknown_name_is_not_found(layout: dict[str, Path]) -> None:
    with pytest.raises(SkillNotFound) as raised:
        SkillService(layout["user"]).view("nope", None)
    assert raised.value.name == "nope"


def test_view_prefers_the_workspace_skill(tmp_path: Path) -> None:
    write_skill(tmp_path / "user", "alpha", body="user\n")
    write_skill(tmp_path / "ws" / ".compozy" / "skills", "alpha", body="workspace\n")
    service = SkillService(tmp_path / "user")
    assert service.view("alpha", tmp_path / "ws")["body"] == "workspace\n"
    assert service.view("alpha", None)["body"] == "user\n"


def test_workspace_skill_is_not_visible_without_the_workspace(layout: dict[str, Path]) -> None:
    service = SkillService(layout["user"])
    assert service.view("beta", layout["workspace"])["scope"] == "workspace"
    with pytest.raises(SkillNotFound):
        service.view("beta", None)


def test_changing_a_returned_record_does_not_change_the_next_one(
    layout: dict[str, Path],
) -> None:
    service = SkillService(layout["user"])
    first = service.view("alpha", None)
    first["front_matter"]["name"] = "changed"
    first["diagnostics"]["warnings"].append("changed")
    second = service.view("alpha", None)
    assert second["front_matter"]["name"] == "alpha"
    assert second["diagnostics"]["warnings"] == []
