"""The cross-provider parity matrix (coding-agent-loop-spec §9.12), one real session per
cell: each profile drives its own tools against a scripted model over loopback HTTP."""

from __future__ import annotations

import pytest
import trio

from protocol.events import (
    AssistantTextEndEvent,
    LoopDetectionEvent,
    ToolCallEndEvent,
    TurnLimitEvent,
)
from protocol.session import SessionConfig, Steer, Submit, UpdateConfig
from tests.session.conftest import HANG_GUARD, StartAgent
from tests.session.scripts import body_text, call, create_file, edit_file, effort, tool_names, turns

PROFILES = ["openai", "anthropic", "gemini"]
pytestmark = pytest.mark.parametrize("profile", PROFILES)


async def test_simple_file_creation(start_agent: StartAgent, profile: str) -> None:
    script = turns([create_file(profile, "hello.py", "print('hi')")], "Created hello.py.")
    async with start_agent(profile, script) as agent:
        await agent.run("create hello.py")
        assert (agent.workdir / "hello.py").read_text() == "print('hi')\n"
        assert agent.of(ToolCallEndEvent)[0].is_error is False
        assert agent.of(AssistantTextEndEvent)[-1].text == "Created hello.py."


async def test_read_then_edit_in_the_profiles_editing_format(
    start_agent: StartAgent, profile: str
) -> None:
    script = turns(
        [call("read_file", file_path="app.py")],
        [edit_file(profile, "app.py", "x = 1", "x = 2")],
        "Changed x to 2.",
    )
    async with start_agent(profile, script) as agent:
        (agent.workdir / "app.py").write_text("x = 1\n")
        await agent.run("set x to 2")
        ends = agent.of(ToolCallEndEvent)
        assert ends[0].output == "1 | x = 1"
        assert ends[1].is_error is False, ends[1].output
        assert (agent.workdir / "app.py").read_text() == "x = 2\n"
        offered = tool_names(agent.request_bodies()[0])
        if profile == "openai":
            assert "apply_patch" in offered and "edit_file" not in offered
        else:
            assert "edit_file" in offered and "apply_patch" not in offered


async def test_multi_file_edit_in_one_session(start_agent: StartAgent, profile: str) -> None:
    script = turns(
        [
            edit_file(profile, "a.txt", "alpha", "ALPHA"),
            edit_file(profile, "b.txt", "beta", "BETA"),
        ],
        "Edited both.",
        [edit_file(profile, "c.txt", "gamma", "GAMMA")],
        "Edited c too.",
    )
    async with start_agent(profile, script) as agent:
        for name, word in (("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")):
            (agent.workdir / name).write_text(f"{word}\n")
        await agent.run("uppercase a and b")
        await agent.run("and c")
        contents = [(agent.workdir / n).read_text() for n in ("a.txt", "b.txt", "c.txt")]
        assert contents == ["ALPHA\n", "BETA\n", "GAMMA\n"]


async def test_shell_command_and_its_timeout(start_agent: StartAgent, profile: str) -> None:
    script = turns(
        [call("shell", command="echo from-shell; exit 3")],
        [call("shell", command="echo partial; sleep 30", timeout_ms=300)],
        "The second command timed out.",
    )
    async with start_agent(profile, script) as agent:
        with trio.fail_after(HANG_GUARD):
            await agent.run("run two commands")
        first, second = (event.output for event in agent.of(ToolCallEndEvent))
        assert first.startswith("from-shell\n[exit code: 3, duration: ")
        assert "[ERROR: Command timed out after 300ms." in second
        assert second.startswith("partial\n")


async def test_grep_and_glob_find_files(start_agent: StartAgent, profile: str) -> None:
    script = turns(
        [call("glob", pattern="**/*.py"), call("grep", pattern="NEEDLE", glob_filter="*.py")],
        "Found it in pkg/deep.py.",
    )
    async with start_agent(profile, script) as agent:
        (agent.workdir / "pkg").mkdir()
        (agent.workdir / "pkg/deep.py").write_text("x = 'NEEDLE'\n")
        (agent.workdir / "notes.md").write_text("NEEDLE\n")
        await agent.run("where is NEEDLE used in python?")
        # The calls may run in parallel and end in either order: match by tool.
        outputs = {event.tool_name: event.output for event in agent.of(ToolCallEndEvent)}
        globbed, grepped = outputs["glob"], outputs["grep"]
        assert globbed == f"{agent.workdir}/pkg/deep.py"
        assert grepped == f"{agent.workdir}/pkg/deep.py:1:x = 'NEEDLE'"


