"""Isolation per subagent (docs/isolation.md), with real parts: the scripted model
spawns the subagents, real git makes their worktrees on this machine and over a
real sshd, and a real dockerd runs their containers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.kernel import Actor, ActorRef, Runtime
from actors.mockllm import Script, serve_mock_llm
from actors.models import RetryPolicy, open_gateway
from actors.models.config import Timeouts, endpoint
from actors.session.actor import SessionActor
from actors.session.isolation import BRANCH_PREFIX, CONTAINER_OWNER, Isolator
from actors.session.presets import preset_config
from actors.session.profiles import PROFILES
from actors.session.worktree_git import WORKTREES
from environments.docker.api import DockerAPI, DockerError
from environments.docker.environment import DockerEnvironment
from environments.docker.labels import MANAGED, OWNER, PROCESS
from environments.local import LocalEnvironment
from environments.ssh.bridge import SSHBridge
from protocol.environment import ExecCommand, ReadFile
from protocol.events import SubagentWorkspaceEvent, ToolCallEndEvent
from protocol.session import SessionConfig, Submit, Subscribe, WaitIdle
from tests.environments.conftest import (  # noqa: F401 (fixtures)
    DockerForTests,
    docker,
    host_request,
    owned_directory,
    sshd,
)
from tests.environments.dockerd import labelled_containers
from tests.environments.sshd import TEST_USER, SSHServer
from tests.session.conftest import Agent
from tests.session.scripts import body_text, call
from tests.waiting import TEST_KILL_GRACE

HANG_GUARD = 600
ISOLATION_LABEL = f"{OWNER}={CONTAINER_OWNER}"
"""The label every isolation container carries (``troupe.owner=isolation``)."""
MANY = 20
GIT_ID = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "safe.directory=*"]

EnvFactory = Callable[[Runtime], Awaitable[ActorRef]]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *GIT_ID, *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(directory: Path, owner: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    git(directory, "init", "-q", "-b", "main")
    (directory / "README").write_text("a project\n")
    (directory / ".gitignore").write_text(".env\n")
    (directory / ".env").write_text("SECRET=for-the-agents\n")
    git(directory, "add", "-A")
    git(directory, "commit", "-q", "-m", "start")
    if owner is not None:
        subprocess.run(["chown", "-R", f"{owner}:", str(directory)], check=True)
    return directory


def conversations(parent: list[Any], children: dict[str, list[Any]]) -> Script:
    def steps(items: list[Any]) -> list[dict[str, Any]]:
        return [{"text": s} if isinstance(s, str) else {"tool_calls": s} for s in items]

    listed = [{"match": "PARENT", "turns": steps(parent)}]
    listed += [{"match": task, "turns": steps(turns)} for task, turns in children.items()]
    return msgspec.convert({"conversations": listed}, Script)


@asynccontextmanager
async def session_on(
    make_env: EnvFactory, script: Script, config: SessionConfig, workdir: Path
) -> AsyncIterator[tuple[Agent, Runtime]]:
    async with AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(Runtime(grace=3.0, kill_grace=TEST_KILL_GRACE))
        server = await stack.enter_async_context(serve_mock_llm(script))
        ep = endpoint(
            "anthropic", server.base_url, "test-key",
            timeouts=Timeouts(connect=5.0, request=60.0, stream_read=60.0),
        )  # fmt: skip
        policy = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=1.0)
        gateway = await stack.enter_async_context(open_gateway(runtime, ep, policy))
        env = await make_env(runtime)
        actor = SessionActor(PROFILES["anthropic"](), env, gateway, config)
        ref = await runtime.spawn(actor, name=f"sessions/{actor.id}")
        events = await ref.ask(Subscribe())
        yield Agent(ref, actor, server, workdir, events, []), runtime


def local_env(workdir: Path) -> EnvFactory:
    async def make(runtime: Runtime) -> ActorRef:
        return await runtime.spawn(LocalEnvironment(workdir), name="environments/local")

    return make


def ssh_env(server: SSHServer, workdir: Path, login: str = "root") -> EnvFactory:
    async def make(runtime: Runtime) -> ActorRef:
        bridge = await runtime.spawn(SSHBridge(), name="environments/ssh")
        return await bridge.ask(host_request(server, login, "iso", workdir), timeout=60)

    return make


async def run(agent: Agent, text: str) -> None:
    """Submit ``text`` and wait, under this file's own hang guard (20 worktrees over
    SSH take longer than the session tests' guard on a loaded machine)."""
    with trio.fail_after(HANG_GUARD):
        await agent.ref.tell(Submit(text))
        await agent.ref.ask(WaitIdle(), timeout=None)
        await agent.drain_until("processing_end", "session_end")


