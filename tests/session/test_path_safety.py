"""One judgement of exactly what runs (issue 30): hostile file-tool calls from the
scripted model, in real sessions on a LocalEnvironment, under the default policy.

The working directory sits next to an ``outside`` directory with canary files and
a fake HOME holding fake secrets; each test checks what the model read back and
that no byte outside changed. The reproductions under the issue's "Why" are here
by name: indented patch headers, ``spawn_agent`` rooted outside, hard links.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from protocol.events import (
    ApprovalRequestEvent,
    PolicyDecisionEvent,
    SubagentSpawnedEvent,
    ToolCallEndEvent,
)
from protocol.session import AnswerApproval, SessionConfig, Submit
from tests.session.conftest import HANG_GUARD, Agent, StartAgent
from tests.session.scripts import call, turns

CANARY = "canary: must never change\n"
SECRET = "-----BEGIN FAKE PRIVATE KEY-----\nsecret-bytes\n"


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``outside/`` with a canary next to the working directory, and a fake HOME
    (``outside/home``) with ``~/.ssh/id_rsa`` and ``~/.aws/credentials``."""
    root = Path(os.path.realpath(tmp_path)) / "outside"
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key=FAKE\n")
    (root / "canary.txt").write_text(CANARY)
    monkeypatch.setenv("HOME", str(home))
    return root


def ends(agent: Agent) -> list[ToolCallEndEvent]:
    return agent.of(ToolCallEndEvent)


def outside_untouched(outside: Path) -> None:
    """Nothing but the fixture's own files, each as it was."""
    found = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    assert found == [
        "canary.txt", "home", "home/.aws", "home/.aws/credentials", "home/.ssh",
        "home/.ssh/id_rsa",
    ]  # fmt: skip
    assert (outside / "canary.txt").read_text() == CANARY
    assert (outside / "home/.ssh/id_rsa").read_text() == SECRET


# -- apply_patch: the parser's targets are judged, never the raw text -------------


@pytest.mark.parametrize("indent", [" ", "\t", "\u00a0"], ids=["space", "tab", "nbsp"])
async def test_indented_patch_header_cannot_write_outside(
    start_agent: StartAgent, outside: Path, indent: str
) -> None:
    patch = f"*** Begin Patch\n{indent}*** Add File: ../outside/x\n+pwned\n*** End Patch"
    script = turns([call("apply_patch", patch=patch)], "done")
    async with start_agent("openai", script) as agent:
        await agent.run("go")
    (end,) = ends(agent)
    assert end.is_error and "outside the allowed paths" in end.output
    outside_untouched(outside)


async def test_move_to_outside_is_refused_even_indented(
    start_agent: StartAgent, outside: Path
) -> None:
    patch = (
        "*** Begin Patch\n *** Update File: a.py\n*** Move to: ../outside/canary.txt\n"
        "@@\n-x\n+y\n*** End Patch"
    )
    script = turns([call("apply_patch", patch=patch)], "done")
    async with start_agent("openai", script) as agent:
        (agent.workdir / "a.py").write_text("x\n")
        await agent.run("go")
        assert (agent.workdir / "a.py").read_text() == "x\n"
    (end,) = ends(agent)
    assert end.is_error and "canary.txt" in end.output and "outside" in end.output
    outside_untouched(outside)


async def test_a_patch_inside_still_applies(start_agent: StartAgent, outside: Path) -> None:
    patch = "*** Begin Patch\n *** Add File: pkg/new.py\n+ok\n*** End Patch"
    script = turns([call("apply_patch", patch=patch)], "done")
    async with start_agent("openai", script) as agent:
        await agent.run("go")
        assert (agent.workdir / "pkg" / "new.py").read_text() == "ok\n"
    (end,) = ends(agent)
    assert not end.is_error, end.output
    outside_untouched(outside)


# -- spawn_agent: the working directory is confined to the parent's ---------------


@pytest.mark.parametrize("where", ["../..", "ABSOLUTE", "link-out"])
async def test_spawn_agent_cannot_be_rooted_outside(
    start_agent: StartAgent, outside: Path, where: str
) -> None:
    working_dir = str(outside) if where == "ABSOLUTE" else where
    script = turns([call("spawn_agent", task="CHILD write there", working_dir=working_dir)], "done")
    async with start_agent("anthropic", script) as agent:
        (agent.workdir / "link-out").symlink_to(outside)
        await agent.run("PARENT")
    (end,) = ends(agent)
    assert end.is_error and "outside the working directory" in end.output, end.output
    assert agent.of(SubagentSpawnedEvent) == []
    outside_untouched(outside)


async def test_spawn_agent_in_a_subdirectory_works_there(
    start_agent: StartAgent, outside: Path
) -> None:
    script = {
        "conversations": [
            {"match": "PARENT", "turns": [
                {"tool_calls": [call("spawn_agent", task="CHILD", working_dir="pkg")]},
                {"tool_calls": [call("wait", agent_ids=["a-1"])]},
                {"text": "done"},
            ]},
            {"match": "CHILD", "turns": [
                {"tool_calls": [call("write_file", file_path="made.txt", content="hi")]},
                {"text": "child done"},
            ]},
        ]
    }  # fmt: skip
    async with start_agent("anthropic", script) as agent:
        (agent.workdir / "pkg").mkdir()
        await agent.run("PARENT")
        assert (agent.workdir / "pkg" / "made.txt").read_text() == "hi"
    assert not ends(agent)[0].is_error
    outside_untouched(outside)


