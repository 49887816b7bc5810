"""Running a session's tool calls: events around each call, its hooks and policy,
the full output in TOOL_CALL_END, the truncated output for the model, and live
output deltas of running commands. The round around the calls (in parallel when the
profile allows, results in call order) is the tool-round engine's
(:mod:`actors.rounds`), the one place a round is run.

Deltas come from the environment actor; they are queued in a bounded channel and
turned into events by the session's own task, so only session tasks touch its
event stream. Deltas beyond the backlog are dropped: they are ephemeral, and
TOOL_CALL_END carries the complete output.
"""

from __future__ import annotations

import contextlib

import msgspec
import trio

from actors.hooks import SessionHooks
from actors.kernel import ActorRef
from actors.rounds import run_calls as run_in_order
from actors.session.events import EventHub
from actors.session.policy_gate import CommandLimits, PolicyGate
from actors.session.profiles import ProviderProfile
from actors.session.sandbox_notice import sandbox_warning
from actors.session.tool_images import within_cap
from actors.tools.core.context import Subagents, TerminalSlot, ToolContext
from actors.tools.paths import Clearance
from actors.tools.registry import Tool
from actors.tools.truncation import truncate_tool_output
from protocol.environment import CloseTerminal, ExecOutput
from protocol.events import (
    ToolCallEndEvent,
    ToolCallOutputDeltaEvent,
    ToolCallStartEvent,
    WarningEvent,
)
from protocol.llm import ToolCall, ToolResult
from protocol.session import SessionConfig

__all__ = ["ToolRunner", "run_in_order"]  # run_in_order: the engine's, still found here
NO_LIMITS = CommandLimits()

UPDATED_SHOWN = 500
"""How much of a hook's updated arguments the model is shown with the result."""
DELTA_BACKLOG = 1024
_UNDELIVERABLE = (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError)
"""A full backlog, or a session that has closed: the delta is dropped."""


class _DeltaSink:
    """What a running command's output deltas are told to: the session's queue."""

    def __init__(self, channel: trio.MemorySendChannel[tuple[str, ExecOutput]], call_id: str):
        self._channel = channel
        self._call_id = call_id

    async def tell(self, message: ExecOutput) -> None:
        with contextlib.suppress(
            trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError
        ):
            self._channel.send_nowait((self._call_id, message))


class ToolRunner:
    """Executes the model's tool calls in a session's environment."""

    def __init__(
        self,
        hub: EventHub,
        environment: ActorRef,
        working_dir: str,
        agents: Subagents | None = None,
        gate: PolicyGate | None = None,
    ) -> None:
        """``gate`` is the session's policy; without one every valid call runs."""
        self.hub = hub
        self.environment = environment
        self.working_dir = working_dir
        self.agents = agents
        self.gate = gate
        self.terminal = TerminalSlot(f"terminal-{hub.session_id}")
        self.hooks: SessionHooks | None = None
        """The session's PreToolUse/PostToolUse hooks, once loaded (docs/hooks.md)."""
        self.sandbox_checked = False
        self._deltas_in, self._deltas_out = trio.open_memory_channel[tuple[str, ExecOutput]](
            DELTA_BACKLOG
        )

    async def execute(
        self, call: ToolCall, profile: ProviderProfile, config: SessionConfig
    ) -> ToolResult:
        """One call of a round: its events, hooks, policy and environment. The round
        around it (parallel or in turn, results in call order) is the tool-round
        engine's (:mod:`actors.rounds`), driven by the session's loop."""
        limits = self.gate.command_limits(config) if self.gate is not None else NO_LIMITS
        if limits.sandbox is not None and not self.sandbox_checked:
            self.sandbox_checked = True
            warning = await sandbox_warning(self.environment, limits.sandbox)
            if warning is not None:
                self.hub.emit(WarningEvent(warning, "sandbox"))
        context = ToolContext(
            environment=self.environment,
            working_dir=self.working_dir,
            default_timeout_ms=profile.default_command_timeout_ms
            or config.default_command_timeout_ms,
            max_timeout_ms=config.max_command_timeout_ms,
            output_to=_DeltaSink(self._deltas_in, call.id),
            agents=self.agents,
            sandbox=limits.sandbox,
            env_allowlist=limits.env_allowlist,
            terminal=self.terminal,
        )
        declared = profile.registry.get(call.name)  # its facts: kind, limits (actors.tools.tool)
        kind, diff = (declared.kind, declared.diff) if declared is not None else ("", None)
        self.hub.emit(ToolCallStartEvent(call.id, call.name, call.arguments, kind, diff))
        hooks = self.hooks or None
        hint: str | None = None
        notes: list[str] = []
        if hooks is not None:
            pre = await hooks.pre_tool_use(call)
            if pre.blocks:
                refusal = f"Blocked by a PreToolUse hook: {pre.reason}"
                self.hub.emit(ToolCallEndEvent(call.id, call.name, refusal, True))
                return ToolResult(call.id, refusal, True, call.name)
            if pre.updated_input is not None:  # validated and judged below like the model's
                call = msgspec.structs.replace(call, arguments=pre.updated_input,
                                               raw_arguments="", arguments_error=None)  # fmt: skip
                shown = msgspec.json.encode(pre.updated_input).decode()[:UPDATED_SHOWN]
                notes.append(f"(A PreToolUse hook changed this call's arguments to {shown})")
            hint = pre.decision
            if pre.context:
                notes.append(pre.context)
        gate = self.gate
        if gate is None:
            outcome = await profile.registry.run(call, context)
        else:

            async def check(tool: Tool, checked: ToolCall) -> str | Clearance | None:
                return await gate.check(checked, tool, config, hint)

            outcome = await profile.registry.run(call, context, check)
        self.hub.emit(ToolCallEndEvent(call.id, call.name, outcome.output, outcome.is_error))
        if hooks is not None:
            post = await hooks.post_tool_use(call, outcome.output, outcome.is_error)
            if post.blocks:
                notes.append(f"PostToolUse hook: {post.reason}")
            if post.context:
                notes.append(post.context)
        truncated = truncate_tool_output(
            outcome.output, declared or call.name, config.tool_output_limits,
            config.tool_line_limits,
        )  # fmt: skip
        images, too_large = within_cap(outcome.images, config.max_image_bytes)
        notes.extend(too_large)
        if notes:
            truncated = "\n\n".join([truncated, *notes])
        return ToolResult(call.id, truncated, outcome.is_error, call.name, images)

    async def emit_deltas(self) -> None:
        """Turn queued output deltas into events until :meth:`close`."""
        async for call_id, output in self._deltas_out:
            self.hub.emit(ToolCallOutputDeltaEvent(call_id, output.stream, output.text))

    def close(self) -> None:
        self._deltas_in.close()

    async def close_terminal(self) -> None:
        """End the session's persistent terminal, if one is open (abort, close)."""
        if self.terminal.open:
            self.terminal.open = False
            await self.environment.ask(CloseTerminal(self.terminal.terminal_id))
