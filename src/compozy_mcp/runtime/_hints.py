"""What to do about an agent that would not start: known complaints in its stderr, each with
the fix a person can apply (quoted in ``runtime.failure`` and the failed turn)."""

from __future__ import annotations

import re

#: (what the agent says, the cause and the fix), first match wins
HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"cannot be used with root", re.I),
        "Claude Code refuses to skip its permission prompts as root: on a sandboxed machine, "
        'set IS_SANDBOX=1 in its environment (agents.yaml: env: {IS_SANDBOX: "1"}), or run '
        "compozy as another user",
    ),
    (
        re.compile(r"(untrusted|not trusted|trust this folder)", re.I),
        "the agent does not trust the folder: set GEMINI_CLI_TRUST_WORKSPACE=true in its "
        "environment (the built-in gemini definition does), or trust the folder in its settings",
    ),
    (
        re.compile(
            r"(invalid api key|authentication (is )?required|not logged in|please log ?in|"
            r"401 unauthorized|missing api key|api key not (set|found))",
            re.I,
        ),
        "the agent has no valid credentials: log it in, or set its API key "
        "(docs/agents.md lists each agent's variables)",
    ),
    (
        re.compile(r"(command not found|no such file or directory)", re.I),
        "a program the agent runs is not installed or not on PATH",
    ),
)


def hint(said: str) -> str | None:
    """The cause and fix of a start failure whose output says ``said``, when one is known."""
    for pattern, advice in HINTS:
        if pattern.search(said):
            return advice
    return None
