"""The checked contents of one SKILL.md: what it declares, and what is wrong with it.

Parsing depends only on the file's bytes (not on where it lives), so the result can be cached.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compozy_mcp.skills._frontmatter import (
    FrontMatterError,
    key_text,
    kind_of,
    load_yaml,
    split_front_matter,
    to_json,
)

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
NAME_PATTERN_TEXT = "^[a-z0-9][a-z0-9._-]{0,63}$"
MAX_DESCRIPTION_CHARS = 1024
KNOWN_KEYS = ("name", "description", "tags", "version", "sha256", "allowed-tools")
SHA256_MISMATCH = "sha256 does not match the body"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class ParsedSkill:
    """One SKILL.md, checked. Shared through the cache: treat as read-only."""

    #: the declared name, when it is a string that matches the name pattern
    name: str | None
    description: str
    tags: tuple[str, ...]
    version: str | None
    front_matter: Mapping[str, Any] | None
    body: str | None
    warnings: tuple[str, ...]
    failures: tuple[str, ...]
    #: no failure, except possibly a sha256 one
    valid: bool
    #: ``sha256`` is absent or matches the body
    intact: bool


def failed(reason: str) -> ParsedSkill:
    """A skill whose contents could not be read at all."""
    return ParsedSkill(None, "", (), None, None, None, (), (reason,), valid=False, intact=False)


def parse_skill(data: bytes) -> ParsedSkill:
    """Check the raw bytes of a SKILL.md. Never raises for bad content."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return failed(f"SKILL.md is not valid UTF-8 (invalid byte at offset {exc.start})")
    text = text.removeprefix("\ufeff")
    try:
        yaml_text, body = split_front_matter(text)
        raw = load_yaml(yaml_text)
        if raw is None:  # an empty front matter block
            raw = {}
        if not isinstance(raw, dict):
            raise FrontMatterError(f"front matter is not a mapping (it is {kind_of(raw)})")
        front_matter: dict[str, Any] = to_json(raw)
    except FrontMatterError as exc:
        return failed(str(exc))
    return _check(raw, front_matter, body)


def _check(raw: dict[Any, Any], front_matter: dict[str, Any], body: str) -> ParsedSkill:
    warnings: list[str] = [
        f'unknown front-matter key "{key_text(key)}"' for key in raw if key not in KNOWN_KEYS
    ]
    failures: list[str] = []
    # values are checked as YAML loaded them: a date is not a string, even though
    # front_matter shows it as one
    name = _name(raw, failures)
    description = _description(raw, failures, warnings)
    tags = _strings(raw, "tags", warnings)
    _strings(raw, "allowed-tools", warnings)
    version = raw.get("version")
    if version is not None and not isinstance(version, str):
        warnings.append(f'"version" must be a string, got {kind_of(version)}; ignored (quote it)')
        version = None
    valid = not failures
    integrity = _integrity(raw, body)
    if integrity is not None:
        failures.append(integrity)
    return ParsedSkill(
        name=name,
        description=description,
        tags=tags,
        version=version,
        front_matter=front_matter,
        body=body,
        warnings=tuple(warnings),
        failures=tuple(failures),
        valid=valid,
        intact=integrity is None,
    )


def _name(raw: dict[Any, Any], failures: list[str]) -> str | None:
    if "name" not in raw:
        failures.append('missing required key "name"')
        return None
    name = raw["name"]
    if not isinstance(name, str):
        failures.append(f'"name" must be a string, got {kind_of(name)}')
        return None
    if not NAME_PATTERN.fullmatch(name):
        failures.append(f'name "{name}" does not match {NAME_PATTERN_TEXT}')
        return None
    return name


def _description(raw: dict[Any, Any], failures: list[str], warnings: list[str]) -> str:
    if "description" not in raw:
        failures.append('missing required key "description"')
        return ""
    description = raw["description"]
    if not isinstance(description, str):
        failures.append(f'"description" must be a string, got {kind_of(description)}')
        return ""
    if not description.strip():
        failures.append('"description" must not be empty')
        return ""
    if len(description) > MAX_DESCRIPTION_CHARS:
        warnings.append(
            f"description is longer than {MAX_DESCRIPTION_CHARS} characters ({len(description)})"
        )
    return description


def _strings(raw: dict[Any, Any], key: str, warnings: list[str]) -> tuple[str, ...]:
    """An optional list of strings; anything else in it is dropped with a warning."""
    value = raw.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        warnings.append(f'"{key}" must be a list of strings, got {kind_of(value)}; ignored')
        return ()
    kept: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            kept.append(item)
        else:
            warnings.append(f'"{key}" entry {index} is {kind_of(item)}, not a string; dropped')
    return tuple(kept)


def _integrity(raw: dict[Any, Any], body: str) -> str | None:
    """The sha256 failure, if the front matter declares a digest the body does not have."""
    declared = raw.get("sha256")
    if declared is None:
        return None
    if not isinstance(declared, str):
        return f'"sha256" must be a string of 64 lowercase hex digits, got {kind_of(declared)}'
    if not _SHA256_HEX.fullmatch(declared):
        return f'"sha256" must be 64 lowercase hex digits, got "{declared}"'
    if hashlib.sha256(body.encode("utf-8")).hexdigest() != declared:
        return SHA256_MISMATCH
    return None
