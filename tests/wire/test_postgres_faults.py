"""A store fault on PostgreSQL is an outage of writes, not of the server (issue 37).

A real ``troupe serve --store postgresql://...`` runs a session while the test
stops PostgreSQL (``pg_ctl stop -m fast``: its connections ended, the socket
gone) for 20 seconds and starts it again. The server stays up; the subscriber is
told (``store_unavailable``, live); the running input stops as interrupted; new
inputs and sessions are refused with the same typed error; once PostgreSQL is
back the store writes what it held by itself (``store_available``) and the
session takes a new input, with no restart; everything the client was sent as
durable is in the database.

Reads during the outage: the session list answers from what the server holds;
what needs the database cannot be read while it is down: a session's stored
history is the typed ``store_unavailable`` error, and a new subscriber is told
``store_unavailable`` and gets its replay once PostgreSQL is back.

The disk fills too: Troupe's tables in a tablespace on a small tmpfs this test
mounts (it needs root), filled by a session's 30 KB tool outputs, then grown.
PostgreSQL refuses each write (``could not extend file``) and stays up, so reads
and replays go on; the server reacts as to SQLite's full disk
(tests/wire/test_store_faults.py). The tablespace keeps PostgreSQL's own WAL on
the big disk, as on a server whose database volume fills: a full WAL volume is a
PostgreSQL crash, which the stop-and-start test covers.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import psycopg
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import (
    CreateSession,
    FollowUpSession,
    GetSession,
    InterruptSession,
    ListSessions,
    SteerSession,
    SubmitInput,
)
from tests.postgres import PostgresCluster
from tests.waiting import wait_until
from tests.wire.conftest import HANG_GUARD, events_until, shell_turns, subscribe, troupe_serve
from tests.wire.store_fault_helpers import BIG_OUTPUT, acknowledged, refused, small_tmpfs

OUTAGE = 20.0
"""Seconds PostgreSQL stays down: the scenario of the issue, not a wait for an effect."""
ROUNDS = 200


def _stored_events(url: str, session: str) -> set[tuple[int, str]]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT seq, kind FROM troupe.events WHERE session_id=%s", (session,)
        ).fetchall()
    return {(int(seq), kind) for seq, kind in rows}


async def test_postgres_stopped_then_started_server_stays_up_and_loses_nothing(
    tmp_path: Path, postgres: PostgresCluster, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(*["sleep 0.1; echo step"] * ROUNDS), Script)
    async with (
        serve_mock_llm(script) as mock,
        troupe_serve(data_dir, work, mock.base_url, postgres_url) as serve,
    ):
        token = (data_dir / "token").read_text().strip()
        async with connect(serve.url, token) as client, connect(serve.url, token) as reader:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="keep going")
            received = await events_until(client, "tool_call_end")
            stopped = trio.current_time()
            try:
                await trio.to_thread.run_sync(postgres.stop)
                received += await events_until(client, "store_unavailable")
                notice = received[-1]
                assert notice.seq == 0 and "connection" in notice.data["message"]
                assert serve.process.returncode is None

                # new inputs and sessions are refused with the typed error
                await refused(client, SubmitInput, session=session, text="more")
                await refused(client, SteerSession, session=session, text="more")
                await refused(client, FollowUpSession, session=session, text="more")
                await refused(client, CreateSession)
                # what the server holds answers; what is only in the database is typed
                listed = (await reader.request(ListSessions)).sessions
                assert [s.session_id for s in listed] == [session]
                await refused(reader, GetSession, session=session)
                # a replay needs the database: the subscriber is told, and waits
                await subscribe(reader, session)
                told = await events_until(reader, "store_unavailable")
                assert [e.kind for e in told if e.seq] == []
                assert serve.process.returncode is None
                await trio.sleep_until(stopped + OUTAGE)
            finally:
                await trio.to_thread.run_sync(postgres.start)
            replayed = await events_until(reader, "store_available")
            replayed += await events_until(reader, "tool_call_end")
            assert next(e.kind for e in replayed if e.seq) == "session_start"

            # PostgreSQL is back: the held events go in, the session goes on
            await events_until(client, "store_available", into=received)
            await events_until(client, "processing_end", into=received)
            assert received[-1].data["state"] == "idle"
            kinds = [e.kind for e in received]
            assert "interrupted" in kinds[kinds.index("store_unavailable") :]
            detail = await reader.request(GetSession, session=session)
            assert detail.history

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

            def all_stored() -> bool:
                return (last, "processing_end") in _stored_events(postgres_url, session)

            await wait_until(all_stored, what="the last event to be stored")
        serve.process.send_signal(signal.SIGTERM)
        with trio.fail_after(HANG_GUARD):
            await serve.process.wait()
    stored = _stored_events(postgres_url, session)
    missing = acknowledged(received) - stored
    assert not missing, f"acknowledged but not stored: {sorted(missing)}"
    seqs = sorted(seq for seq, _ in stored)
    assert seqs == sorted(set(seqs))


@contextlib.contextmanager
def small_tablespace(postgres: PostgresCluster, url: str, size: str) -> Iterator[Path]:
    """A tablespace on a tmpfs of ``size`` (the cluster's account owns it), made
    the default of ``url``'s database before Troupe creates its tables there.
    Dropped and unmounted on the way out, the database with it."""
    space = postgres.root / f"space-{uuid.uuid4().hex[:8]}"
    owner = ""
    if postgres.owner is not None:
        account = pwd.getpwnam(postgres.owner)
        owner = f",uid={account.pw_uid},gid={account.pw_gid}"
    name = f"small_{space.name[6:]}"
    database = url.split("/")[3].split("?")[0]
    with small_tmpfs(space, size, owner):
        try:
            with psycopg.connect(postgres.url(), autocommit=True) as connection:
                connection.execute(f"CREATE TABLESPACE {name} LOCATION '{space}'".encode())
                connection.execute(
                    f"ALTER DATABASE {database} SET default_tablespace={name}".encode()
                )
            yield space
        finally:
            if postgres.running():
                postgres.drop_database(url)
                with psycopg.connect(postgres.url(), autocommit=True) as connection:
                    connection.execute(f"DROP TABLESPACE IF EXISTS {name}".encode())


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs: needs root")
async def test_postgres_disk_full_then_grown_server_stays_up_and_loses_nothing(
    tmp_path: Path, postgres: PostgresCluster, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    data_dir, work = root / "data", root / "work"
    work.mkdir()
    script = msgspec.convert(shell_turns(*[BIG_OUTPUT] * 120), Script)
    with small_tablespace(postgres, postgres_url, "1m") as space:
        async with (
            serve_mock_llm(script) as mock,
            troupe_serve(data_dir, work, mock.base_url, postgres_url) as serve,
        ):
            token = (data_dir / "token").read_text().strip()
            async with connect(serve.url, token) as client, connect(serve.url, token) as reader:
                session = (await client.request(CreateSession)).session.session_id
                await subscribe(client, session)
                await client.request(SubmitInput, session=session, text="fill the disk")
                received = await events_until(client, "store_unavailable")
                notice = received[-1]
                assert notice.seq == 0 and "space" in notice.data["message"], notice
                assert serve.process.returncode is None

                # new inputs and sessions are refused with the typed error
                await refused(client, SubmitInput, session=session, text="more")
                await refused(client, SteerSession, session=session, text="more")
                await refused(client, FollowUpSession, session=session, text="more")
                await refused(client, CreateSession)
                # PostgreSQL is up: reads and replays of what is stored go on
                listed = (await reader.request(ListSessions)).sessions
                assert [s.session_id for s in listed] == [session]
                assert (await reader.request(GetSession, session=session)).history
                await subscribe(reader, session)
                replayed = await events_until(reader, "tool_call_end")
                assert next(e.kind for e in replayed if e.seq) == "session_start"

                # the disk grows: the held events go in, the session goes on
                await trio.run_process(
                    ["mount", "-o", "remount,size=256m", str(space)], capture_stdout=True
                )
                await events_until(client, "store_available", into=received)
                await events_until(client, "processing_end", into=received)
                assert received[-1].data["state"] == "idle"
                kinds = [e.kind for e in received]
                assert "interrupted" in kinds[kinds.index("store_unavailable") :]

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

                def all_stored() -> bool:
                    return (last, "processing_end") in _stored_events(postgres_url, session)

                await wait_until(all_stored, what="the last event to be stored")
            serve.process.send_signal(signal.SIGTERM)
            with trio.fail_after(HANG_GUARD):
                await serve.process.wait()
        stored = _stored_events(postgres_url, session)
    missing = acknowledged(received) - stored
    assert not missing, f"acknowledged but not stored: {sorted(missing)}"
    seqs = sorted(seq for seq, _ in stored)
    assert seqs == sorted(set(seqs))
