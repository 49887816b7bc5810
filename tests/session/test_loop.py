"""The agentic loop's scenarios (agent-loop-and-tool-system S5.1-S5.8) and lifecycle."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from actors.session.actor import SessionClosed
from protocol.events import (
    AssistantTextEndEvent,
    ErrorEvent,
    EventsMissedEvent,
    SessionEndEvent,
    ToolCallEndEvent,
    TurnLimitEvent,
    UserInputEvent,
)
from protocol.session import (
    Abort,
    FollowUp,
    GetSnapshot,
    SessionConfig,
    Steer,
    SteeringTurn,
    Submit,
    Subscribe,
    WaitIdle,
)
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import body_text, call, turns
from tests.waiting import wait_for_file, wait_until, wait_until_nothing_runs_in


async def test_s5_1_text_only_answer_ends_after_one_call(start_agent: StartAgent) -> None:
    async with start_agent("anthropic", turns("Hello there.")) as agent:
        events = await agent.run("hi")
        kinds = [e.kind for e in events if e.kind not in ("loop_state", "workspace_snapshot")]
        assert kinds[:2] == ["user_input", "assistant_text_start"]
        assert kinds[-2:] == ["assistant_text_end", "processing_end"]
        assert set(kinds[2:-2]) == {"assistant_text_delta"}
        assert len(agent.request_bodies()) == 1
        snapshot = await agent.ref.ask(GetSnapshot())
        assert snapshot.state == "idle"
        assert [type(t).__name__ for t in snapshot.history] == ["UserTurn", "AssistantTurn"]


async def test_s5_2_and_s5_6_tool_results_go_back_until_a_text_answer(
    start_agent: StartAgent,
) -> None:
    script = turns(
        [call("shell", command="echo one")], [call("shell", command="echo two")], "Both ran."
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("run one then two")
        bodies = agent.request_bodies()
        assert len(bodies) == 3
        assert "one" in body_text(bodies[1]) and "two" in body_text(bodies[2])
        snapshot = await agent.ref.ask(GetSnapshot())
        kinds = [type(t).__name__ for t in snapshot.history]
        assert kinds == ["UserTurn", "AssistantTurn", "ToolResultsTurn"] * 1 + [
            "AssistantTurn",
            "ToolResultsTurn",
            "AssistantTurn",
        ]


async def test_s5_3_and_s5_4_several_calls_and_a_failing_one(start_agent: StartAgent) -> None:
    script = turns(
        [
            call("shell", command="echo fine"),
            call("read_file", file_path="nope.txt"),
            call("no_such_tool"),
            call("read_file", offset="not a number"),
        ],
        "One worked; the others failed.",
    )
    async with start_agent("anthropic", script) as agent:
        await agent.run("try four things")
        order = [c.id for c in agent.of(AssistantTextEndEvent)[0].tool_calls]
        ends = sorted(agent.of(ToolCallEndEvent), key=lambda e: order.index(e.call_id))
        assert [e.is_error for e in ends] == [False, True, True, True]
        assert ends[2].output.startswith("Unknown tool: no_such_tool")
        assert "Invalid arguments for read_file" in ends[3].output
        sent = body_text(agent.request_bodies()[1])
        assert sent.count('"is_error":true') == 3


async def test_s5_5_abort_mid_stream_closes_cleanly(start_agent: StartAgent) -> None:
    script = {"turns": [{"text": "a long answer", "fault": {"stall_after": 1}}]}
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("talk"))
        with trio.fail_after(HANG_GUARD):
            await wait_until(lambda: bool(agent.server.requests), what="the model request")
            await agent.ref.ask(Abort("user pressed stop"))
            await agent.drain_until("session_end")
            await wait_until(lambda: agent.server.disconnects > 0, what="the stream to close")
        end = agent.of(SessionEndEvent)[0]
        assert end == SessionEndEvent("user pressed stop", "closed", 1)
        assert (await agent.ref.ask(GetSnapshot())).state == "closed"
        with pytest.raises(SessionClosed):
            await agent.ref.ask(Submit("again"))


async def test_s5_7_iteration_limit_stops_with_a_message(start_agent: StartAgent) -> None:
    script = {"turns": [{"tool_calls": [call("shell", command="true")]}], "repeat": True}
    config = SessionConfig(max_tool_rounds_per_input=3, enable_loop_detection=False)
    async with start_agent("anthropic", script, config) as agent:
        await agent.run("keep going")
        assert agent.of(TurnLimitEvent)[0] == TurnLimitEvent("max_tool_rounds_per_input", round=3)
        assert len(agent.request_bodies()) == 3
        assert (await agent.ref.ask(GetSnapshot())).state == "idle"


async def test_s5_8_abort_during_a_command_kills_it(start_agent: StartAgent) -> None:
    script = turns(
        [call("shell", command="echo $$ > pid; trap '' TERM; sleep 600", timeout_ms=600_000)]
    )
    async with start_agent("openai", script) as agent:
        await agent.ref.tell(Submit("run forever"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("tool_call_start")
            await wait_for_file(agent.workdir / "pid")
            await agent.ref.ask(Abort())
            await agent.drain_until("session_end")
            await wait_until_nothing_runs_in(agent.workdir)


async def test_session_turn_limit_holds_across_inputs(start_agent: StartAgent) -> None:
    async with start_agent(
        "gemini", turns("one", "two", "three"), SessionConfig(max_turns=2)
    ) as agent:
        await agent.run("first")
        await agent.run("second")
        await agent.run("third")
        assert agent.of(TurnLimitEvent)[0] == TurnLimitEvent("max_turns", total_turns=2)
        assert len(agent.request_bodies()) == 2


async def test_inputs_queue_and_follow_ups_run_after(start_agent: StartAgent) -> None:
    script = turns([call("shell", command="sleep 0.5")], "first done", "second done", "third done")
    async with start_agent("anthropic", script) as agent:
        await agent.ref.tell(Submit("first"))
        await agent.ref.tell(Submit("second"))
        await agent.ref.tell(FollowUp("third"))
        with trio.fail_after(HANG_GUARD):
            await agent.ref.ask(WaitIdle(), timeout=None)
            await agent.drain_until("processing_end")
        inputs = [e.content for e in agent.of(UserInputEvent)]
        assert inputs == ["first", "second", "third"]
        texts = [e.text for e in agent.of(AssistantTextEndEvent)]
        assert texts == ["", "first done", "second done", "third done"]


async def test_steering_while_idle_is_delivered_on_the_next_submit(start_agent: StartAgent) -> None:
    async with start_agent("openai", turns("noted")) as agent:
        await agent.ref.tell(Steer("use tabs, not spaces"))
        await agent.run("format the file")
        kinds = [kind for kind in agent.kinds() if kind != "workspace_snapshot"]
        assert kinds[:2] == ["user_input", "steering_injected"]
        snapshot = await agent.ref.ask(GetSnapshot())
        assert isinstance(snapshot.history[1], SteeringTurn)
        assert "use tabs, not spaces" in body_text(agent.request_bodies()[0])


async def test_authentication_error_closes_the_session(start_agent: StartAgent) -> None:
    script = {"turns": [{"fault": {"status": 401, "message": "bad key"}}]}
    async with start_agent("openai", script) as agent:
        await agent.ref.tell(Submit("hi"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("session_end")
        error = agent.of(ErrorEvent)[0]
        assert error.error_type == "AuthenticationError"
        assert len(agent.server.requests) == 1, "401 is never retried"
        assert (await agent.ref.ask(GetSnapshot())).state == "closed"


async def test_events_are_numbered_without_gaps(start_agent: StartAgent) -> None:
    async with start_agent("gemini", turns([call("glob", pattern="*")], "done")) as agent:
        await agent.run("look")
        numbers = [e.seq for e in agent.seen]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        assert {e.session_id for e in agent.seen} == {agent.actor.id}


async def test_a_slow_subscriber_is_told_what_it_missed(start_agent: StartAgent) -> None:
    async with start_agent("anthropic", turns("x" * 400)) as agent:
        slow = await agent.ref.ask(Subscribe(buffer=2))
        await agent.run("say a lot")
        first = await slow.__anext__()
        assert isinstance(first.data, EventsMissedEvent) and first.data.missed > 0
        rest = [await slow.__anext__(), await slow.__anext__()]
        assert [e.kind for e in rest] == ["loop_state", "processing_end"]
