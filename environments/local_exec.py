"""Running one command on this machine: process group, timeout, capture, deltas.

The command runs with ``bash -c`` as the leader of a new process group owned by the
environment actor. On timeout the group gets SIGTERM, 2 s, SIGKILL, and the output
collected so far is kept. A background grandchild that keeps the pipes open cannot
hang the call: once the leader has exited, the pipes get a short grace to drain and
are then abandoned, and the rest of the group is ended with the usual ladder.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import trio

from actors.kernel import Cell, terminate_groups
from actors.kernel.processes import ProcessLedger
from environments.capture import OutputCollector
from environments.errors import (
    FileNotFound,
    FileSystemError,
    InvalidRequest,
    NotADirectory,
    PermissionDenied,
)
from protocol.environment import ExecCommand, ExecResult, effective_timeout_ms, timeout_message

DRAIN_AFTER_EXIT = 0.25
"""Seconds the pipes may stay open after the leader exits before we stop reading."""

_READ_SIZE = 65_536


async def _pump(stream: trio.abc.ReceiveStream, collector: OutputCollector) -> None:
    while chunk := await stream.receive_some(_READ_SIZE):
        await collector.feed(chunk)


@contextmanager
def _recorded(ledger: ProcessLedger | None) -> Iterator[Callable[[int], None]]:
    """Write a group down while it may run, so that a restarted Troupe can end it if
    this one is killed; the record goes when the block ends, after the group."""
    keys: list[str | None] = []
    try:
        yield (lambda pgid: keys.append(ledger.add_local(pgid))) if ledger else (lambda _: None)
    finally:
        for key in keys:
            if ledger is not None and key is not None:
                ledger.remove(key)


def exit_status(returncode: int | None) -> int:
    """Shell convention: a command killed by signal N exits with 128 + N (-1: the
    process has not been reaped, which cannot happen after ``wait``)."""
    if returncode is None:
        return -1
    return 128 - returncode if returncode < 0 else returncode


async def run_local_command(
    owner: Cell,
    request: ExecCommand,
    cwd: Path,
    env: dict[str, str],
    capture_cap: int,
    ledger: ProcessLedger | None = None,
    argv: list[str] | None = None,
) -> ExecResult:
    """Run ``request.command`` (or ``argv``, the same command already wrapped, for
    the sandbox) and collect what it prints."""
    timeout_ms = effective_timeout_ms(request.timeout_ms)
    stdout = OutputCollector("stdout", capture_cap, request.output_to)
    stderr = OutputCollector("stderr", capture_cap, request.output_to)
    started = time.monotonic()
    timed_out = False
    try:
        opened = owner.owned_process(
            argv or ["bash", "-c", request.command],
            cwd=str(cwd),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        with _recorded(ledger) as record:
            async with opened as process:
                record(process.pid)
                out_stream, err_stream = process.stdout, process.stderr
                assert out_stream is not None and err_stream is not None
                async with trio.open_nursery() as readers:
                    drained = trio.Event()

                    async def read_both() -> None:
                        async with trio.open_nursery() as both:
                            both.start_soon(_pump, out_stream, stdout)
                            both.start_soon(_pump, err_stream, stderr)
                        drained.set()

                    readers.start_soon(read_both)
                    with trio.move_on_after(timeout_ms / 1000) as deadline:
                        await process.wait()
                    if deadline.cancelled_caught:
                        timed_out = True
                        await terminate_groups({process.pid}, owner.runtime.kill_grace)
                        await process.wait()
                    with trio.move_on_after(DRAIN_AFTER_EXIT):
                        await drained.wait()
                    readers.cancel_scope.cancel()
    except FileNotFoundError:
        raise FileNotFound(f"working directory {cwd} does not exist") from None
    except NotADirectoryError:
        raise NotADirectory(f"working directory {cwd} is not a directory") from None
    except PermissionError as exc:
        raise PermissionDenied(f"cannot run in {cwd}: {exc}") from None
    except OSError as exc:
        raise FileSystemError(f"cannot run in {str(cwd)[:200]}: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte in the command, directory or variables
        raise InvalidRequest(f"cannot run the command: {exc}") from None
    out = stdout.text()
    if timed_out:
        out = f"{out}\n{timeout_message(timeout_ms)}" if out else timeout_message(timeout_ms)
    return ExecResult(
        stdout=out,
        stderr=stderr.text(),
        exit_code=exit_status(process.returncode),
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout_omitted=stdout.omitted,
        stderr_omitted=stderr.omitted,
    )
