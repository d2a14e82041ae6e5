"""The examples each command's ``--help`` ends with, by command path. A test runs every one
through the parser, and fails on a command (a group included) that has none."""

from __future__ import annotations

EXAMPLES: dict[str, tuple[str, ...]] = {
    "tool": (
        "compozy tool list",
        "compozy tool info compozy__session_status",
        'compozy tool invoke compozy__session_status --input \'{"session_id":"sess-1"}\'',
    ),
    "tool invoke": (
        "compozy tool invoke compozy__session_list",
        'compozy tool invoke compozy__session_status --input \'{"session_id":"sess-1"}\'',
        "compozy tool invoke compozy__session_list --input @input.json --all -o json",
        'echo \'{"query":"review"}\' | compozy tool invoke compozy__skill_search --input -',
    ),
    "tool info": (
        "compozy tool info compozy__session_spawn",
        "compozy tool info compozy__session_status -o json",
    ),
    "tool list": (
        "compozy tool list",
        "compozy tool list --toolset sessions -o yaml",
    ),
    "tool search": (
        "compozy tool search 'stop a session'",
        "compozy tool search archive -o json",
    ),
    "proxy": (
        "compozy proxy",
        "compozy proxy --session sess-1",
        "compozy proxy --http 127.0.0.1:8765",
        "compozy --url http://127.0.0.1:8765 proxy --discovery search",
    ),
    "workspace": (
        "compozy workspace add ~/src/app --name app",
        "compozy workspace list",
    ),
    "workspace add": (
        "compozy workspace add .",
        "compozy workspace add ~/src/app --name app -o json",
    ),
    "workspace list": ("compozy workspace list", "compozy workspace list -o yaml"),
    "workspace trust": (
        "compozy workspace trust ~/src/app",
        "compozy workspace trust ws_default --revoke",
    ),
    "profile": ("compozy profile add work --color '#2563eb'", "compozy profile list"),
    "profile add": ("compozy profile add work", "compozy profile add home --icon house"),
    "profile list": ("compozy profile list", "compozy profile list -o json"),
    "session": (
        "compozy session create --agent general --name 'Fix the build'",
        "compozy session create --agent echo --worktree --name 'Fix the upload test'",
        "compozy session list --state active",
        "compozy session status sess-1",
    ),
    "session status": ("compozy session status sess-1", "compozy session status sess-1 -o json"),
    "session archive": ("compozy session archive sess-1",),
    "session unarchive": ("compozy session unarchive sess-1",),
    "session delete": ("compozy session archive sess-1 && compozy session delete sess-1",),
    "session list": (
        "compozy session list",
        "compozy session list --state active --limit 20",
        "compozy session list --archived -o json",
    ),
    "session create": (
        "compozy session create --agent general",
        "compozy session create --agent general --id sess-1 --name 'Fix the build'",
        "compozy session create --agent echo --provider echo --worktree --base main",
    ),
    "serve": (
        "compozy serve",
        "compozy serve --port 0 --no-uds --log-level info",
        "compozy serve --host 0.0.0.0 --token-file ~/.compozy/token",
    ),
    "open": ("compozy open", "compozy --url http://127.0.0.1:8765 open --print"),
    "mcp": (
        "compozy mcp add docs https://example.com/mcp",
        "compozy mcp list --check",
        "compozy mcp serve",
    ),
    "mcp serve": ("compozy mcp serve", "compozy --socket ~/.compozy/compozy.sock mcp serve"),
    "mcp add": (
        "compozy mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .",
        "compozy mcp add docs https://example.com/mcp -H 'Authorization: Bearer ${TOKEN}'",
    ),
    "mcp remove": ("compozy mcp remove docs", "compozy mcp remove fs --scope workspace"),
    "mcp list": ("compozy mcp list", "compozy mcp list --check -o json"),
    "catalog": ("compozy catalog release-note",),
    "catalog release-note": (
        "compozy catalog release-note",
        "compozy catalog release-note -o json",
    ),
    "store": ("compozy store vacuum", "compozy store migrate --to postgresql://compozy@db/compozy"),
    "store vacuum": ("compozy store vacuum",),
    "store migrate": ("compozy store migrate --to postgresql://compozy@db/compozy",),
    "hooks": (
        "compozy hooks list",
        "compozy hooks create --event tool.pre_call --command ./guard.sh",
        "compozy hooks runs --limit 20",
    ),
    "hooks list": ("compozy hooks list", "compozy hooks list -o json"),
    "hooks info": ("compozy hooks info hook-1",),
    "hooks enable": ("compozy hooks enable hook-1",),
    "hooks disable": ("compozy hooks disable hook-1",),
    "hooks delete": ("compozy hooks delete hook-1",),
    "hooks create": (
        "compozy hooks create --event tool.pre_call --command ./guard.sh",
        "compozy hooks create --event tool.post_error --url https://example.com/hook",
    ),
    "hooks update": ("compozy hooks update hook-1 --timeout 5",),
    "hooks runs": ("compozy hooks runs", "compozy hooks runs --hook hook-1 -o json"),
    "hooks events": ("compozy hooks events",),
    "hooks test": ("compozy hooks test hook-1 --tool compozy__session_list",),
    "completion": (
        "compozy completion bash > ~/.local/share/bash-completion/completions/compozy",
        "compozy completion zsh > ~/.zfunc/_compozy",
        "compozy completion fish > ~/.config/fish/completions/compozy.fish",
    ),
    "install": (
        "compozy install claude-code --print",
        "compozy install cursor",
        "compozy install vscode --http http://127.0.0.1:8765/mcp",
    ),
    "session diff": (
        "compozy session diff sess-1",
        "compozy session diff sess-1 --stat",
        "compozy session diff sess-1 -o json",
    ),
    "session merge": (
        "compozy session merge sess-1",
        "compozy session merge sess-1 --into main --mode squash -m 'Fix the upload test'",
    ),
    "session pr": (
        "compozy session pr sess-1",
        "compozy session pr sess-1 --into main --title 'Fix the upload test' --draft",
    ),
    "worktree": (
        "compozy worktree list",
        "compozy worktree inspect wt-1",
        "compozy worktree remove wt-1 --force",
    ),
    "worktree list": ("compozy worktree list", "compozy worktree list --session sess-1 --all"),
    "worktree inspect": ("compozy worktree inspect wt-1", "compozy worktree inspect wt-1 -o json"),
    "worktree create": (
        "compozy worktree create --session sess-1",
        "compozy worktree create --session sess-1 --branch fix/upload --base main",
    ),
    "worktree remove": ("compozy worktree remove wt-1", "compozy worktree remove wt-1 --force"),
    "task": (
        "compozy task create 'Fix the upload test' --criterion 'the suite passes' --priority 5",
        "compozy task list --state todo",
        "compozy task review task-1 --request-changes -m 'add a test for empty files'",
    ),
    "task create": (
        "compozy task create 'Fix the upload test'",
        "compozy task create 'Fix the upload test' -d 'Empty files fail.' --label bug",
    ),
    "task list": ("compozy task list", "compozy task list --state todo --label bug -o json"),
    "task show": ("compozy task show task-1", "compozy task show task-1 -o json"),
    "task update": ("compozy task update task-1 --priority 9 --label urgent",),
    "task cancel": ("compozy task cancel task-1",),
    "task claim": (
        "compozy task claim --session sess-1",
        "compozy task claim --session sess-1 --lease 3600",
    ),
    "task heartbeat": (
        "compozy task heartbeat trun-1",
        "compozy task heartbeat trun-1 --lease 600",
    ),
    "task fail": ("compozy task fail trun-1 --reason 'the build is broken on main'",),
    "task release": ("compozy task release trun-1",),
    "task complete": ("compozy task complete trun-1 -m 'Fixed; a test covers it'",),
    "task review": (
        "compozy task review task-1 --accept",
        "compozy task review task-1 --request-changes -m 'add a test'",
    ),
    "heartbeat": (
        "compozy heartbeat set sess-1 --cron '*/30 9-17 * * 1-5' --quiet 22:00-06:00",
        "compozy heartbeat show sess-1",
        "compozy heartbeat wake sess-1",
    ),
    "heartbeat set": (
        "compozy heartbeat set sess-1 --every 3600",
        "compozy heartbeat set sess-1 --cron '0 9 * * 1-5' --prompt 'Look at your queue'",
        "compozy heartbeat set sess-1 --disable",
    ),
    "heartbeat show": ("compozy heartbeat show sess-1", "compozy heartbeat show sess-1 -o json"),
    "heartbeat wake": ("compozy heartbeat wake sess-1",),
    "task run": (
        "compozy task run task-1 --agent claude",
        "compozy task run task-1 --agent codex --no-worktree --no-wait",
    ),
    "session prompt": (
        "compozy session prompt sess-1 'Fix the failing test'",
        "compozy session prompt sess-1 'Summarize the diff' -o json",
        "compozy session prompt sess-1 'Run the suite' --no-wait",
    ),
    "session history": (
        "compozy session history sess-1",
        "compozy session history sess-1 --full --limit 5",
        "compozy session history sess-1 -o json",
    ),
    "session approve": (
        "compozy session approve sess-1 allow-once",
        "compozy session approve sess-1 int-52c1 reject-always",
    ),
    "session cancel": ("compozy session cancel sess-1",),
    "agent": ("compozy agent list", "compozy agent install claude"),
    "agent install": ("compozy agent install claude", "compozy agent install gemini"),
    "agent list": ("compozy agent list", "compozy agent list --workspace ws_default -o json"),
    "approvals": (
        "compozy approvals list",
        "compozy approvals set compozy__session_stop --allow --agent general",
        "compozy approvals set --session sess-1 --mode bypass",
    ),
    "approvals list": (
        "compozy approvals list",
        "compozy approvals list --tool compozy__session_stop --full",
    ),
    "approvals set": (
        "compozy approvals set compozy__session_stop --allow",
        "compozy approvals set compozy__session_rename --reject --agent general",
        "compozy approvals set --session sess-1 --mode accept_edits",
    ),
    "approvals revoke": ("compozy approvals revoke grant-1",),
    "approvals mint": (
        "compozy approvals mint compozy__session_stop --session sess-1 "
        '--input \'{"session_id":"sess-2"}\'',
    ),
    "loop": (
        "compozy loop validate review.yaml",
        "compozy loop run review.yaml --input session_id=sess-1",
        "compozy loop status run-1",
    ),
    "loop validate": ("compozy loop validate review.yaml", "compozy loop validate - -o json"),
    "loop create": (
        "compozy loop create review.yaml",
        "compozy loop create review.yaml --id review",
    ),
    "loop list": ("compozy loop list", "compozy loop list -o json"),
    "loop inspect": ("compozy loop inspect review", "compozy loop inspect review --version 1"),
    "loop run": (
        "compozy loop run review.yaml --input session_id=sess-1",
        "compozy loop run --loop review --inputs @inputs.json",
    ),
    "loop status": ("compozy loop status run-1", "compozy loop status run-1 --full -o json"),
    "loop runs": ("compozy loop runs", "compozy loop runs --loop review --status waiting"),
    "loop cancel": ("compozy loop cancel run-1",),
    "loop approve": (
        "compozy loop approve run-1",
        "compozy loop approve run-1 --criterion tests=pass --note 'looks good'",
        "compozy loop approve run-1 --reject",
    ),
}