async def test_truncation_keeps_the_full_output_in_the_event(
    start_agent: StartAgent, profile: str
) -> None:
    big = "".join(f"line {n:06d} " + "x" * 90 + "\n" for n in range(2000))
    script = turns([call("read_file", file_path="big.txt", limit=5000)], "It is long.")
    async with start_agent(profile, script) as agent:
        (agent.workdir / "big.txt").write_text(big)
        await agent.run("read big.txt")
        full = agent.of(ToolCallEndEvent)[0].output
        assert len(full) > 200_000 and full.endswith("x" * 90)
        sent = body_text(agent.request_bodies()[1])
        assert "[WARNING: Tool output was truncated." in sent
        assert "line 000000" in sent and "line 001999" in sent
        assert "line 001000" not in sent


async def test_parallel_tool_calls_run_together(start_agent: StartAgent, profile: str) -> None:
    # Each command waits until all three have started: it reports 3 only if they overlap.
    command = (
        "touch started.$N; for i in $(seq 200); do "
        "[ $(ls started.* | wc -l) -ge 3 ] && break; sleep 0.05; done; "
        'echo "call-$N $(ls started.* | wc -l)"'
    )
    script = turns([call("shell", command=command.replace("$N", str(n))) for n in range(3)], "ok")
    async with start_agent(profile, script) as agent:
        await agent.run("run three things")
        outputs = [event.output.splitlines()[0] for event in agent.of(ToolCallEndEvent)]
        assert sorted(outputs) == ["call-0 3", "call-1 3", "call-2 3"]
        sent = body_text(agent.request_bodies()[1])
        positions = [sent.index(f"call-{n} 3") for n in range(3)]
        assert positions == sorted(positions), "results go back in call order"


async def test_steering_mid_task(start_agent: StartAgent, profile: str) -> None:
    script = turns([call("shell", command="sleep 1; echo slow")], "Done, and noted.")
    async with start_agent(profile, script) as agent:
        await agent.ref.tell(Submit("do the slow thing"))
        with trio.fail_after(HANG_GUARD):
            await agent.drain_until("tool_call_start")
            await agent.ref.tell(Steer("Also mention the weather."))
            await agent.drain_until("processing_end")
        assert agent.kinds().index("steering_injected") > agent.kinds().index("tool_call_end")
        assert "Also mention the weather." in body_text(agent.request_bodies()[1])


async def test_reasoning_effort_change_reaches_the_next_request(
    start_agent: StartAgent, profile: str
) -> None:
    from protocol.session import SessionConfig

    async with start_agent(
        profile, turns("one", "two"), SessionConfig(reasoning_effort="low")
    ) as agent:
        await agent.run("first")
        await agent.ref.ask(UpdateConfig(reasoning_effort="high"))
        await agent.run("second")
        first, second = agent.request_bodies()
        assert effort(first, profile) not in (None, effort(second, profile))
        assert effort(second, profile) is not None


async def test_loop_detection_warns_the_model(start_agent: StartAgent, profile: str) -> None:
    script = {"turns": [{"tool_calls": [call("glob", pattern="*.nothing")]}], "repeat": True}
    config = SessionConfig(max_tool_rounds_per_input=11, loop_detection_window=10)
    async with start_agent(profile, script, config) as agent:
        await agent.run("look for it")
        warnings = agent.of(LoopDetectionEvent)
        assert len(warnings) == 1
        assert warnings[0].message == (
            "Loop detected: the last 10 tool calls follow a repeating pattern. "
            "Try a different approach."
        )
        assert "Loop detected" in body_text(agent.request_bodies()[-1])
        assert agent.of(TurnLimitEvent)[0].limit == "max_tool_rounds_per_input"


async def test_error_recovery_after_a_failing_tool(start_agent: StartAgent, profile: str) -> None:
    script = turns(
        [call("read_file", file_path="missing.txt")],
        [create_file(profile, "missing.txt", "now here")],
        "Created the missing file.",
    )
    async with start_agent(profile, script) as agent:
        await agent.run("read missing.txt, create it if needed")
        failed, created = agent.of(ToolCallEndEvent)
        assert failed.is_error is True and "does not exist" in failed.output
        assert created.is_error is False
        assert "does not exist" in body_text(agent.request_bodies()[1])
        assert (agent.workdir / "missing.txt").read_text() == "now here\n"
