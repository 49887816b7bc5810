"""``isolation`` from the command line and the config file: ``troupe run --preset
adr-040 --isolation worktree`` (a preset and the setting together) gives a
subagent that does not ask for anything its own worktree and branch; the config
file's ``isolation`` and ``worktree_copy`` are shown by ``troupe config`` with
where they came from, and a bad value is one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.conftest import Home, mock_llm, one_line, request_bodies
from tests.environments.conftest import DockerForTests, docker  # noqa: F401 - the fixture
from tests.environments.dockerd import IMAGE_USER_UID, labelled_containers


def _git(repo: Path, *args: str) -> str:
    ident = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    return subprocess.run(
        ["git", "-C", str(repo), *ident, *args], capture_output=True, text=True, check=True
    ).stdout


async def test_run_isolation_flag_gives_the_subagent_a_worktree(home: Home) -> None:
    _git(home.work, "init", "-q", "-b", "main")
    (home.work / "README").write_text("project\n")
    _git(home.work, "add", "-A")
    _git(home.work, "commit", "-q", "-m", "start")
    write = {"name": "write_file", "arguments": {"file_path": "made.txt", "content": "x\n"}}
    script = {
        "conversations": [
            {
                "match": "PARENT",
                "turns": [
                    {"tool_calls": [{"name": "spawn_agent", "arguments": {"task": "CHILD go"}}]},
                    {"tool_calls": [{"name": "wait", "arguments": {"agent_ids": ["a-1"]}}]},
                    {"text": "parent done"},
                ],
            },
            {"match": "CHILD", "turns": [{"tool_calls": [write]}, {"text": "child done"}]},
        ]
    }
    async with mock_llm(script) as mock:
        home.config.write_text(f'base_url = "{mock.base_url}"\nworktree_copy = [".env"]\n')
        done = await home.troupe(
            "run", "--preset", "adr-040", "--isolation", "worktree", "PARENT: go"
        )
        assert done.returncode == 0, done.stderr
    branches = _git(home.work, "branch", "--list", "troupe/*", "--format=%(refname:short)").split()
    assert len(branches) == 1 and branches[0].endswith(".a-1"), branches
    shown = (done.stdout + done.stderr).decode()
    assert f"subagent a-1 worktree created: branch {branches[0]} at " in shown, shown
    assert f"subagent a-1 worktree kept: branch {branches[0]}" in shown
    assert _git(home.work, "show", f"{branches[0]}:made.txt") == "x\n"
    assert not (home.work / "made.txt").exists(), "written in the worktree, not here"

    shown = await home.troupe("config", "--json")
    settings = json.loads(shown.stdout)["settings"]
    assert settings["worktree_copy"] == {"value": [".env"], "source": str(home.config)}
    assert settings["isolation"]["value"] == "none"


async def test_a_bad_isolation_in_the_config_file_is_one_line(home: Home) -> None:
    home.config.write_text('isolation = "vm"\n')
    done = await home.troupe("config")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "unknown isolation 'vm'" in line and "none, worktree, container" in line


async def test_container_isolation_takes_the_sessions_image(
    home: Home,
    docker: DockerForTests,  # noqa: F811
) -> None:
    """``--environment docker:IMAGE --isolation container``: the subagent gets a
    container of IMAGE of its own, with a copy of the workspace (what it writes
    stays there), and the run leaves no container."""
    shell = {"name": "shell", "arguments": {"command": "id -u troupe; echo x > child.txt"}}
    script = {
        "conversations": [
            {
                "match": "PARENT",
                "turns": [
                    {"tool_calls": [{"name": "spawn_agent", "arguments": {"task": "CHILD go"}}]},
                    {"tool_calls": [{"name": "wait", "arguments": {"agent_ids": ["a-1"]}}]},
                    {"text": "parent done"},
                ],
            },
            {"match": "CHILD", "turns": [{"tool_calls": [shell]}, {"text": "child done"}]},
        ]
    }
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--environment", f"docker:{docker.image}",
            "--isolation", "container", "--approval", "never-ask", "PARENT: go",
            DOCKER_HOST=docker.daemon.host,
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr
    assert b"subagent a-1 container created: container " in done.stdout + done.stderr
    child_saw = json.dumps([b for b in bodies if "CHILD" in json.dumps(b)])
    assert str(IMAGE_USER_UID) in child_saw, "the child ran in a container of the image"
    assert not (home.work / "child.txt").exists(), "in its own copy of the workspace"
    assert labelled_containers(docker.daemon, "troupe.managed") == []


async def test_an_untrusted_project_cannot_choose_the_isolation_image(home: Home) -> None:
    (home.work / ".troupe").mkdir()
    (home.work / ".troupe" / "config.toml").write_text(
        'isolation = "container"\nisolation_image = "someone/else:latest"\n'
    )
    shown = await home.troupe("config", "--json")
    assert shown.returncode == 0, shown.stderr
    settings = json.loads(shown.stdout)["settings"]
    assert settings["isolation_image"]["value"] is None
    assert settings["isolation"]["value"] == "container", "the project may choose isolation"
