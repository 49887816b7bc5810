"""``troupe batch TASKS --out predictions.jsonl``: SWE-bench predictions.

Each task runs as its own ``troupe run -p`` (its own process, so a task that
hangs or crashes is only that task's failure, and ``--timeout`` leaves nothing
running) in a fresh detached git worktree of its repository at its base commit.
What the agent changed there, new files included, is the task's
``model_patch``. Predictions are appended as tasks finish, so an interrupted
batch keeps what it did; a failed task still gets a line (with the patch it
got to), as SWE-bench expects one per instance.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import trio

from actors.commands.errors import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_TIMEOUT, CommandError
from actors.commands.harness_args import PASSED_TO_RUN
from actors.harness.swebench import Prediction, Task, TaskError, read_tasks
from environments.safe_git import SAFE_GIT_ENV, safe_git_argv

GIT_TIMEOUT = 300.0
STOP_GRACE = 60.0
"""Seconds past a task's --timeout before the batch kills its run."""


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise CommandError("--jobs must be 1 or more", EXIT_BAD_INPUT)
    if args.timeout is not None and not args.timeout > 0:
        raise CommandError("--timeout must be a number of seconds above 0", EXIT_BAD_INPUT)
    if args.tasks == "-":
        text, base = sys.stdin.read(), Path.cwd()
    else:
        path = Path(args.tasks)
        try:
            text, base = path.read_text(), path.resolve().parent
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}", EXIT_BAD_INPUT) from None
    try:
        tasks = read_tasks(text, base)
    except TaskError as error:
        raise CommandError(f"{args.tasks}: {error}", EXIT_BAD_INPUT) from None
    out = Path(args.out)
    try:
        out.write_text("")  # one file per batch, written line by line as tasks end
    except OSError as error:
        raise CommandError(f"cannot write {out}: {error.strerror}", EXIT_BAD_INPUT) from None
    failures = trio.run(_batch, args, tasks, out)
    print(
        f"troupe batch: {len(tasks) - failures} of {len(tasks)} tasks done; predictions in {out}",
        file=sys.stderr,
    )
    return 0 if failures == 0 else EXIT_ERROR


async def _batch(args: argparse.Namespace, tasks: list[tuple[Task, Path]], out: Path) -> int:
    limiter = trio.CapacityLimiter(args.jobs)
    failures = 0
    lock = trio.Lock()
    # git's worktree add and remove each read every worktree's files under .git/worktrees;
    # run side by side, one reads a directory the other is half way through writing or
    # deleting ("failed to read .git/worktrees/.../commondir"), so they take turns.
    worktree_admin = trio.Lock()
    model_name = args.model_name or args.model or "troupe"
    root = Path(tempfile.mkdtemp(prefix="troupe-batch-"))

    async def one(number: int, task: Task, repo: Path) -> None:
        nonlocal failures
        async with limiter:
            worktree = root / f"{number}-{_safe_name(task.instance_id)}"
            patch, ok, note = await _run_task(args, task, repo, worktree, worktree_admin)
        async with lock:
            line = msgspec.json.encode(Prediction(task.instance_id, model_name, patch))
            with out.open("ab") as file:
                file.write(line + b"\n")
            failures += not ok
            print(f"troupe batch: {task.instance_id}: {note}", file=sys.stderr, flush=True)

    try:
        async with trio.open_nursery() as nursery:
            for number, (task, repo) in enumerate(tasks, start=1):
                nursery.start_soon(one, number, task, repo)
    finally:
        if not args.keep_worktrees:
            await trio.to_thread.run_sync(_remove_tree, root)
    return failures


async def _git(repo: Path, *argv: str) -> str:
    with trio.fail_after(GIT_TIMEOUT):
        done = await trio.run_process(
            safe_git_argv(*argv),  # the subcommand first: diff gets --no-ext-diff
            cwd=str(repo),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={**os.environ, **SAFE_GIT_ENV},
        )
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise CommandError(
            f"git {argv[0]} in {repo}: {message[-1] if message else done.returncode}", EXIT_ERROR
        )
    return done.stdout.decode(errors="replace")


async def _run_task(
    args: argparse.Namespace, task: Task, repo: Path, worktree: Path, worktree_admin: trio.Lock
) -> tuple[str, bool, str]:
    """(the patch, whether the run succeeded, a few words on how it went)."""
    base = task.base_commit or "HEAD"
    try:
        base = (await _git(repo, "rev-parse", "--verify", f"{base}^{{commit}}")).strip()
        async with worktree_admin:
            await _git(repo, "worktree", "add", "--detach", str(worktree), base)
    except CommandError as error:
        return "", False, f"not started: {error.message}"
    try:
        code, status = await _troupe_run(args, task, worktree)
        await _git(worktree, "add", "--all")
        patch = await _git(worktree, "diff", "--cached", "--binary", base)
    except CommandError as error:
        return "", False, f"no patch: {error.message}"
    finally:
        if not args.keep_worktrees:
            with trio.CancelScope(shield=True):
                async with worktree_admin:
                    await _remove_worktree(repo, worktree)
    changed = patch.count("\ndiff --git ") + patch.startswith("diff --git ")
    return patch, code == 0, f"{status} (exit {code}), {changed} files changed"


async def _remove_worktree(repo: Path, worktree: Path) -> None:
    try:
        await _git(repo, "worktree", "remove", "--force", str(worktree))
    except CommandError as error:
        print(f"troupe batch: {error.message}", file=sys.stderr, flush=True)


async def _troupe_run(args: argparse.Namespace, task: Task, worktree: Path) -> tuple[int, str]:
    argv = [sys.executable, "-m", "actors.cli", "run", "--embedded", "--output-format", "json"]
    argv += ["--workdir", str(worktree)]
    for name in PASSED_TO_RUN:
        value = getattr(args, name, None)
        if value is not None:
            argv += ["--" + name.replace("_", "-"), str(value)]
    if args.timeout is not None:
        argv += ["--timeout", str(args.timeout)]
    if getattr(args, "data_dir", None):
        argv += ["--data-dir", args.data_dir]
    argv += ["-p", task.problem_statement]
    done: subprocess.CompletedProcess[bytes] | None = None
    # run's own --timeout stops the work; this guard only catches a run that could
    # not stop (cancelling run_process terminates it, then kills it)
    guard = math.inf if args.timeout is None else args.timeout + STOP_GRACE
    with trio.move_on_after(guard):
        done = await trio.run_process(
            argv,
            stdin=b"",
            capture_stdout=True,
            stderr=None,  # each task's one-line failures reach the batch's stderr
            check=False,
            cwd=str(worktree),
        )
    if done is None:
        return EXIT_TIMEOUT, "killed past --timeout"
    status = "no result"
    for line in done.stdout.decode(errors="replace").splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and result.get("type") == "result":
            status = str(result.get("status"))
    return done.returncode, status


def _safe_name(instance_id: str) -> str:
    kept = "".join(c if c.isalnum() or c in "-_." else "_" for c in instance_id)
    return kept.strip(".") or "task"


def _remove_tree(root: Path) -> None:
    import shutil

    shutil.rmtree(root, ignore_errors=True)
