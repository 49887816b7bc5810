"""MCP servers as a session's tool source, driven by the scripted provider: the
model lists and calls their tools through a real session."""

from __future__ import annotations

import base64
import os
import signal
import sys
from pathlib import Path

import trio

from environments.images import sniff_image
from protocol.events import ToolCallEndEvent, ToolCallStartEvent, WarningEvent
from protocol.mcp import McpServerConfig
from protocol.session import CloseSession, SessionConfig
from tests.environments.helpers import alive
from tests.mcp.servers import FIXTURE, fixture_server, npm_server
from tests.session.conftest import StartAgent
from tests.session.scripts import call, tool_names, turns
from tests.waiting import wait_until


def shared_directory(tmp_path: Path) -> Path:
    """A directory for the filesystem server, by its real path (it resolves links)."""
    shared = tmp_path.resolve() / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("from the filesystem server\n")
    return shared


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


async def test_model_sees_and_calls_fixture_tools(start_agent: StartAgent, tmp_path: Path):
    pid_file = tmp_path / "pids"
    server = fixture_server(env={"MCP_PID_FILE": str(pid_file)}, categories={"note": "read"})
    script = turns(
        [call("fx__echo", text="hi"), call("fx__picture"), call("fx__measure", word="abcd")],
        [call("fx__fail", reason="out of cheese"), call("fx__echo")],
        "done",
    )
    async with start_agent("openai", script, SessionConfig(mcp_servers=[server])) as agent:
        assert pid_file.exists() is False, "servers start with the first input, not before"
        await agent.run("use the tools")
        # A round's calls run in parallel: their ends arrive in any order.
        ends = sorted(agent.of(ToolCallEndEvent), key=lambda end: (end.tool_name, end.output))
        assert [(end.tool_name, end.is_error) for end in ends] == [
            ("fx__echo", True),
            ("fx__echo", False),
            ("fx__fail", True),
            ("fx__measure", False),
            ("fx__picture", False),
        ]
        assert "missing required field `text`" in ends[0].output
        assert ends[1].output == "echo: hi"
        assert ends[2].output == "Error executing tool fail: out of cheese"
        assert '"length": 4' in ends[3].output
        # the fixture's "PNG" is a signature and a word: described, never sent as an image
        assert ends[4].output == "[image image/png, 15 bytes: not a PNG, JPEG, GIF or WebP image]"
        offered = tool_names(agent.request_bodies()[0])
        assert {"fx__echo", "fx__wipe", "fx__hang", "shell"} <= offered
        registry = agent.actor.profile.registry
        categories = {
            name: registry.get(f"fx__{name}") for name in ("echo", "wipe", "hang", "note")
        }
        assert {name: tool.category for name, tool in categories.items() if tool} == {
            "echo": "read",  # readOnlyHint
            "wipe": "admin",  # destructiveHint
            "hang": "write",  # no annotation
            "note": "read",  # the configuration overrides
        }
        echo = registry.get("fx__echo")
        assert echo is not None
        assert echo.definition().parameters["required"] == ["text"]
        (pid,) = pids_in(pid_file)
        await agent.ref.ask(CloseSession())
    assert alive([pid]) == []


async def test_server_killed_mid_call_then_restarted(start_agent: StartAgent, tmp_path: Path):
    pid_file, hang_file = tmp_path / "pids", tmp_path / "hanging"
    env = {"MCP_PID_FILE": str(pid_file), "MCP_HANG_FILE": str(hang_file)}
    script = turns([call("fx__hang", seconds=60)], [call("fx__echo", text="again")], "done")
    config = SessionConfig(mcp_servers=[fixture_server(env=env)])
    async with start_agent("anthropic", script, config) as agent, trio.open_nursery() as nursery:

        async def kill_the_server_mid_call() -> None:
            await wait_until(hang_file.exists, what="the hang call to begin")
            os.kill(int(hang_file.read_text()), signal.SIGKILL)

        nursery.start_soon(kill_the_server_mid_call)
        await agent.run("hang, then echo")
        failed, echoed = agent.of(ToolCallEndEvent)
        assert failed.is_error
        assert failed.output.startswith("MCP server 'fx' failed while calling hang")
        assert "restarted on the next call" in failed.output
        assert (echoed.output, echoed.is_error) == ("echo: again", False)
        assert len(pids_in(pid_file)) == 2
        await agent.ref.ask(CloseSession())
    assert alive(pids_in(pid_file)) == []


