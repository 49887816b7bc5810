"""What both paths of ``troupe run`` share (the blocking client of
:mod:`actors.commands.run_direct` and the trio one of :mod:`actors.commands.run_async`):
the task from the arguments or stdin, the session's settings, the header and the
result. Its own module so that the two paths and the command that picks between
them (:mod:`actors.commands.run`) import it, not each other."""

from __future__ import annotations

import argparse
import os
import stat
import sys
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from actors.commands.common import data_dir
from actors.commands.errors import (
    EXIT_BAD_INPUT,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_TIMEOUT,
    CommandError,
)
from actors.commands.tally import EventTally, Outcome
from actors.config import Settings
from protocol.session import SessionConfig, ToolCalling
from protocol.wire import DEFAULT_MAX_FRAME

if TYPE_CHECKING:  # the trio client and the runtime are imported only by the paths that use them
    from actors.commands.session_host import Host


def unsandboxed(args: argparse.Namespace) -> str:
    """The header's word when commands run without the OS sandbox by choice (the
    same words in ``troupe run`` and the interactive conversation)."""
    from actors.policy.preset_names import PRESET_NAMES, UNSANDBOXED_PRESETS

    name = getattr(args, "policy", None) or "interactive"
    chosen = getattr(args, "sandbox", None)
    if chosen is not None:
        off = chosen == "off"
    elif name in PRESET_NAMES:  # a preset's setting, without building the presets
        off = name in UNSANDBOXED_PRESETS
    else:
        from actors.policy.presets import policy_preset

        off = policy_preset(name).sandbox == "off"
    return "; sandbox off: commands are only classified" if off else ""


PIPED_HEADER = "Input piped on stdin:"
MAX_TASK_BYTES = DEFAULT_MAX_FRAME - 64 * 1024
"""An input travels in one protocol frame: a larger one is refused before any
session is created (exit 2), not cut off by the server's frame limit."""


def read_task(args: argparse.Namespace) -> str | None:
    """The task from ``-p``, the argument, or stdin ('-' or a pipe); None when
    stream-json input will bring it. A task given with text piped on stdin is
    sent first, the piped text after it as context (as ``claude -p`` does)."""
    if args.prompt is not None and args.task is not None:
        raise CommandError("give the task once: as an argument or with -p", EXIT_BAD_INPUT)
    task = args.prompt if args.prompt is not None else args.task
    streaming = args.input_format == "stream-json"
    if streaming and task == "-":
        raise CommandError("--input-format stream-json reads stdin itself", EXIT_BAD_INPUT)
    if task == "-" or (task is None and not streaming and not sys.stdin.isatty()):
        task = _read_stdin()
    elif task is not None and not streaming and _stdin_is_piped():
        piped = _read_stdin()
        if piped.strip():
            task = f"{task.strip()}\n\n{PIPED_HEADER}\n\n{piped.rstrip()}"
    if task is None:
        if streaming:
            return None
        raise CommandError(
            'no task: troupe run "what to do" (or -p TEXT, or pipe it on stdin)', EXIT_BAD_INPUT
        )
    if not task.strip():
        raise CommandError("the task is empty", EXIT_BAD_INPUT)
    size = len(msgspec.json.encode(task.strip()))  # as it travels, escapes included
    if size > MAX_TASK_BYTES:
        raise CommandError(
            f"the task is {size / 1024 / 1024:.1f} MiB, more than one input may be "
            f"(a {DEFAULT_MAX_FRAME // 1024 // 1024} MiB frame); put the text in a file "
            "in the working directory and ask the agent to read it",
            EXIT_BAD_INPUT,
        )
    return task.strip()