# -- hard links: treated as outside unless the user approves ----------------------


async def run_answering(agent: Agent, text: str, approve: bool) -> list[ApprovalRequestEvent]:
    """Submit ``text``; answer every approval request with ``approve``."""
    asked: list[ApprovalRequestEvent] = []
    await agent.ref.tell(Submit(text))
    with trio.fail_after(HANG_GUARD):
        async for event in agent.events:
            agent.seen.append(event)
            if isinstance(event.data, ApprovalRequestEvent):
                asked.append(event.data)
                await agent.ref.ask(AnswerApproval(event.data.request_id, approve))
            if event.kind in ("processing_end", "session_end"):
                break
    return asked


async def test_hard_link_to_a_key_is_not_read(start_agent: StartAgent, outside: Path) -> None:
    script = turns([call("read_file", file_path="k")], "done")
    async with start_agent("anthropic", script) as agent:
        os.link(outside / "home/.ssh/id_rsa", agent.workdir / "k")  # `ln ~/.ssh/id_rsa k`
        asked = await run_answering(agent, "go", approve=True)
    (end,) = ends(agent)
    assert end.is_error and "secret-bytes" not in end.output
    assert "hard link to" in end.output and "denied path" in end.output
    assert asked == []  # refused outright: another name is a secret
    outside_untouched(outside)


@pytest.mark.parametrize("how", ["symlink", "hardlink", "absolute"])
async def test_aws_credentials_are_refused_to_read_file(
    start_agent: StartAgent, outside: Path, how: str
) -> None:
    credentials = outside / "home/.aws/credentials"
    path = str(credentials) if how == "absolute" else "creds"
    script = turns([call("read_file", file_path=path)], "done")
    async with start_agent("anthropic", script) as agent:
        if how == "symlink":
            (agent.workdir / "creds").symlink_to(credentials)
        elif how == "hardlink":
            os.link(credentials, agent.workdir / "creds")
        await run_answering(agent, "go", approve=True)
    (end,) = ends(agent)
    assert end.is_error and "FAKE" not in end.output and "denied path" in end.output


@pytest.mark.parametrize("tool", ["write_file", "edit_file", "apply_patch"])
async def test_hard_link_outside_asks_and_no_leaves_it_unchanged(
    start_agent: StartAgent, outside: Path, tool: str
) -> None:
    profile = "openai" if tool == "apply_patch" else "anthropic"
    calls = {
        "write_file": call("write_file", file_path="h.txt", content="overwritten\n"),
        "edit_file": call("edit_file", file_path="h.txt", old_string="canary", new_string="X"),
        "apply_patch": call(
            "apply_patch",
            patch="*** Begin Patch\n*** Update File: h.txt\n@@\n-"
            + CANARY.rstrip("\n")
            + "\n+X\n*** End Patch",
        ),
    }
    async with start_agent(profile, turns([calls[tool]], "done")) as agent:
        os.link(outside / "canary.txt", agent.workdir / "h.txt")
        asked = await run_answering(agent, "go", approve=False)
    (request,) = asked
    assert "hard link" in request.details["reason"]
    (decision,) = agent.of(PolicyDecisionEvent)
    assert (decision.action, decision.rule) == ("deny", "hard_link")
    (end,) = ends(agent)
    assert end.is_error and "not approved" in end.output
    outside_untouched(outside)


async def test_an_approved_hard_link_is_written(start_agent: StartAgent, outside: Path) -> None:
    script = turns([call("write_file", file_path="h.txt", content="approved\n")], "done")
    async with start_agent("anthropic", script) as agent:
        os.link(outside / "canary.txt", agent.workdir / "h.txt")
        asked = await run_answering(agent, "go", approve=True)
    assert len(asked) == 1
    assert not ends(agent)[0].is_error
    assert (outside / "canary.txt").read_text() == "approved\n"  # the user said yes


async def test_an_unattended_session_refuses_a_hard_link_without_asking(
    start_agent: StartAgent, outside: Path
) -> None:
    script = turns([call("read_file", file_path="h.txt")], "done")
    config = SessionConfig(policy="unattended")
    async with start_agent("anthropic", script, config) as agent:
        os.link(outside / "canary.txt", agent.workdir / "h.txt")
        asked = await run_answering(agent, "go", approve=True)
    assert asked == []
    (end,) = ends(agent)
    assert end.is_error and "hard link" in end.output and "unattended" in end.output
    assert "canary" not in end.output


async def test_deleting_a_symlink_removes_the_link_not_its_target(
    start_agent: StartAgent, outside: Path
) -> None:
    """As in codex, and under the policy too: the entry is judged and removed."""
    patch = "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch"
    async with start_agent("openai", turns([call("apply_patch", patch=patch)], "done")) as agent:
        (agent.workdir / "real.txt").write_text("kept\n")
        (agent.workdir / "link.txt").symlink_to(agent.workdir / "real.txt")
        await agent.run("go")
        assert not (agent.workdir / "link.txt").is_symlink()
        assert (agent.workdir / "real.txt").read_text() == "kept\n"
    assert not ends(agent)[0].is_error, ends(agent)[0].output
    outside_untouched(outside)
