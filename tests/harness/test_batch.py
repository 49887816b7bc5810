"""``troupe batch tasks.jsonl --out predictions.jsonl``: three tasks, each run by
the real command in its own git worktree at its base commit with the scripted
provider editing files; the predictions file is SWE-bench's format (one line per
instance: ``instance_id``, ``model_name_or_path``, ``model_patch``) and each
patch applies to its base commit. The repositories are left as they were."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from tests.cli.conftest import Home, home, mock_llm
from tests.environments.helpers import survivors

__all__ = ["home"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path) -> tuple[str, str]:
    """A repository with two commits; returns (first, second)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "first")
    first = git(path, "rev-parse", "HEAD").strip()
    (path / "README").write_text("calc\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "second")
    return first, git(path, "rev-parse", "HEAD").strip()


FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
SCRIPT = {
    "conversations": [
        {
            "match": "add() subtracts",
            "turns": [
                {"tool_calls": [{"name": "write_file",
                                 "arguments": {"file_path": "calc.py", "content": FIXED}}]},
                {"text": "Fixed add()."},
            ],
        },
        {
            "match": "needs a test",
            "turns": [
                {"tool_calls": [{"name": "write_file", "arguments": {
                    "file_path": "tests/test_calc.py",
                    "content": TEST,
                }}]},
                {"text": "Added a test."},
            ],
        },
        {"match": "nothing to do", "turns": [{"text": "Nothing needed changing."}]},
    ],
    "turns": [{"text": "unexpected request"}],
}  # fmt: skip


async def run_batch(
    home: Home, tasks: list[dict[str, str]], *args: str, path: str | None = None
) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    """``troupe batch`` over ``tasks`` against the scripted provider (``path``: the
    command's PATH, when not the test's own): its result and the predictions file."""
    tasks_file = home.root / "tasks.jsonl"
    tasks_file.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    out = home.root / "predictions.jsonl"
    async with mock_llm(SCRIPT) as mock:
        result = await home.troupe(
            "batch", str(tasks_file), "--out", str(out), "--base-url", mock.base_url, *args,
            PATH=path or os.environ["PATH"],
        )  # fmt: skip
    return result, out


async def test_three_tasks_give_swebench_predictions(home: Home) -> None:
    repos = home.root / "repos"
    first, second = make_repo(repos / "calc")
    make_repo(repos / "other")
    tasks = [
        {"instance_id": "calc__calc-1", "problem_statement": "add() subtracts; fix it",
         "repo_path": "repos/calc", "base_commit": first},
        {"instance_id": "calc__calc-2", "problem_statement": "calc needs a test",
         "repo_path": "repos/calc"},
        {"instance_id": "other__other-3", "problem_statement": "nothing to do here",
         "repo_path": "repos/other", "base_commit": "HEAD"},
    ]  # fmt: skip
    result, out = await run_batch(home, tasks, "--model-name", "troupe-mock", "--jobs", "2")
    assert result.returncode == 0, result.stderr.decode()
    assert "3 of 3 tasks done" in result.stderr.decode()

    predictions = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(p["instance_id"] for p in predictions) == [t["instance_id"] for t in tasks]
    for prediction in predictions:
        assert set(prediction) == {"instance_id", "model_name_or_path", "model_patch"}
        assert prediction["model_name_or_path"] == "troupe-mock"
    patches = {p["instance_id"]: p["model_patch"] for p in predictions}
    assert "-    return a - b\n+    return a + b" in patches["calc__calc-1"]
    assert "README" not in patches["calc__calc-1"]  # made against the first commit
    assert "b/tests/test_calc.py" in patches["calc__calc-2"]  # a new file is in the patch
    assert patches["other__other-3"] == ""

    for instance, base in (("calc__calc-1", first), ("calc__calc-2", second)):
        check = home.root / f"check-{instance}"
        git(home.root, "clone", "-q", str(repos / "calc"), str(check))
        git(check, "checkout", "-q", base)
        patch = home.root / f"{instance}.diff"
        patch.write_text(patches[instance])
        git(check, "apply", "--check", str(patch))  # SWE-bench applies it the same way

    for repo in (repos / "calc", repos / "other"):  # untouched, no worktree left behind
        assert git(repo, "status", "--porcelain") == ""
        assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert (repos / "calc" / "calc.py").read_text().endswith("return a - b\n")


async def test_a_bad_tasks_file_is_one_line(home: Home) -> None:
    tasks_file = home.root / "tasks.jsonl"
    tasks_file.write_text('{"instance_id": "x", "problem_statement": "y", "repo_path": "nope"}\n')
    result = await home.troupe("batch", str(tasks_file), "--out", str(home.root / "p.jsonl"))
    assert result.returncode == 2
    assert "line 1:" in result.stderr.decode() and "is not a git repository" in (
        result.stderr.decode()
    )


async def test_a_task_past_its_timeout_still_gets_its_line_and_leaves_no_process(
    home: Home,
) -> None:
    marker = f"troupe-batch-{secrets.token_hex(4)}"
    script = {
        "turns": [
            {"tool_calls": [{"name": "write_file",
                             "arguments": {"file_path": "partial.txt", "content": "half\n"}}]},
            {"tool_calls": [{"name": "shell",
                             "arguments": {"command": f"exec sleep 300 # {marker}"}}]},
            {"text": "never reached"},
        ]
    }  # fmt: skip
    make_repo(home.root / "repo")
    tasks_file = home.root / "tasks.jsonl"
    task = {"instance_id": "slow-1", "problem_statement": "take forever", "repo_path": "repo"}
    tasks_file.write_text(json.dumps(task) + "\n")
    out = home.root / "predictions.jsonl"
    async with mock_llm(script) as mock:
        result = await home.troupe(
            "batch", str(tasks_file), "--out", str(out), "--base-url", mock.base_url,
            "--timeout", "5",  # from the input sent; under the shell's 10 s default
        )  # fmt: skip
    assert result.returncode == 1, result.stderr.decode()
    assert "slow-1: timeout (exit 124)" in result.stderr.decode()
    assert survivors(marker) == []
    (prediction,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert prediction["instance_id"] == "slow-1"
    assert "b/partial.txt" in prediction["model_patch"]  # the work it got to


async def test_worktrees_of_one_repository_are_added_and_removed_in_turn(home: Home) -> None:
    """git's ``worktree add`` and ``remove`` read every worktree's files under
    ``.git/worktrees``; side by side, one can read a directory the other is half way
    through writing or deleting (seen as "failed to read .git/worktrees/.../commondir").
    A ``git`` first on PATH logs when each of those begins and ends, and lingers inside
    so that tasks started together would overlap if nothing kept them apart."""
    real_git = shutil.which("git")
    assert real_git is not None
    log = home.root / "worktree-admin.log"
    bin_dir = home.root / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case " $* " in\n'
        f'  *" worktree add "*|*" worktree remove "*) echo begin >> "{log}"; sleep 0.3;\n'
        f'    "{real_git}" "$@"; status=$?; echo end >> "{log}"; exit $status ;;\n'
        "esac\n"
        f'exec "{real_git}" "$@"\n'
    )
    wrapper.chmod(0o755)
    repos = home.root / "repos"
    make_repo(repos / "other")
    tasks = [
        {"instance_id": f"other__other-{n}", "problem_statement": "nothing to do here",
         "repo_path": "repos/other", "base_commit": "HEAD"}
        for n in range(3)
    ]  # fmt: skip
    result, _ = await run_batch(home, tasks, "--jobs", "3", path=f"{bin_dir}:{os.environ['PATH']}")
    assert result.returncode == 0, result.stderr.decode()
    assert "3 of 3 tasks done" in result.stderr.decode()
    assert log.read_text().split() == ["begin", "end"] * 6  # three adds, three removes
