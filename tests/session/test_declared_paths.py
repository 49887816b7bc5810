"""Tools declare which arguments are paths; nothing is guessed from a name (issue
30). A YAML tool's ``path: true`` parameter and an MCP server's declared
``path_arguments`` are resolved and judged like a file tool's path, and the
program gets the resolved path. A parameter merely *named* ``path`` is a value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocol.events import PolicyDecisionEvent, ToolCallEndEvent
from protocol.session import SessionConfig
from tests.mcp.servers import fixture_server
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns

TOOLS_YAML = """
tools:
  - name: show
    category: read
    cmd: cat
    args: ["--", "{{file}}"]
    parameters:
      file: {type: string, path: true}
  - name: stamp
    category: write
    cmd: printf
    args: ["stamp:%s", "{{path}}"]
    parameters:
      path: {type: string}
"""


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user tools file, and a fake HOME with ``~/.aws/credentials``."""
    base = Path(os.path.realpath(tmp_path))
    (base / "config" / "troupe").mkdir(parents=True)
    (base / "config" / "troupe" / "tools.yaml").write_text(TOOLS_YAML)
    (base / "home" / ".aws").mkdir(parents=True)
    (base / "home" / ".aws" / "credentials").write_text("aws_secret_access_key=FAKE\n")
    (base / "canary.txt").write_text("canary\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("HOME", str(base / "home"))
    return base


async def test_a_yaml_tool_path_parameter_is_judged_and_resolved(
    start_agent: StartAgent, places: Path
) -> None:
    script = turns(
        [call("show", file="creds")],  # a symlink to ~/.aws/credentials
        [call("show", file="hard")],  # a hard link to it
        [call("show", file="sub/../notes.txt")],
        "done",
    )
    async with start_agent("anthropic", script) as agent:
        (agent.workdir / "creds").symlink_to(places / "home" / ".aws" / "credentials")
        os.link(places / "home" / ".aws" / "credentials", agent.workdir / "hard")
        (agent.workdir / "notes.txt").write_text("notes\n")
        await agent.run("go")
    symlinked, hard, notes = agent.of(ToolCallEndEvent)
    for refused in (symlinked, hard):
        assert refused.is_error and "denied path" in refused.output
        assert "FAKE" not in refused.output
    assert not notes.is_error and "notes" in notes.output


async def test_a_parameter_named_path_is_not_guessed_to_be_one(
    start_agent: StartAgent, places: Path
) -> None:
    script = turns([call("stamp", path="../../elsewhere")], "done")
    async with start_agent("anthropic", script) as agent:
        await agent.run("go")
    (end,) = agent.of(ToolCallEndEvent)
    assert not end.is_error and "stamp:../../elsewhere" in end.output
    (decision,) = agent.of(PolicyDecisionEvent)
    assert decision.rule != "paths"


async def test_an_mcp_tool_declared_path_is_judged_and_resolved(
    start_agent: StartAgent, places: Path
) -> None:
    server = fixture_server(categories={"wipe": "write"}, path_arguments={"wipe": ["path"]})
    script = turns(
        [call("fx__wipe", path="../canary.txt")],
        [call("fx__wipe", path="sub/../victim.txt")],
        "done",
    )
    async with start_agent("anthropic", script, SessionConfig(mcp_servers=[server])) as agent:
        (agent.workdir / "victim.txt").write_text("bye\n")
        await agent.run("go")
        assert not (agent.workdir / "victim.txt").exists()
    outside, inside = agent.of(ToolCallEndEvent)
    assert outside.is_error and "outside the allowed paths" in outside.output
    assert (places / "canary.txt").read_text() == "canary\n"
    assert inside.output == f"deleted {agent.workdir / 'victim.txt'}"  # the resolved path
