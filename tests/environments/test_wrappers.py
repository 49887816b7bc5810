"""The read-only and logging wrappers, in front of a real LocalEnvironment."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio
import trio.testing

from actors.kernel import Runtime
from environments.errors import EnvironmentUnavailable, FileNotFound, ReadOnly
from environments.local import LocalEnvironment
from environments.wrappers import LoggingEnvironment, ReadOnlyEnvironment
from protocol.environment import ExecCommand, ReadFile, WriteFile
from tests.waiting import wait_for_file, wait_until_gone, workers_per_cpu

HANG_GUARD = 20 * workers_per_cpu()  # stretched where workers share a CPU


async def test_read_only_refuses_writes_and_passes_the_rest(
    runtime: Runtime, tmp_path: Path
) -> None:
    (tmp_path / "kept.txt").write_text("original\n")
    inner = await runtime.spawn(LocalEnvironment(tmp_path))
    guarded = await runtime.spawn(ReadOnlyEnvironment(inner))
    with pytest.raises(ReadOnly, match="Write operations are disabled in read-only mode"):
        await guarded.ask(WriteFile("kept.txt", "changed\n"))
    assert (tmp_path / "kept.txt").read_text() == "original\n"
    assert (await guarded.ask(ReadFile("kept.txt"))).text == "1 | original"
    with pytest.raises(FileNotFound):
        await guarded.ask(ReadFile("missing.txt"))
    assert (await guarded.ask(ExecCommand("echo ok"))).stdout == "ok\n"


async def test_logging_wrapper_logs_commands_and_their_exit(
    runtime: Runtime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inner = await runtime.spawn(LocalEnvironment(tmp_path), name="environments/local")
    logged = await runtime.spawn(LoggingEnvironment(inner))
    with caplog.at_level(logging.INFO, logger="troupe.environments"):
        result = await logged.ask(ExecCommand("exit 7"))
    assert result.exit_code == 7
    messages = [record.getMessage() for record in caplog.records]
    assert "/environments/local exec: exit 7" in messages
    assert any(m.startswith("/environments/local exit: 7 in ") for m in messages)


async def test_abandoning_a_request_at_the_wrapper_stops_the_inner_command(
    runtime: Runtime, tmp_path: Path
) -> None:
    inner = await runtime.spawn(LocalEnvironment(tmp_path))
    logged = await runtime.spawn(LoggingEnvironment(inner))
    command = ExecCommand("echo $$ > pid; trap '' TERM; sleep 600", timeout_ms=60_000)
    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(logged.ask, command)
            await wait_for_file(tmp_path / "pid")
            nursery.cancel_scope.cancel()
        leader = int((tmp_path / "pid").read_text())
        await wait_until_gone([leader])


async def test_wrapper_of_a_stopped_environment_answers_with_a_typed_error(
    runtime: Runtime, tmp_path: Path
) -> None:
    inner = await runtime.spawn(LocalEnvironment(tmp_path))
    guarded = await runtime.spawn(ReadOnlyEnvironment(inner))
    await runtime.stop(inner)
    with pytest.raises(EnvironmentUnavailable):
        await guarded.ask(ReadFile("anything"))
    assert guarded.alive
