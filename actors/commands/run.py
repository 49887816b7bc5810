"""``troupe run "task"``: run one task and show what the agent does.

Headless like ``codex exec``, ``claude -p`` and ``gemini -p``: the task as an
argument, ``-p``, or stdin; ``--output-format json`` prints one result object;
``--input-format stream-json`` reads user messages as JSON lines while it runs.
``--resume SESSION`` and ``--continue`` go on with a stored session's history.

Exit codes: 0 done, 1 runtime failure, 2 bad input, 53 turn limit, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from actors.commands.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    CommandError,
    explain,
)
from actors.commands.headless import Printed, Startup
from actors.commands.run_route import server_for
from actors.commands.run_session import loop_options, read_task
from actors.commands.tally import Outcome
from actors.commands.trust import ask_to_trust
from actors.config import ConfigError, Settings, resolve

if TYPE_CHECKING:  # the trio client and the runtime are imported only by the paths that use them
    pass

SETTING_FLAGS = ("provider", "wire", "model", "base_url", "api_key", "reasoning_effort",
                 "max_turns", "instructions", "policy", "connect", "environment",
                 "compaction", "context_window", "max_cost", "max_input_cost",
                 "store", "provider_options", "isolation")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """The command; with json output a failure prints a result object too, so a
    program reading stdout always gets one (the line on stderr says the same)."""
    printed, startup = Printed(), Startup()
    startup.pause()
    try:
        return _checked_run(args, printed, startup)
    except BaseException as error:
        if args.output_format in ("json", "stream-json") and not printed.result:
            worded = explain(error)
            failure = Outcome("", exit_code=worded.exit_code, status="error", error=str(worded))
            if worded.exit_code == EXIT_INTERRUPTED:
                failure.status = "interrupted"
            print(json.dumps({**failure.summary(), "session_id": None}), flush=True)
        raise
    finally:
        startup.done()


def _checked_run(args: argparse.Namespace, printed: Printed, startup: Startup) -> int:
    workdir = Path(args.workdir or ".").resolve()
    if not workdir.is_dir():
        raise CommandError(f"{workdir} is not a directory", EXIT_BAD_INPUT)
    settings = settings_for(args, workdir)
    if ask_to_trust(workdir, settings.ignored):
        settings = settings_for(args, workdir)
    check_policy(settings.get("policy"))
    loop_options(args)  # bad values are said before anything starts
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        raise CommandError("--timeout must be a number of seconds above 0", EXIT_BAD_INPUT)
    task = read_task(args)
    if task is not None and server_for(args, settings) is not None:
        from actors.commands.run_direct import run_direct

        done = run_direct(args, settings, workdir, task, printed, startup)
        if done is not None:
            return done
    import trio

    from actors.commands.run_async import run_async

    return trio.run(run_async, args, settings, workdir, task, printed, startup)


def settings_for(args: argparse.Namespace, workdir: Path) -> Settings:
    flags = {name: getattr(args, name, None) for name in SETTING_FLAGS}
    try:
        settings = resolve(flags, workdir)
    except ConfigError as error:
        raise CommandError(str(error), EXIT_BAD_INPUT) from None
    if settings.ignored is not None:
        print(f"troupe: {settings.ignored}", file=sys.stderr)
    return settings


def check_policy(name: str | None) -> None:
    """An unknown policy name is bad input, said before anything starts."""
    from actors.policy.preset_names import PRESET_NAMES

    if name is None or name in PRESET_NAMES:
        return
    from actors.policy.presets import UnknownPreset, policy_preset

    try:
        policy_preset(name)
    except UnknownPreset as error:
        raise CommandError(f"--policy: {error}", EXIT_BAD_INPUT) from None
