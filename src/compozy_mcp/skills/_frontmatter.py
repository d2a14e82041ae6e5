"""Splitting SKILL.md into front matter and body, and loading the front matter as JSON data."""

from __future__ import annotations

import base64
import datetime
import math
from typing import Any

FENCE = "---"
#: nodes the JSON conversion may visit; YAML aliases can make a small file expand enormously
MAX_NODES = 200_000
MAX_DEPTH = 100
# orjson (the wire encoder) only handles 64-bit integers
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message is the diagnostic failure."""


def split_front_matter(text: str) -> tuple[str, str]:
    """``(yaml_text, body)``; the body is everything after the closing ``---`` line."""
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.rstrip() != FENCE:
        raise FrontMatterError('no front matter: SKILL.md must start with a "---" line')
    if first_end < 0:
        raise FrontMatterError('front matter is not terminated: no closing "---" line')
    start = pos = first_end + 1
    while pos <= len(text):
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.rstrip() == FENCE:
            return text[start:pos], "" if end < 0 else text[end + 1 :]
        if end < 0:
            break
        pos = end + 1
    raise FrontMatterError('front matter is not terminated: no closing "---" line')


def load_yaml(yaml_text: str) -> Any:
    """Parse the front matter with ``yaml.safe_load``; the error names the line of SKILL.md."""
    import yaml  # imported here: CLI start-up should not pay for PyYAML

    try:
        return yaml.safe_load(yaml_text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        # the mark counts from 0 within the front matter, which starts on line 2 of SKILL.md
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise FrontMatterError(f"front matter is not valid YAML{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML: {exc}") from None
    except RecursionError:
        raise FrontMatterError("front matter is not valid YAML: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # the timestamp and integer constructors raise these for values such as 2024-13-45
        raise FrontMatterError(f"front matter is not valid YAML: {exc}") from None


def kind_of(value: Any) -> str:
    """The YAML-ish name of a value's type, for diagnostics."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, datetime.date):
        return "a date"
    return f"a {type(value).__name__}"


def key_text(key: Any) -> str:
    """A mapping key as a JSON object key."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return "true" if key is True else "false" if key is False else "null"
    if isinstance(key, datetime.date):
        return key.isoformat()
    return str(key)


def to_json(value: Any) -> Any:
    """A JSON-compatible copy of loaded YAML: dates, binary, sets and odd numbers become text."""
    return _JsonCopier().copy(value, 0)


class _JsonCopier:
    """One conversion: counts the nodes it visits and tracks the containers it is inside."""

    def __init__(self) -> None:
        self._budget = MAX_NODES
        self._open: set[int] = set()

    def copy(self, value: Any, depth: int) -> Any:
        self._budget -= 1
        if self._budget < 0:
            raise FrontMatterError("front matter is too large once its aliases are expanded")
        if depth > MAX_DEPTH:
            raise FrontMatterError(f"front matter nests deeper than {MAX_DEPTH} levels")
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int):
            return value if _INT_MIN <= value <= _INT_MAX else str(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if isinstance(value, datetime.date):
            return value.isoformat()
        if isinstance(value, bytes):
            return base64.b64encode(value).decode("ascii")
        if isinstance(value, dict | list | set):
            return self._copy_container(value, depth)
        return str(value)

    def _copy_container(self, value: dict[Any, Any] | list[Any] | set[Any], depth: int) -> Any:
        if id(value) in self._open:
            raise FrontMatterError("front matter contains a recursive alias")
        self._open.add(id(value))
        try:
            if isinstance(value, dict):
                return {key_text(k): self.copy(v, depth + 1) for k, v in value.items()}
            items = sorted(value, key=str) if isinstance(value, set) else value
            return [self.copy(item, depth + 1) for item in items]
        finally:
            self._open.discard(id(value))
