"""One session's hooks: fire an event, run its matching hooks at once (as both
anchors do), record each run as a ``hook_run`` event (``troupe audit`` shows them)
and return their combined answer for the caller to act on.

Where each event fires (the seams in the session):

- ``SessionStart`` when the session gets its first input (``source`` ``startup``,
  or ``resume`` when it has history); its context is told to the model with that
  input. ``SessionEnd`` when the session closes.
- ``UserPromptSubmit`` for each input (:mod:`actors.session.loop`): a block drops
  the prompt, context is added after it.
- ``PreToolUse`` before a call is judged by the policy and run
  (:mod:`actors.session.tool_round`): deny or exit 2 refuses the call with the
  reason; ``updatedInput`` replaces the arguments, which are then validated and
  judged by the policy like the model's own (a hook cannot widen what the policy or
  the sandbox allows); ``allow`` answers a question the policy would have asked
  (never a denial); ``ask`` asks where the policy would have allowed.
- ``PermissionRequest`` when the policy raises an approval
  (:mod:`actors.session.policy_gate`): allow or deny answers it (``by hook``);
  ``Notification`` (``permission_prompt``) at the same time.
- ``PostToolUse`` after the call: a block's reason and any context are added to
  the result the model reads.
- ``Stop`` (``SubagentStop`` in a subagent) when the model ends its turn: a block
  makes it go on with the reason, at most :data:`MAX_STOP_CONTINUATIONS` times per
  input (``stop_hook_active`` tells the hook it is one of those).
- ``PreCompact``: :meth:`SessionHooks.pre_compact`, for compaction to call before
  it summarises (``trigger`` ``manual`` or ``auto``).

Every hook runs as a command in the session's environment, in its working
directory, under the session's OS sandbox and environment allowlist, like a
shell call of the model's; ``$CLAUDE_PROJECT_DIR`` (and ``$TROUPE_PROJECT_DIR``)
name the working directory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

from actors.hooks.answer import HookAnswer, combine
from actors.hooks.config import Hook, HookSet
from actors.hooks.names import anchor_name, matches, names_of
from actors.kernel import ActorRef
from actors.tools.registry import ToolRegistry
from protocol.environment import Sandbox
from protocol.events import EventData, HookRunEvent, WarningEvent
from protocol.llm import ToolCall

if TYPE_CHECKING:
    from actors.hooks.runner import HookRun

MAX_STOP_CONTINUATIONS = 5
COMMAND_SHOWN = 200
Limits = Callable[[], tuple[Sandbox | None, tuple[str, ...] | None]]
"""The session's current sandbox and environment allowlist (they follow its policy)."""