def tool_outputs(agent: Agent, name: str) -> list[str]:
    return [e.output for e in agent.of(ToolCallEndEvent) if e.tool_name == name]


def workspace_events(agent: Agent, state: str) -> list[SubagentWorkspaceEvent]:
    return [e for e in agent.of(SubagentWorkspaceEvent) if e.state == state]


async def twenty_worktrees(make_env: EnvFactory, repo: Path) -> None:
    """20 parallel subagents, each in a worktree of its own: each writes with the
    file tool and the shell, and tries to write into the parent's directory."""
    children = {
        f"iso-task-{n:02d}": [
            [
                call("write_file", file_path=f"tool-{n}.txt", content=f"{n}\n"),
                call("shell", command=f"echo {n} > shell-{n}.txt; pwd > where-{n}.txt"),
                call("write_file", file_path=f"{repo}/escape-tool-{n}.txt", content="out\n"),
                call("shell", command=f"echo out > {repo}/escape-shell-{n}.txt"),
                call("shell", command=f"cat .env > env-{n}.txt"),
            ],
            f"child {n} done",
        ]
        for n in range(MANY)
    }
    spawns = [
        call("spawn_agent", task=f"iso-task-{n:02d}: write", isolation="worktree")
        for n in range(MANY)
    ]
    ids = [f"a-{n}" for n in range(1, MANY + 1)]
    script = conversations(
        [spawns, [call("wait", agent_ids=ids, timeout_ms=400_000)], "all done"], children
    )
    config = SessionConfig(max_subagents=MANY, worktree_copy=[".env"], approval_mode="deny")
    async with session_on(make_env, script, config, repo) as (agent, _):
        await run(agent, "PARENT: twenty isolated children")
        sid = agent.actor.id
    check_twenty_worktrees(agent, repo, sid, ids)


def check_twenty_worktrees(agent: Agent, repo: Path, sid: str, ids: list[str]) -> None:
    created = workspace_events(agent, "created")
    assert len(created) == MANY
    paths = {e.agent_id: e.path for e in created}
    assert len(set(paths.values())) == MANY, "20 worktrees"
    assert {e.branch for e in created} == {f"troupe/{sid}.{i}" for i in ids}, "named after them"
    assert all(p.startswith(f"{repo}/.troupe/worktrees/") for p in paths.values())
    assert tool_outputs(agent, "wait")[0].count("status=completed success=true") == MANY
    kept = workspace_events(agent, "kept")
    assert len(kept) == MANY, [e.detail for e in agent.of(SubagentWorkspaceEvent)]
    branches = git(repo, "branch", "--list", "troupe/*", "--format=%(refname:short)").split()
    assert sorted(branches) == sorted(f"troupe/{sid}.{i}" for i in ids), "20 branches"
    for agent_id in ids:
        n = int(agent.actor.agents.agents[agent_id].task.split("-")[2][:2])
        branch = f"troupe/{sid}.{agent_id}"
        changed = git(repo, "diff", "--name-only", f"main...{branch}").split()
        assert sorted(changed) == sorted(
            [f"tool-{n}.txt", f"shell-{n}.txt", f"where-{n}.txt", f"env-{n}.txt"]
        ), f"only its own files on {branch}"
        assert git(repo, "show", f"{branch}:where-{n}.txt").strip() == paths[agent_id]
        assert git(repo, "show", f"{branch}:env-{n}.txt") == "SECRET=for-the-agents\n"
    outside = sorted(p.name for p in repo.iterdir() if p.name not in (".git", ".troupe"))
    assert outside == [".env", ".gitignore", "README"], "nothing written outside the worktrees"
    assert not list((repo / ".troupe" / "worktrees").iterdir()), "worktrees removed at close"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """The test's directory by its real path (what git and the environments print)."""
    return Path(os.path.realpath(tmp_path))


