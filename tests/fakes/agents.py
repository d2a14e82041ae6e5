"""The real agents as the tests and benchmarks run them: where their adapters are installed
(``make node-deps``: tests/agents/node_modules), the fake model API each talks to, and the
environment that points it there (a scratch config, never the network)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes import fake_anthropic, fake_gemini, fake_openai
from tests.fakes.server import Api

BIN = Path(__file__).parent.parent / "agents" / "node_modules" / ".bin"


@dataclass(frozen=True)
class RealAgent:
    name: str
    api: Callable[[], Api]
    results: Callable[[dict[str, Any]], list[str]]
    #: the option a permission request is answered with (``None``: it asks none)
    allow: str | None
    #: the program its process tree runs (to find what is left)
    marks: tuple[str, ...]

    def environment(self, fake_url: str, root: Path) -> dict[str, str]:
        if self.name == "claude":
            (root / "claude").mkdir()
            return {
                "ANTHROPIC_BASE_URL": fake_url,
                "ANTHROPIC_API_KEY": "fake",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CONFIG_DIR": str(root / "claude"),
                "IS_SANDBOX": "1",  # the tests run as root on CI
            }
        if self.name == "codex":
            codex = root / "codex"
            codex.mkdir()
            (codex / "config.toml").write_text(
                'model_provider = "fake"\nmodel = "gpt-5.5-codex"\n\n[model_providers.fake]\n'
                f'name = "fake"\nbase_url = "{fake_url}/v1"\nenv_key = "OPENAI_API_KEY"\n'
                'wire_api = "responses"\n'
            )
            return {"CODEX_HOME": str(codex), "OPENAI_API_KEY": "fake"}
        (root / "gemini-home").mkdir()
        return {
            "GOOGLE_GEMINI_BASE_URL": fake_url,
            "GEMINI_API_KEY": "fake",
            "HOME": str(root / "gemini-home"),
        }


AGENTS = {
    "claude": RealAgent(
        "claude",
        fake_anthropic.AnthropicApi,
        fake_anthropic.tool_results,
        "allow",
        ("claude-agent-acp", "@anthropic-ai/claude"),
    ),
    "codex": RealAgent(
        "codex", fake_openai.OpenAIApi, fake_openai.tool_results, None, ("codex-acp",)
    ),
    "gemini": RealAgent(
        "gemini", fake_gemini.GeminiApi, fake_gemini.tool_results, "proceed_once", ("gemini",)
    ),
}


def not_installed() -> str | None:
    """Why the real agents cannot run here, or ``None`` when they can."""
    if shutil.which("node") is None:
        return "node is not installed"
    missing = [b for b in ("claude-agent-acp", "codex-acp", "gemini") if not (BIN / b).exists()]
    if missing:
        return f"the real agents are not installed ({', '.join(missing)}): run `make node-deps`"
    return None