def _stdin_is_piped() -> bool:
    """stdin is a pipe or a file (not a terminal, not /dev/null or a closed fd)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _read_stdin() -> str:
    """stdin as text; bytes that are not UTF-8 are kept as replacement marks."""
    try:
        data = sys.stdin.buffer.read()
    except (OSError, ValueError, AttributeError):
        return ""
    return data.decode("utf-8", errors="replace")


def nobody_to_ask(args: argparse.Namespace) -> bool:
    """Headless: nobody can answer an approval (stdin not a terminal, -p, or json
    output), unless stream-json input brings the answers."""
    if args.input_format == "stream-json":
        return False
    return args.prompt is not None or args.output_format != "text" or not sys.stdin.isatty()


def approval_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The session's approval mode and whether anyone can answer."""
    settings: dict[str, Any] = {"nobody_to_ask": nobody_to_ask(args)}
    mode = getattr(args, "approval", None)
    if mode is not None:
        settings["approval_mode"] = mode
    return settings


TOOL_CALLING_MODES = typing.get_args(ToolCalling)


def loop_options(args: argparse.Namespace) -> dict[str, Any]:
    """The loop options given as flags (only those given: a preset's own values
    stay unless a flag changes them)."""
    options: dict[str, Any] = {}
    if getattr(args, "sandbox", None):
        options["policy_overrides"] = {"sandbox": args.sandbox}
    if getattr(args, "agentic", None):
        options["agentic_mode"] = True
    iterations = getattr(args, "max_iterations", None)
    if iterations is not None:
        if iterations < 0:
            raise CommandError("--max-iterations must be 0 (unlimited) or more", EXIT_BAD_INPUT)
        options["agentic_max_iterations"] = iterations
    calling = getattr(args, "tool_calling", None)
    if calling is not None:
        if calling not in TOOL_CALLING_MODES:
            raise CommandError(
                f"--tool-calling must be native, text or auto, not {calling!r}", EXIT_BAD_INPUT
            )
        options["tool_calling"] = calling
    for flag in ("input_token_budget", "session_token_budget"):
        budget = getattr(args, flag, None)
        if budget is None:
            continue
        if budget < 0:
            dashed = flag.replace("_", "-")
            raise CommandError(f"--{dashed} must be 0 (unlimited) or more", EXIT_BAD_INPUT)
        options[flag] = budget
    return options


def session_config(
    settings: Settings, policy: str | None = None, options: dict[str, Any] | None = None
) -> SessionConfig:
    """The configured defaults (:func:`session_defaults`), then this run's flags."""
    from actors.commands.session_host import session_defaults

    defaults = session_defaults(settings)
    return msgspec.structs.replace(defaults, **(options or {}), policy=policy or defaults.policy)


def _configured(settings: Settings, name: str) -> Any:
    setting = settings.values.get(name)
    return None if setting is None else setting.value


def session_to_resume(args: argparse.Namespace, workdir: Path) -> str | None:
    """``--resume SESSION``, or the newest session of ``workdir`` for ``-c``."""
    if args.resume:
        return str(args.resume)
    if args.continue_latest:
        # Here, not at the top: only ``-c`` reads the store (sqlite3's import).
        from actors.commands.stored import newest_in

        latest = newest_in(data_dir(args), workdir)
        if latest is None:
            raise CommandError(
                f"no session has run in {workdir} yet; start one with troupe run TASK",
                EXIT_BAD_INPUT,
            )
        return latest.session_id
    return None


async def session_to_resume_off_loop(args: argparse.Namespace, workdir: Path) -> str | None:
    """:func:`session_to_resume` off the event loop (``-c`` reads the store)."""
    if not args.continue_latest:
        return session_to_resume(args, workdir)
    import trio

    return await trio.to_thread.run_sync(session_to_resume, args, workdir)


def creation(
    args: argparse.Namespace, settings: Settings, workdir: Path, environment: str | None = None
) -> dict[str, Any]:
    """The fields of this run's ``create_session`` request."""
    return {
        "profile": settings.get("provider"),
        "environment": environment,
        "working_dir": None if environment else str(workdir),
        "config": session_config(
            settings,
            getattr(args, "policy", None),
            {**loop_options(args), **approval_settings(args)},
        ),
        "preset": getattr(args, "preset", None),
    }


