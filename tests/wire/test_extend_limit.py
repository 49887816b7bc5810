"""extend_limit over the wire: an input stopped at its iteration limit continues,
with more room, without a new user message (agent-loop-and-tool-system S5.7)."""

from __future__ import annotations

from protocol.session import SessionConfig
from protocol.wire import CreateSession, ExtendSessionLimit, SubmitInput
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe
from tests.wire.test_requests import expect_error


async def test_extend_limit_continues_the_same_input(start_stack: StartStack) -> None:
    script = shell_turns("echo a", "echo b", "echo c")
    async with start_stack(script) as stack, stack.client() as client:
        config = SessionConfig(max_tool_rounds_per_input=2, enable_loop_detection=False)
        session = (await client.request(CreateSession, config=config)).session.session_id
        await subscribe(client, session)
        await expect_error("invalid_request", client, ExtendSessionLimit,
                           session=session, by=3)  # fmt: skip
        await client.request(SubmitInput, session=session, text="go")
        first = await events_until(client, "processing_end")
        limits = [e.data for e in first if e.kind == "turn_limit"]
        assert [(d["limit"], d["round"]) for d in limits] == [("max_tool_rounds_per_input", 2)]
        assert len([e for e in first if e.kind == "tool_call_end"]) == 2

        extended = await client.request(ExtendSessionLimit, session=session, by=3)
        assert extended.config.max_tool_rounds_per_input == 5
        second = await events_until(client, "processing_end")
        kinds = [e.kind for e in second]
        assert "user_input" not in kinds and "turn_limit" not in kinds
        assert kinds.count("tool_call_end") == 1
        ends = [e.data["text"] for e in second if e.kind == "assistant_text_end"]
        assert ends[-1] == "All done."
        # Nothing left to extend once the input has finished on its own.
        await expect_error("invalid_request", client, ExtendSessionLimit,
                           session=session, by=3)  # fmt: skip


async def test_create_session_takes_a_preset_by_name(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        created = await client.request(
            CreateSession, preset="agentic-behavior-tool", config=SessionConfig(max_turns=7)
        )
        config = created.session.config
        assert (config.max_tool_rounds_per_input, config.max_command_timeout_ms) == (25, 300_000)
        assert config.max_turns == 7
        await expect_error("invalid_request", client, CreateSession, preset="unknown")


async def test_agentic_mode_over_the_wire_with_its_limit_extended(start_stack: StartStack) -> None:
    enter = {"name": "enter_agentic_mode", "arguments": {"user_prompt": "p", "objective": "o"}}
    working = {"text": "on it", "tool_calls": [{"name": "shell", "arguments": {"command": "true"}}]}
    done = {"name": "complete", "arguments": {"result": "all set", "status": "success"}}
    script = {
        "turns": [{"tool_calls": [enter]}, working, working, {"tool_calls": [done]}],
        "repeat": False,
    }
    async with start_stack(script) as stack, stack.client() as client:
        config = SessionConfig(agentic_max_iterations=2, enable_loop_detection=False)
        created = await client.request(CreateSession, preset="agentic-behavior-tool", config=config)
        assert created.session.config.agentic_mode
        session = created.session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="go")
        first = await events_until(client, "processing_end")
        kinds = [e.kind for e in first]
        assert kinds.count("agentic_start") == 1 and kinds.count("agentic_iteration") == 2
        (limit,) = [e.data for e in first if e.kind == "turn_limit"]
        assert (limit["limit"], limit["round"]) == ("agentic_max_iterations", 2)
        (end,) = [e.data for e in first if e.kind == "agentic_end"]
        assert end["status"] == "iteration_limit" and end["result"].startswith("on it\n\nStopped")

        extended = await client.request(ExtendSessionLimit, session=session, by=1)
        assert extended.config.agentic_max_iterations == 3
        second = await events_until(client, "processing_end")
        ends = [e.data for e in second if e.kind == "agentic_end"]
        assert ends == [{"status": "success", "result": "all set", "iterations": 3}]
