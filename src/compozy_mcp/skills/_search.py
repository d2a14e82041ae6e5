"""Ranking skills against a free-text query.

The query is split on whitespace into case-insensitive tokens (a repeated token counts once).
Each token adds 3 if it occurs in the name (10 more if it is the whole name), 2 if it occurs
in any tag and 1 if it occurs in the description.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from compozy_mcp.skills._model import Skill

NAME_WEIGHT = 3
EXACT_NAME_BONUS = 10
TAG_WEIGHT = 2
DESCRIPTION_WEIGHT = 1


def tokens(query: str) -> list[str]:
    return list(dict.fromkeys(query.casefold().split()))


def score(skill: Skill, query_tokens: Sequence[str]) -> int:
    name = skill.name.casefold()
    tags = [tag.casefold() for tag in skill.tags]
    description = skill.description.casefold()
    total = 0
    for token in query_tokens:
        if token in name:
            total += NAME_WEIGHT + (EXACT_NAME_BONUS if token == name else 0)
        if any(token in tag for tag in tags):
            total += TAG_WEIGHT
        if token in description:
            total += DESCRIPTION_WEIGHT
    return total


def rank(skills: Iterable[Skill], query: str, limit: int) -> list[tuple[Skill, int]]:
    """The skills that match at all, best first, ties by name; at most ``limit`` of them."""
    query_tokens = tokens(query)
    scored = [(skill, score(skill, query_tokens)) for skill in skills]
    matched = [(skill, points) for skill, points in scored if points > 0]
    matched.sort(key=lambda pair: (-pair[1], pair[0].name))
    return matched[: max(limit, 0)]
