"""The arguments of ``troupe export`` and ``troupe batch``: what benchmark
harnesses call (kept here so that :mod:`actors.cli` only registers them)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Command = Callable[..., argparse.ArgumentParser]


def add_harness_commands(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    command: Command,
    data_dir_option: Callable[[argparse.ArgumentParser], None],
    env: tuple[str, ...],
) -> None:
    export = command(
        commands,
        "export",
        "write a stored session as a trajectory file (ATIF, for Harbor)",
        "Write a session (a live or finished one, from the store) as an ATIF trajectory: "
        "Harbor's Agent Trajectory Interchange Format, with its subagents embedded. "
        "See docs/benchmarks.md.",
        env=env[:1],
    )
    export.add_argument(
        "session", help="a session id or address, or last (the newest started here)"
    )
    export.add_argument("--format", choices=["atif"], default="atif", help="default atif")
    export.add_argument("-o", "--out", metavar="FILE", help="write here (default stdout)")
    data_dir_option(export)

    batch = command(
        commands,
        "batch",
        "run tasks from a JSONL file, each in its own git worktree; write SWE-bench predictions",
        "Each line of TASKS is a task: instance_id, problem_statement, repo_path (a local "
        "git repository; relative to the file) and base_commit (default HEAD). Each runs "
        "as `troupe run -p` in a fresh detached worktree at its base commit; the "
        "worktree's diff against the base commit is written to --out as a SWE-bench "
        "prediction (instance_id, model_name_or_path, model_patch), one line per task, "
        "as each finishes. See docs/benchmarks.md.",
        env=env,
    )
    batch.add_argument("tasks", metavar="TASKS", help="a JSONL file of tasks ('-' reads stdin)")
    batch.add_argument("--out", required=True, metavar="FILE", help="the predictions file")
    batch.add_argument(
        "--model-name",
        metavar="NAME",
        help="model_name_or_path of the predictions (default: the model, else troupe)",
    )
    batch.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="each task's wall-clock limit"
    )
    batch.add_argument("-j", "--jobs", type=int, default=1, help="tasks run at once (default 1)")
    batch.add_argument(
        "--keep-worktrees", action="store_true", help="leave each task's worktree in place"
    )
    _pass_through(batch)
    data_dir_option(batch)


PASSED_TO_RUN = ("provider", "wire", "model", "base_url", "api_key", "policy", "sandbox",
                 "approval", "max_turns", "preset", "instructions")  # fmt: skip
"""The options ``troupe batch`` hands to each task's ``troupe run``."""


def _pass_through(parser: argparse.ArgumentParser) -> None:
    from actors import provider_wires as wires  # the wires' names and profiles

    options: dict[str, dict[str, Any]] = {
        "provider": {"choices": wires.profiles()},
        "wire": {"metavar": wires.metavar()},
        "model": {"help": "the model name sent to the provider"},
        "base_url": {"help": "the model endpoint"},
        "api_key": {"help": "API key (default: the provider's variable)"},
        "policy": {"metavar": "NAME", "help": "the safety policy of each task's session"},
        "sandbox": {"choices": ["auto", "on", "off"]},
        "approval": {"choices": ["ask", "deny", "allow-workspace", "never-ask"]},
        "max_turns": {"type": int, "help": "model turns per task (0 = unlimited)"},
        "preset": {"help": "a loop preset (docs/presets.md)"},
        "instructions": {"help": "extra system instructions (text, or @FILE)"},
    }
    for name in PASSED_TO_RUN:
        flag = "--" + name.replace("_", "-")
        flags = ("-m", flag) if name == "model" else (flag,)
        parser.add_argument(*flags, **options[name])
