"""Text tool calls end to end (forge-agent-loop-prd FR3): over the openai_chat wire,
against ``troupe mock-llm`` refusing ``tools`` or a session told to use text calls."""

from __future__ import annotations

from typing import Any

from protocol.events import AssistantTextEndEvent, ToolCallEndEvent, WarningEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent

WRITE = (
    "I will write the script first.\n<tool_call>\n"
    '{"name": "write_file", "arguments": {"file_path": "hello.sh", '
    '"content": "echo \\"hi {from} text calls\\"\\n"}}\n</tool_call>\n'
    "Observation: the file was written, MADE-UP-OBSERVATION"
)
RUN = "Thought: now run it\nAction: shell\nAction Input: {'command': 'bash hello.sh'}"


def conversation(*texts: str, reject_tools: bool = False) -> dict[str, Any]:
    turns = [{"text": text} for text in texts]
    return {
        "conversations": [{"match": "script", "turns": turns}],
        "reject_tools": reject_tools,
        "delta_size": 8,
    }


def chat_messages(body: dict[str, Any], role: str) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == role]


async def test_a_server_rejecting_tools_gets_text_calls_and_the_task_completes(
    start_agent: StartAgent,
) -> None:
    script = conversation(WRITE, RUN, "The script prints its greeting.", reject_tools=True)
    async with start_agent("anthropic", script, wire="openai_chat") as agent:
        await agent.run("write a hello script and run it")
        script_file = agent.workdir / "hello.sh"
        assert script_file.read_text() == 'echo "hi {from} text calls"\n'
        ran = [end for end in agent.of(ToolCallEndEvent) if "hi {from} text calls" in end.output]
        assert len(ran) == 1 and not ran[0].is_error
        assert agent.of(AssistantTextEndEvent)[-1].text == "The script prints its greeting."
        assert [w.category for w in agent.of(WarningEvent)] == ["text_tool_calls"]
        bodies = agent.request_bodies()
        assert "tools" in bodies[0]  # refused with a 400 ...
        assert all("tools" not in body for body in bodies[1:])  # ... then text from there on
        assert len(bodies) == 4
        system = chat_messages(bodies[1], "system")[0]
        assert "<tool_call>" in system and "- shell:" in system
        last = bodies[3]
        assistant = chat_messages(last, "assistant")
        # Early detection stopped the stream once the call was in; what the model
        # would have made up after it never reached the history.
        assert "MADE-UP-OBSERVATION" not in assistant[0]
        # History goes back as valid JSON, even for a call written in single quotes.
        assert '{"name": "shell", "arguments": {"command": "bash hello.sh"}}' in assistant[1]
        assert "'command'" not in assistant[1]
        results = chat_messages(last, "user")
        assert results[1].startswith('<tool_result name="write_file">')
        assert results[2].startswith('<tool_result name="shell">')
        assert "hi {from} text calls" in results[2]


async def test_a_malformed_call_gets_an_error_the_model_can_correct(
    start_agent: StartAgent,
) -> None:
    broken = '<tool_call>{"name": "write_file", "arguments": {"file_path": "a.txt"</tool_call>'
    fixed = (
        '<tool_call>{"name": "write_file", "arguments": '
        '{"file_path": "a.txt", "content": "fixed"}}</tool_call>'
    )
    config = SessionConfig(tool_calling="text")
    async with start_agent(
        "anthropic", conversation(broken, fixed, "done"), config, "openai_chat"
    ) as agent:
        await agent.run("script: write a.txt")
        assert (agent.workdir / "a.txt").read_text() == "fixed"
        bodies = agent.request_bodies()
        assert all("tools" not in body for body in bodies)
        correction = chat_messages(bodies[1], "user")[1]
        assert correction.startswith('<tool_result name="invalid_tool_call" status="error">')
        assert "not closed" in correction and "Write the call again" in correction
        assert agent.of(WarningEvent) == []


async def test_native_calling_never_falls_back(start_agent: StartAgent) -> None:
    config = SessionConfig(tool_calling="native")
    script = conversation(WRITE, reject_tools=True)
    async with start_agent("anthropic", script, config, "openai_chat") as agent:
        events = await agent.run("script: write")
        assert [e.kind for e in events if e.kind == "error"] == ["error"]
        assert not (agent.workdir / "hello.sh").exists()
        assert len(agent.request_bodies()) == 1
