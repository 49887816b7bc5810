"""SWE-bench's side of ``troupe batch``: the tasks it reads and the predictions
it writes.

SWE-bench grades predictions only: a JSONL file of ``instance_id``,
``model_name_or_path`` and ``model_patch`` (the diff against the task's base
commit); where and how the agent ran is up to the one who made them. A task
line carries what a run needs here: the id, the problem statement, and a local
git repository with the base commit to start from.
"""

from __future__ import annotations

from pathlib import Path

import msgspec


class Task(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """One line of the tasks file (SWE-bench's dataset fields are accepted as they
    are: ``repo`` names a local repository when ``repo_path`` is not given)."""

    instance_id: str
    problem_statement: str
    repo_path: str | None = None
    repo: str | None = None
    base_commit: str | None = None


class Prediction(msgspec.Struct, frozen=True):
    """One line of SWE-bench's predictions file."""

    instance_id: str
    model_name_or_path: str
    model_patch: str


class TaskError(ValueError):
    """A tasks file that cannot be run, naming the line and the reason."""


def read_tasks(text: str, base: Path) -> list[tuple[Task, Path]]:
    """Each task with its repository (a relative path is taken from ``base``, the
    tasks file's directory). Blank lines are skipped; ids must be unique."""
    tasks: list[tuple[Task, Path]] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = msgspec.json.decode(line, type=Task)
        except msgspec.DecodeError as error:
            raise TaskError(f"line {number}: {error}") from None
        if not task.instance_id.strip() or not task.problem_statement.strip():
            raise TaskError(f"line {number}: instance_id and problem_statement must not be empty")
        if task.instance_id in seen:
            raise TaskError(f"line {number}: instance_id {task.instance_id!r} is repeated")
        seen.add(task.instance_id)
        where = task.repo_path or task.repo
        if not where:
            raise TaskError(f"line {number}: no repo_path (a local git repository)")
        repo = (base / Path(where).expanduser()).resolve()
        if not (repo / ".git").exists():
            raise TaskError(f"line {number}: {repo} is not a git repository")
        tasks.append((task, repo))
    if not tasks:
        raise TaskError("no tasks")
    return tasks
