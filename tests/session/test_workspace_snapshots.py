"""A session records its working tree (docs/snapshots.md): a durable
``workspace_snapshot`` event at each input and before each round that runs a
mutating tool, which a restore brings back byte for byte; none when switched off;
one warning, and the input goes on, on a host without git."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from actors.workspace import restore_snapshot
from protocol.events import UserInputEvent, WarningEvent, WorkspaceSnapshotEvent
from protocol.session import SessionConfig
from tests.environments.test_workspace_snapshots import tree_of, without_git
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns

CONFIG = SessionConfig(policy="permissive", snapshot_max_file_bytes=1000)

PATCH = "*** Begin Patch\n*** Update File: patched.txt\n@@\n-old line\n+new line\n*** End Patch"


def seed(workdir: Path) -> None:
    (workdir / "patched.txt").write_text("first\nold line\nlast\n")
    (workdir / "sed.txt").write_text("alpha\nbeta\n")
    (workdir / "gone.txt").write_text("bye\n")
    (workdir / "moved.txt").write_text("moving\n")
    (workdir / ".gitignore").write_text("*.log\n")
    (workdir / "kept.log").write_text("log\n")
    (workdir / "big.bin").write_bytes(b"\0" * 2000)


async def test_snapshots_at_inputs_and_before_mutating_rounds(start_agent: StartAgent) -> None:
    shell = (
        "sed -i s/beta/BETA/ sed.txt && rm gone.txt && mv moved.txt here.txt && "
        "seq 1 9 > generated.txt && echo more >> kept.log && echo x >> big.bin"
    )
    script = turns(
        [call("read_file", file_path="sed.txt")],  # reads only: no snapshot before it
        [call("write_file", file_path="written.txt", content="new\n"),
         call("apply_patch", patch=PATCH)],
        [call("shell", command=shell)],
        "Done.",
        "Nothing to do.",
    )  # fmt: skip
    async with start_agent("openai", script, CONFIG) as agent:
        seed(agent.workdir)
        before = tree_of(agent.workdir)
        await agent.run("change things")
        changed = tree_of(agent.workdir)
        await agent.run("and now?")

        inputs = [e for e in agent.seen if isinstance(e.data, UserInputEvent)]
        snapshots = [e for e in agent.seen if isinstance(e.data, WorkspaceSnapshotEvent)]
        order = [e.kind for e in agent.seen if e.kind in
                 ("user_input", "workspace_snapshot", "tool_call_start")]  # fmt: skip
        assert order == [
            "user_input", "workspace_snapshot",  # the input, before the model call
            "tool_call_start",  # read_file: no snapshot
            "workspace_snapshot", "tool_call_start", "tool_call_start",  # write + patch
            "workspace_snapshot", "tool_call_start",  # the shell command
            "user_input", "workspace_snapshot",
        ]  # fmt: skip
        first = snapshots[0].data
        assert isinstance(first, WorkspaceSnapshotEvent)
        assert [(s.data.reason, s.data.input_seq) for s in snapshots] == [  # type: ignore[union-attr]
            ("input", inputs[0].seq), ("round", inputs[0].seq), ("round", inputs[0].seq),
            ("input", inputs[1].seq),
        ]  # fmt: skip
        assert first.skipped == ["big.bin"]
        assert first.root == str(agent.workdir)
        assert Path(first.shadow).parent == agent.workdir.parent / "shadow"
        commits = [s.data.commit for s in snapshots]  # type: ignore[union-attr]
        assert commits[0] == commits[1]  # read_file changed nothing: the same snapshot
        assert len(set(commits)) == 3

        report = await restore_snapshot(
            agent.actor.environment, first.commit, root=first.root, shadow=first.shadow,
            max_file_bytes=1000,
        )  # fmt: skip
        restored = tree_of(agent.workdir)
        assert restored.pop("kept.log") == changed["kept.log"]  # ignored: left alone
        assert restored.pop("big.bin") == changed["big.bin"]  # over the cap: left alone
        assert restored == {p: e for p, e in before.items() if p not in ("kept.log", "big.bin")}
        assert sorted(report.deleted) == ["generated.txt", "here.txt", "written.txt"]
        assert sorted(report.recreated) == ["gone.txt", "moved.txt"]
        assert sorted(report.changed) == ["patched.txt", "sed.txt"]


async def test_switched_off_there_are_none(start_agent: StartAgent) -> None:
    config = SessionConfig(policy="permissive", snapshots=False)
    script = turns([call("shell", command="echo hi > made.txt")], "Done.")
    async with start_agent("openai", script, config) as agent:
        events = await agent.run("make a file")
        assert not [e for e in events if e.kind in ("workspace_snapshot", "warning")]
        assert not (agent.workdir.parent / "shadow").exists()


async def test_without_git_one_warning_and_the_input_goes_on(
    start_agent: StartAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = turns(
        [call("shell", command="echo one > one.txt")], "Done.", "Again.",
    )  # fmt: skip
    monkeypatch.setenv("PATH", str(without_git(tmp_path / "bin")))
    async with start_agent("openai", script, SessionConfig(policy="permissive")) as agent:
        await agent.run("first")
        await agent.run("second")
        warnings = agent.of(WarningEvent)
        about = [w for w in warnings if w.category == "workspace_snapshot"]
        assert len(about) == 1
        assert "git is not installed" in about[0].message
        assert "off for this session" in about[0].message
        assert not agent.of(WorkspaceSnapshotEvent)
        assert (agent.workdir / "one.txt").read_text() == "one\n"
        assert agent.kinds().count("processing_end") == 2
        assert os.environ["PATH"].endswith("bin")


async def test_a_slow_snapshot_is_announced_once(start_agent: StartAgent) -> None:
    """The first snapshot of a large tree reads every file: past a few seconds the
    session says what it is doing (here the delay is 0, so every snapshot is
    "slow"), once a session."""
    script = turns([call("shell", command="echo one > one.txt")], "Done.", "Again.")
    async with start_agent("openai", script, CONFIG) as agent:
        await agent.run("first")
        assert agent.actor.loop.parts is not None
        tree = agent.actor.loop.parts.tree
        assert tree is not None
        tree.slow_notice_s = 0
        await agent.run("second")
        notices = [w for w in agent.of(WarningEvent) if w.category == "workspace_snapshot"]
        assert len(notices) == 1
        assert "recording the working tree" in notices[0].message
        assert len(agent.of(WorkspaceSnapshotEvent)) == 3  # input, round, input


async def test_a_session_start_hook_s_changes_are_in_the_first_input_s_snapshot(
    start_agent: StartAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first input's snapshot may start alongside the session's preparation
    (docs/snapshots.md); a hook then runs in between and may change the tree, so
    that snapshot is taken again after it: the input's holds what the hook made."""
    config_home = tmp_path / "config"
    (config_home / "troupe").mkdir(parents=True)
    # The hook waits for a snapshot of the tree to be recorded (the early one), then
    # changes the tree: recorded before the hook, the input's would miss the file.
    waits = (
        "for i in $(seq 400); do ls ../shadow/*/refs/heads/troupe >/dev/null 2>&1 && break; "
        "sleep 0.05; done; echo made > made-by-hook.txt"
    )
    hook = {"type": "command", "command": waits}
    (config_home / "troupe" / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    async with start_agent("openai", turns("Done."), CONFIG) as agent:
        await agent.run("hello")
        assert (agent.workdir / "made-by-hook.txt").read_text() == "made\n"
        snapshots = agent.of(WorkspaceSnapshotEvent)
        assert [(s.reason, s.files) for s in snapshots] == [("input", 1)]
