"""What the diagnostics of a skill say about its SKILL.md."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.tiers import examples

from compozy_mcp.skills import NAME_PATTERN, SkillService
from compozy_mcp.skills._metadata import SHA256_MISMATCH, parse_skill


def write(root: Path, folder: str, content: str | bytes) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def only_skill(root: Path) -> dict[str, Any]:
    [summary] = SkillService(root).list(None)
    return summary


def diagnose(tmp_path: Path, content: str | bytes, folder: str = "demo") -> dict[str, Any]:
    root = tmp_path / "skills"
    write(root, folder, content)
    diagnostics: dict[str, Any] = only_skill(root)["diagnostics"]
    return diagnostics


def test_well_formed_skill_is_valid_and_verified(tmp_path: Path) -> None:
    diagnostics = diagnose(tmp_path, "---\nname: demo\ndescription: Does things.\n---\nBody\n")
    assert diagnostics == {"valid": True, "verified": True, "warnings": [], "failures": []}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("name: demo\n", "no front matter"),
        ("", "no front matter"),
        ("---\nname: demo\ndescription: x\n", "front matter is not terminated"),
        ("---", "front matter is not terminated"),
        ("---\n- a\n- b\n---\n", "front matter is not a mapping (it is a list)"),
        ("---\njust text\n---\n", "front matter is not a mapping (it is a string)"),
        ("---\ndescription: x\n---\n", 'missing required key "name"'),
        ("---\nname: demo\n---\n", 'missing required key "description"'),
        ("---\nname: 12\ndescription: x\n---\n", '"name" must be a string, got an integer'),
        ("---\nname: demo\ndescription: [a]\n---\n", '"description" must be a string'),
        ("---\nname: demo\ndescription: '  '\n---\n", '"description" must not be empty'),
        ("---\nname: Demo\ndescription: x\n---\n", 'name "Demo" does not match'),
        ("---\nname: -demo\ndescription: x\n---\n", 'name "-demo" does not match'),
        ("---\nname: " + "a" * 65 + "\ndescription: x\n---\n", "does not match"),
        ("---\nname: demo\ndescription: x\nwhen: !!python/object:os.system {}\n---\n", "YAML"),
    ],
)
def test_unreadable_front_matter_is_a_failure(tmp_path: Path, content: str, expected: str) -> None:
    diagnostics = diagnose(tmp_path, content)
    assert diagnostics["valid"] is False
    assert diagnostics["verified"] is False
    assert expected in diagnostics["failures"][0]


def test_yaml_error_names_the_line_of_skill_md(tmp_path: Path) -> None:
    content = "---\nname: demo\ndescription: x\ntags: [a\nversion: '1'\n---\n"
    [failure] = diagnose(tmp_path, content)["failures"]
    assert failure.startswith("front matter is not valid YAML at line ")
    line = int(failure.removeprefix("front matter is not valid YAML at line ").split(":")[0])
    assert 4 <= line <= 6


def test_yaml_constructor_errors_are_failures_too(tmp_path: Path) -> None:
    diagnostics = diagnose(tmp_path, "---\nname: demo\ndescription: x\nwhen: 2024-13-45\n---\n")
    assert diagnostics["valid"] is False
    assert "not valid YAML" in diagnostics["failures"][0]


def test_invalid_skill_is_listed_under_its_folder_with_empty_description(
    tmp_path: Path,
) -> None:
    root = tmp_path / "skills"
    write(root, "broken-one", "---\nname: [oops]\n---\n")
    summary = only_skill(root)
    assert summary["name"] == "broken-one"
    assert summary["description"] == ""


def test_invalid_skill_with_readable_name_is_listed_under_that_name(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root, "folder", "---\nname: declared\n---\n")
    summary = only_skill(root)
    assert summary["name"] == "declared"
    assert summary["diagnostics"]["valid"] is False


def test_file_over_256_kib_is_a_failure(tmp_path: Path) -> None:
    head = "---\nname: demo\ndescription: x\n---\n"
    diagnostics = diagnose(tmp_path, head + "x" * (256 * 1024))
    assert diagnostics["valid"] is False
    assert "larger than the 256 KiB limit" in diagnostics["failures"][0]


def test_file_of_exactly_256_kib_is_accepted(tmp_path: Path) -> None:
    head = "---\nname: demo\ndescription: x\n---\n"
    diagnostics = diagnose(tmp_path, head + "x" * (256 * 1024 - len(head)))
    assert diagnostics["valid"] is True


def test_non_utf8_content_is_a_failure(tmp_path: Path) -> None:
    diagnostics = diagnose(tmp_path, b"---\nname: demo\ndescription: caf\xe9\n---\n")
    assert diagnostics["valid"] is False
    assert "not valid UTF-8" in diagnostics["failures"][0]


def test_crlf_line_endings_and_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    content = "\ufeff---\r\nname: demo\r\ndescription: x\r\n---\r\nBody\r\n"
    assert diagnose(tmp_path, content)["valid"] is True


def test_unknown_keys_are_warnings(tmp_path: Path) -> None:
    content = "---\nname: demo\ndescription: x\nauthor: me\n1: one\n---\n"
    diagnostics = diagnose(tmp_path, content)
    assert diagnostics["valid"] is True
    assert diagnostics["verified"] is True
    assert diagnostics["warnings"] == [
        'unknown front-matter key "author"',
        'unknown front-matter key "1"',
    ]


def test_non_string_list_entries_are_dropped_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(
        root,
        "demo",
        "---\nname: demo\ndescription: x\n"
        "tags: [git, 3, {a: b}]\nallowed-tools: [Read, null]\n---\n",
    )
    summary = only_skill(root)
    assert summary["tags"] == ["git"]
    assert summary["diagnostics"]["warnings"] == [
        '"tags" entry 1 is an integer, not a string; dropped',
        '"tags" entry 2 is a mapping, not a string; dropped',
        '"allowed-tools" entry 1 is null, not a string; dropped',
    ]
    assert summary["diagnostics"]["valid"] is True


def test_tags_that_are_not_a_list_are_ignored_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root, "demo", "---\nname: demo\ndescription: x\ntags: git\n---\n")
    summary = only_skill(root)
    assert "tags" not in summary
    assert summary["diagnostics"]["warnings"] == [
        '"tags" must be a list of strings, got a string; ignored'
    ]


def test_version_that_is_not_a_string_is_ignored_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root, "demo", "---\nname: demo\ndescription: x\nversion: 1.0\n---\n")
    summary = only_skill(root)
    assert "version" not in summary
    assert summary["diagnostics"]["warnings"][0].startswith('"version" must be a string')


def test_long_description_is_kept_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    description = "d" * 1025
    write(root, "demo", f"---\nname: demo\ndescription: {description}\n---\n")
    summary = only_skill(root)
    assert summary["description"] == description
    assert summary["diagnostics"]["warnings"] == [
        "description is longer than 1024 characters (1025)"
    ]
    assert summary["diagnostics"]["verified"] is True


def test_name_differing_from_folder_is_a_warning_and_not_verified(tmp_path: Path) -> None:
    diagnostics = diagnose(tmp_path, "---\nname: other\ndescription: x\n---\n", folder="demo")
    assert diagnostics["valid"] is True
    assert diagnostics["verified"] is False
    assert diagnostics["warnings"] == ['name "other" differs from its folder "demo"']


def test_matching_sha256_verifies_the_body(tmp_path: Path) -> None:
    body = "# Demo\n\nSteps: é\n"
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    content = f"---\nname: demo\ndescription: x\nsha256: {digest}\n---\n{body}"
    assert diagnose(tmp_path, content) == {
        "valid": True,
        "verified": True,
        "warnings": [],
        "failures": [],
    }


def test_mismatching_sha256_is_a_failure_but_stays_valid(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"another body\n").hexdigest()
    content = f"---\nname: demo\ndescription: x\nsha256: {digest}\n---\nthe body\n"
    diagnostics = diagnose(tmp_path, content)
    assert diagnostics["valid"] is True
    assert diagnostics["verified"] is False
    assert diagnostics["failures"] == [SHA256_MISMATCH]


def test_malformed_sha256_is_not_verified(tmp_path: Path) -> None:
    diagnostics = diagnose(tmp_path, "---\nname: demo\ndescription: x\nsha256: ABC\n---\n")
    assert diagnostics["valid"] is True
    assert diagnostics["verified"] is False
    assert "64 lowercase hex digits" in diagnostics["failures"][0]


def test_front_matter_values_become_json_compatible(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(
        root,
        "demo",
        "---\nname: demo\ndescription: x\nx-created: 2024-05-01\nx-at: 2024-05-01 10:00:00\n"
        "x-nan: .nan\nx-big: 123456789012345678901234567890\nx-set: !!set {b, a}\n"
        "x-keys: {2024-01-02: d, true: t, null: n}\n---\n",
    )
    front = SkillService(root).view("demo", None)["front_matter"]
    assert front["x-created"] == "2024-05-01"
    assert front["x-at"] == "2024-05-01T10:00:00"
    assert front["x-nan"] == "nan"
    assert front["x-big"] == "123456789012345678901234567890"
    assert front["x-set"] == ["a", "b"]
    assert front["x-keys"] == {"2024-01-02": "d", "true": "t", "null": "n"}
    orjson.dumps(front)  # raises if anything is left that JSON cannot carry


def test_recursive_alias_is_a_failure(tmp_path: Path) -> None:
    content = "---\nname: demo\ndescription: x\nloop: &a [*a]\n---\n"
    diagnostics = diagnose(tmp_path, content)
    assert diagnostics["valid"] is False
    assert diagnostics["failures"] == ["front matter contains a recursive alias"]


def test_alias_expansion_bomb_is_a_failure_not_a_hang(tmp_path: Path) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    content = "---\nname: demo\ndescription: x\n" + "\n".join(levels) + "\n---\n"
    started = time.monotonic()
    diagnostics = diagnose(tmp_path, content)
    assert time.monotonic() - started < 10
    assert diagnostics["failures"] == ["front matter is too large once its aliases are expanded"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_skill_md_that_is_not_a_regular_file_is_a_failure(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "demo").mkdir(parents=True)
    os.mkfifo(root / "demo" / "SKILL.md")  # opening it for reading would block
    diagnostics = only_skill(root)["diagnostics"]
    assert diagnostics["failures"] == ["SKILL.md is not a regular file"]


def test_unreadable_file_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "skills"
    write(root, "demo", "---\nname: demo\ndescription: x\n---\n")
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fsdecode(path).endswith("SKILL.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    diagnostics = only_skill(root)["diagnostics"]
    assert diagnostics["failures"] == ["SKILL.md cannot be read: Permission denied"]


_SKILL_TEXTS = (
    st.binary(max_size=300)
    | st.text(max_size=300).map(str.encode)
    | st.tuples(st.text(max_size=200), st.text(max_size=50)).map(
        lambda parts: f"---\n{parts[0]}\n---\n{parts[1]}".encode()
    )
)


#: hypothesis's default (all of them in ``make tests``, fewer in ``make unit``)
EXAMPLES = examples(100)


@settings(max_examples=EXAMPLES)
@given(_SKILL_TEXTS)
def test_parsing_never_raises_and_only_a_digest_failure_leaves_it_valid(data: bytes) -> None:
    parsed = parse_skill(data)
    if parsed.valid:
        assert parsed.name is not None
        assert parsed.description.strip()
        assert len(parsed.failures) == (0 if parsed.intact else 1)
    else:
        assert parsed.failures


@settings(max_examples=EXAMPLES)
@given(
    st.dictionaries(
        st.sampled_from(["name", "description", "tags", "version", "sha256", "x"]),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=20)
        | st.lists(st.text(max_size=5) | st.integers(), max_size=3),
    )
)
def test_validity_depends_only_on_name_and_description(front: dict[str, Any]) -> None:
    parsed = parse_skill(("---\n" + yaml.safe_dump(front) + "---\nbody\n").encode())
    name, description = front.get("name"), front.get("description")
    assert parsed.valid == (
        isinstance(name, str)
        and NAME_PATTERN.fullmatch(name) is not None
        and isinstance(description, str)
        and description.strip() != ""
    )
