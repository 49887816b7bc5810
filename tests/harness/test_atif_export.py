"""``troupe export SESSION --format atif``: a real session (a parent and a
subagent, the scripted provider, the real command) exported from the store and
validated with the ATIF pydantic models (the ``atif`` package: Harbor's
models, published standalone because Harbor itself needs Python 3.12)."""

from __future__ import annotations

import json
from typing import Any

import atif

from tests.cli.conftest import Home, home, mock_llm

__all__ = ["home"]

TASK = "Review hello.py"
CHILD_TASK = "Write tests for hello.py"
SCRIPT = {
    "conversations": [
        {
            "match": CHILD_TASK,
            "turns": [
                {"tool_calls": [{"id": "c-shell", "name": "shell",
                                 "arguments": {"command": "echo child-work"}}],
                 "usage": {"input": 30, "output": 7}},
                {"text": "child done", "usage": {"input": 40, "output": 3}},
            ],
        },
        {
            "match": TASK,
            "turns": [
                {"reasoning": "Delegate the tests.",
                 "tool_calls": [{"id": "c-spawn", "name": "spawn_agent",
                                 "arguments": {"task": CHILD_TASK}}],
                 "usage": {"input": 100, "output": 20, "cache_read": 60}},
                {"tool_calls": [{"id": "c-wait", "name": "wait",
                                 "arguments": {"agent_ids": ["a-1"]}}],
                 "usage": {"input": 120, "output": 5}},
                {"text": "Reviewed; tests written.", "usage": {"input": 150, "output": 9}},
            ],
        },
    ],
    "turns": [{"text": "unexpected request"}],
}  # fmt: skip


async def _session(home: Home) -> str:
    (home.work / "hello.py").write_text("print('hi')\n")
    async with mock_llm(SCRIPT) as mock:
        result = await home.troupe(
            "run", "--base-url", mock.base_url, "--output-format", "json", "-p", TASK
        )
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)["session_id"]


async def test_an_exported_session_validates_as_atif_with_its_subagent(home: Home) -> None:
    session = await _session(home)
    out = home.root / "trajectory.json"
    exported = await home.troupe("export", session, "--format", "atif", "-o", str(out))
    assert exported.returncode == 0, exported.stderr.decode()
    document: dict[str, Any] = json.loads(out.read_text())
    trajectory = atif.Trajectory.model_validate(document)  # the format's own models

    assert trajectory.schema_version == "ATIF-v1.7"
    assert trajectory.session_id == session
    assert trajectory.agent.name == "troupe"
    sources = [step.source for step in trajectory.steps]
    assert sources == ["user", "agent", "agent", "agent"]
    assert trajectory.steps[0].message == TASK
    spawn = trajectory.steps[1]
    assert spawn.reasoning_content == "Delegate the tests."
    assert spawn.tool_calls is not None and spawn.observation is not None
    assert [(c.tool_call_id, c.function_name, c.arguments) for c in spawn.tool_calls] == [
        ("c-spawn", "spawn_agent", {"task": CHILD_TASK})
    ]
    assert spawn.metrics is not None
    assert (spawn.metrics.prompt_tokens, spawn.metrics.completion_tokens) == (100, 20)
    assert spawn.metrics.cached_tokens == 60
    (result,) = spawn.observation.results
    assert result.source_call_id == "c-spawn"
    assert result.subagent_trajectory_ref is not None
    (ref,) = result.subagent_trajectory_ref
    assert ref.trajectory_id == f"{session}.a-1"
    assert trajectory.steps[-1].message == "Reviewed; tests written."

    assert trajectory.subagent_trajectories is not None
    (child,) = trajectory.subagent_trajectories
    assert child.trajectory_id == ref.trajectory_id
    assert [step.source for step in child.steps] == ["user", "agent", "agent"]
    assert child.steps[0].message == CHILD_TASK
    shell = child.steps[1]
    assert shell.observation is not None
    content = shell.observation.results[0].content
    assert isinstance(content, str) and "child-work" in content

    assert trajectory.final_metrics is not None
    assert trajectory.final_metrics.total_prompt_tokens == 100 + 120 + 150
    assert trajectory.final_metrics.total_completion_tokens == 20 + 5 + 9
    assert trajectory.final_metrics.total_steps == 4

    # the subagent alone, by its address, and on stdout
    alone = await home.troupe("export", f"/sessions/{session}/agents/a-1")
    assert alone.returncode == 0, alone.stderr.decode()
    assert atif.Trajectory.model_validate_json(alone.stdout).session_id == f"{session}.a-1"


async def test_an_unknown_session_is_one_line(home: Home) -> None:
    await _session(home)
    result = await home.troupe("export", "s-nothere")
    assert result.returncode == 2
    assert result.stderr.decode().startswith("troupe export: no session s-nothere")


async def test_last_names_the_newest_session_started_here(home: Home) -> None:
    """``troupe export last`` and ``troupe audit last``: the session last updated
    among those started in the current directory; with none, one line and exit 2."""
    session = await _session(home)
    exported = await home.troupe("export", "last", "--format", "atif")
    assert exported.returncode == 0, exported.stderr.decode()
    assert json.loads(exported.stdout)["session_id"] == session
    audited = await home.troupe("audit", "last", "--json")
    assert audited.returncode == 0, audited.stderr.decode()
    elsewhere = home.root / "elsewhere"
    elsewhere.mkdir()
    none = await home.troupe("audit", "last", cwd=elsewhere)
    assert none.returncode == 2
    assert none.stderr.decode().strip() == f"troupe audit: no session was started in {elsewhere}"