async def test_twenty_worktrees_on_this_machine(base: Path) -> None:
    repo = make_repo(base / "repo")
    await twenty_worktrees(local_env(repo), repo)


@pytest.mark.parametrize("login", ["root", TEST_USER])
async def test_twenty_worktrees_over_ssh(sshd: SSHServer, login: str) -> None:  # noqa: F811
    if login not in sshd.users:
        pytest.skip(f"no {login} login on the test sshd")
    base = owned_directory(login)  # the login's own, so its git trusts the repository
    try:
        repo = make_repo(base / "repo", owner=login)
        await twenty_worktrees(ssh_env(sshd, repo, login), repo)
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def test_cleanup_keeps_unmerged_work_and_merges_on_request(base: Path) -> None:
    repo = make_repo(base / "repo")
    children = {
        "KEEP task": [[call("write_file", file_path="kept.txt", content="work\n")], "kept"],
        "IDLE task": ["nothing to do"],
        "MERGE task": [[call("write_file", file_path="merged.txt", content="in\n")], "merged"],
    }
    parent = [
        [call("spawn_agent", task="KEEP task", isolation="worktree")],
        [call("spawn_agent", task="IDLE task", isolation="worktree")],
        [call("spawn_agent", task="MERGE task", isolation="worktree", merge=True)],
        [call("wait", agent_ids=["a-1", "a-2", "a-3"], timeout_ms=100_000)],
        [call("close_agent", agent_id="a-3")],
        "done",
    ]
    async with session_on(
        local_env(repo), conversations(parent, children), SessionConfig(), repo
    ) as (agent, _):
        await run(agent, "PARENT: three ways")
        sid = agent.actor.id
    task_of = {a.id: a.task.split()[0] for a in agent.actor.agents.agents.values()}
    states = {
        task_of[e.agent_id]: e.state
        for e in agent.of(SubagentWorkspaceEvent)
        if e.state != "created"
    }
    assert states == {"KEEP": "kept", "IDLE": "removed", "MERGE": "merged"}
    keep = next(agent_id for agent_id, task in task_of.items() if task == "KEEP")
    branches = git(repo, "branch", "--list", "troupe/*", "--format=%(refname:short)").split()
    assert branches == [f"troupe/{sid}.{keep}"], "only the branch with unmerged work stays"
    assert git(repo, "show", f"troupe/{sid}.{keep}:kept.txt") == "work\n"
    assert git(repo, "show", "main:merged.txt") == "in\n", "merged into the parent's branch"
    assert "kept.txt" not in git(repo, "ls-files")
    close_output = tool_outputs(agent, "close_agent")[0]
    assert "merged into the parent's branch" in close_output
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


async def test_worktree_outside_a_repository_is_a_clear_failure(base: Path) -> None:
    workdir = base / "plain"
    workdir.mkdir()
    parent = [[call("spawn_agent", task="NOREPO task", isolation="worktree")], "done"]
    async with session_on(
        local_env(workdir), conversations(parent, {"NOREPO": ["x"]}), SessionConfig(), workdir
    ) as (agent, _):
        await run(agent, "PARENT: no repository")
    (output,) = tool_outputs(agent, "spawn_agent")
    assert "not in a git repository" in output
    assert agent.of(SubagentWorkspaceEvent) == []


