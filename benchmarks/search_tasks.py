"""The fixed task set of the search-quality benchmark: what an agent wants done, in its own
words, written from each tool's purpose (not from its id), and the tool that does it.

The catalog searched is compozy-mcp's native tools plus upstream compozy's 269 tools served
through the proxy as ``fixture__<name>`` (:mod:`benchmarks.fixture_server`). Where the fixture
has a tool of the same name as a native one (``session_status``...), either counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from compozy_mcp.native import build_registry

NATIVE = frozenset(tool.id for tool in build_registry())


@dataclass(frozen=True, slots=True)
class Task:
    text: str
    #: the tool that does it (by its name, as both catalogs know it)
    tool: str

    @property
    def expected(self) -> frozenset[str]:
        """The ids that count as finding it: the fixture's, and the native one if any."""
        native = f"compozy__{self.tool}"
        return frozenset({f"fixture__{self.tool}", *([native] if native in NATIVE else [])})


TASKS: tuple[Task, ...] = (
    # --- sessions, native (and in the fixture too) -----------------------------------------
    Task("check whether my session is still running", "session_status"),
    Task("start a new agent session to fix the flaky upload test", "session_create"),
    Task("archive the finished session so it leaves the board", "session_archive"),
    Task("bring an archived session back onto the board", "session_unarchive"),
    Task("give the session a better name", "session_rename"),
    Task("stop the session, it is stuck", "session_stop"),
    Task("fork a session into a copy where I can try another approach", "session_fork"),
    Task("rewind the conversation to an earlier turn", "session_rewind"),
    Task("continue a stopped session from where it left off", "session_continue"),
    Task("switch the model the session runs on", "session_runtime_set"),
    Task("unbind the runtime from a session", "session_runtime_clear"),
    Task("spawn a child worker session with fewer permissions", "session_spawn"),
    Task("show all the sessions in this workspace", "session_list"),
    Task("read the input and output contract of a tool", "tool_info"),
    Task("what tools am I allowed to use", "tool_list"),
    Task("find the right tool for a job", "tool_search"),
    Task("which skills are installed", "skill_list"),
    Task("find a skill about writing commit messages", "skill_search"),
    Task("open a skill and read its instructions", "skill_view"),
    Task("read the rest of a truncated result stored as an artifact", "tool_artifact_read"),
    # --- sessions, fixture only ---------------------------------------------------------------
    Task("answer the clarification question a session asked", "session_clarify_answer"),
    Task("cancel the prompt that is running in a session", "session_prompt_cancel"),
    Task("wait until a session becomes idle", "session_wait"),
    Task("see the event stream of a session", "session_events"),
    # --- window manager -------------------------------------------------------------------------
    Task("close the window I no longer need", "window_close"),
    Task("move a window to another place on screen", "window_move"),
    Task("zoom the editor window to fill the screen", "window_zoom"),
    Task("create a new virtual desktop", "desktop_create"),
    Task("switch to another desktop", "desktop_switch"),
    Task("undo the last layout change", "layout_undo"),
    Task("apply a saved window layout", "layout_apply"),
    # --- loops ---------------------------------------------------------------------------------
    Task("run the loop now", "loop_run"),
    Task("pause a running loop", "loop_pause"),
    Task("kill a loop that misbehaves", "loop_kill"),
    Task("approve the request a loop is waiting on", "loop_approve"),
    Task("see what changed between two runs of a loop", "loop_diff"),
    Task("validate a loop definition before running it", "loop_validate"),
    Task("requeue a failed node of a loop", "loop_node_requeue"),
    # --- automation ------------------------------------------------------------------------------
    Task("create a job that runs every night", "automation_jobs_create"),
    Task("trigger an automation job right now", "automation_jobs_trigger"),
    Task("disable an automation trigger", "automation_triggers_disable"),
    Task("dismiss an automation suggestion I do not want", "automation_suggestions_dismiss"),
    Task("look at the past runs of an automation job", "automation_jobs_history"),
    # --- extensions and hooks --------------------------------------------------------------------
    Task("install an extension", "extensions_install"),
    Task("publish my extension", "extensions_publish"),
    Task("show the logs of an extension", "extensions_logs"),
    Task("create a hook that runs before each tool call", "hooks_create"),
    Task("list the runs of a hook", "hooks_runs"),
    # --- config --------------------------------------------------------------------------------
    Task("set a configuration value", "config_set"),
    Task("show how my configuration differs", "config_diff"),
    Task("where is the configuration file", "config_path"),
    # --- memory --------------------------------------------------------------------------------
    Task("write down a note to remember for later", "memory_note"),
    Task("search memory for the deployment decision", "memory_search"),
    Task("revert a decision recorded in memory", "memory_decisions_revert"),
    Task("rebuild the memory index", "memory_reindex"),
    Task("select another memory provider", "memory_provider_select"),
    # --- coordination ----------------------------------------------------------------------------
    Task("send a message to another agent on the network", "network_send"),
    Task("mute a noisy channel", "network_mute"),
    Task("create a channel for the team", "network_channel_create"),
    Task("read my inbox", "network_inbox"),
    # --- tasks ---------------------------------------------------------------------------------
    Task("create a task for the backlog", "task_create"),
    Task("block a task until another one is done", "task_block"),
    Task("claim the next task run to work on", "task_run_claim_next"),
    Task("mark my task run as complete", "task_run_complete"),
    Task("report that a task run failed", "task_run_fail"),
    Task("request a review of a task run", "task_run_review_request"),
    # --- the rest ------------------------------------------------------------------------------
    Task("create a git worktree for a branch", "worktree_create"),
    Task("remove a worktree", "worktree_remove"),
    Task("refresh the models the providers offer", "provider_models_refresh"),
    Task("take a snapshot of the resources", "resources_snapshot"),
    Task("search the logs and metrics", "observe_search"),
    Task("revoke a tool approval I granted", "tool_approvals_revoke"),
    Task("send a notification to the operator", "notify"),
    Task("check the status of the MCP servers", "mcp_status"),
)
