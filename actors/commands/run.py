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
from pathlib import Path

from actors.commands.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    CommandError,
    explain,
)
from actors.commands.headless import Printed, Startup
from actors.commands.run_route import server_for
from actors.commands.run_session import loop_options, read_task
from actors.commands.settings_flags import check_policy, settings_for
from actors.commands.tally import Outcome
from actors.commands.trust import ask_to_trust


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
