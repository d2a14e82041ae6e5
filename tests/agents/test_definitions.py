"""``agents.yaml`` definitions that start from another (``like``): the one-line file that makes
the spec's Loop example (``agent: general``) run."""

from __future__ import annotations

from pathlib import Path

from compozy_mcp.agents.definitions import BUILTINS, AgentDefinition, load_catalog


def _catalog(home: Path, text: str) -> tuple[dict[str, AgentDefinition], list[dict[str, str]]]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "agents.yaml").write_text(text, encoding="utf-8")
    catalog = load_catalog(home)
    return dict(catalog.agents), catalog.problems


def test_a_one_line_like_gives_a_builtin_a_second_name(tmp_path: Path) -> None:
    agents, problems = _catalog(tmp_path, "agents: {general: {like: claude}}\n")
    assert problems == []
    general, claude = agents["general"], BUILTINS["claude"]
    assert general.record() == {**claude.record(), "name": "general", "source": "home"}


def test_like_keeps_what_the_entry_does_not_replace(tmp_path: Path) -> None:
    text = "agents:\n  quick:\n    like: echo\n    description: Fast\n    env: {A: b}\n"
    agents, problems = _catalog(tmp_path, text)
    assert problems == []
    quick = agents["quick"].record()
    assert quick["command"] == BUILTINS["echo"].record()["command"]
    assert (quick["description"], quick["env_keys"], quick["provider"]) == (
        "Fast",
        ["A"],
        "compozy",
    )
    assert (quick["models"], quick["default_model"]) == (["echo-1"], "echo-1")


def test_like_naming_no_agent_and_an_entry_without_command_are_problems(tmp_path: Path) -> None:
    agents, problems = _catalog(
        tmp_path, "agents:\n  general: {like: nobody}\n  bare: {description: x}\n"
    )
    assert "general" not in agents
    assert "bare" not in agents
    assert [(p["agent"], p["message"]) for p in problems] == [
        ("general", 'like "nobody" names no agent (known: claude, codex, echo, gemini)'),
        ("bare", 'field "command" is required'),
    ]
