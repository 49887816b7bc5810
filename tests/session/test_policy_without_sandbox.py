"""The gate's judgement of a shell line by whether it runs in the OS sandbox, in
real sessions on a LocalEnvironment with the scripted model (docs/decisions.md,
"The sandbox is the boundary"): with ``sandbox = "off"`` a line that runs code it
does not show is asked, and a write through a symlink the line cannot see is
resolved by the environment; under the default sandbox the same line runs
unasked. A file tool's write to ``.git/config`` is asked either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protocol.events import PolicyDecisionEvent, ToolCallEndEvent
from protocol.session import SessionConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns
from tests.session.test_path_safety import run_answering

CANARY = "canary\n"


def _config(sandbox: str) -> SessionConfig:
    return SessionConfig(policy_overrides={"sandbox": sandbox})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "outside"
    root.mkdir()
    (root / "c.txt").write_text(CANARY)
    return root


@pytest.mark.parametrize("sandbox", ["off", "auto"])
async def test_inline_code_is_asked_only_without_the_sandbox(
    start_agent: StartAgent, outside: Path, sandbox: str
) -> None:
    line = f'python3 -c \'open("{outside}/c.txt", "w").write("pwned")\''
    script = turns([call("shell", command=line)], "done")
    async with start_agent("anthropic", script, _config(sandbox)) as agent:
        asked = await run_answering(agent, "go", approve=False)
    (decision,) = agent.of(PolicyDecisionEvent)
    if sandbox == "off":
        assert decision.category == "admin" and decision.action == "deny"
        assert "without the OS sandbox" in asked[0].details["reason"]
    else:  # bwrap works here: the line runs confined, and cannot write outside
        assert (decision.category, decision.action, asked) == ("write", "allow", [])
    assert (outside / "c.txt").read_text() == CANARY


async def test_a_redirect_through_a_symlink_to_outside_is_asked_without_the_sandbox(
    start_agent: StartAgent, outside: Path
) -> None:
    script = turns([call("shell", command="echo pwned > out/c.txt")], "done")
    async with start_agent("anthropic", script, _config("off")) as agent:
        (agent.workdir / "out").symlink_to(outside)
        asked = await run_answering(agent, "go", approve=False)
    (decision,) = agent.of(PolicyDecisionEvent)
    assert (decision.category, decision.action) == ("admin", "deny")
    assert "outside the allowed paths" in asked[0].details["reason"]
    assert (outside / "c.txt").read_text() == CANARY


async def test_a_redirect_inside_stays_unasked_without_the_sandbox(
    start_agent: StartAgent, outside: Path
) -> None:
    script = turns([call("shell", command="echo fine > notes.txt")], "done")
    async with start_agent("anthropic", script, _config("off")) as agent:
        asked = await run_answering(agent, "go", approve=False)
    assert asked == []
    assert (agent.workdir / "notes.txt").read_text() == "fine\n"


@pytest.mark.parametrize("sandbox", ["off", "auto"])
async def test_a_file_tool_write_to_git_config_is_asked(
    start_agent: StartAgent, outside: Path, sandbox: str
) -> None:
    content = '[core]\n\tfsmonitor = "touch planted; false"\n'
    script = turns([call("write_file", file_path=".git/config", content=content)], "done")
    async with start_agent("anthropic", script, _config(sandbox)) as agent:
        (agent.workdir / ".git").mkdir()
        (agent.workdir / ".git" / "config").write_text("[core]\n")
        asked = await run_answering(agent, "go", approve=False)
    (request,) = asked
    assert ".git/config" in request.details["reason"]
    (end,) = agent.of(ToolCallEndEvent)
    assert end.is_error
    assert (agent.workdir / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.parametrize(
    ("target", "shown"),
    [(".git", "/.git"), ("vendor/lib/.git/hooks/pre-commit", "vendor/lib/.git/hooks")],
    ids=["worktree-pointer", "nested-hook"],
)
async def test_a_file_tool_write_to_a_git_pointer_or_a_nested_hook_is_asked(
    start_agent: StartAgent, outside: Path, target: str, shown: str
) -> None:
    """A worktree's ``.git`` file names its git directory: rewritten, the user's next
    git command there runs the hooks and config it points at. A nested repository's
    hooks run the same way. Neither is in ``protected_paths`` (the root's own
    ``.git/hooks`` is), and both are asked."""
    content = "gitdir: /tmp/planted\n" if target == ".git" else "#!/bin/sh\ntouch planted\n"
    script = turns([call("write_file", file_path=target, content=content)], "done")
    async with start_agent("anthropic", script, _config("off")) as agent:
        path = agent.workdir / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("gitdir: /elsewhere\n")
        asked = await run_answering(agent, "go", approve=False)
    (request,) = asked
    assert shown in request.details["reason"] and "runs code later" in request.details["reason"]
    assert path.read_text() == "gitdir: /elsewhere\n"
