"""Session behaviours beyond the loop scenarios: settings, warnings, subscribers."""

from __future__ import annotations

import trio

from actors.kernel import Actor, Runtime, handler
from actors.session.profiles import ANTHROPIC_SHELL_TIMEOUT_MS, PROFILES
from protocol.events import (
    InterruptedEvent,
    SessionEvent,
    ToolCallEndEvent,
    ToolCallOutputDeltaEvent,
    ToolCallStartEvent,
    WarningEvent,
)
from protocol.session import (
    Interrupt,
    Submit,
    Subscribe,
    SubscribeRef,
    UpdateConfig,
    WaitIdle,
)
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import body_text, call, turns
from tests.waiting import wait_for_file, wait_until_nothing_runs_in


async def test_model_change_takes_effect_on_the_next_call(start_agent: StartAgent) -> None:
    async with start_agent("openai", turns("one", "two")) as agent:
        await agent.run("first")
        await agent.ref.ask(UpdateConfig(model="gpt-next"))
        await agent.run("second")
        first, second = agent.request_bodies()
        assert (first["model"], second["model"]) == ("gpt-5.2-codex", "gpt-next")


async def test_context_usage_warning_at_80_percent(start_agent: StartAgent) -> None:
    profile_window = PROFILES["anthropic"]().context_window_size
    big = "y" * int(profile_window * 4 * 0.85)
    # A provider that reports no token counts: the ~4 characters a token estimate.
    uncounted = {"turns": [{"text": "ok", "usage": {"input": 0, "output": 0}}] * 2}
    async with start_agent("anthropic", uncounted) as agent:
        await agent.run("short question")
        assert agent.of(WarningEvent) == []
        await agent.run(big)
        warning = agent.of(WarningEvent)[0]
        assert warning.category == "context_usage"
        assert warning.message.startswith("Context usage at ~8")


async def test_anthropic_shell_defaults_to_120_seconds(start_agent: StartAgent) -> None:
    assert PROFILES["anthropic"]().default_command_timeout_ms == ANTHROPIC_SHELL_TIMEOUT_MS
    async with start_agent("anthropic", turns("hi")) as agent:
        await agent.run("hi")
        assert "Default timeout 120000 ms" in body_text(agent.request_bodies()[0])


class Collector(Actor):
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self.ended = trio.Event()

    @handler
    async def on_event(self, event: SessionEvent) -> None:
        self.events.append(event)
        if event.kind == "processing_end":
            self.ended.set()


async def test_events_can_be_delivered_to_a_ref(start_agent: StartAgent) -> None:
    async with start_agent("gemini", turns([call("glob", pattern="*")], "done")) as agent:
        collector = Collector()
        runtime: Runtime = agent.ref._cell.runtime
        await agent.ref.ask(SubscribeRef(await runtime.spawn(collector)))
        await agent.run("look around")
        with trio.fail_after(HANG_GUARD):
            await collector.ended.wait()
        assert [e.kind for e in collector.events] == [e.kind for e in agent.seen]


async def test_a_late_subscriber_can_start_from_session_start(start_agent: StartAgent) -> None:
    async with start_agent("openai", turns("hello")) as agent:
        await agent.run("hi")
        replay = await agent.ref.ask(Subscribe(after_seq=0))
        first = await replay.__anext__()
        assert (first.kind, first.seq) == ("session_start", 1)
        kinds = [first.kind] + [(await replay.__anext__()).kind for _ in range(4)]
        assert kinds == [
            "session_start",
            "user_input",
            "workspace_snapshot",
            "loop_state",
            "assistant_text_start",
        ]


async def test_command_output_streams_as_deltas(start_agent: StartAgent) -> None:
    script = turns([call("shell", command="echo first; sleep 0.3; echo second")], "ok")
    async with start_agent("anthropic", script) as agent:
        await agent.run("stream it")
        deltas = agent.of(ToolCallOutputDeltaEvent)
        call_id = agent.of(ToolCallStartEvent)[0].call_id
        assert {d.call_id for d in deltas} == {call_id}
        assert "".join(d.text for d in deltas) == "first\nsecond\n"
        assert agent.kinds().index("tool_call_output_delta") < agent.kinds().index("tool_call_end")


async def test_immediate_interrupt_keeps_the_session_open(start_agent: StartAgent) -> None:
    command = "echo $$ > pid; sleep 600"
    script = turns([call("shell", command=command, timeout_ms=600_000)], "carrying on")
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("start something long"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("tool_call_start")
            await wait_for_file(agent.workdir / "pid")
            await agent.ref.ask(Interrupt())
            await agent.drain_until("processing_end")
            await wait_until_nothing_runs_in(agent.workdir)
        assert "interrupted" in agent.kinds()
        outcome = await agent.ref.ask(WaitIdle())
        assert (outcome.state, outcome.stop_reason) == ("idle", "interrupted")
        await agent.run("go on")
        assert "Interrupted before the tool finished." in body_text(agent.request_bodies()[-1])


async def test_soft_interrupt_stops_after_the_current_step(start_agent: StartAgent) -> None:
    script = turns(
        [call("shell", command="sleep 0.5; echo step-one")],
        [call("shell", command="echo step-two")],
        "never reached",
    )
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("two steps"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("tool_call_start")
            await agent.ref.ask(Interrupt(immediate=False))
            await agent.drain_until("processing_end")
        outputs = [e.output for e in agent.of(ToolCallEndEvent)]
        assert len(outputs) == 1 and outputs[0].startswith("step-one")
        assert len(agent.request_bodies()) == 1, "no model call after the interrupt"
        assert agent.of(InterruptedEvent)