def small_project(directory: Path) -> None:
    """A tiny shell project: build makes a program from a template, test runs it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "greet.in").write_text('#!/bin/sh\necho "hello from @NAME@"\n')
    (directory / "build.sh").write_text(
        'set -e\nmkdir -p out\nsed "s/@NAME@/$1/" greet.in > out/greet\nchmod +x out/greet\n'
    )
    (directory / "test.sh").write_text(
        'set -e\n[ "$(./out/greet)" = "hello from $1" ] && echo "PASS $1"\n'
    )


async def test_twenty_containers_build_test_and_leave_nothing(
    docker: DockerForTests,  # noqa: F811
    base: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker.daemon.host)
    workdir = base / "project"
    small_project(workdir)
    children = {
        f"box-task-{n:02d}": [
            [call("shell", command=f"sh build.sh box{n} && sh test.sh box{n}")],
            f"box {n} built and tested",
        ]
        for n in range(MANY)
    }
    spawns = [
        call("spawn_agent", task=f"box-task-{n:02d}: build and test", isolation="container")
        for n in range(MANY)
    ]
    ids = [f"a-{n}" for n in range(1, MANY + 1)]
    script = conversations(
        [spawns, [call("wait", agent_ids=ids, timeout_ms=500_000)], "all built"], children
    )
    config = SessionConfig(
        max_subagents=MANY, isolation_image=docker.image, approval_mode="never-ask"
    )
    async with session_on(local_env(workdir), script, config, workdir) as (agent, _):
        await run(agent, "PARENT: twenty containers")
    created = workspace_events(agent, "created")
    assert len({e.container for e in created}) == MANY, "a container each"
    outputs = tool_outputs(agent, "wait")[0]
    assert outputs.count("status=completed success=true") == MANY
    assert len(workspace_events(agent, "removed")) == MANY
    assert "out" not in os.listdir(workdir), "each built in its own copy"
    assert labelled_containers(docker.daemon, ISOLATION_LABEL) == []
    seen_by_children = " ".join(body_text(body) for body in agent.request_bodies())
    for n in range(MANY):
        assert f"PASS box{n}" in seen_by_children, f"child {n} built and tested"


async def test_runtime_shutdown_leaves_no_container(
    docker: DockerForTests,  # noqa: F811
    base: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", docker.daemon.host)
    workdir = base / "project"
    small_project(workdir)
    parent = [
        [call("spawn_agent", task="LONG task", isolation="container", background=True)],
        "left it working",
    ]
    children = {"LONG task": [[call("shell", command="sleep 300", timeout_ms=400_000)], "x"]}
    config = SessionConfig(
        isolation_image=docker.image, max_command_timeout_ms=600_000, approval_mode="never-ask"
    )
    async with session_on(local_env(workdir), conversations(parent, children), config, workdir) as (
        agent,
        _,
    ):
        await run(agent, "PARENT: one in the background")
        (created,) = workspace_events(agent, "created")
        assert labelled_containers(docker.daemon, ISOLATION_LABEL) != []
    assert labelled_containers(docker.daemon, ISOLATION_LABEL) == [], created.container


def test_presets_carry_isolation_and_keep_their_own_values() -> None:
    given = SessionConfig(isolation="worktree", worktree_copy=[".env"])
    config = preset_config("agentic-behavior-tool", given)
    assert (config.isolation, config.worktree_copy) == ("worktree", [".env"])
    assert config.agentic_mode and config.max_tool_rounds_per_input == 25


def test_the_page_names_the_places_the_code_uses() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "isolation.md").read_text()
    assert f"<repository>/{WORKTREES}/<its session id>" in page
    assert f"`{BRANCH_PREFIX}<its session id>`" in page
    assert f"`/{WORKTREES}/`" in page
    assert f"troupe.owner={CONTAINER_OWNER}" in page


async def test_a_rewritten_dot_git_file_runs_nothing_at_close(base: Path) -> None:
    """The child points its worktree's ``.git`` at a git directory of its making,
    whose configuration names a clean filter; Troupe's commit at close must not
    run it (it works through the git directory recorded at creation)."""
    repo = make_repo(base / "repo")
    marker = base / "pwned"
    evil_config = f'[filter "x"]\\n\\tclean = touch {marker}\\n'
    make_evil = "git init -q --bare evil && git --git-dir=evil config core.bare false"
    children = {
        "EVIL task": [
            [call("shell", command=f"{make_evil} && printf '{evil_config}' >> evil/config")],
            [
                call("write_file", file_path=".gitattributes", content="* filter=x\n"),
                call("write_file", file_path="work.txt", content="work\n"),
            ],
            [call("write_file", file_path=".git", content="gitdir: evil\n")],
            [call("shell", command="cat .git")],
            "done",
        ]
    }
    parent = [[call("spawn_agent", task="EVIL task", isolation="worktree")],
              [call("wait", agent_ids=["a-1"], timeout_ms=100_000)], "done"]  # fmt: skip
    config = SessionConfig(approval_mode="never-ask")
    async with session_on(local_env(repo), conversations(parent, children), config, repo) as (
        agent,
        _,
    ):
        await run(agent, "PARENT: one child")
        sid = agent.actor.id
    seen = " ".join(body_text(body) for body in agent.request_bodies())
    assert "gitdir: evil" in seen, "the child did rewrite its .git file"
    assert not marker.exists(), "the child's filter ran outside the sandbox"
    (kept,) = workspace_events(agent, "kept")
    assert git(repo, "show", f"troupe/{sid}.a-1:work.txt") == "work\n"
    assert kept.branch == f"troupe/{sid}.a-1"


async def test_a_subagents_subagent_works_from_its_worktree_without_trusting_it(
    base: Path,
) -> None:
    """Two levels: the middle subagent rewrites its worktree's ``.git`` to a git
    directory of its making (with a filter that would run outside the sandbox) and
    spawns a leaf in a worktree of its own, merged back on close. Troupe's git for
    the leaf (its worktree, the merge) and for the middle's close never follows
    that file: the filter never runs, the leaf's work lands on the middle's branch,
    and the middle's ``.git`` is restored for review."""
    repo = make_repo(base / "repo")
    marker = base / "pwned"
    evil = f'[filter "x"]\\n\\tclean = touch {marker}\\n\\tsmudge = touch {marker}\\n'
    make_evil = "git init -q --bare evil && git --git-dir=evil config core.bare false"
    middle = [
        [call("shell", command=f"{make_evil} && printf '{evil}' >> evil/config")],
        [
            call("write_file", file_path=".gitattributes", content="* filter=x\n"),
            call("write_file", file_path="mid.txt", content="middle\n"),
            call("write_file", file_path=".git", content="gitdir: evil\n"),
        ],
        [call("spawn_agent", task="LEAF task", isolation="worktree", merge=True)],
        [call("wait", agent_ids=["a-1"], timeout_ms=100_000)],
        "middle done",
    ]
    children = {
        "MIDDLE task": middle,
        "LEAF task": [[call("write_file", file_path="leaf.txt", content="leaf\n")], "leaf"],
    }
    parent = [[call("spawn_agent", task="MIDDLE task", isolation="worktree")],
              [call("wait", agent_ids=["a-1"], timeout_ms=200_000)], "done"]  # fmt: skip
    config = SessionConfig(approval_mode="never-ask", max_subagent_depth=2)
    async with session_on(local_env(repo), conversations(parent, children), config, repo) as (
        agent,
        _,
    ):
        await run(agent, "PARENT: two levels")
        sid = agent.actor.id
    assert not marker.exists(), "the middle's filter ran outside the sandbox"
    branch = f"troupe/{sid}.a-1"
    files = git(repo, "ls-tree", "-r", "--name-only", branch).split()
    assert {"mid.txt", "leaf.txt"} <= set(files), files
    assert git(repo, "show", f"{branch}:leaf.txt") == "leaf\n"
    leaf_branch = f"troupe/{sid}.a-1.a-1"
    assert git(repo, "branch", "--list", leaf_branch) == "", "merged, so deleted"
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