class SessionHooks:
    """The hooks a session runs, and the context they gave that the model has not
    been told yet (``pending_context``)."""

    def __init__(
        self,
        hooks: HookSet,
        environment: ActorRef,
        working_dir: str,
        session_id: str,
        emit: Callable[[EventData], Any],
        limits: Limits,
        describe: Callable[[], tuple[str, str]],
    ) -> None:
        """``describe`` gives the model's name and the permission mode (the policy)."""
        self.hooks = hooks
        self.environment = environment
        self.working_dir = working_dir
        self.session_id = session_id
        self._emit = emit
        self._limits = limits
        self._describe = describe
        self.pending_context: list[str] = []
        self.started = False
        self.stop_reason: str | None = None
        """Set when a hook answered ``continue: false``: the input ends after the
        step in progress (:meth:`take_stop`)."""
        self.tools: ToolRegistry | None = None
        """The session's tools, whose declared ``hook_names`` matchers see (None:
        Troupe's own tools by name)."""

    def __bool__(self) -> bool:
        return bool(self.hooks.hooks)

    def take_stop(self) -> str | None:
        taken, self.stop_reason = self.stop_reason, None
        return taken

    def take_context(self) -> list[str]:
        taken, self.pending_context = self.pending_context, []
        return taken

    async def fire(
        self, event: str, payload: dict[str, Any], names: tuple[str, ...] | None = None,
        call_id: str = "", tool: str = "",
    ) -> HookAnswer:  # fmt: skip
        """Run ``event``'s hooks whose matcher selects ``names``; their combined answer."""
        selected = [h for h in self.hooks.for_event(event) if matches(h.matcher, names)]
        if not selected:
            return HookAnswer()
        model, mode = self._describe()
        full = {
            "session_id": self.session_id,
            "transcript_path": None,
            "cwd": self.working_dir,
            "hook_event_name": event,
            "permission_mode": mode,
            "model": model,
            **payload,
        }
        sandbox, allowlist = self._limits()
        env_vars = {"CLAUDE_PROJECT_DIR": self.working_dir, "TROUPE_PROJECT_DIR": self.working_dir}
        runs: list[HookRun | None] = [None] * len(selected)
        from actors.hooks.runner import run_hook  # only a session with hooks runs one

        async def one(index: int, hook: Hook) -> None:
            runs[index] = await run_hook(hook, full, self.environment, self.working_dir,
                                         env_vars, sandbox, allowlist)  # fmt: skip

        async with trio.open_nursery() as nursery:
            for index, hook in enumerate(selected):
                nursery.start_soon(one, index, hook)
        done = [run for run in runs if run is not None]
        for run in done:
            self._record(run, call_id, tool)
        answer = combine([run.answer for run in done])
        if answer.stop:
            self.stop_reason = answer.stop_reason or f"a {event} hook ended the input"
        if answer.system_message:
            self._emit(WarningEvent(answer.system_message, "hook"))
        return answer

    def _record(self, run: HookRun, call_id: str, tool: str) -> None:
        answer = run.answer
        command = run.hook.command
        if len(command) > COMMAND_SHOWN:
            command = command[:COMMAND_SHOWN] + "..."
        self._emit(
            HookRunEvent(
                event=run.hook.event,
                source=run.hook.source,
                command=command,
                exit_code=run.exit_code,
                outcome=answer.outcome,
                reason=answer.error or answer.reason,
                tool=tool,
                call_id=call_id,
                duration_ms=run.duration_ms,
            )
        )
        if answer.error:
            self._emit(WarningEvent(f"{run.hook.event} hook `{command}`: {answer.error}", "hook"))

    # -- the events ------------------------------------------------------------

    async def session_start(self, resumed: bool) -> None:
        """Once per session, before its first input is processed."""
        if self.started:
            return
        self.started = True
        source = "resume" if resumed else "startup"
        answer = await self.fire("SessionStart", {"source": source}, (source,))
        if answer.context:
            self.pending_context.append(answer.context)

    async def session_end(self, reason: str) -> None:
        if self.started:
            await self.fire("SessionEnd", {"reason": reason}, (reason,))

    async def user_prompt_submit(self, prompt: str) -> HookAnswer:
        answer = await self.fire("UserPromptSubmit", {"prompt": prompt})
        if answer.context and not answer.blocks:
            self.pending_context.append(answer.context)
        return answer

    def _names(self, call: ToolCall) -> tuple[str, tuple[str, ...]]:
        """The anchor's name of the call's tool, and every name a matcher may use,
        as the session's tool of that name declares them."""
        declared = self.tools.get(call.name) if self.tools is not None else None
        return anchor_name(call.name, declared), names_of(call.name, declared)

    async def pre_tool_use(self, call: ToolCall) -> HookAnswer:
        anchor, names = self._names(call)
        payload = {"tool_name": anchor, "tool_input": call.arguments, "tool_use_id": call.id}
        return await self.fire("PreToolUse", payload, names, call.id, call.name)

    async def post_tool_use(self, call: ToolCall, output: str, is_error: bool) -> HookAnswer:
        anchor, names = self._names(call)
        payload = {
            "tool_name": anchor,
            "tool_input": call.arguments,
            "tool_response": {"output": output, "is_error": is_error, "success": not is_error},
            "tool_use_id": call.id,
        }
        return await self.fire("PostToolUse", payload, names, call.id, call.name)

    async def permission_request(self, call: ToolCall, reason: str) -> HookAnswer:
        anchor, names = self._names(call)
        payload = {"tool_name": anchor, "tool_input": call.arguments, "tool_use_id": call.id,
                   "reason": reason}  # fmt: skip
        return await self.fire("PermissionRequest", payload, names, call.id, call.name)

    async def notification(self, message: str, kind: str) -> None:
        await self.fire("Notification", {"message": message, "notification_type": kind}, (kind,))

    async def stop(self, active: bool, last_message: str, subagent: bool) -> HookAnswer:
        event = "SubagentStop" if subagent else "Stop"
        payload = {"stop_hook_active": active, "last_assistant_message": last_message}
        return await self.fire(event, payload)

    async def pre_compact(self, trigger: str, custom_instructions: str = "") -> HookAnswer:
        """For compaction to call before it summarises the history (``trigger``:
        ``manual`` for a user's request, ``auto`` when the context is nearly full).
        A hook's context is for the summary's instructions; a block (exit 2 or
        ``decision: "block"``) asks compaction not to run this time."""
        payload = {"trigger": trigger, "custom_instructions": custom_instructions}
        return await self.fire("PreCompact", payload, (trigger,))


def stop_answer_continues(answer: HookAnswer) -> str | None:
    """The text the model goes on with when a Stop hook blocks the stop."""
    if answer.blocks:
        return answer.reason or "A Stop hook asked you to continue."
    return None
