"""System prompt layers (coding-agent-loop-spec §6), from a real environment snapshot."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from actors.kernel import ActorRef, Runtime
from actors.session.profiles import PROFILES, anthropic_profile, gemini_profile, openai_profile
from actors.session.prompt import PROJECT_DOC_MARKER, build_system_prompt, take_snapshot
from environments.local import LocalEnvironment
from protocol.session import UpdateConfig
from tests.session.conftest import StartAgent
from tests.session.scripts import body_text


def git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "repo"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root agents rules")
    (root / "CLAUDE.md").write_text("claude rules")
    (root / "GEMINI.md").write_text("gemini rules")
    (root / "pkg" / "sub" / "AGENTS.md").write_text("deeper agents rules")
    git(root, "init", "-q", "-b", "trunk")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first commit")
    (root / "untracked.txt").write_text("new")
    (root / "AGENTS.md").write_text("root agents rules, edited")
    return root


@pytest.fixture
async def env_in_sub(repo: Path) -> AsyncIterator[ActorRef]:
    async with Runtime() as runtime:
        yield await runtime.spawn(LocalEnvironment(repo / "pkg" / "sub"))


async def test_snapshot_reads_git_and_the_profiles_documents(
    repo: Path, env_in_sub: ActorRef
) -> None:
    snapshot = await take_snapshot(env_in_sub, anthropic_profile())
    assert snapshot.git is not None
    assert (snapshot.git.branch, snapshot.git.modified, snapshot.git.untracked) == ("trunk", 1, 1)
    assert snapshot.git.recent_commits[0].endswith("first commit")
    docs = snapshot.project_docs
    assert "claude rules" in docs and "gemini rules" not in docs
    assert docs.index("root agents rules") < docs.index("claude rules") < docs.index("deeper")
    gemini_docs = (await take_snapshot(env_in_sub, gemini_profile())).project_docs
    assert "gemini rules" in gemini_docs and "claude rules" not in gemini_docs


async def test_prompt_layers_in_order_with_the_user_override_last(env_in_sub: ActorRef) -> None:
    profile = openai_profile("gpt-test")
    snapshot = await take_snapshot(env_in_sub, profile)
    prompt = build_system_prompt(profile, snapshot, "Always answer in French.")
    order = [
        profile.base_instructions,
        "<environment>",
        f"Working directory: {snapshot.working_directory}",
        "Is git repository: true",
        "Git branch: trunk",
        "Platform: linux",
        f"Today's date: {snapshot.date}",
        "Model: gpt-test",
        "Git status at session start: 1 modified, 1 untracked",
        "- apply_patch: ",
        "Project instructions:",
        "User instructions:\nAlways answer in French.",
    ]
    positions = [prompt.index(piece) for piece in order]
    assert positions == sorted(positions)
    assert prompt.endswith("Always answer in French.")


async def test_project_documents_stop_at_32kb_with_the_marker(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * 40_000)
    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(tmp_path))
        snapshot = await take_snapshot(env, anthropic_profile())
    assert snapshot.git is None
    assert snapshot.project_docs.endswith(PROJECT_DOC_MARKER)
    assert len(snapshot.project_docs.encode()) <= 32 * 1024
    prompt = build_system_prompt(anthropic_profile(), snapshot)
    assert "Is git repository: false" in prompt


async def test_instruction_files_linking_out_of_the_repository_are_not_sent(
    repo: Path, tmp_path: Path
) -> None:
    """A hostile repository's CLAUDE.md linking to the user's credentials: the
    system prompt (sent to the provider) never carries them; links inside still read."""
    secret = Path(await trio.Path(tmp_path).resolve()) / "credentials"
    secret.write_text("aws_secret_access_key = NOT-FOR-THE-MODEL")
    (repo / "CLAUDE.md").unlink()
    (repo / "CLAUDE.md").symlink_to(secret)
    (repo / "pkg" / "sub" / "CLAUDE.md").symlink_to("AGENTS.md")
    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(repo / "pkg" / "sub"))
        snapshot = await take_snapshot(env, anthropic_profile())
    assert "NOT-FOR-THE-MODEL" not in build_system_prompt(anthropic_profile(), snapshot)
    assert "root agents rules, edited" in snapshot.project_docs
    assert snapshot.project_docs.count("deeper agents rules") == 2  # AGENTS.md, its link


async def test_the_git_probe_runs_no_program_the_repository_names(repo: Path) -> None:
    """Reproduction (issue 30): a planted ``core.fsmonitor`` ran when Troupe's own
    ``git status`` probe looked at the repository at session start."""
    canary = repo.parent / "canary"
    script = repo.parent / "monitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {canary}\n")
    script.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "core.pager", f"touch {canary}; cat")
    git(repo, "status")
    assert canary.exists(), "the plant works on plain git (else this test proves nothing)"
    canary.unlink()
    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(repo))
        snapshot = await take_snapshot(env, anthropic_profile())
    assert snapshot.git is not None and snapshot.git.untracked == 1
    assert not canary.exists()


async def test_the_openai_profile_reads_agents_and_codex_instructions(
    repo: Path, env_in_sub: ActorRef
) -> None:
    """The README's "Project instructions": AGENTS.md always, `.codex/instructions.md`
    for the openai profile, and neither CLAUDE.md nor GEMINI.md there."""
    (repo / ".codex").mkdir()
    (repo / ".codex" / "instructions.md").write_text("codex rules")
    docs = (await take_snapshot(env_in_sub, openai_profile("gpt-test"))).project_docs
    assert "root agents rules" in docs and "deeper agents rules" in docs
    assert "codex rules" in docs
    assert "claude rules" not in docs and "gemini rules" not in docs
    anthropic_docs = (await take_snapshot(env_in_sub, anthropic_profile())).project_docs
    assert "codex rules" not in anthropic_docs


@pytest.mark.parametrize("profile", ["openai", "anthropic", "gemini"])
async def test_the_prompt_names_the_model_a_switch_chose(
    start_agent: StartAgent, profile: str
) -> None:
    """coding-agent-loop-spec 6: the environment block names the model; after
    ``update_config(model=...)`` (``/model``) the next request's prompt names the new
    one, not the profile's."""
    script = {"turns": [{"text": "first"}, {"text": "second"}], "repeat": False}
    async with start_agent(profile, script) as agent:
        await agent.run("hello")
        await agent.ref.ask(UpdateConfig(model="switched-model-7"))
        await agent.run("again")
        first, second = agent.request_bodies()
    default = PROFILES[profile]().model
    assert f"Model: {default}" in body_text(first)
    assert "Model: switched-model-7" in body_text(second)
    assert f"Model: {default}\\n" not in body_text(second)
