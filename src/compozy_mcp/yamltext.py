"""Configuration files read as YAML, with PyYAML imported by the first file that exists: a
process that has none to read (the usual daemon: no ``agents.yaml``, hooks file or MCP server
file) never holds it (about 1 MB of its memory, 20 ms of its start)."""

from __future__ import annotations

from typing import Any


class YamlError(ValueError):
    """A text that is not valid YAML; ``line`` (1-based) where the parser stopped, when it
    says. The message is PyYAML's own."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def load(text: str | bytes) -> Any:
    """The value of a YAML document (PyYAML's ``safe_load``)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise YamlError(str(exc), mark.line + 1 if mark is not None else None) from None


def dump(data: Any) -> str:
    """``data`` as a block-style YAML document, keys in their order."""
    import yaml

    text: str = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    return text
