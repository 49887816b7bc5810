"""A store fault is an outage of writes, not of the server (issue 37).

A real ``troupe serve`` keeps its data directory on a small tmpfs this test mounts
(it needs root; it skips otherwise). Filled by a session's 30 KB tool outputs, the
store cannot write: the server stays up, the subscriber is told
(``store_unavailable``), the running input stops as interrupted, new inputs and
sessions are refused with the same typed error, reads and replays go on. Grown
again, the store writes what it held (``store_available``) and the session takes a
new input, with no restart; everything the client was sent is in the store.

Linux refuses to remount a file system read-only while a file on it is open for
writing (the database is), so the read-only case starts the server on a data
directory already remounted read-only and remounts it read-write under it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import sys
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import RequestError, connect
from protocol.wire import (
    CreateSession,
    FollowUpSession,
    GetSession,
    InterruptSession,
    ListSessions,
    SteerSession,
    SubmitInput,
)
from tests.waiting import wait_until
from tests.web.test_auth import http_get
from tests.wire.conftest import (
    HANG_GUARD,
    REPO,
    events_until,
    shell_turns,
    subscribe,
    troupe_serve,
)
from tests.wire.store_fault_helpers import (
    BIG_OUTPUT,
    acknowledged,
    mount,
    refused,
    small_tmpfs,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs: needs root")

ROUNDS = 80


def _stored_events(data_dir: Path, session: str) -> set[tuple[int, str]]:
    with contextlib.closing(
        sqlite3.connect(f"file:{data_dir / 'troupe.db'}?mode=ro", uri=True)
    ) as db:
        rows = db.execute("SELECT seq, kind FROM events WHERE session_id=?", (session,))
        return set(rows.fetchall())


async def test_disk_full_then_grown_server_stays_up_and_loses_nothing(tmp_path: Path) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    work = root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(*[BIG_OUTPUT] * ROUNDS), Script)
    with small_tmpfs(root / "data", "1m") as data_dir:
        async with (
            serve_mock_llm(script) as mock,
            troupe_serve(data_dir, work, mock.base_url) as serve,
        ):
            token = (data_dir / "token").read_text().strip()
            async with connect(serve.url, token) as client, connect(serve.url, token) as reader:
                session = (await client.request(CreateSession)).session.session_id
                await subscribe(client, session)
                await client.request(SubmitInput, session=session, text="fill the disk")
                received = await events_until(client, "store_unavailable")
                notice = received[-1]
                assert notice.seq == 0 and "full" in notice.data["message"]
                assert serve.process.returncode is None

                # new inputs and sessions are refused with the typed error
                await refused(client, SubmitInput, session=session, text="more")
                await refused(client, SteerSession, session=session, text="more")
                await refused(client, FollowUpSession, session=session, text="more")
                await refused(client, CreateSession)
                # reads and replays of what is stored keep working
                listed = (await reader.request(ListSessions)).sessions
                assert [s.session_id for s in listed] == [session]
                detail = await reader.request(GetSession, session=session)
                assert detail.history
                await subscribe(reader, session)
                replayed = await events_until(reader, "tool_call_end")
                assert next(e.kind for e in replayed if e.seq) == "session_start"
                assert "store_unavailable" in [e.kind for e in replayed if not e.seq]

                # the store grows back: the held events go in, the session goes on
                mount("-o", "remount,size=64m", str(data_dir))
                await events_until(client, "store_available", into=received)
                await events_until(client, "processing_end", into=received)
                assert received[-1].data["state"] == "idle"
                kinds = [e.kind for e in received]
                assert "interrupted" in kinds[kinds.index("store_available") :]

                await client.request(SubmitInput, session=session, text="after the outage")
                after = await events_until(client, "tool_call_end")
                received += after
                assert [e.data["content"] for e in after if e.kind == "user_input"] == [
                    "after the outage"
                ]
                await client.request(InterruptSession, session=session)
                received += await events_until(client, "processing_end")
                assert serve.process.returncode is None
                last = received[-1].seq

                async def all_stored() -> bool:
                    return (last, "processing_end") in _stored_events(data_dir, session)

                await wait_until(all_stored, what="the last event to be stored")
            serve.process.send_signal(signal.SIGTERM)
            with trio.fail_after(HANG_GUARD):
                await serve.process.wait()
        missing = acknowledged(received) - _stored_events(data_dir, session)
        assert not missing, f"acknowledged but not stored: {sorted(missing)}"
        seqs = sorted(seq for seq, _ in _stored_events(data_dir, session))
        assert seqs == sorted(set(seqs))


async def test_read_only_data_dir_serves_reads_then_writes_once_read_write(
    tmp_path: Path,
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    work = root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns("echo hello"), Script)
    with small_tmpfs(root / "data", "16m") as data_dir:
        async with serve_mock_llm(script) as mock:
            async with troupe_serve(data_dir, work, mock.base_url) as serve:
                token = (data_dir / "token").read_text().strip()
                async with connect(serve.url, token) as client:
                    session = (await client.request(CreateSession)).session.session_id
                    await subscribe(client, session)
                    await client.request(SubmitInput, session=session, text="first")
                    first = await events_until(client, "processing_end")
                serve.process.send_signal(signal.SIGTERM)
                with trio.fail_after(HANG_GUARD):
                    await serve.process.wait()
            (data_dir / "server.json").unlink()
            mount("-o", "remount,ro", str(data_dir))

            async with troupe_serve(data_dir, work, mock.base_url) as serve:
                port = int(serve.url.rstrip("/").rpartition(":")[2])
                async with connect(serve.url, token) as client:
                    await refused(client, SubmitInput, session=session, text="second")
                    await refused(client, CreateSession)
                    # a load balancer sends new work elsewhere; the process is alive
                    status, _, body = await http_get(port, "/readyz")
                    assert (status, body) == (503, b"store_unavailable\n")
                    assert (await http_get(port, "/healthz"))[0] == 200
                    listed = (await client.request(ListSessions)).sessions
                    assert [s.session_id for s in listed] == [session]
                    await subscribe(client, session)
                    replay = await events_until(client, "processing_end")
                    assert acknowledged(replay) == acknowledged(first)
                    assert not (data_dir / "server.json").exists()
                    assert serve.process.returncode is None

                    mount("-o", "remount,rw", str(data_dir))

                    async def takes_input() -> bool:
                        try:
                            await client.request(SubmitInput, session=session, text="second")
                        except RequestError as error:
                            assert error.code == "store_unavailable", error
                            return False
                        return True

                    await wait_until(takes_input, what="the store to take writes again")
                    status, _, body = await http_get(port, "/readyz")
                    assert (status, body) == (200, b"ok\n")
                    await wait_until((data_dir / "server.json").exists, what="server.json")
                    async with connect(serve.url, token) as follower:
                        await subscribe(follower, session, after_seq=first[-1].seq)
                        after = await events_until(follower, "processing_end")
                    assert [e.data["content"] for e in after if e.kind == "user_input"] == [
                        "second"
                    ]
                serve.process.send_signal(signal.SIGTERM)
                with trio.fail_after(HANG_GUARD):
                    await serve.process.wait()


async def test_vanished_data_dir_then_back_resumes_writes(tmp_path: Path) -> None:
    """The data directory unmounted under the server (a lazy unmount: its files
    stay open, the path shows an empty directory), then mounted back."""
    root = Path(await trio.Path(tmp_path).resolve())
    work = root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(*["sleep 0.1; echo step"] * ROUNDS), Script)
    with small_tmpfs(root / "backing", "64m") as backing:
        kept = backing / "data"
        kept.mkdir()
        data_dir = root / "data"
        data_dir.mkdir()
        mount("--bind", str(kept), str(data_dir))
        try:
            async with (
                serve_mock_llm(script) as mock,
                troupe_serve(data_dir, work, mock.base_url) as serve,
            ):
                token = (data_dir / "token").read_text().strip()
                async with connect(serve.url, token) as client:
                    session = (await client.request(CreateSession)).session.session_id
                    await subscribe(client, session)
                    await client.request(SubmitInput, session=session, text="keep going")
                    received = await events_until(client, "tool_call_end")
                    await trio.run_process(["umount", "-l", str(data_dir)])
                    await events_until(client, "store_unavailable", into=received)
                    assert "gone" in received[-1].data["message"]
                    await refused(client, SubmitInput, session=session, text="more")
                    assert serve.process.returncode is None

                    mount("--bind", str(kept), str(data_dir))
                    await events_until(client, "store_available", into=received)
                    await events_until(client, "processing_end", into=received)
                    kinds = [e.kind for e in received]
                    assert "interrupted" in kinds[kinds.index("store_available") :]
                    await client.request(SubmitInput, session=session, text="after")
                    received += await events_until(client, "tool_call_end")
                    await client.request(InterruptSession, session=session)
                    received += await events_until(client, "processing_end")
                    last = received[-1].seq

                    async def all_stored() -> bool:
                        return (last, "processing_end") in _stored_events(data_dir, session)

                    await wait_until(all_stored, what="the last event to be stored")
                serve.process.send_signal(signal.SIGTERM)
                with trio.fail_after(HANG_GUARD):
                    await serve.process.wait()
            missing = acknowledged(received) - _stored_events(kept, session)
            assert not missing, f"acknowledged but not stored: {sorted(missing)}"
        finally:
            await trio.run_process(
                ["umount", "-l", str(data_dir)], check=False, capture_stderr=True
            )


async def test_no_token_can_be_written_is_one_typed_line(tmp_path: Path) -> None:
    """A first start on a read-only data directory: nothing can serve without a
    token a client can read, so ``troupe serve`` says so in one line, exit 1."""
    root = Path(await trio.Path(tmp_path).resolve())
    with small_tmpfs(root / "data", "1m") as data_dir:
        mount("-o", "remount,ro", str(data_dir))
        command = [
            sys.executable, "-m", "actors.cli", "serve", "--port", "0",
            "--data-dir", str(data_dir), "--workdir", str(root), "--api-key", "test-key",
        ]  # fmt: skip
        with trio.fail_after(HANG_GUARD):
            done = await trio.run_process(
                command, check=False, capture_stdout=True, capture_stderr=True, cwd=REPO
            )
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1
    assert len(lines) == 1 and lines[0].startswith("troupe serve: store_unavailable: "), lines