def resume_changes(args: argparse.Namespace) -> dict[str, Any]:
    """What a resumed session's config takes from this run's flags."""
    changes = {
        name: getattr(args, name)
        for name in ("model", "reasoning_effort", "max_turns")
        if getattr(args, name, None) is not None
    }
    changes.update(approval_settings(args))  # who can answer now, not at creation
    return changes


async def open_session(
    host: Host, args: argparse.Namespace, settings: Settings, workdir: Path, resumed: str | None
) -> tuple[str, int, str]:
    """The session's id, the last event before this run (a resumed session's
    earlier events are not shown again), and where it works, in words."""
    from actors.commands.remote import ensure_host, host_entry, host_of
    from protocol.wire import (
        CreateSession,
        GetSession,
        SessionCreated,
        SessionDetail,
        UpdateSessionConfig,
    )

    if resumed is None:
        environment, where = None, str(workdir)
        if args.ssh_host:
            name, entry = host_entry(args.ssh_host, settings.ssh_hosts)
            environment = await ensure_host(host.client, name, entry)
            where = f"{entry.working_dir or '~'} on ssh host {name}"
        elif settings.get("environment"):
            from actors.commands.docker_env import docker_image, ensure_docker

            image = docker_image(settings.get("environment"))
            environment = await ensure_docker(host.client, image, workdir)
            where = f"{workdir} in a container of {image}"
        created = cast(
            SessionCreated,
            await host.client.request(
                CreateSession, **creation(args, settings, workdir, environment)
            ),
        )
        return created.session.session_id, 0, where
    detail = cast(SessionDetail, await host.client.request(GetSession, session=resumed))
    where = str(workdir)
    remote = host_of(detail.session.environment)
    if remote is not None:  # a new embedded runtime must connect to the host again
        name, entry = host_entry(remote, settings.ssh_hosts)
        await ensure_host(host.client, name, entry)
        where = f"ssh host {name}"
    await host.client.request(UpdateSessionConfig, session=resumed, **resume_changes(args))
    return resumed, detail.session.last_seq, where


def header(args: argparse.Namespace, session: str, where: str, label: str, resumed: bool) -> str:
    """The first line of text output: which session, where, on what runtime."""
    verb = "resuming" if resumed else "session"
    return f"{verb} {session} in {where} ({label}){unsandboxed(args)}"


def conclude(
    follower: EventTally, interrupted: bool, timed_out: bool, timeout: float | None
) -> Outcome:
    """The result object once following stopped; an interrupt (Ctrl-C) or the
    wall-clock limit is the command's error, said after the object."""
    outcome = follower.outcome
    if interrupted:
        outcome.status, outcome.exit_code = "interrupted", EXIT_INTERRUPTED
        follower.emit_result()
        raise CommandError(
            f"interrupted; session {follower.session} is kept "
            f"(troupe run --resume {follower.session} TASK)",
            EXIT_INTERRUPTED,
        )
    if timed_out:
        outcome.status, outcome.exit_code = "timeout", EXIT_TIMEOUT
        outcome.error = f"no result within --timeout {timeout:g} s"
        follower.emit_result()
        raise CommandError(
            f"timed out after {timeout:g} s; its commands were stopped and session "
            f"{follower.session} is kept (troupe run --resume {follower.session} TASK)",
            EXIT_TIMEOUT,
        )
    follower.emit_result()
    return outcome


def finish(args: argparse.Namespace, outcome: Outcome, session: str, label: str) -> int:
    """After the runtime or the connection is closed: the last message's file, and
    a lost connection said as the command's error."""
    _write_last_message(args, outcome)
    if outcome.status == "disconnected":
        raise CommandError(
            f"lost the connection to the {label}; session {session} may still be "
            f"running there (troupe attach {session})",
            EXIT_ERROR,
        )
    return outcome.exit_code


def _write_last_message(args: argparse.Namespace, outcome: Outcome) -> None:
    if not args.output_last_message:
        return
    try:
        Path(args.output_last_message).write_text(outcome.result)
    except OSError as error:
        raise CommandError(
            f"cannot write --output-last-message {args.output_last_message}: "
            f"{error.strerror or error}",
            EXIT_ERROR,
        ) from None