async def test_a_crashed_processs_isolation_containers_go_with_the_next_start(
    docker: DockerForTests,  # noqa: F811
    base: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A container left by a process that died (its ``troupe.process`` label names a
    process that no longer runs) is removed when the next isolation container starts."""
    monkeypatch.setenv("DOCKER_HOST", docker.daemon.host)
    workdir = base / "project"
    small_project(workdir)
    dead = f"{socket.gethostname()}:99999999:"  # above any pid_max (2**22): not running
    api = DockerAPI(docker.daemon.host)
    try:
        labels = {MANAGED: "1", OWNER: CONTAINER_OWNER, PROCESS: dead}
        config = {"Image": docker.image, "Cmd": ["sleep", "infinity"], "Labels": labels,
                  "NetworkDisabled": True, "HostConfig": {"NetworkMode": "none"}}  # fmt: skip
        orphan = await api.create_container(config, None)
        await api.start_container(orphan)
        async with Runtime(grace=3.0, kill_grace=TEST_KILL_GRACE) as runtime:
            env = await runtime.spawn(LocalEnvironment(workdir))

            async def spawn(actor: Actor, name: str) -> ActorRef:
                return await runtime.spawn(actor, name=name)

            isolator = Isolator(env, spawn, runtime.stop)
            workspace = await isolator.open(
                "container", "s-test.a-1", "a-1", copies=[], image=docker.image, merge=False
            )
            left = labelled_containers(docker.daemon, f"{OWNER}={CONTAINER_OWNER}")
            assert orphan not in left and workspace.container in left
            assert (await isolator.close(workspace, "")).state == "removed"
        assert labelled_containers(docker.daemon, f"{OWNER}={CONTAINER_OWNER}") == []
    finally:
        await api.aclose()


async def test_container_isolation_without_a_daemon_is_a_clear_failure(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{base}/no-such-docker.sock")
    workdir = base / "project"
    small_project(workdir)
    parent = [
        [call("spawn_agent", task="BOX task", isolation="container")],
        [call("spawn_agent", task="BOX task", isolation="vm")],
        "done",
    ]
    config = SessionConfig(isolation_image="troupe-test:latest")
    async with session_on(
        local_env(workdir), conversations(parent, {"BOX": ["x"]}), config, workdir
    ) as (agent, runtime):
        await run(agent, "PARENT: no daemon")
        assert not [a for a in runtime.addresses() if "/containers/" in a], "nothing left"
    first, second = tool_outputs(agent, "spawn_agent")
    assert "cannot reach the Docker daemon" in first, first
    assert "Invalid enum value 'vm'" in second and "isolation" in second, second
    assert agent.of(SubagentWorkspaceEvent) == []


async def test_container_isolation_needs_an_image(base: Path) -> None:
    workdir = base / "project"
    small_project(workdir)
    parent = [[call("spawn_agent", task="BOX task", isolation="container")], "done"]
    async with session_on(
        local_env(workdir), conversations(parent, {"BOX": ["x"]}), SessionConfig(), workdir
    ) as (agent, _):
        await run(agent, "PARENT: no image")
    (output,) = tool_outputs(agent, "spawn_agent")
    assert "container isolation needs an image: set isolation_image" in output


async def test_a_stopped_docker_environment_makes_no_new_container(
    docker: DockerForTests,  # noqa: F811
    base: Path,
) -> None:
    """What a shutdown does to an isolated subagent's container: the actor's stop
    removes it while requests may still be under way (an environment's requests are
    handled concurrently); one that then finds the container gone must not make a
    fresh one, which nothing would remove. The request that comes after the stop
    is made here by calling the environment's method, as such a request does."""
    workdir = base / "project"
    small_project(workdir)
    environment = DockerEnvironment(
        docker.image, workspace=str(workdir), copy_workspace=True,
        docker_host=docker.daemon.host, owner="stop-test",
    )  # fmt: skip
    label = f"{OWNER}=stop-test"
    async with Runtime(grace=3.0, kill_grace=TEST_KILL_GRACE) as runtime:
        ref = await runtime.spawn(environment)
        assert (await ref.ask(ExecCommand("true"))).exit_code == 0
        assert len(labelled_containers(docker.daemon, label)) == 1
        await runtime.stop(ref)
        assert labelled_containers(docker.daemon, label) == []
        with pytest.raises(DockerError, match="stopping"):
            await environment.exec_command(ExecCommand("true"))
        with pytest.raises(DockerError, match="stopping"):
            await environment.read_file(ReadFile("build.sh"))
    assert labelled_containers(docker.daemon, label) == []


async def test_working_dir_names_the_same_subdirectory_in_the_worktree(base: Path) -> None:
    repo = make_repo(base / "repo")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.txt").write_text("module\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pkg")
    children = {
        "SCOPED task": [
            [
                call("write_file", file_path="inner.txt", content="in pkg\n"),
                call("shell", command="pwd > where.txt; cat mod.txt >> where.txt"),
            ],
            "scoped done",
        ]
    }
    parent = [
        [call("spawn_agent", task="SCOPED task", isolation="worktree", working_dir="pkg")],
        [call("wait", agent_ids=["a-1"], timeout_ms=100_000)],
        "done",
    ]
    async with session_on(
        local_env(repo), conversations(parent, children), SessionConfig(approval_mode="deny"), repo
    ) as (agent, _):
        await run(agent, "PARENT: scoped and isolated")
        sid = agent.actor.id
    (created,) = workspace_events(agent, "created")
    branch = f"troupe/{sid}.a-1"
    assert git(repo, "show", f"{branch}:pkg/inner.txt") == "in pkg\n"
    assert git(repo, "show", f"{branch}:pkg/where.txt") == f"{created.path}/pkg\nmodule\n"
    assert not (repo / "pkg" / "inner.txt").exists()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
async def test_the_sandbox_keeps_the_childs_own_commit_out_and_troupe_commits(
    base: Path,
) -> None:
    """The repository's shared ``.git`` is outside the worktree, so read-only in the
    child's sandbox: its own ``git commit`` fails, and its work reaches the branch
    in Troupe's commit at the close."""
    repo = make_repo(base / "repo")
    commit = "git add -A && git -c user.name=c -c user.email=c@c commit -qm child-commit"
    children = {
        "COMMIT task": [
            [call("write_file", file_path="w.txt", content="w\n")],
            [call("shell", command=f"{commit}; echo exit=$?")],
            "committed?",
        ]
    }
    parent = [[call("spawn_agent", task="COMMIT task", isolation="worktree")],
              [call("wait", agent_ids=["a-1"], timeout_ms=100_000)], "done"]  # fmt: skip
    config = SessionConfig(approval_mode="never-ask")
    async with session_on(local_env(repo), conversations(parent, children), config, repo) as (
        agent,
        _,
    ):
        await run(agent, "PARENT: commit yourself")
        sid = agent.actor.id
    seen = " ".join(body_text(body) for body in agent.request_bodies())
    assert "exit=0" not in seen and "exit=" in seen, "the child's own commit failed"
    branch = f"troupe/{sid}.a-1"
    assert git(repo, "log", "-1", "--format=%s", branch).startswith("troupe: a-1: COMMIT task")
    assert git(repo, "show", f"{branch}:w.txt") == "w\n"