async def test_streamable_http_server(start_agent: StartAgent, tmp_path: Path):
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await trio.lowlevel.open_process([sys.executable, str(FIXTURE), "http", str(port)])
    try:

        async def listening() -> bool:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                return False
            await stream.aclose()
            return True

        await wait_until(listening, what="the HTTP MCP server to listen")
        server = McpServerConfig(
            "web", url=f"http://127.0.0.1:{port}/mcp", headers={"X-Troupe-Test": "yes"}
        )
        script = turns([call("web__echo", text="over http")], "done")
        async with start_agent("gemini", script, SessionConfig(mcp_servers=[server])) as agent:
            await agent.run("echo over http")
            (end,) = agent.of(ToolCallEndEvent)
            assert (end.output, end.is_error) == ("echo: over http", False)
    finally:
        process.kill()
        await process.wait()


async def test_unreachable_server_is_a_warning_not_a_failure(start_agent: StartAgent):
    server = McpServerConfig("gone", command=["/nonexistent/mcp-server"])
    async with start_agent("openai", turns("fine"), SessionConfig(mcp_servers=[server])) as agent:
        events = await agent.run("hello")
        warnings = [e.data for e in events if isinstance(e.data, WarningEvent)]
        assert [w.category for w in warnings] == ["mcp_server"]
        assert "MCP server 'gone' failed to start" in warnings[0].message
        assert agent.kinds()[-1] == "processing_end"


async def test_npm_reference_servers(start_agent: StartAgent, tmp_path: Path):
    everything = McpServerConfig("every", command=npm_server("server-everything", "stdio"))
    shared = shared_directory(tmp_path)
    files = McpServerConfig("fs", command=npm_server("server-filesystem", str(shared)))
    script = turns(
        [
            call("every__get-sum", a=2, b=40),
            call("fs__read_text_file", path=str(shared / "notes.txt")),
            call("fs__read_text_file", path="/etc/passwd"),
        ],
        "done",
    )
    config = SessionConfig(mcp_servers=[everything, files])
    async with start_agent("openai", script, config) as agent:
        await agent.run("add and read")
        # The calls run in parallel: match each end to its call by the arguments.
        ends = {end.call_id: end for end in agent.of(ToolCallEndEvent)}
        by_arguments = {
            str(start.arguments): ends[start.call_id] for start in agent.of(ToolCallStartEvent)
        }
        total = by_arguments[str({"a": 2, "b": 40})]
        notes = by_arguments[str({"path": str(shared / "notes.txt")})]
        outside = by_arguments[str({"path": "/etc/passwd"})]
        assert "42" in total.output and not total.is_error
        assert (notes.output, notes.is_error) == ("from the filesystem server\n", False)
        assert outside.is_error and "denied" in outside.output.lower()
        registry = agent.actor.profile.registry
        write_file, read_file = registry.get("fs__write_file"), registry.get("fs__read_text_file")
        assert write_file is not None and read_file is not None
        assert (write_file.category, read_file.category) == ("admin", "read")


async def test_an_mcp_image_reaches_a_model_that_takes_images(start_agent: StartAgent):
    """server-everything's ``get-tiny-image`` returns text and a PNG: the text is
    the result, the picture goes with it in the wire's own shape."""
    everything = McpServerConfig("every", command=npm_server("server-everything", "stdio"))
    script = turns([call("every__get-tiny-image")], "A tiny logo.")
    async with start_agent("anthropic", script, SessionConfig(mcp_servers=[everything])) as agent:
        await agent.run("show me the image")
        (end,) = agent.of(ToolCallEndEvent)
        assert not end.is_error and "[image image/png" in end.output
        second = agent.request_bodies()[1]
    (result,) = [
        block
        for message in second["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]
    (image,) = [part for part in result["content"] if part["type"] == "image"]
    data = base64.b64decode(image["source"]["data"])
    assert image["source"]["media_type"] == "image/png" and data.startswith(b"\x89PNG")
    assert sniff_image(data) is not None
