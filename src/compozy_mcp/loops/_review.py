"""A gate answered by a reviewing agent: the prompt it is sent, and how its answer is read.

The agent is asked to answer each criterion on a line of its own, ``<criterion id>: PASS`` or
``<criterion id>: FAIL`` with a short reason after it. Every criterion passed approves the
gate, any failed rejects it; an answer that leaves a criterion out (or names it twice with
different verdicts) decides nothing, and the gate waits for the operator.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

INSTRUCTION = (
    "You are reviewing a step of an automated Loop before it goes on. For each criterion below, "
    "answer on a line of its own with the criterion id, a colon, then PASS or FAIL, then a short "
    "reason (for example `tests_green: FAIL the upload test still fails`). Answer every "
    "criterion and nothing else."
)


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: str
    answers: list[dict[str, Any]]


def prompt(title: str | None, criteria: Sequence[Mapping[str, Any]], context: str | None) -> str:
    lines = [INSTRUCTION, ""]
    if title:
        lines += [f"Gate: {title}", ""]
    if context:
        lines += ["Context:", context, ""]
    lines.append("Criteria:")
    lines += [f"- {c['id']}: {c['prompt']}" for c in criteria]
    return "\n".join(lines)


def read(answer: str, criteria: Sequence[Mapping[str, Any]]) -> Verdict | None:
    """The verdict in the agent's answer, or ``None`` if it does not decide every criterion."""
    found: dict[str, tuple[bool, str]] = {}
    for criterion in criteria:
        pattern = re.compile(
            rf"^[ \t*`-]*{re.escape(str(criterion['id']))}[*`]*[ \t]*:[ \t]*\**(PASS|FAIL)\b"
            r"\**[ \t:.-]*([^\n]*)$",
            re.IGNORECASE | re.MULTILINE,
        )
        verdicts = {
            (m.group(1).upper() == "PASS", m.group(2).strip()) for m in pattern.finditer(answer)
        }
        if len({passed for passed, _ in verdicts}) != 1:
            return None
        found[str(criterion["id"])] = sorted(verdicts)[0]
    answers = [
        {
            "criterion_id": str(c["id"]),
            "prompt": str(c["prompt"]),
            "passed": found[str(c["id"])][0],
            **({"note": found[str(c["id"])][1]} if found[str(c["id"])][1] else {}),
        }
        for c in criteria
    ]
    approved = all(a["passed"] for a in answers)
    return Verdict("approve" if approved else "reject", answers)
