"""The session's side of ``sandbox = "auto"``: where the environment cannot
sandbox (no bwrap here), commands still run and the user is told once per session,
with the reason; where it can, nothing is said; ``on`` refuses the commands."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from environments.sandbox import find_bwrap
from protocol.events import ToolCallEndEvent, WarningEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns


def two_commands() -> object:
    return turns(
        [call("shell", command="echo one > one.txt")],
        [call("shell", command="echo two > two.txt")],
        "done",
    )


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with bash but no bwrap, for the whole test."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    monkeypatch.setenv("PATH", str(bin_dir))


def sandbox_warnings(events: list[WarningEvent]) -> list[str]:
    return [event.message for event in events if event.category == "sandbox"]


@pytest.mark.usefixtures("no_bwrap")
async def test_auto_without_bwrap_warns_once_and_runs(start_agent: StartAgent) -> None:
    async with start_agent("anthropic", two_commands()) as agent:
        await agent.run("write two files")
        said = sandbox_warnings(agent.of(WarningEvent))
        ends = agent.of(ToolCallEndEvent)
    assert len(said) == 1, said
    assert said[0].startswith("sandbox: auto -> off (bwrap not found)")
    assert not any(end.is_error for end in ends)
    assert (agent.workdir / "one.txt").exists() and (agent.workdir / "two.txt").exists()


@pytest.mark.usefixtures("no_bwrap")
async def test_on_without_bwrap_refuses_each_command(start_agent: StartAgent) -> None:
    config = SessionConfig(policy="sandboxed")
    async with start_agent("anthropic", two_commands(), config) as agent:
        await agent.run("write two files")
        ends = agent.of(ToolCallEndEvent)
        said = sandbox_warnings(agent.of(WarningEvent))
    assert said == []
    assert [end.is_error for end in ends] == [True, True]
    assert "sandbox = on, but this environment cannot sandbox commands (bwrap not found)" in (
        ends[0].output
    )
    assert not (agent.workdir / "one.txt").exists()


async def test_auto_with_bwrap_says_nothing(start_agent: StartAgent) -> None:
    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    async with start_agent("anthropic", two_commands()) as agent:
        await agent.run("write two files")
        assert sandbox_warnings(agent.of(WarningEvent)) == []
        assert not any(end.is_error for end in agent.of(ToolCallEndEvent))
