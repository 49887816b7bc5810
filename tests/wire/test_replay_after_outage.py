"""A subscriber told of an outage gets ``store_available`` before its replay, even
when the store answers reads before it writes again (actors/server/subscription.py).

A PostgreSQL that restarts answers a read before the writer's retry has gone
through, so the replay of a subscriber that joined during the outage could read
the stored events, and send them, while the store's health still said it could
not write: ``store_available`` came after them, against the subscription's promise
(the notice first, then what was held), and the store outage test once waited for
an event it had already been given. Here a real registry and SQLite store stand
in: the replay's first read fails as a database that is down does, the store's
health says it cannot write, and the reads work again before it does."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import trio
import trio.testing

from actors.server.subscription import SessionSubscription
from actors.store.health import StoreUnavailable
from actors.store.rows import EventRow
from protocol.events import SessionEvent, UserInputEvent
from tests.registry_stack import registry_on_store, store_session


async def test_the_notice_comes_before_a_replay_that_reads_before_the_store_writes(
    tmp_path: Path,
) -> None:
    async with registry_on_store(tmp_path) as (registry, store), trio.open_nursery() as nursery:
        store_session(store, "s-told", tmp_path)
        for seq in (1, 2):
            store.append_event(SessionEvent("s-told", seq, time.time(), UserInputEvent(f"{seq}")))
        await store.flush()

        read = store.events_after
        reads = 0
        read_again = trio.Event()

        async def down_once_then_read(
            session_id: str, after_seq: int, limit: int = 512
        ) -> list[EventRow]:
            nonlocal reads
            reads += 1
            if reads == 1:  # the database is down: it cannot write, nor read
                store.health.fail("the database is down", {session_id})
                raise StoreUnavailable("the database is down")
            rows = await read(session_id, after_seq, limit)  # it reads again, not yet writes
            read_again.set()
            return rows

        sent: list[Any] = []
        replayed = trio.Event()

        async def send(frame: Any) -> None:
            sent.append(frame)
            if getattr(frame, "seq", 0) == 2:
                replayed.set()

        subscription = SessionSubscription(registry, store, "s-told", 0, send)
        await subscription.open()
        await store.flush()  # what opening it wrote (its summary): nothing queued now
        store.events_after = down_once_then_read  # type: ignore[method-assign]
        nursery.start_soon(subscription.run, "r1")
        with trio.fail_after(30):
            await read_again.wait()
            # Whatever the replay does with the rows it read happens now, before the
            # store writes again: everything waits (on the store's health, or on
            # nothing left to send) once it is done.
            await trio.testing.wait_all_tasks_blocked(cushion=0.05)
            store.health.recover()
            await replayed.wait()
        kinds = [getattr(frame, "kind", type(frame).__name__) for frame in sent]
        assert kinds == ["Subscribed", "store_unavailable", "store_available", "user_input",
                         "user_input"]  # fmt: skip
        nursery.cancel_scope.cancel()
