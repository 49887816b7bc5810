"""Where a session's hooks plug in: one function that loads them (or takes the
parent's, for a subagent) and hands the same :class:`SessionHooks` to the tool
runner (PreToolUse, PostToolUse), the policy gate (PermissionRequest,
Notification) and the loop (UserPromptSubmit, Stop, SubagentStop). SessionStart and
SessionEnd are fired by the actor itself; PreCompact by compaction
(:meth:`SessionHooks.pre_compact`)."""

from __future__ import annotations

from actors.hooks import HookSet, SessionHooks
from actors.hooks.sources import load_hooks
from actors.kernel import ActorRef
from actors.session.loop import AgenticLoop
from actors.session.tool_round import ToolRunner
from protocol.environment import Sandbox
from protocol.events import WarningEvent


async def wire_hooks(
    inherited: HookSet | None, environment: ActorRef, tools: ToolRunner, loop: AgenticLoop
) -> tuple[HookSet, SessionHooks]:
    """Load the hooks for ``tools.working_dir`` (warnings become session warnings,
    one line each) unless ``inherited``, and connect them; the set (for subagents)
    and the session's hooks."""
    hub = tools.hub
    if inherited is None:
        found, problems = await load_hooks(environment, tools.working_dir)
        for problem in problems:
            hub.emit(WarningEvent(problem, category="hooks"))
    else:
        found = inherited
    gate = tools.gate

    def limits() -> tuple[Sandbox | None, tuple[str, ...] | None]:
        if gate is None:
            return None, None
        current = gate.command_limits(loop.config)
        return current.sandbox, current.env_allowlist

    hooks = SessionHooks(
        found,
        environment,
        tools.working_dir,
        hub.session_id,
        hub.emit,
        limits,
        lambda: (loop.model_name, loop.config.policy),
    )
    hooks.tools = loop.profile.registry  # the tools' declared hook names
    tools.hooks = hooks
    loop.hooks = hooks
    loop.compactor.hooks = hooks
    if gate is not None:
        gate.hooks = hooks
    return found, hooks
