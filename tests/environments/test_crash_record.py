"""Nothing outlives Troupe, even a SIGKILL: ``troupe serve`` killed while a local and
a remote command run, then started again, ends both groups (from its process
ledger) and never signals a pid that now names another process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import trio

from actors.kernel.processes import GroupRecord, ProcessLedger, end_local_leftovers
from protocol.client import connect
from protocol.wire_requests import AddSSHEnvironment, ExecInEnvironment
from tests.environments.conftest import owned_directory
from tests.environments.helpers import alive
from tests.environments.sshd import SSHServer
from tests.waiting import wait_until, wait_until_gone
from tests.wire.conftest import HANG_GUARD, troupe_serve

NO_MODEL = "http://127.0.0.1:9"  # no session runs here; the server only needs a URL
LONG = "echo $BASHPID > {name}.pid; exec sleep 600"


async def _wait_for_pid(path: Path) -> int:
    """The pid a remote or local command writes, once the whole line is there."""
    file = trio.Path(path)
    while not (await file.exists()) or not (await file.read_text()).endswith("\n"):  # noqa: ASYNC110
        await trio.sleep(0.05)
    return int(await file.read_text())


async def test_sigkilled_server_leaves_nothing_running_after_restart(
    sshd: SSHServer, tmp_path: Path
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    remote_dir = owned_directory("root")
    pids: list[int] = []
    try:
        async with troupe_serve(data_dir, work, NO_MODEL) as serve:
            token = (data_dir / "token").read_text().strip()
            async with connect(serve.url, token) as client:
                await client.request(
                    AddSSHEnvironment,
                    name="box",
                    target=f"ssh://root@127.0.0.1:{sshd.port}",
                    working_dir=str(remote_dir),
                    known_hosts=str(sshd.known_hosts),
                    client_keys=[str(sshd.client_key)],
                )

                async def run(environment: str, name: str) -> None:
                    with contextlib.suppress(Exception):  # the server dies under it
                        await client.request(
                            ExecInEnvironment,
                            environment=environment,
                            command=LONG.format(name=name),
                            timeout_ms=600_000,
                        )

                with trio.fail_after(HANG_GUARD):
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(run, "/environments/local", "local")
                        nursery.start_soon(run, "box", "remote")
                        pids.append(await _wait_for_pid(work / "local.pid"))
                        pids.append(await _wait_for_pid(remote_dir / "remote.pid"))
                        serve.process.send_signal(signal.SIGKILL)
                        await serve.process.wait()
                        nursery.cancel_scope.cancel()
        assert alive(pids) == pids, "the killed server left both commands running"
        ledger = data_dir / "process-groups"
        async with troupe_serve(data_dir, work, NO_MODEL):
            await wait_until_gone(pids)  # the new server ends them
            # A group is gone a moment before its ender returns and drops the record
            # (the remote one after an SSH round trip): wait while the server runs,
            # since a server stopped in between rightly keeps the record for later.
            await wait_until(
                lambda: not list(ledger.glob("*.json")),
                what="the restarted server to drop the records of the groups it ended",
            )
    finally:
        for pid in alive(pids):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


async def test_a_reused_pid_is_never_signalled(tmp_path: Path) -> None:
    """A record whose pid now names another process (another start time) is dropped
    without a signal; a record of a live group of a dead owner is ended."""
    ledger = ProcessLedger(tmp_path / "ledger")
    bystander = subprocess.Popen(["sleep", "600"], start_new_session=True)  # noqa: ASYNC220
    orphan = subprocess.Popen(["sleep", "600"], start_new_session=True)  # noqa: ASYNC220
    try:
        # Written in the ledger's own format, as a dead owner would have: the
        # bystander's record carries a start time that is not the bystander's.
        records = [
            ledger._write(_record(bystander.pid, 1)),
            ledger._write(_record(orphan.pid, _start_of(orphan.pid))),
        ]
        leftovers = ledger.leftovers()
        assert sorted(key for key, _ in leftovers) == sorted(records)
        with trio.fail_after(HANG_GUARD):
            await end_local_leftovers(ledger, leftovers)
        assert alive([bystander.pid]) == [bystander.pid], "a reused pid was signalled"
        assert alive([orphan.pid]) == []
        assert ledger.leftovers() == []
    finally:
        for process in (bystander, orphan):
            process.kill()
            process.wait()


def _start_of(pid: int) -> int:
    from actors.kernel.processes import process_start_time

    start = process_start_time(pid)
    assert start is not None
    return start


def _record(pgid: int, start_time: int) -> GroupRecord:
    # Owner: a pid that cannot be running with this start time (start time 0).
    return GroupRecord(pgid, start_time, owner_pid=os.getpid(), owner_start=0)
